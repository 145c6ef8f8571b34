// torsh matmul against OpenBLAS cblas_sgemm in one process, for a ratio that
// a shared machine's load bursts move less than separate runs do. Each round
// runs a block of calls of each side, in alternating order, on the same
// inputs: one untimed call (wakes threads and caches), then `calls` timed
// ones whose median stands for the block. The figure is the median over
// rounds of the per-round ratio (OpenBLAS time / torsh time), with the
// quartiles, and each side's best block.
//
//   gemm-interleaved THREADS ROUNDS N [N ...]
//
// OpenBLAS's worker threads spin for a while after a call (2^28 cycles by
// default) and would take a core from the torsh block that follows, so a
// torsh block after an OpenBLAS one starts after a 0.3 s pause.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s THREADS ROUNDS N [N ...]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]), rounds = std::atoi(argv[2]);
  Backend dev = Backend::builder().backend_type(BackendType::Cpu).num_threads(threads).build();
  for (int ai = 3; ai < argc; ++ai) {
    const int n = std::atoi(argv[ai]);
    const Tensor a = ops::randn(dev, Shape{n, n}, 1), b = ops::randn(dev, Shape{n, n}, 2);
    const std::vector<float> ha = a.to_vector(), hb = b.to_vector();
    std::vector<float> hc(static_cast<std::size_t>(n) * n);
    auto run_torsh = [&] { ops::matmul(a, b); };
    auto run_openblas = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, ha.data(), n, hb.data(), n, 0.0f, hc.data(),
                  n);
    };
    const int calls = n <= 256 ? 64 : n <= 512 ? 16 : n <= 1024 ? 6 : 3;
    auto block = [&](bool torsh_side) {
      if (torsh_side)
        run_torsh();
      else
        run_openblas();
      std::vector<double> t;
      for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (torsh_side)
          run_torsh();
        else
          run_openblas();
        t.push_back(seconds_since(t0));
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    std::vector<double> ratio;
    double best_t = 1e30, best_o = 1e30;
    for (int r = 0; r < rounds; ++r) {
      double tt = 0, to = 0;
      for (int side = 0; side < 2; ++side) {
        const bool torsh_side = (side + r) % 2 == 0;
        if (torsh_side && side == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        (torsh_side ? tt : to) = block(torsh_side);
      }
      best_t = std::min(best_t, tt);
      best_o = std::min(best_o, to);
      ratio.push_back(to / tt);
    }
    std::sort(ratio.begin(), ratio.end());
    const double gf = 2.0 * n * n * n / 1e9;
    std::printf(
        "{\"name\": \"matmul_f32_%d\", \"threads\": %d, \"rounds\": %d, \"torsh_best_gflops\": %.1f, "
        "\"openblas_best_gflops\": %.1f, \"ratio_median\": %.3f, \"ratio_q1\": %.3f, \"ratio_q3\": %.3f}\n",
        n, threads, rounds, gf / best_t, gf / best_o, ratio[ratio.size() / 2], ratio[ratio.size() / 4],
        ratio[3 * ratio.size() / 4]);
  }
}
