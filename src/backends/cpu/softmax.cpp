// Numerically stable (log-)softmax: subtract the row max, accumulate in f32
// (f64 for f64 data).
#include <cmath>
#include <limits>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "simd/stream_store.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run(const rt::SoftmaxArgs& s) {
  using A = typename Acc<T>::type;
  const T* x = data_of<T>(s.x);
  T* y = data_of<T>(s.out);
  const std::int64_t n = s.n, inner = s.inner;
  const bool stream = std::is_same_v<T, float> && inner == 1 && stream_rows_worthwhile(s.outer, n);
  pool().parallel_for(s.outer * inner, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, n)),
                      [&](std::int64_t r0, std::int64_t r1) {
                        for (std::int64_t r = r0; r < r1; ++r) {
                          if constexpr (std::is_same_v<T, float>) {
                            if (inner == 1) {
                              const float* next = r + 1 < r1 ? x + (r + 1) * n : nullptr;
                              if (!stream) {
                                simd::softmax_row_f32(x + r * n, y + r * n, n, s.log, next);
                                continue;
                              }
                              // The row is built in cache (written, then rescaled) and streamed out once.
                              float* row = stream_row_buffer(n);
                              simd::softmax_row_f32(x + r * n, row, n, s.log, next);
                              copy_streaming(row, y + r * n, n);
                              continue;
                            }
                          }
                          const std::int64_t base = (r / inner) * n * inner + (r % inner);
                          A mx = -std::numeric_limits<A>::infinity();
                          for (std::int64_t i = 0; i < n; ++i) {
                            const A v = to_acc(x[base + i * inner]);
                            mx = (v > mx || std::isnan(v)) ? v : mx;
                          }
                          // A row of -inf stays finite: exp(-inf - -inf) would be NaN.
                          const A shift = std::isinf(mx) && mx < 0 ? A(0) : mx;
                          A sum = 0;
                          for (std::int64_t i = 0; i < n; ++i) sum += std::exp(to_acc(x[base + i * inner]) - shift);
                          if (s.log) {
                            const A lse = std::log(sum);
                            for (std::int64_t i = 0; i < n; ++i)
                              y[base + i * inner] = from_acc<T>(to_acc(x[base + i * inner]) - shift - lse);
                          } else {
                            const A inv = A(1) / sum;
                            for (std::int64_t i = 0; i < n; ++i)
                              y[base + i * inner] = from_acc<T>(std::exp(to_acc(x[base + i * inner]) - shift) * inv);
                          }
                        }
                        if (stream) stream_fence();
                      });
}

}  // namespace

void softmax(const rt::SoftmaxArgs& s) {
  visit_float_dtype(s.x.dtype, [&](auto tag) { run<typename decltype(tag)::type>(s); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Softmax, entry<rt::OpKind::Softmax, softmax>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
