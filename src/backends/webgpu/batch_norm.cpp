// Batch normalisation (inference and training): batch_norm.wgsl's
// batch_norm_channels, one work-group per channel, f32, f16 and bf16.
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void batch_norm(WebGpuDevice& dev, const rt::BatchNormArgs& a) {
  if (a.c == 0 || a.n * a.spatial == 0) return;
  const auto or_x = [&](const rt::TensorArg& t) -> const rt::TensorArg& { return t.present() ? t : a.x; };
  Launch l(dev);
  l.tensor(a.x).tensor(or_x(a.weight)).tensor(or_x(a.bias)).tensor(or_x(a.running_mean)).tensor(or_x(a.running_var));
  l.tensor(a.out);
  l.param(a.n).param(a.c).param(a.spatial).param(a.training ? 1 : 0).param(a.weight.present() ? 1 : 0);
  l.param(a.bias.present() ? 1 : 0).param(a.running_mean.present() ? 1 : 0).param(a.momentum).param(a.eps);
  l.param(gpu::elem_code(a.x.dtype));
  for (std::size_t i = 0; i < 6; ++i) l.param(l.offset(i));
  l.run_rows("batch_norm", "batch_norm_channels", a.c);
}

// Strided passes over a channel's N x spatial values: mean, variance and
// write in training, the write alone in inference.
bool batch_norm_fits(const rt::DeviceImpl& d, const rt::BatchNormArgs& a) {
  return loops_fit(d, (a.training ? 3 : 1) * strided(a.n * a.spatial, 128) + 16) &&
         fits(d, {&a.x, &a.weight, &a.bias, &a.running_mean, &a.running_var, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::BatchNorm, entry<rt::OpKind::BatchNorm, batch_norm>>(gpu::kElemDTypes, batch_norm_fits,
                                                                         kLoopFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
