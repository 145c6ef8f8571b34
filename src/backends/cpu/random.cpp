// rand / randn / bernoulli from Philox4x32-10. Element i takes lane i % 4 of
// block (offset + i / 4); randn pairs lanes (0,1) and (2,3) through Box-Muller.
#include <cstdint>

#include "device.hpp"
#include "philox.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

static_assert(PHILOX_UNIFORM == static_cast<int>(rt::RandomKind::Uniform) &&
              PHILOX_NORMAL == static_cast<int>(rt::RandomKind::Normal) &&
              PHILOX_BERNOULLI == static_cast<int>(rt::RandomKind::Bernoulli));

// Block j of the stream fills elements [4j, 4j + 4) through philox_sample4,
// the GPU kernels' own code (kernels/philox.kern.h), so every backend gives
// these bits.
template <class T>
void run(const rt::RandomArgs& r) {
  T* out = data_of<T>(r.out);
  const std::int64_t n = r.out.numel(), blocks = (n + 3) / 4;
  pool().parallel_for(blocks, 1 << 12, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t j = b; j < e; ++j) {
      const auto v = philox::philox_sample4(static_cast<int>(r.kind), r.a, r.b,
                                            philox::philox4x32_10(r.offset + static_cast<std::uint64_t>(j), r.seed));
      for (std::int64_t k = 0; k < 4 && 4 * j + k < n; ++k) out[4 * j + k] = from_acc<T>(v.v[k]);
    }
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
