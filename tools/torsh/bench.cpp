// `torsh bench`: the fixed benchmark suite. One JSON object per line with the
// case names of scripts/peers so results join by name; byte and flop counts
// use the same formulas as the peers' script so ratios compare like with like.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "commands.hpp"
#include "torsh/torsh.hpp"

namespace torsh::cli {

double median_ms(Backend& dev, const std::function<void()>& fn, int max_reps, double min_seconds) {
  fn();  // warm up: first-touch pages, pool spin-up, kernel compilation
  dev.synchronize();
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < max_reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    dev.synchronize();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (i >= 2 && std::chrono::duration<double>(t1 - start).count() > min_seconds) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

namespace {

// The CPU kernel family a case runs, as DeviceInfo::kernel_variants names it.
const char* cpu_family_of(const std::string& name) {
  struct Prefix {
    const char* prefix;
    const char* family;
  };
  static constexpr Prefix kFamilies[] = {
      {"matmul_f32", "gemm f32"},
      {"matmul_bf16", "gemm bf16"},
      {"matmul_f16", "gemm f16"},
      {"add_f32", "binary f32"},
      {"gelu_f32", "gelu f32"},
      {"softmax_f32", "softmax, norms"},
      {"layer_norm", "softmax, norms"},
      {"rms_norm", "softmax, norms"},
      {"conv2d", "conv2d winograd"},
      {"qmat", "quantized dot"},
      {"llm_", "quantized dot"},
      {"matmul_integer", "int8 gemm"},
      {"qlinear_matmul", "int8 gemm"},
      {"fft", "fft"},
      {"rfft", "fft"},
  };
  for (const Prefix& p : kFamilies)
    if (name.rfind(p.prefix, 0) == 0) return p.family;
  return nullptr;
}

// "avx512-14x32": the variant of the case's kernel family on the CPU backend
// (empty elsewhere, or for a case no one family runs).
std::string cpu_variant_of(const Ctx& c, const std::string& name) {
  if (c.dev.type() != BackendType::Cpu) return {};
  const char* family = cpu_family_of(name);
  if (!family) return {};
  for (const auto& [f, variant] : c.dev.info().kernel_variants)
    if (f == family) return variant;
  return {};
}

}  // namespace

void emit(const Ctx& c, const std::string& name, const char* dtype, double ms, const char* unit, double value,
          const std::string& note) {
  const std::string kernel = cpu_variant_of(c, name);
  if (c.json) {
    std::string extra = note.empty() ? "" : ",\"note\":\"" + note + "\"";
    if (!kernel.empty()) extra += ",\"kernel\":\"" + kernel + "\"";
    if (c.dev.type() == BackendType::Cpu) extra += ",\"cpu\":\"" + c.dev.info().architecture + "\"";
    std::printf("{\"name\":\"%s\",\"backend\":\"%s\",\"dtype\":\"%s\",\"median_ms\":%.5f,\"%s\":%.3f%s}\n",
                name.c_str(), std::string(backend_key(c.dev.type())).c_str(), dtype, ms, unit, value, extra.c_str());
  } else {
    std::string extra = note.empty() ? "" : "  [" + note + "]";
    if (!kernel.empty()) extra += "  (" + kernel + ")";
    std::printf("%-38s %-7s %-5s %10.4f ms  %10.2f %s%s\n", name.c_str(),
                std::string(backend_key(c.dev.type())).c_str(), dtype, ms, value, unit, extra.c_str());
  }
  std::fflush(stdout);
}

bool wanted(const Ctx& c, const std::string& name) {
  const bool match = c.filter.empty() || name.find(c.filter) != std::string::npos;
  if (!c.listing) return match;
  if (match) c.listed.push_back(name);
  return false;
}

void bench_alloc(Ctx& c);  // bench_alloc.cpp

namespace {

void run_suite(Ctx& c) {
  Backend& d = c.dev;
  for (int n : {256, 1024, 2048, 4096}) {
    const std::string name = "matmul_f32_" + std::to_string(n);
    if (!wanted(c, name)) continue;
    Tensor a = ops::randn(d, Shape{n, n}, 1), b = ops::randn(d, Shape{n, n}, 2);
    const double ms = median_ms(
        d, [&] { ops::matmul(a, b); }, n <= 1024 ? 30 : 5, c.min_seconds);
    emit(c, name, "f32", ms, "gflops", 2.0 * n * n * n / ms / 1e6);
  }
  if (wanted(c, "matmul_bf16_2048")) {
    const int n = 2048;
    Tensor a = ops::randn(d, Shape{n, n}, 1, DType::BF16), b = ops::randn(d, Shape{n, n}, 2, DType::BF16);
    const double ms = median_ms(
        d, [&] { ops::matmul(a, b); }, 5, c.min_seconds);
    emit(c, "matmul_bf16_2048", "bf16", ms, "gflops", 2.0 * n * n * n / ms / 1e6);
  }
  const std::int64_t N = 1 << 24;
  if (wanted(c, "add_f32_16M")) {
    Tensor x = ops::randn(d, Shape{N}, 1), y = ops::randn(d, Shape{N}, 2), out = d.empty(Shape{N}, DType::F32);
    const double ms = median_ms(
        d, [&] { ops::binary_out(rt::BinaryOp::Add, x, y, out); }, 20, c.min_seconds);
    emit(c, "add_f32_16M", "f32", ms, "gbps", 12.0 * N / ms / 1e6);
  }
  if (wanted(c, "gelu_f32_16M")) {
    Tensor x = ops::randn(d, Shape{N}, 1), out = d.empty(Shape{N}, DType::F32);
    const double ms = median_ms(
        d, [&] { ops::unary_out(rt::UnaryOp::Gelu, x, out); }, 20, c.min_seconds);
    emit(c, "gelu_f32_16M", "f32", ms, "gbps", 8.0 * N / ms / 1e6);
  }
  {
    const int n = 4096;
    Tensor s, w, b;
    auto prepare = [&] {
      if (!s.defined()) {
        s = ops::randn(d, Shape{n, n}, 3);
        w = ops::randn(d, Shape{n}, 4);
        b = ops::randn(d, Shape{n}, 5);
      }
    };
    const double bytes = 8.0 * n * n;
    if (wanted(c, "softmax_f32_4096x4096")) {
      prepare();
      const double ms = median_ms(
          d, [&] { ops::softmax(s, -1); }, 20, c.min_seconds);
      emit(c, "softmax_f32_4096x4096", "f32", ms, "gbps", bytes / ms / 1e6);
    }
    if (wanted(c, "layer_norm_f32_4096x4096")) {
      prepare();
      const double ms = median_ms(
          d, [&] { ops::layer_norm(s, w, b); }, 20, c.min_seconds);
      emit(c, "layer_norm_f32_4096x4096", "f32", ms, "gbps", bytes / ms / 1e6);
    }
    if (wanted(c, "rms_norm_f32_4096x4096")) {
      prepare();
      const double ms = median_ms(
          d, [&] { ops::rms_norm(s, w); }, 20, c.min_seconds);
      emit(c, "rms_norm_f32_4096x4096", "f32", ms, "gbps", bytes / ms / 1e6);
    }
  }
  for (auto [nb, ch, h, k] : {std::array<int, 4>{1, 64, 56, 64}, std::array<int, 4>{8, 256, 14, 256}}) {
    const std::string name = "conv2d_f32_n" + std::to_string(nb) + "_c" + std::to_string(ch) + "_h" +
                             std::to_string(h) + "_k" + std::to_string(k) + "_r3";
    if (!wanted(c, name)) continue;
    Tensor x = ops::randn(d, Shape{nb, ch, h, h}, 1), w = ops::randn(d, Shape{k, ch, 3, 3}, 2);
    ops::Conv2dParams p;
    p.pad_h = p.pad_w = 1;
    const double ms = median_ms(
        d, [&] { ops::conv2d(x, w, std::nullopt, p); }, 20, c.min_seconds);
    emit(c, name, "f32", ms, "gflops", 2.0 * nb * k * ch * 9 * h * h / ms / 1e6);
  }
  if (wanted(c, "attention_f32_causal_s2048_h8_d64")) {
    const int S = 2048, H = 8, D = 64;
    Tensor q = ops::randn(d, Shape{1, H, S, D}, 1), k = ops::randn(d, Shape{1, H, S, D}, 2),
           v = ops::randn(d, Shape{1, H, S, D}, 3);
    const double ms = median_ms(
        d, [&] { ops::attention(q, k, v, true); }, 5, c.min_seconds);
    emit(c, "attention_f32_causal_s2048_h8_d64", "f32", ms, "gflops", 4.0 * H * S * S * D / 2 / ms / 1e6);
  }
  if (wanted(c, "adam_f32_16M")) {
    std::vector<Tensor> p{ops::randn(d, Shape{N}, 1)}, g{ops::randn(d, Shape{N}, 2)}, m{d.zeros(Shape{N}, DType::F32)},
        v{d.zeros(Shape{N}, DType::F32)};
    std::int64_t step = 0;
    const double ms = median_ms(
        d, [&] { ops::adam_step(p, g, m, v, {}, ++step); }, 10, c.min_seconds);
    emit(c, "adam_f32_16M", "f32", ms, "gbps", 16.0 * N / ms / 1e6);
  }
  if (wanted(c, "add_f32_4")) {
    // Per-call latency: the median over up to 21 batches of 10000 calls, so a
    // batch slowed by another tenant of the machine does not set the figure.
    Tensor a = ops::randn(d, Shape{4}, 1), b = ops::randn(d, Shape{4}, 2);
    constexpr int kBatch = 10000;
    const double ms = median_ms(
                          d,
                          [&] {
                            for (int i = 0; i < kBatch; ++i) ops::add(a, b);
                          },
                          21, c.min_seconds) /
                      kBatch;
    emit(c, "add_f32_4", "f32", ms, "us_per_call", ms * 1e3);
  }
  bench_graph(c);
  bench_user_kernel(c);
  bench_alloc(c);
  bench_quant(c);
  bench_fft(c);
  bench_llm(c);
}

}  // namespace

namespace {

// Where the figures come from: the device, and on the CPU its cpuid family,
// model and microarchitecture, the thread count and each kernel family's
// variant. JSON lines carry the architecture and variant on each case instead.
void print_header(const Ctx& c) {
  if (c.json) return;
  const DeviceInfo& d = c.dev.info();
  std::printf("torsh bench on %s", c.dev.name().c_str());
  if (!d.architecture.empty()) std::printf(", %s", d.architecture.c_str());
  if (c.dev.type() == BackendType::Cpu)
    std::printf(", %s, %d threads", d.compute_capability.c_str(), c.dev.hints().threads);
  std::printf("\n");
  for (const auto& [family, variant] : d.kernel_variants) std::printf("  %-22s %s\n", family.c_str(), variant.c_str());
}

}  // namespace

int bench(const BenchOptions& opt) {
  const auto type = backend_from_name(opt.backend);
  if (!type) {
    std::fprintf(stderr, "torsh bench: unknown backend '%s'\n", opt.backend.c_str());
    return 2;
  }
  Ctx c{*type == BackendType::Cpu ? Backend::builder().backend_type(BackendType::Cpu).num_threads(opt.threads).build()
                                  : Backend::create(*type),
        opt.json, opt.filter, opt.min_seconds};
  // The cases --filter selects, named without running them.
  c.listing = true;
  run_suite(c);
  c.listing = false;
  if (c.listed.empty()) {
    std::fprintf(stderr,
                 "torsh bench: --filter '%s' matches no case on %s; `torsh bench --list --backend %s` names them\n",
                 opt.filter.c_str(), c.dev.device().to_string().c_str(), opt.backend.c_str());
    return 2;
  }
  if (opt.list) {
    for (const auto& name : c.listed) std::puts(name.c_str());
    return 0;
  }
  print_header(c);
  const bool profiling = !opt.profile.empty();
  if (profiling) {
    profiler::Options po;
    po.max_events = opt.profile_max_events;
    po.overflow =
        opt.profile_keep_last ? profiler::Options::Overflow::KeepLast : profiler::Options::Overflow::KeepFirst;
    profiler::start(po);
  }
  run_suite(c);
  if (profiling) {
    profiler::stop();
    profiler::write_chrome_trace(opt.profile);
    std::fprintf(stderr, "%s\nprofile: Chrome trace written to %s (open in https://ui.perfetto.dev)\n",
                 profiler::table().c_str(), opt.profile.c_str());
  }
  return 0;
}

}  // namespace torsh::cli
