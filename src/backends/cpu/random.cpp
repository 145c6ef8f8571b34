// rand / randn / bernoulli from Philox4x32-10. Element i takes lane i % 4 of
// block (offset + i / 4); randn pairs lanes (0,1) and (2,3) through Box-Muller.
#include <cmath>
#include <cstdint>

#include "device.hpp"
#include "philox.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

float sample(const rt::RandomArgs& r, std::int64_t i) {
  const auto blk = philox::philox4x32_10(r.offset + static_cast<std::uint64_t>(i) / 4, r.seed);
  const int lane = static_cast<int>(i % 4);
  switch (r.kind) {
    case rt::RandomKind::Uniform: return r.a + (r.b - r.a) * philox::philox_uniform(blk.v[lane]);
    case rt::RandomKind::Bernoulli: return philox::philox_uniform(blk.v[lane]) < r.a ? 1.0f : 0.0f;
    case rt::RandomKind::Normal: {
      const int pair = lane & ~1;
      // u1 in (0, 1] keeps the log finite.
      const float u1 = 1.0f - philox::philox_uniform(blk.v[pair]);
      const float u2 = philox::philox_uniform(blk.v[pair + 1]);
      const float rad = std::sqrt(-2.0f * std::log(u1));
      const float ang = 6.28318530717958647692f * u2;
      return r.a + r.b * rad * (lane & 1 ? std::sin(ang) : std::cos(ang));
    }
  }
  return 0.0f;
}

template <class T>
void run(const rt::RandomArgs& r) {
  T* out = data_of<T>(r.out);
  pool().parallel_for(r.out.numel(), 1 << 14, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) out[i] = from_acc<T>(sample(r, i));
  });
}

}  // namespace

void random(const rt::RandomArgs& r) {
  visit_float_dtype(r.out.dtype, [&](auto tag) { run<typename decltype(tag)::type>(r); });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Random, entry<rt::OpKind::Random, random>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
