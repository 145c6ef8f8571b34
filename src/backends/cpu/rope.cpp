// Rotary position embedding, NeoX (rotate halves) and GPT-J (interleaved pairs).
#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class T>
void run(const rt::RopeArgs& a) {
  using A = typename Acc<T>::type;
  const std::int64_t B = a.x.shape[0], S = a.x.shape[1], H = a.x.shape[2], D = a.x.shape[3];
  const std::int64_t half = a.rot_dim / 2;
  const T* x = data_of<T>(a.x);
  T* y = data_of<T>(a.out);
  const float* cs = data_of<float>(a.cos);
  const float* sn = data_of<float>(a.sin);
  pool().parallel_for(B * S, std::max<std::int64_t>(1, 4096 / (H * D)), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t pos = a.pos0 + r % S;
      const float* c = cs + pos * half;
      const float* s = sn + pos * half;
      for (std::int64_t h = 0; h < H; ++h) {
        const T* xi = x + (r * H + h) * D;
        T* yo = y + (r * H + h) * D;
        for (std::int64_t i = 0; i < half; ++i) {
          const std::int64_t i0 = a.neox ? i : 2 * i, i1 = a.neox ? i + half : 2 * i + 1;
          const A x0 = to_acc(xi[i0]), x1 = to_acc(xi[i1]);
          yo[i0] = from_acc<T>(x0 * c[i] - x1 * s[i]);
          yo[i1] = from_acc<T>(x1 * c[i] + x0 * s[i]);
        }
        for (std::int64_t i = a.rot_dim; i < D; ++i) yo[i] = xi[i];
      }
    }
  });
}

}  // namespace

void rope(const rt::RopeArgs& a) {
  visit_float_dtype(a.x.dtype, [&](auto tag) { run<typename decltype(tag)::type>(a); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
