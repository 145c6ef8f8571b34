// index_select: index_select.wgsl's index_select_elems, one invocation per
// output element, moving elements by size (8-byte ones as two words), so every
// dtype; f64 too, since nothing is computed on it.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void index_select(WebGpuDevice& dev, const rt::IndexSelectArgs& a) {
  const std::int64_t total = a.out.numel();
  if (total == 0) return;
  Launch l(dev);
  l.tensor(a.x).tensor(a.ids).tensor(a.out);
  l.param(l.offset(0)).param(l.offset(1)).param(l.offset(2)).param(total).param(a.n).param(a.inner).param(a.m);
  l.param(static_cast<std::uint32_t>(dtype_size(a.x.dtype))).param(static_cast<std::uint32_t>(dtype_size(a.ids.dtype)));
  l.run("index_select", "index_select_elems", total);
}

bool index_select_fits(const rt::DeviceImpl& d, const rt::IndexSelectArgs& a) {
  return fits(d, {&a.x, &a.ids, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::IndexSelect, entry<rt::OpKind::IndexSelect, index_select>>(gpu::kIndexSelectDTypes,
                                                                               index_select_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
