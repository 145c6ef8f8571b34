// rand / randn / bernoulli: random.wgsl's random_blocks, the CPU's Philox bits
// in f32, f16 and bf16 (WGSL has no doubles, so f64 runs on the CPU).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void random(WebGpuDevice& dev, const rt::RandomArgs& r) {
  const std::int64_t n = r.out.numel();
  if (n == 0) return;
  Launch l(dev);
  l.tensor(r.out);
  l.param(l.offset(0))
      .param(n)
      .param(static_cast<std::uint32_t>(r.seed))
      .param(static_cast<std::uint32_t>(r.seed >> 32));
  l.param(static_cast<std::uint32_t>(r.offset)).param(static_cast<std::uint32_t>(r.offset >> 32));
  l.param(static_cast<int>(r.kind)).param(r.a).param(r.b).param(gpu::elem_code(r.out.dtype));
  l.run("random", "random_blocks", (n + 3) / 4);
}

bool random_fits(const rt::DeviceImpl& d, const rt::RandomArgs& r) { return fits(d, {&r.out}); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Random, entry<rt::OpKind::Random, random>>(gpu::kElemDTypes, random_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
