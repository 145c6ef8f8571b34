// FFT cases, named as scripts/peers/fftw-fft.cpp and scripts/peers/numpy-fft.py
// name them: one out-of-place transform per call. GFLOP/s by FFTW's
// convention: 5 n log2 n for a complex transform, 2.5 n log2 n for a real one.
// Each 1-D case also runs into an output allocated once ("..._out", the
// op's out= form: checks and dispatch on every call, no allocation) and as a
// replayed graph ("..._replay": the same buffers, the kernel resolved once).
// FFTW's fftw_execute of a plan made in advance sits between the two; the
// eager op also allocates its output on every call.
#include <cmath>
#include <string>

#include "bench_common.hpp"

namespace torsh::cli {

void bench_fft(Ctx& c) {
  Backend& d = c.dev;
  namespace tf = ops::fft;
  for (int lg = 10; lg <= 20; lg += 2) {
    const std::int64_t n = std::int64_t{1} << lg;
    const double reps = n >= (1 << 16) ? 50 : 2000;
    const std::string c2c = "fft_c2c_f32_" + std::to_string(n);
    const auto forms = [&](const std::string& name, const Shape& shape, std::uint64_t seed, Tensor (*op)(const Tensor&),
                           void (*op_out)(const Tensor&, Tensor&), double flops) {
      const bool eager = wanted(c, name), into = wanted(c, name + "_out"), replay = wanted(c, name + "_replay");
      if (!eager && !into && !replay) return;
      const Tensor x = ops::randn(d, shape, seed);
      if (eager) {
        const double ms = median_ms(
            d, [&] { op(x); }, static_cast<int>(reps), c.min_seconds);
        emit(c, name, "f32", ms, "gflops", flops / ms / 1e6);
      }
      if (into) {
        Tensor y = op(x);
        const double ms = median_ms(
            d, [&] { op_out(x, y); }, static_cast<int>(reps), c.min_seconds);
        emit(c, name + "_out", "f32", ms, "gflops", flops / ms / 1e6);
      }
      if (replay) {
        Graph g;
        {
          GraphCapture cap(d);
          op(x);
          g = cap.end();
        }
        const double ms = median_ms(
            d, [&] { g.replay(); }, static_cast<int>(reps), c.min_seconds);
        emit(c, name + "_replay", "f32", ms, "gflops", flops / ms / 1e6, g.replay_mode());
      }
    };
    forms(
        c2c, Shape{n, 2}, 1, [](const Tensor& x) { return tf::fft(x); },
        [](const Tensor& x, Tensor& y) { tf::fft_out(x, y); }, 5.0 * n * lg);
    forms(
        "rfft_f32_" + std::to_string(n), Shape{n}, 2, [](const Tensor& x) { return tf::rfft(x); },
        [](const Tensor& x, Tensor& y) { tf::rfft_out(x, y); }, 2.5 * n * lg);
  }
  for (const std::int64_t n : {512, 2048}) {
    const std::string name = "fft2_c2c_f32_" + std::to_string(n);
    if (!wanted(c, name)) continue;
    Tensor x = ops::randn(d, Shape{n, n, 2}, 3);
    const double ms = median_ms(
        d, [&] { tf::fft2(x); }, 20, c.min_seconds);
    emit(c, name, "f32", ms, "gflops", 5.0 * n * n * std::log2(static_cast<double>(n * n)) / ms / 1e6);
  }
}

}  // namespace torsh::cli
