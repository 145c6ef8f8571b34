// Every op case of backend_ops/cases.cpp on every device of every non-CPU
// backend, against the CPU backend (the idea of ggml's test-backend-ops).
// One test per device: it runs each case on the CPU and on the device from
// the same inputs, compares the outputs with the case's dtype-aware
// tolerance, checks that an op the device claims (Backend::supports) did not
// fall back to the CPU, and prints how many cases ran natively, fell back or
// failed. Backends without a device get one test that skips with the reason.
//
// TORSH_BACKEND_OPS=<text> runs only the cases whose description contains
// <text>; TORSH_BACKEND_OPS_VERBOSE=1 prints every case with its error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "backend_ops/cases.hpp"
#include "device_test_util.hpp"
#include "torsh/torsh.hpp"

using namespace torsh;
using backend_ops::Case;
using backend_ops::Input;
using backend_ops::Outputs;
using backend_ops::Tol;
using backend_ops::Values;
using torsh::test::device_targets;
using torsh::test::Target;
using torsh::test::target_label;

namespace {

// ---------------------------------------------------------------- devices

const std::vector<Case>& cases() {
  static const std::vector<Case> all = backend_ops::all_cases();
  return all;
}

// ---------------------------------------------------------------- inputs

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The input's host values in its dtype, drawn from a seed of the case and the input's position.
std::vector<unsigned char> host_values(const Input& in, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(in.shape.numel());
  const std::size_t es = dtype_size(in.dtype);
  std::vector<unsigned char> bytes(n * es);
  std::mt19937_64 g(seed);
  double lo = in.lo, hi = in.hi;
  if (!is_floating(in.dtype)) {
    double tmin = 0, tmax = 1;
    switch (in.dtype) {
      case DType::I8: tmin = -128, tmax = 127; break;
      case DType::U8: tmin = 0, tmax = 255; break;
      case DType::I32: tmin = -2147483648.0, tmax = 2147483647.0; break;
      case DType::I64: tmin = -9.0e15, tmax = 9.0e15; break;
      default: break;  // bool: 0 or 1
    }
    // Explicit values (vals) are clamped to the dtype only, not to the default range.
    lo = std::ceil(in.values.empty() ? std::max(lo, tmin) : tmin);
    hi = std::floor(in.values.empty() ? std::min(hi, tmax) : tmax);
    if (in.dtype == DType::Bool) lo = 0, hi = 1;
  }
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::size_t i = 0; i < n; ++i) {
    double v;
    if (!in.values.empty())
      v = in.values[i % in.values.size()];
    else if (is_floating(in.dtype))
      v = u(g);
    else
      v = std::floor(lo + (hi - lo + 1) * std::uniform_real_distribution<double>(0, 1)(g));
    if (!is_floating(in.dtype)) v = std::min(std::max(v, lo), hi);
    store_from_double(bytes.data() + i * es, in.dtype, v);
  }
  for (const auto& [i, v] : in.sets)
    if (i >= 0 && static_cast<std::size_t>(i) < n)
      store_from_double(bytes.data() + static_cast<std::size_t>(i) * es, in.dtype, v);
  return bytes;
}

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<unsigned char> bytes;
  double at(std::size_t i) const { return load_as_double(bytes.data() + i * dtype_size(dtype), dtype); }
  std::vector<double> values() const {
    std::vector<double> v(static_cast<std::size_t>(shape.numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = at(i);
    return v;
  }
};

HostTensor to_host(const Tensor& t) { return {t.dtype(), t.shape(), t.to_host_bytes()}; }

// ---------------------------------------------------------------- comparison

std::string num(double v) {
  std::ostringstream os;
  os << std::setprecision(9) << v;
  return os.str();
}

std::string coords(const Shape& s, std::size_t flat) {
  std::vector<std::int64_t> c(s.ndim());
  auto rest = static_cast<std::int64_t>(flat);
  for (std::size_t d = s.ndim(); d-- > 0;) {
    c[d] = s[d] ? rest % s[d] : 0;
    rest = s[d] ? rest / s[d] : 0;
  }
  std::string out = "[";
  for (std::size_t d = 0; d < c.size(); ++d) out += (d ? ", " : "") + std::to_string(c[d]);
  return out + "]";
}

constexpr double kInfError = std::numeric_limits<double>::infinity();

// |got - want| / max(1, |want|); NaN must meet NaN and an infinity the same infinity.
double element_error(double got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0.0 : kInfError;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0.0 : kInfError;
  return std::abs(got - want) / std::max(1.0, std::abs(want));
}

struct Mismatch {
  double max_error = 0;
  std::size_t index = 0;
  double got = 0, want = 0;
};

Mismatch worst(const std::vector<double>& got, const std::vector<double>& want,
               const std::vector<unsigned char>* got_bytes, const std::vector<unsigned char>* want_bytes,
               std::size_t elem) {
  Mismatch m;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double e = element_error(got[i], want[i]);
    // Integers and bools compare as bits (i64 beyond 2^53 would round as doubles).
    if (got_bytes && e == 0 && std::memcmp(got_bytes->data() + i * elem, want_bytes->data() + i * elem, elem) != 0)
      e = std::numeric_limits<double>::min();
    if (e > m.max_error) m = {e, i, got[i], want[i]};
  }
  return m;
}

