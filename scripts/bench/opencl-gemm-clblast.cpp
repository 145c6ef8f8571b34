// torsh's OpenCL GEMM (ops::matmul on the OpenCL backend, its own kernels:
// TORSH_OPENCL_CLBLAST=0) against CLBlast's SGEMM / HGEMM on the same OpenCL
// device, in one process and interleaved rounds: each round runs a block of
// each side in alternating order on the same inputs, one untimed call then
// the median of timed ones, every call ended by a device synchronize. The
// figure is the median over rounds of the per-round ratio (CLBlast time /
// torsh time: above 1, torsh is faster), with quartiles, and each side's best.
//
//   opencl-gemm-clblast ROUNDS DTYPE MxNxK [MxNxK ...]     (DTYPE: f32 or f16)
#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void check(cl_int err, const char* what) {
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, err);
    std::exit(1);
  }
}

// The OpenCL device torsh's OpenCL:0 is: the first device of the first platform with one.
cl_device_id first_device() {
  cl_uint np = 0;
  check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
  std::vector<cl_platform_id> ps(np);
  check(clGetPlatformIDs(np, ps.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : ps) {
    cl_device_id d = nullptr;
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, &nd) == CL_SUCCESS && nd > 0) return d;
  }
  std::fprintf(stderr, "no OpenCL device\n");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ROUNDS f32|f16 MxNxK [MxNxK ...]\n", argv[0]);
    return 2;
  }
  setenv("TORSH_OPENCL_CLBLAST", "0", 1);  // torsh's side runs its own kernels
  const int rounds = std::atoi(argv[1]);
  const bool half = std::strcmp(argv[2], "f16") == 0;
  const DType dt = half ? DType::F16 : DType::F32;
  Backend dev = Backend::create(BackendType::OpenCl);

  cl_device_id did = first_device();
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(nullptr, 1, &did, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  cl_command_queue q = clCreateCommandQueue(ctx, did, 0, &err);
  check(err, "clCreateCommandQueue");
  char name[256] = {};
  clGetDeviceInfo(did, CL_DEVICE_NAME, sizeof name, name, nullptr);

  for (int ai = 3; ai < argc; ++ai) {
    long m = 0, n = 0, k = 0;
    if (std::sscanf(argv[ai], "%ldx%ldx%ld", &m, &n, &k) != 3) {
      std::fprintf(stderr, "bad shape %s\n", argv[ai]);
      return 2;
    }
    const Tensor a = ops::randn(dev, Shape{m, k}, 1).cast(dt), b = ops::randn(dev, Shape{k, n}, 2).cast(dt);
    const std::size_t es = half ? 2 : 4;
    // CLBlast gets the same values in buffers of its own context.
    const std::vector<unsigned char> ha = a.to_host_bytes(), hb = b.to_host_bytes();
    auto buffer = [&](const void* src, std::size_t bytes) {
      cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (src ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                                  const_cast<void*>(src), &err);
      check(err, "clCreateBuffer");
      return mem;
    };
    cl_mem ma = buffer(ha.data(), es * m * k), mb = buffer(hb.data(), es * k * n), mc = buffer(nullptr, es * m * n);

    auto run_torsh = [&] {
      ops::matmul(a, b);
      dev.synchronize();
    };
    auto run_clblast = [&] {
      const auto st =
          half ? clblast::Gemm<cl_half>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m,
                                        n, k, 0x3c00, ma, 0, k, mb, 0, n, 0, mc, 0, n, &q, nullptr)
               : clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m,
                                      n, k, 1.0f, ma, 0, k, mb, 0, n, 0.0f, mc, 0, n, &q, nullptr);
      check(clFinish(q), "clFinish");
      return st;
    };
    // CLBlast refuses HGEMM on devices without cl_khr_fp16 (PoCL's CPU device):
    // then torsh's side alone is timed and the line says why.
    const auto status = run_clblast();
    if (status != clblast::StatusCode::kSuccess) {
      std::vector<double> t;
      for (int r = 0; r < rounds * 3; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        run_torsh();
        t.push_back(seconds_since(t0));
      }
      std::printf(
          "{\"device\": \"%s\", \"dtype\": \"%s\", \"m\": %ld, \"n\": %ld, \"k\": %ld, "
          "\"torsh_best_gflops\": %.2f, \"clblast_status\": %d}\n",
          name, argv[2], m, n, k, 2.0 * m * n * k / *std::min_element(t.begin(), t.end()) / 1e9,
          static_cast<int>(status));
      for (cl_mem mem : {ma, mb, mc}) clReleaseMemObject(mem);
      continue;
    }
    const double flop = 2.0 * m * n * k;
    const int calls = std::clamp(static_cast<int>(2e9 / flop), 3, 32);
    auto block = [&](bool torsh_side) {
      if (torsh_side)
        run_torsh();
      else
        run_clblast();
      std::vector<double> t;
      for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (torsh_side)
          run_torsh();
        else
          run_clblast();
        t.push_back(seconds_since(t0));
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    std::vector<double> ratio;
    double best_t = 1e30, best_c = 1e30;
    for (int r = 0; r < rounds; ++r) {
      double tt = 0, tc = 0;
      for (int side = 0; side < 2; ++side) {
        const bool torsh_side = (side + r) % 2 == 0;
        (torsh_side ? tt : tc) = block(torsh_side);
      }
      best_t = std::min(best_t, tt);
      best_c = std::min(best_c, tc);
      ratio.push_back(tc / tt);
    }
    std::sort(ratio.begin(), ratio.end());
    std::printf(
        "{\"device\": \"%s\", \"dtype\": \"%s\", \"m\": %ld, \"n\": %ld, \"k\": %ld, \"rounds\": %d, "
        "\"torsh_best_gflops\": %.2f, \"clblast_best_gflops\": %.2f, \"ratio_median\": %.3f, \"ratio_q1\": %.3f, "
        "\"ratio_q3\": %.3f}\n",
        name, argv[2], m, n, k, rounds, flop / best_t / 1e9, flop / best_c / 1e9, ratio[ratio.size() / 2],
        ratio[ratio.size() / 4], ratio[3 * ratio.size() / 4]);
    std::fflush(stdout);
    for (cl_mem mem : {ma, mb, mc}) clReleaseMemObject(mem);
  }
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}
