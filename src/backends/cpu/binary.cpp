#include <algorithm>
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

// Integer x ** y, exact and wrapping like the other integer ops (NumPy's
// rule). The op layer refuses negative exponents; here they give the
// truncated 1 / x^|y| rather than undefined behaviour.
template <class A>
A int_pow(A x, A y) {
  using U = std::make_unsigned_t<A>;
  if constexpr (std::is_signed_v<A>) {
    if (y < 0) return x == 1 ? A(1) : x == A(-1) ? ((y & 1) ? A(-1) : A(1)) : A(0);
  }
  U r = 1, b = static_cast<U>(x);
  for (U e = static_cast<U>(y); e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return static_cast<A>(r);
}

template <rt::BinaryOp Op, class A>
inline A apply(A x, A y) {
  if constexpr (std::is_integral_v<A> &&
                (Op == rt::BinaryOp::Add || Op == rt::BinaryOp::Sub || Op == rt::BinaryOp::Mul)) {
    // Integers wrap (two's complement), as in NumPy and PyTorch, without signed-overflow UB.
    using U = std::make_unsigned_t<A>;
    const U ux = static_cast<U>(x), uy = static_cast<U>(y);
    return static_cast<A>(Op == rt::BinaryOp::Add ? ux + uy : Op == rt::BinaryOp::Sub ? ux - uy : ux * uy);
  } else if constexpr (Op == rt::BinaryOp::Add)
    return x + y;
  else if constexpr (Op == rt::BinaryOp::Sub)
    return x - y;
  else if constexpr (Op == rt::BinaryOp::Mul)
    return x * y;
  else if constexpr (Op == rt::BinaryOp::Div) {
    // Integer division never reaches here from the op layer (it is true division in f64); a zero divisor is 0, not
    // SIGFPE.
    if constexpr (std::is_integral_v<A>)
      return y == 0 ? 0 : x / y;
    else
      return x / y;
  } else if constexpr (Op == rt::BinaryOp::Pow) {
    if constexpr (std::is_integral_v<A>)
      return int_pow(x, y);
    else
      return static_cast<A>(std::pow(x, y));
  }
  // NaN propagates, as in torch.maximum / minimum.
  else if constexpr (Op == rt::BinaryOp::Maximum) {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(x) || std::isnan(y)) return x + y;
    }
    return x > y ? x : y;
  } else {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(x) || std::isnan(y)) return x + y;
    }
    return x < y ? x : y;
  }
}

template <class T, rt::BinaryOp Op>
void run(const rt::BinaryArgs& a) {
  using A = typename Acc<T>::type;
  const T* x = data_of<T>(a.a);
  const T* y = data_of<T>(a.b);
  T* z = data_of<T>(a.out);
  // Dense operands of one layout: a flat loop, skipping the strided walker.
  if (a.a.strides == a.out.strides && a.b.strides == a.out.strides && is_contiguous(a.out.shape, a.out.strides)) {
    const bool stream = stream_worthwhile(a.out.numel() * static_cast<std::int64_t>(sizeof(T)));
    pool().parallel_for(a.out.numel(), elementwise_grain(a.out.numel(), 1 << 15), [&](std::int64_t b, std::int64_t e) {
      if constexpr (std::is_same_v<T, float>) {
        simd::binary_f32(Op, x + b, y + b, 1, z + b, e - b, stream);
        if (stream) stream_fence();
        return;
      }
      for (std::int64_t i = b; i < e; ++i) z[i] = from_acc<T>(apply<Op, A>(to_acc(x[i]), to_acc(y[i])));
    });
    return;
  }
  const Layout<3> L(a.out.shape, {&a.a.strides, &a.b.strides, &a.out.strides});
  const std::int64_t sx = L.inner_stride(0), sy = L.inner_stride(1), sz = L.inner_stride(2);
  pool().parallel_for(a.out.numel(), elementwise_grain(a.out.numel(), 1 << 15), [&](std::int64_t b, std::int64_t e) {
    for_each_run(L, b, e, [&](const std::array<std::int64_t, 3>& o, std::int64_t len) {
      const T* px = x + o[0];
      const T* py = y + o[1];
      T* pz = z + o[2];
      if constexpr (std::is_same_v<T, float>) {
        if (sx == 1 && sz == 1 && (sy == 1 || sy == 0)) return simd::binary_f32(Op, px, py, sy, pz, len);
      }
      if (sx == 1 && sy == 1 && sz == 1) {
        for (std::int64_t i = 0; i < len; ++i) pz[i] = from_acc<T>(apply<Op, A>(to_acc(px[i]), to_acc(py[i])));
      } else {
        for (std::int64_t i = 0; i < len; ++i)
          pz[i * sz] = from_acc<T>(apply<Op, A>(to_acc(px[i * sx]), to_acc(py[i * sy])));
      }
    });
  });
}

template <class T>
void check_int_division(const rt::BinaryArgs& a) {
  if constexpr (std::is_integral_v<T>) {
    if (a.op != rt::BinaryOp::Div) return;
    const Layout<1> L(a.b.shape, {&a.b.strides});
    const T* y = data_of<T>(a.b);
    bool zero = false;
    for_each_run(L, 0, a.b.numel(), [&](const std::array<std::int64_t, 1>& o, std::int64_t len) {
      for (std::int64_t i = 0; i < len; ++i) zero |= y[o[0] + i * L.inner_stride(0)] == 0;
    });
    if (zero)
      throw Error(ErrorCode::InvalidArgument, "integer division by zero",
                  {.op = "div", .dtypes = {std::string(dtype_name(a.out.dtype))}, .device = "cpu:0"},
                  {"Cast to a floating dtype to get inf/NaN instead"});
  }
}

}  // namespace

void binary(const rt::BinaryArgs& a) {
  visit_dtype(a.out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error(ErrorCode::Unsupported, "binary arithmetic on bool", {.op = rt::binary_op_name(a.op)});
    } else {
      check_int_division<T>(a);
      switch (a.op) {
        case rt::BinaryOp::Add: return run<T, rt::BinaryOp::Add>(a);
        case rt::BinaryOp::Sub: return run<T, rt::BinaryOp::Sub>(a);
        case rt::BinaryOp::Mul: return run<T, rt::BinaryOp::Mul>(a);
        case rt::BinaryOp::Div: return run<T, rt::BinaryOp::Div>(a);
        case rt::BinaryOp::Maximum: return run<T, rt::BinaryOp::Maximum>(a);
        case rt::BinaryOp::Minimum: return run<T, rt::BinaryOp::Minimum>(a);
        case rt::BinaryOp::Pow: return run<T, rt::BinaryOp::Pow>(a);
      }
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(kNumeric);
});
}  // namespace

}  // namespace torsh::cpu
