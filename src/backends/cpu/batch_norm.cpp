// batch_norm per channel: statistics two-pass in the accumulator type;
// channels run in parallel.
#include <cmath>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run_batch_norm(const rt::BatchNormArgs& a) {
  using A = typename Acc<T>::type;
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const T* w = a.weight.present() ? data_of<T>(a.weight) : nullptr;
  const T* b = a.bias.present() ? data_of<T>(a.bias) : nullptr;
  T* rm = a.running_mean.present() ? data_of<T>(a.running_mean) : nullptr;
  T* rv = a.running_var.present() ? data_of<T>(a.running_var) : nullptr;
  const std::int64_t N = a.n, C = a.c, S = a.spatial, count = N * S;
  pool().parallel_for(C, 1, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      A mean, var;
      if (a.training) {
        double s = 0;
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t i = 0; i < S; ++i) s += to_acc(x[(n * C + c) * S + i]);
        mean = static_cast<A>(s / count);
        double q = 0;
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t i = 0; i < S; ++i) {
            const double d = to_acc(x[(n * C + c) * S + i]) - static_cast<double>(mean);
            q += d * d;
          }
        var = static_cast<A>(q / count);
        if (rm) {
          const A m = static_cast<A>(a.momentum);
          const A unbiased = count > 1 ? static_cast<A>(q / (count - 1)) : var;
          rm[c] = from_acc<T>((A(1) - m) * static_cast<A>(to_acc(rm[c])) + m * mean);
          rv[c] = from_acc<T>((A(1) - m) * static_cast<A>(to_acc(rv[c])) + m * unbiased);
        }
      } else {
        mean = static_cast<A>(to_acc(rm[c]));
        var = static_cast<A>(to_acc(rv[c]));
      }
      const A inv = A(1) / std::sqrt(var + static_cast<A>(a.eps));
      const A scale = w ? inv * static_cast<A>(to_acc(w[c])) : inv;
      const A shift = (b ? static_cast<A>(to_acc(b[c])) : A(0)) - mean * scale;
      for (std::int64_t n = 0; n < N; ++n) {
        const T* xp = x + (n * C + c) * S;
        T* yp = y + (n * C + c) * S;
        for (std::int64_t i = 0; i < S; ++i) yp[i] = from_acc<T>(static_cast<A>(to_acc(xp[i])) * scale + shift);
      }
    }
  });
}

}  // namespace

void batch_norm(const rt::BatchNormArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto tag) { run_batch_norm<typename decltype(tag)::type>(a); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::BatchNorm, entry<rt::OpKind::BatchNorm, batch_norm>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
