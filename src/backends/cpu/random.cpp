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

// philox_sample is the GPU kernels' own code (kernels/philox.kern.h), so every
// backend gives these bits.
float sample(const rt::RandomArgs& r, std::int64_t i) {
  const auto blk = philox::philox4x32_10(r.offset + static_cast<std::uint64_t>(i) / 4, r.seed);
  return philox::philox_sample(static_cast<int>(r.kind), r.a, r.b, blk, static_cast<int>(i % 4));
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
