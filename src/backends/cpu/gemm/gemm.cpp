// Kernel choice (once, from cpuid) and the split of a batch of GEMMs over the
// thread pool.
#include "gemm.hpp"
#include "../platform/isa.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "../platform/cpu_info.hpp"
#include "../platform/thread_pool.hpp"
#include "../platform/tuning.hpp"
#include "../simd/simd_avx2.hpp"
#include "../simd/simd_avx512.hpp"
#include "../types.hpp"
#include "torsh/runtime/autotune.hpp"

namespace torsh::cpu::gemm {
namespace {

// Up to this many multiply-adds per matrix (an 8 x 8 x 8 product) the plain
// loop is as fast as packing; the packed kernels win from there on.
constexpr std::int64_t kDirectMaxMacs = 8 * 8 * 8;
// Below this many multiply-adds in all (~15 us on one core) a second thread
// saves less than handing it the work can cost.
constexpr std::int64_t kParallelMinMacs = 96 * 96 * 96;
// A matrix-vector product is bound by reading its matrix: one of 64 KiB
// (~3 us from memory on one core) already gains from a second reader, as a
// decode step's 576 x 576 f16 projections do.
constexpr std::int64_t kParallelMinGemvBytes = 64 << 10;

const Kernel& best_f32() {
  static const Kernel& k = isa_usable(Isa::Avx512) ? kernel_avx512_f32()
                           : isa_usable(Isa::Avx2) ? kernel_avx2_f32()
                                                   : kernel_generic_f32();
  return k;
}

Problem item(const Batch& bt, std::int64_t b) {
  Problem p = bt.p;
  auto shift = [b](const void* ptr, std::int64_t bs, DType t) {
    return static_cast<const char*>(ptr) + b * bs * static_cast<std::int64_t>(dtype_size(t));
  };
  p.a.p = shift(p.a.p, bt.a_bs, p.a.dtype);
  p.b.p = shift(p.b.p, bt.b_bs, p.b.dtype);
  p.c = const_cast<char*>(shift(p.c, bt.c_bs, p.c_dtype));
  return p;
}

// The rectangle [r0, r1) x [c0, c1) of C as a problem of its own.
Problem sub(const Problem& p, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  Problem s = p;
  s.a = p.a.at(r0, 0);
  s.b = p.b.at(0, c0);
  s.c = static_cast<char*>(p.c) + (r0 * p.c_rs + c0 * p.c_cs) * static_cast<std::int64_t>(dtype_size(p.c_dtype));
  s.m = r1 - r0;
  s.n = c1 - c0;
  return s;
}

// How one matrix is computed.
struct Plan {
  enum Kind { Direct, Gemv, Blocked } kind;
  const Kernel* kern = nullptr;
};

Plan plan_for(const Problem& p) {
  const std::int64_t macs = p.m * p.n * p.k;
  if (p.a.dtype == DType::F64 || macs <= kDirectMaxMacs) return {Plan::Direct, nullptr};  // f64: no kernels
  if (p.m == 1 || p.n == 1) return {Plan::Gemv, nullptr};
  return {Plan::Blocked, &kernel_for(p.a.dtype)};
}

void run_one(const Plan& plan, const Problem& p) {
  switch (plan.kind) {
    case Plan::Direct: return run_direct(p);
    case Plan::Gemv: return run_gemv(p);
    case Plan::Blocked: return run_blocked(*plan.kern, p);
  }
}

// The unpacked paths split C along its longer side (rows of a column of C,
// columns of a row); each part reads only its share of the matrix.
void run_split(const Plan& plan, const Problem& p) {
  const bool by_cols = p.m < p.n;
  pool().parallel_for(by_cols ? p.n : p.m, 64, [&](std::int64_t b, std::int64_t e) {
    run_one(plan, by_cols ? sub(p, 0, p.m, b, e) : sub(p, b, e, 0, p.n));
  });
}

// k == 0: the product is zero, so C = beta * C (beta == 0 writes zeros).
void scale_c(const Batch& bt) {
  visit_float_dtype(bt.p.c_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = typename Acc<T>::type;
    const auto beta = static_cast<A>(bt.p.beta);
    for (std::int64_t b = 0; b < bt.count; ++b) {
      const Problem q = item(bt, b);
      T* c = static_cast<T*>(q.c);
      for (std::int64_t i = 0; i < q.m; ++i)
        for (std::int64_t j = 0; j < q.n; ++j) {
          T& v = c[i * q.c_rs + j * q.c_cs];
          v = from_acc<T>(beta == A(0) ? A(0) : beta * to_acc(v));
        }
    }
  });
}

// The k blocking of the AVX-512 and AVX2 kernels. Deep k blocks cut C's memory
// traffic but stream the A panel from L2. Built in: deep where 512-bit ops
// run on 256-bit units (the tile then needs half the load bandwidth per
// cycle) and with AVX2; shallow on full-width AVX-512, whose tile needs
// twice that bandwidth and so its A panel in L1 (src/backends/cpu/README.md, gemm).
// With auto-tuning on, a 1024^3 product on all threads is timed both ways
// once per machine and input dtype.
class Blocking {
 public:
  Blocking(const Kernel& shallow, const Kernel& deep, DType in, bool deep_built_in)
      : shallow_(shallow), deep_(deep), in_(in), deep_built_in_(deep_built_in) {}

