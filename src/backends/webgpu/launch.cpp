#include "launch.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace torsh::webgpu {

namespace {

constexpr std::int64_t kMax32 = std::int64_t{1} << 31;

}  // namespace

std::pair<std::uint64_t, std::uint64_t> span_bytes(const rt::TensorArg& t) {
  const std::uint64_t es = dtype_size(t.dtype);
  std::int64_t last = t.offset;
  for (std::size_t d = 0; d < t.shape.ndim(); ++d)
    if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.strides[d];
  return {static_cast<std::uint64_t>(t.offset) * es, static_cast<std::uint64_t>(last + 1) * es};
}

bool fits_binding(const WebGpuDevice& dev, const rt::TensorArg& t) {
  if (t.numel() >= kMax32 || t.offset >= kMax32) return false;
  for (std::size_t d = 0; d < t.shape.ndim(); ++d)
    if (t.strides[d] < 0 || t.strides[d] >= kMax32) return false;
  const auto [first, end] = span_bytes(t);
  const std::uint64_t align = std::max<std::uint32_t>(4, dev.limits().minStorageBufferOffsetAlignment);
  return end - first / align * align <= dev.limits().maxStorageBufferBindingSize && end / 4 < (std::uint64_t{1} << 32);
}

Launch& Launch::tensor(const rt::TensorArg& t) {
  const auto& buf = static_cast<const WebGpuBuffer&>(*t.buffer);
  const std::uint64_t whole = buf.allocated();
  const std::uint64_t limit = dev_.limits().maxStorageBufferBindingSize & ~std::uint64_t{3};
  if (whole <= limit) {
    bindings_.push_back({buf.handle(), 0, whole});
    offsets_.push_back(static_cast<std::uint32_t>(t.offset));
  } else {
    // Bind the aligned window that starts at or before the first element (fits_binding checked it holds them all).
    const std::uint64_t align = std::max<std::uint32_t>(4, dev_.limits().minStorageBufferOffsetAlignment);
    const std::uint64_t lo = span_bytes(t).first / align * align;
    bindings_.push_back({buf.handle(), lo, std::min(whole - lo, limit)});
    offsets_.push_back(static_cast<std::uint32_t>(t.offset - static_cast<std::int64_t>(lo / dtype_size(t.dtype))));
  }
  args_.push_back(&t);
  return *this;
}

Launch& Launch::strided(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  const StridedMeta m = gpu::strided_meta(shape, tensors);
  params_.assign(40, 0u);
  params_[0] = static_cast<std::uint32_t>(m.numel);
  params_[1] = static_cast<std::uint32_t>(m.nd);
  for (long d = 0; d < m.nd; ++d) params_[2 + d] = static_cast<std::uint32_t>(m.dims[d]);
  int t = 0;
  for (const rt::TensorArg* arg : tensors) {
    for (long d = 0; d < m.nd; ++d) params_[10 + 8 * t + d] = static_cast<std::uint32_t>(m.st[t][d]);
    // The element offset within the binding of the tensor bound with these args.
    const auto it = std::find(args_.begin(), args_.end(), arg);
    params_[34 + t] = it == args_.end() ? static_cast<std::uint32_t>(m.off[t]) : offsets_[it - args_.begin()];
    ++t;
  }
  return *this;
}

Launch& Launch::param(float v) { return param(std::bit_cast<std::uint32_t>(v)); }

void Launch::run(const char* module, const char* entry, std::int64_t items, std::uint32_t group) {
  if (items <= 0) return;
  const std::uint64_t groups = (static_cast<std::uint64_t>(items) + group - 1) / group;
  const std::uint64_t gx = std::min<std::uint64_t>(groups, dev_.limits().maxComputeWorkgroupsPerDimension);
  run_groups(module, entry, static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>((groups + gx - 1) / gx));
}

void Launch::run_groups(const char* module, const char* entry, std::uint32_t groups_x, std::uint32_t groups_y,
                        std::uint32_t groups_z) {
  dev_.dispatch(module, entry, bindings_, params_, groups_x, groups_y, groups_z);
}

void Launch::run_rows(const char* module, const char* entry, std::int64_t groups) {
  if (groups <= 0) return;
  const std::uint64_t g = static_cast<std::uint64_t>(groups);
  const std::uint64_t gx = std::min<std::uint64_t>(g, dev_.limits().maxComputeWorkgroupsPerDimension);
  run_groups(module, entry, static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>((g + gx - 1) / gx));
}

}  // namespace torsh::webgpu
