// Peak fp32 FMA throughput per thread count: 16 independent AVX-512 (or AVX2) chains.
#include <immintrin.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#ifdef __AVX512F__
typedef __m512 V;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define LANES 16
static float sum(V v) { return _mm512_reduce_add_ps(v); }
#else
typedef __m256 V;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define LANES 8
static float sum(V v) {
  float t[8];
  _mm256_storeu_ps(t, v);
  return t[0];
}
#endif
static float work(long iters) {
  V a0 = SET1(1.000f), a1 = SET1(1.001f), a2 = SET1(1.002f), a3 = SET1(1.003f), a4 = SET1(1.004f), a5 = SET1(1.005f),
    a6 = SET1(1.006f), a7 = SET1(1.007f);
  V a8 = SET1(1.008f), a9 = SET1(1.009f), a10 = SET1(1.010f), a11 = SET1(1.011f), a12 = SET1(1.012f),
    a13 = SET1(1.013f), a14 = SET1(1.014f), a15 = SET1(1.015f);
  V b = SET1(0.999999f), c = SET1(1e-6f);
  for (long k = 0; k < iters; k++) {
    a0 = FMA(a0, b, c);
    a1 = FMA(a1, b, c);
    a2 = FMA(a2, b, c);
    a3 = FMA(a3, b, c);
    a4 = FMA(a4, b, c);
    a5 = FMA(a5, b, c);
    a6 = FMA(a6, b, c);
    a7 = FMA(a7, b, c);
    a8 = FMA(a8, b, c);
    a9 = FMA(a9, b, c);
    a10 = FMA(a10, b, c);
    a11 = FMA(a11, b, c);
    a12 = FMA(a12, b, c);
    a13 = FMA(a13, b, c);
    a14 = FMA(a14, b, c);
    a15 = FMA(a15, b, c);
  }
  V s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));
  V t = ADD(ADD(ADD(a8, a9), ADD(a10, a11)), ADD(ADD(a12, a13), ADD(a14, a15)));
  return sum(ADD(s, t));
}
int main() {
  int maxt = std::thread::hardware_concurrency();
  long iters = 100000000;
  for (int nt = 1; nt <= maxt; nt++) {
    double best = 0;
    for (int r = 0; r < 3; r++) {
      std::atomic<float> sink{0};
      auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> th;
      for (int t = 0; t < nt; t++) th.emplace_back([&] { sink = sink + work(iters); });
      for (auto& x : th) x.join();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double g = 2.0 * LANES * 16 * iters * nt / s / 1e9;
      if (g > best) best = g;
    }
    printf("{\"name\": \"fma_peak_f32\", \"threads\": %d, \"gflops\": %.1f}\n", nt, best);
  }
}
