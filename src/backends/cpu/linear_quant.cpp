// int8 quantize / dequantize with ONNX's QuantizeLinear / DequantizeLinear
// semantics, per tensor or per channel (rt::LinearQuantArgs). Each run of
// `inner` elements shares one scale and zero point; runs are split over the
// thread pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

// body(begin, end, channel) over [0, outer * channels * inner), in runs that
// share a channel.
template <class F>
void for_each_run(const rt::LinearQuantArgs& a, F&& body) {
  const std::int64_t total = a.outer * a.channels * a.inner;
  pool().parallel_for(total, 1 << 15, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e;) {
      const std::int64_t row = i / a.inner, end = std::min(e, (row + 1) * a.inner);
      body(i, end, row % a.channels);
      i = end;
    }
  });
}

// x / scale in x's precision (f32; f64 for f64), rounded half to even (the
// default rounding mode), plus the zero point, saturated; NaN gives the zero
// point.
template <class T, class Q>
void quantize(const rt::LinearQuantArgs& a) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* x = data_of<T>(a.x);
  const float* scale = data_of<float>(a.scale);
  const Q* zp = a.zero_point.present() ? data_of<Q>(a.zero_point) : nullptr;
  Q* y = data_of<Q>(a.out);
  constexpr A lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  for_each_run(a, [&](std::int64_t b, std::int64_t e, std::int64_t c) {
    const A s = scale[c], z = zp ? A(zp[c]) : A(0);
    for (std::int64_t i = b; i < e; ++i) {
      const A q = std::nearbyint(static_cast<A>(to_acc(x[i])) / s) + z;
      y[i] = static_cast<Q>(q != q ? z : q < lo ? lo : q > hi ? hi : q);
    }
  });
}

// (x - zero_point) * scale in f32, stored as out's dtype.
template <class Q, class T>
void dequantize(const rt::LinearQuantArgs& a) {
  const Q* x = data_of<Q>(a.x);
  const float* scale = data_of<float>(a.scale);
  const Q* zp = a.zero_point.present() ? data_of<Q>(a.zero_point) : nullptr;
  T* y = data_of<T>(a.out);
  for_each_run(a, [&](std::int64_t b, std::int64_t e, std::int64_t c) {
    const float s = scale[c], z = zp ? float(zp[c]) : 0.0f;
    for (std::int64_t i = b; i < e; ++i) y[i] = from_acc<T>((static_cast<float>(x[i]) - z) * s);
  });
}

template <class F>
void visit_quantized(DType t, F&& f) {
  if (t == DType::U8) return f(Tag<std::uint8_t>{});
  if (t == DType::I8) return f(Tag<std::int8_t>{});
  throw Error(ErrorCode::Internal, "quantized dtype expected");
}

void quantize_linear(const rt::LinearQuantArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto xt) {
    visit_quantized(a.out.dtype,
                    [&](auto qt) { quantize<typename decltype(xt)::type, typename decltype(qt)::type>(a); });
  });
}

void dequantize_linear(const rt::LinearQuantArgs& a) {
  visit_quantized(a.x.dtype, [&](auto qt) {
    visit_float_dtype(a.out.dtype,
                      [&](auto ft) { dequantize<typename decltype(qt)::type, typename decltype(ft)::type>(a); });
  });
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::QuantizeLinear, entry<rt::OpKind::QuantizeLinear, quantize_linear>>(rt::DTypes::floating());
  t.add<rt::OpKind::DequantizeLinear, entry<rt::OpKind::DequantizeLinear, dequantize_linear>>(rt::DTypes::floating());
});

}  // namespace
}  // namespace torsh::cpu