  const Kernel& get() {
    const Kernel* k = chosen_.load(std::memory_order_acquire);
    // A built-in choice is kept until auto-tuning is on; a measured one for good.
    if (k && (measured_.load(std::memory_order_relaxed) || !autotune::enabled())) return *k;
    if (autotune::enabled()) {
      k = &measure();
      measured_.store(true, std::memory_order_relaxed);
    } else {
      k = deep_built_in_ ? &deep_ : &shallow_;
    }
    chosen_.store(k, std::memory_order_release);
    return *k;
  }

 private:
  const Kernel& measure() const {
    const std::int64_t n = 1024;
    // Ones in either dtype (bf16 1.0 is 0x3f80): finite sums, no denormals.
    std::vector<float> a(static_cast<std::size_t>(n * n), 1.0f), b(a), c(a);
    if (in_ == DType::BF16)
      for (auto* v : {&a, &b}) std::fill_n(reinterpret_cast<std::uint16_t*>(v->data()), n * n, std::uint16_t{0x3f80});
    Problem p;
    p.a = {a.data(), in_, n, 1};
    p.b = {b.data(), in_, n, 1};
    p.c = c.data();
    p.c_rs = n;
    p.c_cs = 1;
    p.m = p.n = p.k = n;
    const int threads = pool().size();
    std::vector<autotune::Candidate> candidates;
    for (const Kernel* k : {&shallow_, &deep_})
      candidates.push_back({k->name, [&p, k, threads] { run_blocked(*k, p, threads); }});
    const std::string pick =
        autotune::choose({tuning_device_key(threads), "gemm_k_blocking", "n=1024", in_}, candidates, 5);
    return pick == deep_.name ? deep_ : shallow_;
  }

  const Kernel &shallow_, &deep_;
  DType in_;
  bool deep_built_in_;
  std::atomic<const Kernel*> chosen_{nullptr};
  std::atomic<bool> measured_{false};
};

}  // namespace

const Kernel& kernel_for(DType in) {
  if (in == DType::BF16 && isa_usable(Isa::Avx512Bf16)) {
    static Blocking bf16(kernel_avx512_bf16(), kernel_avx512_bf16_deep_k(), DType::BF16, splits_512bit_ops());
    return bf16.get();
  }
  if (isa_usable(Isa::Avx512)) {
    static Blocking f32(kernel_avx512_f32(), kernel_avx512_f32_deep_k(), DType::F32, splits_512bit_ops());
    return f32.get();
  }
  if (isa_usable(Isa::Avx2)) {
    static Blocking f32(kernel_avx2_f32(), kernel_avx2_f32_deep_k(), DType::F32, true);
    return f32.get();
  }
  return best_f32();
}

void run(const Batch& bt) {
  const Problem& p = bt.p;
  if (bt.count <= 0 || p.m <= 0 || p.n <= 0) return;
  if (p.k == 0) return scale_c(bt);
  const std::int64_t macs = p.m * p.n * p.k;
  const Plan plan = plan_for(p);
  const bool parallel = plan.kind == Plan::Gemv ? macs * bt.count * static_cast<std::int64_t>(dtype_size(p.a.dtype)) >=
                                                      kParallelMinGemvBytes
                                                : macs * bt.count >= kParallelMinMacs;
  const int threads = parallel ? pool().size() : 1;
  if (threads == 1) {
    for (std::int64_t b = 0; b < bt.count; ++b) run_one(plan, item(bt, b));
    return;
  }
  // Many matrices: one thread per matrix, when that divides evenly or the
  // matrices are too small to split well; otherwise split each one.
  if (bt.count >= threads && (bt.count % threads == 0 || bt.count >= 4 * threads || macs < 256 * 256 * 256)) {
    pool().parallel_for(bt.count, 1, [&](std::int64_t b0, std::int64_t b1) {
      for (std::int64_t b = b0; b < b1; ++b) run_one(plan, item(bt, b));
    });
    return;
  }
  for (std::int64_t b = 0; b < bt.count; ++b) {
    if (plan.kind == Plan::Blocked)
      run_blocked(*plan.kern, item(bt, b), threads);
    else
      run_split(plan, item(bt, b));
  }
}

}  // namespace torsh::cpu::gemm
