#include "clblast_gemm.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "graph.hpp"

#if TORSH_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace torsh::opencl {

#if TORSH_HAVE_CLBLAST
namespace {

std::mutex failed_mu;
std::set<std::pair<cl_device_id, DType>> failed;  // CLBlast returned an error here once

// A rows x cols operand with strides (rs, cs) as a BLAS row-major matrix:
// plain (unit column stride) or transposed (unit row stride), with its
// leading dimension. A dimension of extent 1 takes any stride.
struct Blas {
  bool ok = false;
  clblast::Transpose trans = clblast::Transpose::kNo;
  std::size_t ld = 0;
};
Blas as_blas(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= cols))
    return {true, clblast::Transpose::kNo, static_cast<std::size_t>(rows == 1 ? cols : rs)};
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= rows))
    return {true, clblast::Transpose::kYes, static_cast<std::size_t>(cols == 1 ? rows : cs)};
  return {};
}

template <class T>
clblast::StatusCode gemm(const rt::MatmulArgs& a, T alpha, T beta, cl_command_queue* q) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2], k = a.a.shape[2];
  const Blas A = as_blas(m, k, a.a.strides[1], a.a.strides[2]), B = as_blas(k, n, a.b.strides[1], a.b.strides[2]);
  const auto u = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  const std::size_t ldc = u(m == 1 ? n : a.out.strides[1]);
  const cl_mem am = mem_of(*a.a.buffer), bm = mem_of(*a.b.buffer), cm = mem_of(*a.out.buffer);
  if (batch == 1)
    return clblast::Gemm<T>(clblast::Layout::kRowMajor, A.trans, B.trans, u(m), u(n), u(k), alpha, am, u(a.a.offset),
                            A.ld, bm, u(a.b.offset), B.ld, beta, cm, u(a.out.offset), ldc, q, nullptr);
  return clblast::GemmStridedBatched<T>(clblast::Layout::kRowMajor, A.trans, B.trans, u(m), u(n), u(k), alpha, am,
                                        u(a.a.offset), A.ld, u(a.a.strides[0]), bm, u(a.b.offset), B.ld,
                                        u(a.b.strides[0]), beta, cm, u(a.out.offset), ldc, u(a.out.strides[0]),
                                        u(batch), q, nullptr);
}

}  // namespace

bool clblast_available(OpenClDevice& dev, DType t) {
  static const bool off = [] {
    const char* v = std::getenv("TORSH_OPENCL_CLBLAST");
    return v != nullptr && std::strcmp(v, "0") == 0;
  }();
  if (off) return false;
  if (t != DType::F32 && !(t == DType::F16 && dev.capabilities().f16)) return false;
  std::lock_guard lk(failed_mu);
  return !failed.count({dev.id(), t});
}

bool clblast_fits(OpenClStream& s, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2], k = a.a.shape[2];
  if (k == 0 || a.out.numel() == 0 || !clblast_available(s.device(), a.out.dtype) || recording(s)) return false;
  if (!as_blas(m, k, a.a.strides[1], a.a.strides[2]).ok || !as_blas(k, n, a.b.strides[1], a.b.strides[2]).ok)
    return false;
  if (!(n == 1 || a.out.strides[2] == 1) || !(m == 1 || a.out.strides[1] >= n)) return false;
  return batch == 1 || (a.a.strides[0] > 0 && a.b.strides[0] > 0 && a.out.strides[0] > 0);
}

bool clblast_preferred(const rt::MatmulArgs& a) {
  // CLBlast's SGEMM is the faster from 64^3 multiply-adds up; below, its
  // fixed cost per call dominates, so the plugin's kernel keeps the small ones
  // (src/backends/gpu/README.md, opencl/clblast_gemm.cpp).
  const std::int64_t macs = a.out.shape[0] * a.out.shape[1] * a.out.shape[2] * a.a.shape[2];
  return a.out.dtype == DType::F32 && macs >= (std::int64_t{1} << 18);
}

bool clblast_gemm(OpenClStream& s, const rt::MatmulArgs& a) {
  if (!clblast_fits(s, a)) return false;
  cl_command_queue q = s.queue();
  const clblast::StatusCode st = a.out.dtype == DType::F32
                                     ? gemm<float>(a, a.alpha, a.beta, &q)
                                     : gemm<cl_half>(a, f32_to_f16(a.alpha), f32_to_f16(a.beta), &q);
  if (st != clblast::StatusCode::kSuccess) {
    std::lock_guard lk(failed_mu);
    failed.insert({s.device().id(), a.out.dtype});
    return false;
  }
  check_cl(clFlush(q), "clFlush", s.device().label());
  s.enqueued();
  return true;
}

#else

bool clblast_available(OpenClDevice&, DType) { return false; }
bool clblast_fits(OpenClStream&, const rt::MatmulArgs&) { return false; }
bool clblast_preferred(const rt::MatmulArgs&) { return false; }
bool clblast_gemm(OpenClStream&, const rt::MatmulArgs&) { return false; }

#endif

}  // namespace torsh::opencl
