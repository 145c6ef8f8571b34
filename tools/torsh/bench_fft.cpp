// FFT cases, named as scripts/fftw_peer.cpp and scripts/numpy_fft_peer.py
// name them: one out-of-place transform per call. GFLOP/s by FFTW's
// convention: 5 n log2 n for a complex transform, 2.5 n log2 n for a real one.
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
    if (wanted(c, c2c)) {
      Tensor x = ops::randn(d, Shape{n, 2}, 1);
      const double ms = median_ms(d, [&] { tf::fft(x); }, static_cast<int>(reps), c.min_seconds);
      emit(c, c2c, "f32", ms, "gflops", 5.0 * n * lg / ms / 1e6);
    }
    const std::string r2c = "rfft_f32_" + std::to_string(n);
    if (wanted(c, r2c)) {
      Tensor x = ops::randn(d, Shape{n}, 2);
      const double ms = median_ms(d, [&] { tf::rfft(x); }, static_cast<int>(reps), c.min_seconds);
      emit(c, r2c, "f32", ms, "gflops", 2.5 * n * lg / ms / 1e6);
    }
  }
  for (const std::int64_t n : {512, 2048}) {
    const std::string name = "fft2_c2c_f32_" + std::to_string(n);
    if (!wanted(c, name)) continue;
    Tensor x = ops::randn(d, Shape{n, n, 2}, 3);
    const double ms = median_ms(d, [&] { tf::fft2(x); }, 20, c.min_seconds);
    emit(c, name, "f32", ms, "gflops", 5.0 * n * n * std::log2(static_cast<double>(n * n)) / ms / 1e6);
  }
}

}  // namespace torsh::cli