// A case that throws counts as failed only; every other case as native,
// fallback (at least one op ran on the CPU) or empty (no output, no launch).
struct Tally {
  int cases = 0, native = 0, fallback = 0, empty = 0, failed = 0;
  void operator+=(const Tally& o) {
    cases += o.cases, native += o.native, fallback += o.fallback, empty += o.empty, failed += o.failed;
  }
};

// Runs one case on `cpu` and `dev`; adds to `tally` and reports failures through gtest.
// WGSL has no way to forbid a driver from contracting or reordering float
// arithmetic. prelude.wgsl's unfused() stops the contractions seen, yet
// NVIDIA's Vulkan compiler (driver 580, H100) still moves the last bit of a
// few randn values. On a GPU's WebGPU the Box-Muller cases are held to 2 ulps;
// lavapipe (a CPU device) stays bit for bit, as every other backend.
Tol tolerance_on(const Backend& dev, const Case& c) {
  if (dev.type() == BackendType::WebGpu && dev.info().kind != DeviceKind::Cpu && c.kind == rt::OpKind::Random &&
      c.describe().find("randn") != std::string::npos)
    return Tol::ulp(2);
  return c.tol;
}

void run_case(const Case& c, Backend& dev, Backend& cpu, Tally& tally, bool verbose) {
  tally.cases++;
  const std::string what = c.describe() + " on " + dev.name();
  std::vector<std::vector<unsigned char>> data;
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    data.push_back(host_values(c.inputs[i], fnv1a(c.describe() + "#" + std::to_string(i))));
  const auto upload = [&](Backend& b) {
    std::vector<Tensor> v;
    for (std::size_t i = 0; i < c.inputs.size(); ++i)
      v.push_back(c.inputs[i].view_of(b.from_host(data[i].data(), c.inputs[i].shape, c.inputs[i].dtype)));
    return v;
  };
  const auto fail = [&](const std::string& msg) {
    tally.failed++;
    ADD_FAILURE() << what << ": " << msg;
  };

  // The CPU's result is the reference.
  std::vector<HostTensor> want;
  Values inputs_seen;
  try {
    std::vector<Tensor> x = upload(cpu);
    if (c.reference)
      for (const Tensor& t : x) inputs_seen.push_back(to_host(t).values());
    for (const Tensor& t : c.run(cpu, x)) want.push_back(to_host(t));
  } catch (const std::exception& e) {
    fail(std::string("the CPU backend threw: ") + e.what());
    return;
  }

  // The device: everything the case launches must run there if the device claims it.
  std::vector<Tensor> x;
  Outputs got;
  bool claimed = dev.supports(c.kind, c.dtype);
  const bool kind_claimed = claimed;
  if (c.copies) claimed = claimed && dev.supports(rt::OpKind::Copy, c.dtype);
  for (const auto& [k, t] : c.needs) claimed = claimed && dev.supports(k, t);
  std::uint64_t fell_back = 0;
  try {
    x = upload(dev);
    for (const Tensor& t : x)
      if (!t.is_contiguous()) claimed = claimed && dev.supports(rt::OpKind::Copy, t.dtype());  // made contiguous first
    const std::uint64_t before = ops::fallback_stats().ops;
    got = c.run(dev, x);
    fell_back = ops::fallback_stats().ops - before;
  } catch (const std::exception& e) {
    fail(std::string("threw on the device: ") + e.what());
    return;
  }
  bool any_output = false;
  for (const Tensor& t : got) any_output = any_output || t.numel() > 0;
  const char* ran = fell_back ? "fell back to the CPU" : any_output ? "ran natively" : "launched nothing (empty)";
  (fell_back ? tally.fallback : any_output ? tally.native : tally.empty)++;
  const int failed_before = tally.failed;
  const std::string kind = std::string(rt::op_kind_name(c.kind)) + " for " + std::string(dtype_name(c.dtype));
  if (claimed && fell_back)
    fail(std::to_string(fell_back) + " op(s) fell back to the CPU although the device claims " + kind);
  if (!kind_claimed && any_output && !fell_back) fail("the device does not claim " + kind + ", yet nothing fell back");

  if (got.size() != want.size()) {
    fail(std::to_string(got.size()) + " outputs, the CPU gave " + std::to_string(want.size()));
    return;
  }
  double worst_ratio = 0;
  for (std::size_t j = 0; j < got.size(); ++j) {
    const std::string out_name =
        "output " + std::to_string(j) + " " + std::string(dtype_name(want[j].dtype)) + want[j].shape.to_string();
    if (got[j].device() != dev.device()) {
      fail(out_name + " is on " + got[j].device().to_string() + ", not on the device");
      continue;
    }
    if (got[j].dtype() != want[j].dtype || got[j].shape() != want[j].shape) {
      fail(out_name + ": the device gave " + got[j].describe());
      continue;
    }
    const HostTensor g = to_host(got[j]);
    const std::vector<double> gv = g.values();
    const bool bits = !is_floating(g.dtype);
    const auto report = [&](const Mismatch& m, const char* against, const Tol& t) {
      const double tol = t.for_dtype(g.dtype);
      if (tol > 0) worst_ratio = std::max(worst_ratio, m.max_error / tol);
      if (m.max_error <= tol) return;
      fail(out_name + " (" + ran + "): max error " + num(m.max_error) + " at " + coords(g.shape, m.index) + " (got " +
           num(m.got) + ", " + against + " " + num(m.want) + ") exceeds the tolerance " + t.describe(g.dtype) +
           "; error = |got - want| / max(1, |want|)");
    };
    report(worst(gv, want[j].values(), bits ? &g.bytes : nullptr, bits ? &want[j].bytes : nullptr, dtype_size(g.dtype)),
           "the CPU gave", tolerance_on(dev, c));
    if (j == 0 && c.reference) {
      const std::vector<double> ref = c.reference(inputs_seen);
      if (ref.size() != gv.size())
        fail(out_name + ": the reference has " + std::to_string(ref.size()) + " values");
      else
        report(worst(gv, ref, nullptr, nullptr, 0), "the f64 reference gave",
               !fell_back && c.reference_tol ? *c.reference_tol : c.tol);
    }
  }
  if (c.check) {
    Values outs;
    for (const Tensor& t : got) outs.push_back(to_host(t).values());
    const std::string wrong = c.check(outs);
    if (!wrong.empty()) fail(wrong);
  }
  if (verbose)
    std::cout << "[ backend-ops ] " << (tally.failed > failed_before ? "FAIL " : "ok   ") << std::left << std::setw(22)
              << ran << " error/tolerance " << std::setprecision(3) << worst_ratio << "  " << c.describe() << std::endl;
}

