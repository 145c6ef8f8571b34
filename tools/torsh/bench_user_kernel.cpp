// User kernels (Backend::compile_kernel, Stream::launch): what a build costs
// the first time, from the disk cache and from memory, and what a launch costs
// next to the built-in op of the same work (binary_out add into the same
// preallocated output), measured in alternating rounds in one process. The
// kernel is written the common way: one item per element.
#include <unistd.h>
#include <algorithm>
#include <chrono>

#include "bench_common.hpp"

namespace torsh::cli {
namespace {

const char* kTorshAdd = R"(
KERNEL void add_f32(GLOBAL float* y, GLOBAL const float* a, GLOBAL const float* b, long n) {
  const long i = GLOBAL_ID(0);
  if (i < n) y[i] = a[i] + b[i];
})";

const char* kWgslAdd = R"(
@group(0) @binding(0) var<storage, read_write> y : array<f32>;
@group(0) @binding(1) var<storage, read> a : array<f32>;
@group(0) @binding(2) var<storage, read> b : array<f32>;
@group(0) @binding(3) var<uniform> n : u32;
@compute @workgroup_size(256)
fn add_f32(@builtin(global_invocation_id) gid : vec3<u32>) {
  let i = gid.x;
  if (i < n) { y[i] = a[i] + b[i]; }
})";

KernelSource add_source(const Backend& d, const std::string& salt) {
  const bool wgsl = d.capabilities().accepts(KernelDialect::Wgsl) && !d.capabilities().accepts(KernelDialect::Torsh);
  KernelSource s{.source = std::string(wgsl ? kWgslAdd : kTorshAdd) + "\n// " + salt + "\n",
                 .entry = "add_f32",
                 .dialect = wgsl ? KernelDialect::Wgsl : KernelDialect::Torsh};
  return s;
}

double ms_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void bench_user_kernel(Ctx& c) {
  const std::string first = "user_kernel_build_first", disk = "user_kernel_build_disk_cache",
                    memory = "user_kernel_build_memory_cache";
  const bool sizes_wanted = wanted(c, "user_kernel_add_f32_64") || wanted(c, "user_kernel_add_f32_1M");
  if (!wanted(c, first) && !wanted(c, disk) && !wanted(c, memory) && !sizes_wanted) return;
  Backend& d = c.dev;
  if (d.capabilities().kernel_dialects.empty()) {
    std::fprintf(stderr, "torsh bench: %s builds no user kernels; user_kernel cases skipped\n",
                 d.device().to_string().c_str());
    return;
  }
  // A salt no earlier run used, so the first build really compiles.
  const std::string salt =
      std::to_string(::getpid()) + "-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const KernelSource src = add_source(d, salt);
  Kernel k;
  const double first_ms = ms_of([&] { k = d.compile_kernel(src); });
  if (wanted(c, first))
    emit(c, first, "f32", first_ms, "ms", first_ms, "origin: " + std::string(kernel_origin_name(k.origin())));
  if (wanted(c, disk)) {
    clear_kernel_memory_cache();
    Kernel again;
    const double ms = ms_of([&] { again = d.compile_kernel(src); });
    emit(c, disk, "f32", ms, "ms", ms, "origin: " + std::string(kernel_origin_name(again.origin())));
  }
  if (wanted(c, memory)) {
    std::vector<double> v;
    for (int i = 0; i < 101; ++i) v.push_back(ms_of([&] { d.compile_kernel(src); }));
    const double ms = median(v);
    emit(c, memory, "f32", ms, "us", ms * 1e3, "origin: memory cache");
  }
  Stream s = d.default_stream();
  for (std::int64_t n : {std::int64_t(64), std::int64_t(1) << 20}) {
    const std::string tag = n == 64 ? "64" : "1M";
    const std::string user = "user_kernel_add_f32_" + tag, builtin = "builtin_add_f32_" + tag;
    if (!wanted(c, user)) continue;
    Tensor a = ops::randn(d, Shape{n}, 1), b = ops::randn(d, Shape{n}, 2), y = d.empty(Shape{n}, DType::F32);
    const std::uint32_t block = 256;
    const auto groups = static_cast<std::uint32_t>((n + block - 1) / block);  // one item per element
    const int batch = n == 64 ? 200 : 10;
    const auto run_user = [&] {
      for (int i = 0; i < batch; ++i) s.launch(k, Dim3{groups}, Dim3{block}, y, a, b, n);
      d.synchronize();
    };
    const auto run_builtin = [&] {
      for (int i = 0; i < batch; ++i) ops::binary_out(rt::BinaryOp::Add, a, b, y);
      d.synchronize();
    };
    run_user();
    run_builtin();
    std::vector<double> tu, tb;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 41; ++r) {  // alternating rounds: drift on the machine hits both alike
      tu.push_back(ms_of(run_user) / batch);
      tb.push_back(ms_of(run_builtin) / batch);
      if (r >= 10 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > 4 * c.min_seconds)
        break;
    }
    const double mu = median(tu), mb = median(tb);
    char note[64];
    std::snprintf(note, sizeof note, "built-in add / user kernel = %.2f", mb / mu);
    emit(c, user, "f32", mu, "us_per_launch", mu * 1e3, note);
    emit(c, builtin, "f32", mb, "us_per_launch", mb * 1e3);
  }
}

}  // namespace torsh::cli
