// Batched GEMM: operands are packed (and converted) into contiguous accumulator
// rows, then each thread computes a block of output rows with a vectorisable
// i-k-j loop. beta == 0 never reads the output (BLAS semantics).
#include <vector>

#include "device.hpp"
#include "thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run(const rt::MatmulArgs& g) {
  using A = typename Acc<T>::type;
  const std::int64_t batch = g.out.shape[0], m = g.out.shape[1], n = g.out.shape[2], k = g.a.shape[2];
  const T* pa = data_of<T>(g.a);
  const T* pb = data_of<T>(g.b);
  T* pc = data_of<T>(g.out);
  std::vector<A> bpack(static_cast<std::size_t>(k * n));
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    const T* ab = pa + bi * g.a.strides[0];
    const T* bb = pb + bi * g.b.strides[0];
    T* cb = pc + bi * g.out.strides[0];
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j)
        bpack[static_cast<std::size_t>(p * n + j)] = to_acc(bb[p * g.b.strides[1] + j * g.b.strides[2]]);
    pool().parallel_for(m, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, n * k / 64)),
                        [&](std::int64_t r0, std::int64_t r1) {
      std::vector<A> acc(static_cast<std::size_t>(n));
      for (std::int64_t i = r0; i < r1; ++i) {
        std::fill(acc.begin(), acc.end(), A(0));
        for (std::int64_t p = 0; p < k; ++p) {
          const A av = to_acc(ab[i * g.a.strides[1] + p * g.a.strides[2]]);
          const A* brow = bpack.data() + p * n;
          for (std::int64_t j = 0; j < n; ++j) acc[static_cast<std::size_t>(j)] += av * brow[j];
        }
        T* crow = cb + i * g.out.strides[1];
        for (std::int64_t j = 0; j < n; ++j) {
          A v = static_cast<A>(g.alpha) * acc[static_cast<std::size_t>(j)];
          if (g.beta != 0.0f) v += static_cast<A>(g.beta) * to_acc(crow[j * g.out.strides[2]]);
          crow[j * g.out.strides[2]] = from_acc<T>(v);
        }
      }
    });
  }
}

}  // namespace

void matmul(const rt::MatmulArgs& g) {
  visit_float_dtype(g.out.dtype, [&](auto tag) { run<typename decltype(tag)::type>(g); });
}

}  // namespace torsh::cpu
