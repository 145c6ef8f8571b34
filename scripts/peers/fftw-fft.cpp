// FFTW (single precision, threaded) as the peer of `torsh bench`'s FFT cases:
// one JSON object per line, same case names, "backend":"fftw".
//
//   fft_c2c_f32_<n>   1-D complex-to-complex forward, n complex64, out of place
//   rfft_f32_<n>      1-D real-to-complex forward, n float32 -> n/2+1 complex64
//   fft2_c2c_f32_<n>  2-D complex-to-complex forward, n x n complex64 (row-major), out of place
//
// Plans are made with FFTW_MEASURE and fftwf_plan_with_nthreads(--threads) on
// fftwf_malloc'd buffers; planning is not timed (FFTW's best case: torsh plans
// per call or caches). Unless --no-single, each case is also planned with 1
// thread and the faster of the two plans is reported ("threads" says which;
// see time_case). The input is filled with random data after planning
// (FFTW_MEASURE overwrites the arrays), then timed as `torsh bench` times a
// case: one warm-up fftwf_execute, then each call on its own with a steady
// clock, for at least --min-seconds and at least 3 calls (at most 10000); the
// median.
//
// FFTW is GPL: this file is a benchmark peer only, compiled by
// scripts/bench/fft.sh into a temporary binary, never linked into the library.
//
//   g++ -O2 -march=native scripts/peers/fftw-fft.cpp -o fftw-fft -lfftw3f_threads -lfftw3f -lpthread -lm
//   ./fftw-fft [--min-seconds S] [--filter SUBSTR] [--threads T] [--no-single]
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Args {
  double min_seconds = 0.3;
  std::string filter;
  int threads = 2;
  bool no_single = false;
};

[[noreturn]] void usage(const char* prog) {
  std::fprintf(stderr, "usage: %s [--min-seconds S] [--filter SUBSTR] [--threads T] [--no-single]\n", prog);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--no-single") {
      a.no_single = true;
      continue;
    }
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (k == "--min-seconds")
      a.min_seconds = std::atof(v);
    else if (k == "--filter")
      a.filter = v;
    else if (k == "--threads")
      a.threads = std::max(1, std::atoi(v));
    else
      usage(argv[0]);
  }
  return a;
}

// "fftw-3.3.10-sse2-avx" -> "3.3.10"
std::string version_number() {
  std::string v = fftwf_version;
  if (v.rfind("fftw-", 0) == 0) v = v.substr(5);
  if (auto dash = v.find('-'); dash != std::string::npos) v = v.substr(0, dash);
  return v;
}

double median_ms(fftwf_plan p, double min_seconds) {
  using clock = std::chrono::steady_clock;
  fftwf_execute(p);  // warm-up
  std::vector<double> times;
  const auto start = clock::now();
  for (int i = 0; i < 10000; ++i) {
    const auto t0 = clock::now();
    fftwf_execute(p);
    const auto t1 = clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i >= 2 && std::chrono::duration<double>(t1 - start).count() >= min_seconds) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

fftwf_complex* alloc_complex(size_t count) {
  return static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * count));
}

void fill(float* p, size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) p[i] = d(rng);
}

struct Timed {
  double ms;
  int threads;
};

// Plans the case with --threads threads and, unless --no-single or --threads 1,
// with 1 thread as well; fills the input once after planning (FFTW_MEASURE
// overwrites the arrays); times each plan; keeps the faster. FFTW_MEASURE
// alone does not always pick the single-threaded plan where it is faster: on
// a 2-vCPU VM it chose a threaded plan for n = 1024 that takes ~90 us a call
// against ~0.7 us for the 1-thread plan (the worker wake-up dominates).
template <class MakePlan, class Fill>
Timed time_case(const Args& a, MakePlan make_plan, Fill fill_input) {
  std::vector<std::pair<int, fftwf_plan>> plans;
  if (a.threads > 1 && !a.no_single) plans.emplace_back(1, nullptr);
  plans.emplace_back(a.threads, nullptr);
  for (auto& [t, p] : plans) {
    fftwf_plan_with_nthreads(t);
    p = make_plan();
    if (!p) {
      std::fprintf(stderr, "FFTW planning failed\n");
      std::exit(1);
    }
  }
  fill_input();
  Timed best{std::numeric_limits<double>::infinity(), a.threads};
  for (auto& [t, p] : plans) {
    const double ms = median_ms(p, a.min_seconds);
    if (ms < best.ms) best = {ms, t};
    fftwf_destroy_plan(p);
  }
  return best;
}

void report(const std::string& name, Timed t, double flop, const Args& a, const std::string& ver) {
  std::string note = "FFTW " + ver + " FFTW_MEASURE, " + std::to_string(t.threads) + " threads";
  if (t.threads != a.threads) note += " (faster than " + std::to_string(a.threads) + " here)";
  std::printf(
      "{\"name\":\"%s\",\"backend\":\"fftw\",\"dtype\":\"f32\",\"median_ms\":%.6g,\"gflops\":%.4g,"
      "\"threads\":%d,\"note\":\"%s\"}\n",
      name.c_str(), t.ms, flop / t.ms / 1e6, t.threads, note.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (!fftwf_init_threads()) {
    std::fprintf(stderr, "fftwf_init_threads failed\n");
    return 1;
  }
  const std::string ver = version_number();
  std::mt19937 rng(7);

  const int sizes_1d[] = {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20};
  for (int n : sizes_1d) {
    const std::string name = "fft_c2c_f32_" + std::to_string(n);
    if (name.find(a.filter) == std::string::npos) continue;
    auto* in = alloc_complex(size_t(n));
    auto* out = alloc_complex(size_t(n));
    const Timed t = time_case(
        a, [&] { return fftwf_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_MEASURE); },
        [&] { fill(reinterpret_cast<float*>(in), 2 * size_t(n), rng); });
    report(name, t, 5.0 * n * std::log2(double(n)), a, ver);
    fftwf_free(in);
    fftwf_free(out);
  }
  for (int n : sizes_1d) {
    const std::string name = "rfft_f32_" + std::to_string(n);
    if (name.find(a.filter) == std::string::npos) continue;
    float* in = static_cast<float*>(fftwf_malloc(sizeof(float) * size_t(n)));
    auto* out = alloc_complex(size_t(n) / 2 + 1);
    const Timed t = time_case(
        a, [&] { return fftwf_plan_dft_r2c_1d(n, in, out, FFTW_MEASURE); }, [&] { fill(in, size_t(n), rng); });
    report(name, t, 2.5 * n * std::log2(double(n)), a, ver);
    fftwf_free(in);
    fftwf_free(out);
  }
  for (int n : {512, 2048}) {
    const std::string name = "fft2_c2c_f32_" + std::to_string(n);
    if (name.find(a.filter) == std::string::npos) continue;
    const size_t N = size_t(n) * n;
    auto* in = alloc_complex(N);
    auto* out = alloc_complex(N);
    const Timed t = time_case(
        a, [&] { return fftwf_plan_dft_2d(n, n, in, out, FFTW_FORWARD, FFTW_MEASURE); },
        [&] { fill(reinterpret_cast<float*>(in), 2 * N, rng); });
    report(name, t, 5.0 * double(N) * std::log2(double(N)), a, ver);
    fftwf_free(in);
    fftwf_free(out);
  }
  fftwf_cleanup_threads();
  return 0;
}
