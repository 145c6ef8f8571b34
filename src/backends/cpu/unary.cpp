// Elementwise unary ops; transcendental math in the accumulator type (f32 for
// f16/bf16). Contiguous runs are written as plain loops the compiler vectorises.
#include <cmath>
#include <type_traits>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "platform/tuning.hpp"
#include "simd/simd.hpp"
#include "simd/stream_store.hpp"
#include "strided.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

// -x, wrapping for integers: the most negative value negates to itself (in
// two's complement, without the undefined behaviour of signed overflow).
template <class A>
inline A negate(A x) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(U(0) - static_cast<U>(x)));
  } else {
    return -x;
  }
}

template <rt::UnaryOp Op, class A>
inline A apply(A x) {
  if constexpr (Op == rt::UnaryOp::Neg)
    return negate(x);
  else if constexpr (Op == rt::UnaryOp::Abs)
    return x < A(0) ? negate(x) : x;
  else if constexpr (Op == rt::UnaryOp::Relu)
    return x > A(0) ? x : (x != x ? x : A(0));
  else if constexpr (Op == rt::UnaryOp::Exp)
    return std::exp(x);
  else if constexpr (Op == rt::UnaryOp::Log)
    return std::log(x);
  else if constexpr (Op == rt::UnaryOp::Sqrt)
    return std::sqrt(x);
  else if constexpr (Op == rt::UnaryOp::Rsqrt)
    return A(1) / std::sqrt(x);
  else if constexpr (Op == rt::UnaryOp::Tanh)
    return std::tanh(x);
  else if constexpr (Op == rt::UnaryOp::Sigmoid)
    return A(1) / (A(1) + std::exp(-x));
  else if constexpr (Op == rt::UnaryOp::Gelu)
    return A(0.5) * x * (A(1) + std::erf(x * A(0.70710678118654752440)));
  else if constexpr (Op == rt::UnaryOp::GeluTanh) {
    const A c = A(0.79788456080286535588);  // sqrt(2/pi)
    return A(0.5) * x * (A(1) + std::tanh(c * (x + A(0.044715) * x * x * x)));
  } else {
    return x / (A(1) + std::exp(-x));  // silu
  }
}

template <class T, rt::UnaryOp Op>
void run(const rt::UnaryArgs& a) {
  using A = typename Acc<T>::type;
  const Layout<2> L(a.out.shape, {&a.x.strides, &a.out.strides});
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const std::int64_t sx = L.inner_stride(0), sy = L.inner_stride(1);
  const bool stream =
      std::is_same_v<T, float> && stream_worthwhile(a.out.numel() * static_cast<std::int64_t>(sizeof(T)));
  pool().parallel_for(a.out.numel(), elementwise_grain(a.out.numel(), 1 << 14), [&](std::int64_t b, std::int64_t e) {
    for_each_run(L, b, e, [&](const std::array<std::int64_t, 2>& o, std::int64_t len) {
      const T* px = x + o[0];
      T* py = y + o[1];
      if constexpr (std::is_same_v<T, float>) {
        if (sx == 1 && sy == 1) return simd::unary_f32(Op, px, py, len, stream);
      }
      if (sx == 1 && sy == 1) {
        for (std::int64_t i = 0; i < len; ++i) py[i] = from_acc<T>(apply<Op, A>(to_acc(px[i])));
      } else {
        for (std::int64_t i = 0; i < len; ++i) py[i * sy] = from_acc<T>(apply<Op, A>(to_acc(px[i * sx])));
      }
    });
    if (stream) stream_fence();
  });
}

template <class T>
void dispatch(const rt::UnaryArgs& a) {
  using U = rt::UnaryOp;
  if constexpr (!std::is_floating_point_v<typename Acc<T>::type>) {
    switch (a.op) {
      case U::Neg: return run<T, U::Neg>(a);
      case U::Abs: return run<T, U::Abs>(a);
      case U::Relu: return run<T, U::Relu>(a);
      default: throw Error(ErrorCode::Unsupported, "integer unary op", {.op = rt::unary_op_name(a.op)});
    }
  } else {
    switch (a.op) {
      case U::Neg: return run<T, U::Neg>(a);
      case U::Abs: return run<T, U::Abs>(a);
      case U::Exp: return run<T, U::Exp>(a);
      case U::Log: return run<T, U::Log>(a);
      case U::Sqrt: return run<T, U::Sqrt>(a);
      case U::Rsqrt: return run<T, U::Rsqrt>(a);
      case U::Tanh: return run<T, U::Tanh>(a);
      case U::Sigmoid: return run<T, U::Sigmoid>(a);
      case U::Relu: return run<T, U::Relu>(a);
      case U::Gelu: return run<T, U::Gelu>(a);
      case U::GeluTanh: return run<T, U::GeluTanh>(a);
      case U::Silu: return run<T, U::Silu>(a);
    }
  }
}

}  // namespace

void unary(const rt::UnaryArgs& a) {
  visit_dtype(a.out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t>) {
      if constexpr (std::is_same_v<T, std::uint8_t>) {
        dispatch<T>(a);
      } else {
        throw Error(ErrorCode::Unsupported, "unary op on bool", {.op = rt::unary_op_name(a.op)});
      }
    } else {
      dispatch<T>(a);
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Unary, entry<rt::OpKind::Unary, unary>>(kNumeric);
});
}  // namespace

}  // namespace torsh::cpu
