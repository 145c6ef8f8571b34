// max / average pooling over 2-D windows, one (image, channel) plane per task.
#include <limits>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run_pool(const rt::Pool2dArgs& a) {
  using A = typename Acc<T>::type;
  const std::int64_t NC = a.x.shape[0] * a.x.shape[1], H = a.x.shape[2], W = a.x.shape[3];
  const std::int64_t P = a.out.shape[2], Q = a.out.shape[3];
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const bool is_max = a.kind == rt::PoolKind::Max;
  pool().parallel_for(NC, 1, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const T* xc = x + c * H * W;
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q) {
          const std::int64_t h0 = p * a.stride_h - a.pad_h, w0 = q * a.stride_w - a.pad_w;
          A best = -std::numeric_limits<A>::infinity(), sum = 0;
          std::int64_t count = 0;
          for (std::int64_t i = 0; i < a.kernel_h; ++i) {
            const std::int64_t h = h0 + i;
            if (h < 0 || h >= H) continue;
            for (std::int64_t j = 0; j < a.kernel_w; ++j) {
              const std::int64_t w = w0 + j;
              if (w < 0 || w >= W) continue;
              const A v = to_acc(xc[h * W + w]);
              if (v > best || v != v) best = v;
              sum += v;
              ++count;
            }
          }
          const A div = a.count_include_pad ? static_cast<A>(a.kernel_h * a.kernel_w) : static_cast<A>(count);
          y[(c * P + p) * Q + q] = from_acc<T>(is_max ? best : sum / div);
        }
    }
  });
}

}  // namespace

void pool2d(const rt::Pool2dArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto tag) { run_pool<typename decltype(tag)::type>(a); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Pool2d, entry<rt::OpKind::Pool2d, pool2d>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
