#include <cstring>

#include "device.hpp"
#include "platform/thread_pool.hpp"
#include "simd/simd.hpp"
#include "strided.hpp"
#include "types.hpp"

namespace torsh::cpu {
namespace {

// Contiguous runs of the float conversions a model's casts make, in
// vectorised loops equal bit for bit to convert()'s scalar ones.
bool convert_run(const char* src, DType st, char* dst, DType dt, std::int64_t n) {
  const auto* s16 = reinterpret_cast<const std::uint16_t*>(src);
  auto* d16 = reinterpret_cast<std::uint16_t*>(dst);
  if (st == DType::F32 && dt == DType::F16) return simd::narrow_f16(reinterpret_cast<const float*>(src), d16, n), true;
  if (st == DType::F32 && dt == DType::BF16)
    return simd::narrow_bf16(reinterpret_cast<const float*>(src), d16, n), true;
  if (st == DType::F16 && dt == DType::F32)
    return simd::widen_f16_portable(s16, reinterpret_cast<float*>(dst), n), true;
  if (st == DType::BF16 && dt == DType::F32) return simd::widen_bf16(s16, reinterpret_cast<float*>(dst), n), true;
  return false;
}

}  // namespace

void copy_strided(const rt::CopyArgs& a) {
  const Layout<2> L(a.src.shape, {&a.src.strides, &a.out.strides});
  const std::int64_t n = a.src.numel();
  const std::size_t ss = dtype_size(a.src.dtype), ds = dtype_size(a.out.dtype);
  const char* src = static_cast<const char*>(a.src.buffer->host_ptr()) + a.src.offset * static_cast<std::int64_t>(ss);
  char* dst = static_cast<char*>(a.out.buffer->host_ptr()) + a.out.offset * static_cast<std::int64_t>(ds);
  const bool unit = L.inner_stride(0) == 1 && L.inner_stride(1) == 1;
  pool().parallel_for(n, 1 << 16, [&](std::int64_t b, std::int64_t e) {
    for_each_run(L, b, e, [&](const std::array<std::int64_t, 2>& off, std::int64_t len) {
      if (unit) {
        if (convert_run(src + off[0] * static_cast<std::int64_t>(ss), a.src.dtype,
                        dst + off[1] * static_cast<std::int64_t>(ds), a.out.dtype, len))
          return;
        convert(src + off[0] * static_cast<std::int64_t>(ss), a.src.dtype, dst + off[1] * static_cast<std::int64_t>(ds),
                a.out.dtype, static_cast<std::size_t>(len));
        return;
      }
      for (std::int64_t i = 0; i < len; ++i)
        convert(src + (off[0] + i * L.inner_stride(0)) * static_cast<std::int64_t>(ss), a.src.dtype,
                dst + (off[1] + i * L.inner_stride(1)) * static_cast<std::int64_t>(ds), a.out.dtype, 1);
    });
  });
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Copy, entry<rt::OpKind::Copy, copy_strided>>(rt::DTypes::all());
  t.add<rt::OpKind::Cast, entry<rt::OpKind::Cast, copy_strided>>(rt::DTypes::all());
});
}  // namespace

}  // namespace torsh::cpu