void print_row(const std::string& label, const Tally& t) {
  std::cout << "[ backend-ops ]   " << std::left << std::setw(12) << label << std::right << std::setw(7) << t.cases
            << std::setw(8) << t.native << std::setw(10) << t.fallback << std::setw(7) << t.empty << std::setw(8)
            << t.failed << "\n";
}

class BackendOps : public ::testing::TestWithParam<Target> {};

TEST_P(BackendOps, MatchTheCpuBackend) {
  const Target& t = GetParam();
  if (t.index < 0) {
    std::cout << "[ backend-ops ] " << backend_name(t.type) << ": no device, skipped: " << t.reason << std::endl;
    GTEST_SKIP() << backend_name(t.type) << " unavailable: " << t.reason;
  }
  Backend dev = Backend::create(t.type, t.index);
  Backend cpu = Backend::create(BackendType::Cpu);
  const char* filter = std::getenv("TORSH_BACKEND_OPS");
  const char* verbose_env = std::getenv("TORSH_BACKEND_OPS_VERBOSE");
  const bool verbose = verbose_env && *verbose_env && std::string(verbose_env) != "0";

  std::vector<std::pair<std::string, Tally>> families;
  Tally total;
  for (const Case& c : cases()) {
    if (filter && *filter && c.describe().find(filter) == std::string::npos) continue;
    if (families.empty() || families.back().first != c.family) families.push_back({c.family, {}});
    Tally one;
    run_case(c, dev, cpu, one, verbose);
    families.back().second += one;
    total += one;
  }
  EXPECT_GT(total.cases, 0) << "no case matched TORSH_BACKEND_OPS=" << (filter ? filter : "");

  std::cout << "[ backend-ops ] " << dev.name() << "\n";
  std::cout << "[ backend-ops ]   " << std::left << std::setw(12) << "family" << std::right << std::setw(7) << "cases"
            << std::setw(8) << "native" << std::setw(10) << "fallback" << std::setw(7) << "empty" << std::setw(8)
            << "failed"
            << "\n";
  for (const auto& [name, tally] : families) print_row(name, tally);
  print_row("total", total);
  std::cout << "[ backend-ops ] " << dev.name() << ": " << total.cases << " cases, " << total.native << " native, "
            << total.fallback << " fell back to the CPU, " << total.empty << " empty (no launch), " << total.failed
            << " failed" << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Devices, BackendOps, ::testing::ValuesIn(device_targets(false)),
                         [](const ::testing::TestParamInfo<Target>& info) { return target_label(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendOps);

}  // namespace
