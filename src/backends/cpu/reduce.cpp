// Reductions over the middle axis of [outer, n, inner]. Sums accumulate in
// eight independent lanes (vectorisable, and closer to pairwise accuracy than
// one running sum); variance is two-pass.
#include <cmath>
#include <limits>
#include <vector>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T, class A>
A lane_sum(const T* x, std::int64_t n, std::int64_t stride, A shift, bool squares) {
  A lanes[8] = {};
  std::int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8)
      for (int l = 0; l < 8; ++l) {
        const A d = static_cast<A>(to_acc(x[i + l])) - shift;
        lanes[l] += squares ? d * d : d;
      }
  }
  A tail = 0;
  for (; i < n; ++i) {
    const A d = static_cast<A>(to_acc(x[i * stride])) - shift;
    tail += squares ? d * d : d;
  }
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])) + tail;
}

template <class T>
void run(const rt::ReduceArgs& r) {
  using A0 = typename Acc<T>::type;
  // Integer sums accumulate in 64 bits; float sums in the float accumulator.
  using A = std::conditional_t<std::is_floating_point_v<A0>, A0, std::int64_t>;
  const T* x = data_of<T>(r.x);
  const std::int64_t n = r.n, inner = r.inner;
  pool().parallel_for(r.outer * inner, std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, n)),
                      [&](std::int64_t b, std::int64_t e) {
                        for (std::int64_t row = b; row < e; ++row) {
                          const std::int64_t o = row / inner, in = row % inner;
                          const T* p = x + o * n * inner + in;
                          switch (r.op) {
                            case rt::ReduceOp::Sum:
                            case rt::ReduceOp::Mean: {
                              A s = lane_sum<T, A>(p, n, inner, A(0), false);
                              if (r.op == rt::ReduceOp::Mean)
                                s = n ? s / static_cast<A>(n) : std::numeric_limits<A>::quiet_NaN();
                              data_of<T>(r.out)[row] = from_acc<T>(s);
                              break;
                            }
                            case rt::ReduceOp::Var: {
                              const A mean = n ? lane_sum<T, A>(p, n, inner, A(0), false) / static_cast<A>(n) : A(0);
                              const A ss = lane_sum<T, A>(p, n, inner, mean, true);
                              const A denom = static_cast<A>(std::max<std::int64_t>(n - r.correction, 0));
                              data_of<T>(r.out)[row] = from_acc<T>(ss / denom);
                              break;
                            }
                            case rt::ReduceOp::Max:
                            case rt::ReduceOp::Min:
                            case rt::ReduceOp::Argmax: {
                              const bool want_max = r.op != rt::ReduceOp::Min;
                              A best = static_cast<A>(to_acc(p[0]));
                              std::int64_t arg = 0;
                              for (std::int64_t i = 1; i < n && best == best; ++i) {
                                const A v = static_cast<A>(to_acc(p[i * inner]));
                                // NaN wins and stops the scan, as in PyTorch.
                                if (v != v || (want_max ? v > best : v < best)) {
                                  best = v;
                                  arg = i;
                                }
                              }
                              if (r.op == rt::ReduceOp::Argmax)
                                data_of<std::int64_t>(r.out)[row] = arg;
                              else
                                data_of<T>(r.out)[row] = from_acc<T>(best);
                              break;
                            }
                          }
                        }
                      });
}

}  // namespace

void reduce(const rt::ReduceArgs& r) {
  visit_dtype(r.x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error(ErrorCode::Unsupported, "reduction of bool", {.op = rt::reduce_op_name(r.op)});
    } else {
      run<T>(r);
    }
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Reduce, entry<rt::OpKind::Reduce, reduce>>(kNumeric);
});
}  // namespace

}  // namespace torsh::cpu
