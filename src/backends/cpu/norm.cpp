// layer_norm / rms_norm over rows. Statistics are two-pass in the accumulator
// type; rows run in parallel.
#include <cmath>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "simd/stream_store.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run_norm(const rt::NormArgs& a) {
  using A = typename Acc<T>::type;
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const T* w = a.weight.present() ? data_of<T>(a.weight) : nullptr;
  const T* b = a.bias.present() ? data_of<T>(a.bias) : nullptr;
  const std::int64_t n = a.n;
  const bool stream = std::is_same_v<T, float> && stream_rows_worthwhile(a.rows, n);
  pool().parallel_for(a.rows, std::max<std::int64_t>(1, 16384 / n), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      if constexpr (std::is_same_v<T, float>) {
        const float* next = r + 1 < r1 ? xr + n : nullptr;
        if (!stream) {
          simd::norm_row_f32(xr, yr, w, b, n, a.eps, a.rms, next);
          continue;
        }
        float* row = stream_row_buffer(n);
        simd::norm_row_f32(xr, row, w, b, n, a.eps, a.rms, next);
        copy_streaming(row, yr, n);
        continue;
      }
      A mean = 0, ss = 0;
      if (!a.rms) {
        for (std::int64_t i = 0; i < n; ++i) mean += to_acc(xr[i]);
        mean /= static_cast<A>(n);
      }
      for (std::int64_t i = 0; i < n; ++i) {
        const A d = static_cast<A>(to_acc(xr[i])) - mean;
        ss += d * d;
      }
      const A inv = A(1) / std::sqrt(ss / static_cast<A>(n) + static_cast<A>(a.eps));
      for (std::int64_t i = 0; i < n; ++i) {
        A v = (static_cast<A>(to_acc(xr[i])) - mean) * inv;
        if (w) v *= static_cast<A>(to_acc(w[i]));
        if (b) v += static_cast<A>(to_acc(b[i]));
        yr[i] = from_acc<T>(v);
      }
    }
    if (stream) stream_fence();
  });
}

}  // namespace

void norm(const rt::NormArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto tag) { run_norm<typename decltype(tag)::type>(a); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Norm, entry<rt::OpKind::Norm, norm>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
