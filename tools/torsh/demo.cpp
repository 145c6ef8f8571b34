// softmax(A @ B) on one device, checked against an f64 reference computed here
// on the host, independent of every backend's kernels.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {
namespace {

std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t k,
                              std::size_t n) {
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t p = 0; p < k; ++p) s += double(a[i * k + p]) * double(b[p * n + j]);
      c[i * n + j] = s;
    }
    const auto row = c.begin() + static_cast<std::ptrdiff_t>(i * n);
    double mx = *std::max_element(row, row + static_cast<std::ptrdiff_t>(n)), sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += std::exp(c[i * n + j] - mx);
    for (std::size_t j = 0; j < n; ++j) c[i * n + j] = std::exp(c[i * n + j] - mx) / sum;
  }
  return c;
}

// Bytes the demo holds at size n, per n^2: A (n x 2n) and B (2n x n) in f32 on
// the host and again on the device, C and the softmax output on the device, the
// result read back (with its staging bytes) and the f64 reference. The device
// side is counted as host memory: on the CPU backend it is.
constexpr std::uint64_t kBytesPerSizeSquared = 8 + 8 + 8 + 8 + 4 + 4 + 4 + 4 + 8;

// Memory the demo may use now: MemAvailable (free pages where /proc is
// missing), lowered to the room left under a cgroup v2 limit (containers).
std::uint64_t available_memory() {
  std::uint64_t avail = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    std::uint64_t kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") avail = kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (!avail) avail = std::uint64_t(sysconf(_SC_AVPHYS_PAGES)) * std::uint64_t(sysconf(_SC_PAGESIZE));
  std::uint64_t max = 0, current = 0;
  if ((std::ifstream("/sys/fs/cgroup/memory.max") >> max) &&
      (std::ifstream("/sys/fs/cgroup/memory.current") >> current))
    avail = std::min(avail, max > current ? max - current : 0);
  return avail;
}

std::string gib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  return buf;
}

// The value of --size: a positive integer whose matrices and f64 reference fit
// in the memory available now (and whose 2n x n products fit an int).
struct SizeCheck {
  int size = 0;
  std::string error;  // empty when size is usable
};

SizeCheck check_size(const std::string& text) {
  long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc::result_out_of_range && text[0] != '-') {
    n = std::numeric_limits<long long>::max();  // refused below, with the memory it would take
    ec = std::errc();
  }
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    return {0, "--size '" + text + "' is not a positive integer"};
  const std::uint64_t avail = available_memory();
  const auto fits = static_cast<std::uint64_t>(std::sqrt(double(avail) / double(kBytesPerSizeSquared)));
  const std::uint64_t limit = std::min<std::uint64_t>(fits, std::numeric_limits<int>::max() / 2);
  if (static_cast<std::uint64_t>(n) > limit)
    return {0, "--size " + text + " needs about " + gib(double(n) * double(n) * double(kBytesPerSizeSquared)) +
                   " of memory (A, B, C and an f64 reference), " + gib(double(avail)) + " is available: use --size " +
                   std::to_string(limit) + " or less"};
  return {static_cast<int>(n), ""};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int demo(const DemoOptions& opt) {
  const std::string want = opt.backend;
  // A positive integer whose matrices fit in memory (checked here, with the numbers).
  const SizeCheck size_check = check_size(opt.size);
  if (!size_check.error.empty()) {
    std::fprintf(stderr, "torsh demo: %s\n", size_check.error.c_str());
    return 2;
  }
  const int size = size_check.size;
  const auto type = backend_from_name(want);
  if (!type) {
    std::fprintf(stderr, "torsh demo: unknown backend '%s' (cpu, cuda, rocm, metal, webgpu, opencl, auto)\n",
                 want.c_str());
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
  const auto ref = reference(a, b, std::size_t(m), std::size_t(k), std::size_t(n));
  double err = 0;
  for (std::size_t i = 0; i < got.size(); ++i) err = std::max(err, std::abs(double(got[i]) - ref[i]));
  const double flops = 2.0 * m * n * k;
  std::printf("time: matmul %.3f ms (%.1f GFLOP/s), softmax %.3f ms (median of 5)\n", median(t_mm),
              flops / median(t_mm) / 1e6, median(t_sm));
  const auto fb = ops::fallback_stats();
  if (fb.ops)
    std::printf("note: %llu op(s) fell back to the CPU (%llu copies)\n", (unsigned long long)fb.ops,
                (unsigned long long)fb.copies);
  const double tol = 1e-5;
  std::printf("max |error| vs f64 CPU reference: %.3g (tolerance %.0e): %s\n", err, tol, err <= tol ? "OK" : "FAILED");
  return err <= tol ? 0 : 1;
}

}  // namespace torsh::cli
