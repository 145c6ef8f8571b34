#pragma once
// The binary f32 loops, out = op(a, b) with b broadcast when bs == 0, written
// once for every vector width. simd_avx2.cpp and simd_avx512.cpp include this
// inside their `#pragma GCC target` region, as simd_gelu.hpp, and instantiate
// it with their traits V: reg, kLanes, loadu, storeu, stream, set1, the six
// operations, nan_or(x, y, r) (x + y where either is NaN, as torch.maximum
// propagates it, else r) and tail(a, b, bs, out, n, f) for n < kLanes.
//
// Streamed outputs are stored straight from the registers: staging a block
// in L1 and streaming it from there doubles the stores, which slows a core
// that stores one 256-bit vector a cycle (src/backends/cpu/README.md, simd).
#include <algorithm>
#include <cstdint>

#include "torsh/backend/op_args.hpp"

namespace torsh::cpu::simd {

// Each including file compiles its own copy, for its own target.
namespace {
namespace zip {

template <class V>
struct Ops {
  using reg = typename V::reg;
  struct Add {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::add(x, y); }
  };
  struct Sub {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::sub(x, y); }
  };
  struct Mul {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::mul(x, y); }
  };
  struct Div {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::div(x, y); }
  };
  struct Max {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::nan_or(x, y, V::max(x, y)); }
  };
  struct Min {
    __attribute__((always_inline)) reg operator()(reg x, reg y) const { return V::nan_or(x, y, V::min(x, y)); }
  };
};

template <class V>
__attribute__((always_inline)) inline typename V::reg load_b(const float* b, std::int64_t bs, std::int64_t i) {
  return bs ? V::loadu(b + i) : V::set1(*b);
}

// kStream: out is aligned to a whole vector and written around the cache.
template <class V, bool kStream, class F>
__attribute__((always_inline)) inline void loop(const float* a, const float* b, std::int64_t bs, float* out,
                                                std::int64_t n, F f) {
  constexpr std::int64_t L = V::kLanes;
  std::int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const typename V::reg r = f(V::loadu(a + i + L * k), load_b<V>(b, bs, i + L * k));
      if constexpr (kStream)
        V::stream(out + i + L * k, r);
      else
        V::storeu(out + i + L * k, r);
    }
  }
  for (; i + L <= n; i += L) V::storeu(out + i, f(V::loadu(a + i), load_b<V>(b, bs, i)));
  if (i < n) V::tail(a + i, bs ? b + i : b, bs, out + i, n - i, f);
}

// Plain stores up to out's first vector boundary, streaming ones after it.
template <class V, class F>
__attribute__((always_inline)) inline void run(const float* a, const float* b, std::int64_t bs, float* out,
                                               std::int64_t n, bool stream, F f) {
  if (!stream) return loop<V, false>(a, b, bs, out, n, f);
  constexpr std::int64_t L = V::kLanes;
  const auto misaligned = static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(out) / sizeof(float)) % L);
  const std::int64_t head = std::min(n, misaligned ? L - misaligned : 0);
  loop<V, false>(a, b, bs, out, head, f);
  loop<V, true>(a + head, b + head * bs, bs, out + head, n - head, f);
}

// False for pow, which has no vector body.
template <class V>
bool binary(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n, bool stream) {
  using B = rt::BinaryOp;
  using O = Ops<V>;
  switch (op) {
    case B::Add: run<V>(a, b, bs, out, n, stream, typename O::Add{}); return true;
    case B::Sub: run<V>(a, b, bs, out, n, stream, typename O::Sub{}); return true;
    case B::Mul: run<V>(a, b, bs, out, n, stream, typename O::Mul{}); return true;
    case B::Div: run<V>(a, b, bs, out, n, stream, typename O::Div{}); return true;
    case B::Maximum: run<V>(a, b, bs, out, n, stream, typename O::Max{}); return true;
    case B::Minimum: run<V>(a, b, bs, out, n, stream, typename O::Min{}); return true;
    case B::Pow: return false;
  }
  return false;
}

}  // namespace zip
}  // namespace

}  // namespace torsh::cpu::simd
