// The CPU FFT against fftwf_execute (FFTW_MEASURE, one thread) in one
// process: the transform alone (torsh::cpu::fft::forward_pairs on the
// calling thread, no op layer), the op call returning a new tensor
// (ops::fft::fft, "eager") and the op call into a tensor allocated once
// (ops::fft::fft_out, "out="). Blocks of calls of each form alternate with
// FFTW's on the same input; each figure is the median over rounds of the
// per-round ratio (FFTW time / torsh time) with its range, beside the median
// times. Every output is checked against FFTW's (relative error printed).
// This is the in-process ratio of BENCHMARKS.md's FFT sections, tighter than
// separate runs on a shared machine; under TORSH_CPU_ISA=avx2 it measures the
// 256-bit stages.
//
//   fft-interleaved ROUNDS N [N ...]
//
// FFTW is GPL: this file is a benchmark peer only, compiled by
// scripts/bench/fft-interleaved.sh into a temporary binary, never linked into the library.
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backends/cpu/fft/fft_plan.hpp"
#include "torsh/torsh.hpp"

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// A 64-byte aligned float array.
struct AlignedFloats {
  explicit AlignedFloats(std::size_t n)
      : n_(n), p_(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {
    std::fill(p_, p_ + n_, 0.0f);
  }
  ~AlignedFloats() { std::free(p_); }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  float* data() { return p_; }
  float& operator[](std::size_t i) { return p_[i]; }
  float* begin() { return p_; }
  float* end() { return p_ + n_; }

 private:
  std::size_t n_;
  float* p_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ROUNDS N [N ...]\n", argv[0]);
    return 2;
  }
  namespace tf = torsh::cpu::fft;
  const int rounds = std::max(1, std::atoi(argv[1]));
  for (int a = 2; a < argc; ++a) {
    const long n = std::atol(argv[a]);
    if (n < 1) {
      std::fprintf(stderr, "bad length %s\n", argv[a]);
      return 2;
    }
    const auto plan = tf::plan_for<float>(n);
    // 64-byte aligned, as the library's own buffers are (FFTW's come from
    // fftwf_alloc_complex, aligned for its vectors): from a std::vector (16
    // bytes) most 512-bit loads split a cache line, which on an Intel core
    // made the transform up to 1.6x slower.
    AlignedFloats x(2 * n), y(2 * n), work(2 * plan->work_size());
    fftwf_complex* fi = fftwf_alloc_complex(n);
    fftwf_complex* fo = fftwf_alloc_complex(n);
    fftwf_plan fp = fftwf_plan_dft_1d(static_cast<int>(n), fi, fo, FFTW_FORWARD, FFTW_MEASURE);
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (auto& v : x) v = dist(gen);
    for (long i = 0; i < n; ++i) fi[i][0] = x[2 * i], fi[i][1] = x[2 * i + 1];
    tf::forward_pairs<float>(*plan, x.data(), y.data(), false, 1.0f, work.data(), 1);
    fftwf_execute(fp);
    double err = 0, scale = 0;
    for (long i = 0; i < n; ++i) {
      err = std::max(err, std::hypot(double(y[2 * i]) - fo[i][0], double(y[2 * i + 1]) - fo[i][1]));
      scale = std::max(scale, std::hypot(double(fo[i][0]), double(fo[i][1])));
    }
    // The op forms run on the CPU backend with the pool's 64-byte aligned buffers.
    torsh::Backend cpu = torsh::Backend::create(torsh::BackendType::Cpu);
    torsh::Tensor xt = cpu.from_host(x.data(), torsh::Shape{n, 2}, torsh::DType::F32);
    torsh::Tensor ot = cpu.empty(xt.shape(), torsh::DType::F32);
    torsh::ops::fft::fft_out(xt, ot);
    {
      const std::vector<float> yo = torsh::ops::fft::fft(xt).to_vector(), yt = ot.to_vector();
      for (long i = 0; i < n; ++i) {
        err = std::max(err, std::hypot(double(yo[2 * i]) - fo[i][0], double(yo[2 * i + 1]) - fo[i][1]));
        err = std::max(err, std::hypot(double(yt[2 * i]) - fo[i][0], double(yt[2 * i + 1]) - fo[i][1]));
      }
    }
    const long calls = std::max(20L, 2000000L / n);
    auto time_of = [&](auto&& call) {
      const double t0 = now_s();
      for (long i = 0; i < calls; ++i) call();
      return (now_s() - t0) / calls * 1e6;
    };
    const auto transform = [&] { tf::forward_pairs<float>(*plan, x.data(), y.data(), false, 1.0f, work.data(), 1); };
    const auto eager = [&] { torsh::Tensor r = torsh::ops::fft::fft(xt); };
    const auto out = [&] { torsh::ops::fft::fft_out(xt, ot); };
    const auto peer = [&] { fftwf_execute(fp); };
    // Per form: its times, FFTW's in the same round, and their ratios.
    std::vector<double> ours[3], theirs[3], ratio[3];
    for (int r = 0; r < rounds; ++r) {
      for (int f = 0; f < 3; ++f) {
        const double t = f == 0 ? time_of(transform) : f == 1 ? time_of(eager) : time_of(out);
        const double p = time_of(peer);
        ours[f].push_back(t), theirs[f].push_back(p), ratio[f].push_back(p / t);
      }
    }
    static const char* const kForm[3] = {"transform", "eager", "out="};
    for (int f = 0; f < 3; ++f)
      std::printf("n=%-8ld %-9s torsh %.3f us  FFTW %.3f us  FFTW / torsh %.3fx [%.3f .. %.3f]\n", n, kForm[f],
                  median(ours[f]), median(theirs[f]), median(ratio[f]),
                  *std::min_element(ratio[f].begin(), ratio[f].end()),
                  *std::max_element(ratio[f].begin(), ratio[f].end()));
    std::printf("n=%-8ld relative error of every form against FFTW %.1e\n", n, err / scale);
    fftwf_destroy_plan(fp);
    fftwf_free(fi);
    fftwf_free(fo);
  }
}
