// index_select: out [outer, m, inner] = x [outer, n, inner] at [o, ids[j], i],
// each (o, j) row of inner elements one memcpy, whatever the dtype. Large
// outputs split their rows over the thread pool.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "device.hpp"
#include "platform/thread_pool.hpp"

namespace torsh::cpu {
namespace {

void index_select(const rt::IndexSelectArgs& a) {
  const std::size_t es = dtype_size(a.x.dtype);
  const auto* x = static_cast<const unsigned char*>(a.x.buffer->host_ptr()) + a.x.offset * es;
  auto* out = static_cast<unsigned char*>(a.out.buffer->host_ptr()) + a.out.offset * es;
  const auto* ids =
      static_cast<const unsigned char*>(a.ids.buffer->host_ptr()) + a.ids.offset * dtype_size(a.ids.dtype);
  const bool wide = a.ids.dtype == DType::I64;
  const std::size_t row = static_cast<std::size_t>(a.inner) * es;
  const auto id_at = [&](std::int64_t j) -> std::int64_t {
    if (wide) {
      std::int64_t v;
      std::memcpy(&v, ids + j * 8, 8);
      return v;
    }
    std::int32_t v;
    std::memcpy(&v, ids + j * 4, 4);
    return v;
  };
  // Rows (o, j) in [b, e); the grain keeps a chunk near 64 KiB of copies.
  const std::int64_t rows = a.outer * a.m;
  const std::int64_t grain =
      std::max<std::int64_t>(1, (std::int64_t{1} << 16) / std::max<std::int64_t>(static_cast<std::int64_t>(row), 1));
  pool().parallel_for(rows, grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const std::int64_t o = r / a.m, j = r % a.m;
      std::memcpy(out + static_cast<std::size_t>(r) * row, x + (static_cast<std::size_t>(o * a.n + id_at(j))) * row,
                  row);
    }
  });
}

}  // namespace

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IndexSelect, entry<rt::OpKind::IndexSelect, index_select>>(rt::DTypes::all());
});
}  // namespace

}  // namespace torsh::cpu
