// The loss scaler's overflow check: sets a Bool flag when a floating tensor
// holds a NaN or an infinity. Tested on the exponent bits, which every
// floating dtype has all ones for exactly those values.
#include <atomic>
#include <cstdint>
#include <cstring>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

template <class Bits>
bool any_all_ones(const unsigned char* x, std::int64_t b, std::int64_t e, Bits exponent) {
  for (std::int64_t i = b; i < e; ++i) {
    Bits v;
    std::memcpy(&v, x + i * sizeof(Bits), sizeof(Bits));
    if ((v & exponent) == exponent) return true;
  }
  return false;
}

bool chunk_non_finite(const unsigned char* x, DType t, std::int64_t b, std::int64_t e) {
  switch (t) {
    case DType::F32: return any_all_ones<std::uint32_t>(x, b, e, 0x7f800000u);
    case DType::F64: return any_all_ones<std::uint64_t>(x, b, e, 0x7ff0000000000000ull);
    case DType::F16: return any_all_ones<std::uint16_t>(x, b, e, 0x7c00u);
    case DType::BF16: return any_all_ones<std::uint16_t>(x, b, e, 0x7f80u);
    default: return false;
  }
}

void non_finite(const rt::NonFiniteArgs& a) {
  const auto* x = static_cast<const unsigned char*>(a.x.buffer->host_ptr()) + a.x.offset * dtype_size(a.x.dtype);
  std::atomic<bool> found{false};
  pool().parallel_for(a.x.numel(), 1 << 16, [&](std::int64_t b, std::int64_t e) {
    if (!found.load(std::memory_order_relaxed) && chunk_non_finite(x, a.x.dtype, b, e))
      found.store(true, std::memory_order_relaxed);
  });
  if (found.load()) *data_of<bool>(a.flag) = true;
}

}  // namespace

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::NonFinite, entry<rt::OpKind::NonFinite, non_finite>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
