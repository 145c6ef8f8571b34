// Sustained memory bandwidth (STREAM-style copy and triad) for 1..N threads, 256 MiB arrays.
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <vector>
int main() {
  const long n = 1L << 26;
  std::vector<float> a(n, 1), b(n, 2), c(n, 3);
  for (int nt = 1; nt <= omp_get_num_procs(); nt++) {
    omp_set_num_threads(nt);
    double copy = 1e9, triad = 1e9;
    for (int r = 0; r < 8; r++) {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for simd
      for (long i = 0; i < n; i++) a[i] = b[i];
      auto t1 = std::chrono::steady_clock::now();
#pragma omp parallel for simd
      for (long i = 0; i < n; i++) a[i] = b[i] + 1.5f * c[i];
      auto t2 = std::chrono::steady_clock::now();
      copy = std::min(copy, std::chrono::duration<double>(t1 - t0).count());
      triad = std::min(triad, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf(
        "{\"name\": \"stream_copy\", \"threads\": %d, \"gbps\": %.1f}\n{\"name\": \"stream_triad\", \"threads\": %d, "
        "\"gbps\": %.1f}\n",
        nt, 8.0 * n / copy / 1e9, nt, 12.0 * n / triad / 1e9);
  }
}
