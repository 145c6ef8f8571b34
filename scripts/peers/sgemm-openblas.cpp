// OpenBLAS cblas_sgemm, square sizes: one JSON line per size, named as in the `torsh bench` suite (median time).
#include <cblas.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
  std::vector<int> sizes = {64, 128, 256, 512, 1024, 2048, 4096};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; i++) sizes.push_back(std::atoi(argv[i]));
  }
  for (int n : sizes) {
    std::vector<float> A(size_t(n) * n), B(size_t(n) * n), C(size_t(n) * n);
    for (auto& x : A) x = std::rand() / float(RAND_MAX);
    for (auto& x : B) x = std::rand() / float(RAND_MAX);
    int reps = n <= 512 ? 50 : n <= 1024 ? 10 : 3;
    std::vector<double> t;
    for (int r = 0; r <= reps; r++) {
      auto t0 = std::chrono::steady_clock::now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, A.data(), n, B.data(), n, 0, C.data(), n);
      if (r > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    double med = t[t.size() / 2];
    std::printf(
        "{\"name\": \"matmul_f32_%d\", \"backend\": \"openblas\", \"dtype\": \"f32\", \"median_ms\": %.5f, \"gflops\": "
        "%.1f}\n",
        n, med * 1e3, 2.0 * n * n * n / med / 1e9);
  }
}
