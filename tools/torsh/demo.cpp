// softmax(A @ B) on one device, checked against an f64 reference computed here
// on the host, independent of every backend's kernels.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {
namespace {

std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b, int m, int k, int n) {
  std::vector<double> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(a[i * k + p]) * double(b[p * n + j]);
      c[i * n + j] = s;
    }
    double mx = *std::max_element(c.begin() + i * n, c.begin() + (i + 1) * n), sum = 0;
    for (int j = 0; j < n; ++j) sum += std::exp(c[i * n + j] - mx);
    for (int j = 0; j < n; ++j) c[i * n + j] = std::exp(c[i * n + j] - mx) / sum;
  }
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int demo(const DemoOptions& opt) {
  const std::string want = opt.backend;
  const int size = opt.size;
  const auto type = backend_from_name(want);
  if (!type) {
    std::fprintf(stderr, "torsh demo: unknown backend '%s' (cpu, cuda, rocm, metal, webgpu, opencl, auto)\n", want.c_str());
    return 2;
  }
  Backend dev = Backend::create(*type);
  const int m = size, k = 2 * size, n = size;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);

  std::printf("torsh demo: softmax(A @ B, axis=-1), A %dx%d, B %dx%d, f32\n", m, k, k, n);
  std::printf("device: %s%s\n", dev.name().c_str(), *type == BackendType::Auto ? " [auto-selected]" : "");
  Tensor ta = dev.from_host(a.data(), Shape{m, k}, DType::F32);
  Tensor tb = dev.from_host(b.data(), Shape{k, n}, DType::F32);
  ops::reset_fallback_stats();
  std::vector<double> t_mm, t_sm;
  Tensor out;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    Tensor c = ops::matmul(ta, tb);
    dev.synchronize();
    auto t1 = std::chrono::steady_clock::now();
    out = ops::softmax(c, -1);
    dev.synchronize();
    auto t2 = std::chrono::steady_clock::now();
    t_mm.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    t_sm.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  const auto got = out.to_vector();
  const auto ref = reference(a, b, m, k, n);
  double err = 0;
  for (std::size_t i = 0; i < got.size(); ++i) err = std::max(err, std::abs(double(got[i]) - ref[i]));
  const double flops = 2.0 * m * n * k;
  std::printf("time: matmul %.3f ms (%.1f GFLOP/s), softmax %.3f ms (median of 5)\n", median(t_mm),
              flops / median(t_mm) / 1e6, median(t_sm));
  const auto fb = ops::fallback_stats();
  if (fb.ops) std::printf("note: %llu op(s) fell back to the CPU (%llu copies)\n", (unsigned long long)fb.ops,
                          (unsigned long long)fb.copies);
  const double tol = 1e-5;
  std::printf("max |error| vs f64 CPU reference: %.3g (tolerance %.0e): %s\n", err, tol, err <= tol ? "OK" : "FAILED");
  return err <= tol ? 0 : 1;
}

}  // namespace torsh::cli
