// batch_norm per channel: batch_norm.kern.h's *_apply (inference, running
// statistics; one work-item per element) or *_train (one BN_GROUP work-group
// per channel: batch statistics, running-statistics update, normalisation).
// f32, f16 and bf16 with f32 math (batch_norm_elems_*); f64 with double math
// (batch_norm_f64_*) on devices with cl_khr_fp64.
#include "backends/gpu/conv_meta.hpp"
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void batch_norm(OpenClStream& s, const rt::BatchNormArgs& a) {
  OpenClDevice& dev = s.device();
  const BatchNormMeta m = gpu::batch_norm_meta(a);
  const bool f64 = a.x.dtype == DType::F64;
  // An absent tensor is never read: x stands in for its buffer.
  const cl_mem x = mem_of(*a.x.buffer);
  const auto mem_or_x = [&](const rt::TensorArg& t) { return t.present() ? mem_of(*t.buffer) : x; };
  const cl_mem w = mem_or_x(a.weight), b = mem_or_x(a.bias), rm = mem_or_x(a.running_mean),
               rv = mem_or_x(a.running_var), out = mem_of(*a.out.buffer);
  if (a.training) {
    // Even an empty batch updates the running statistics (with NaN), as the CPU does.
    if (a.c == 0) return;
    const Kernel k = dev.kernel(f64 ? "batch_norm_f64_train" : "batch_norm_elems_train");
    launch(s, k, range(static_cast<std::size_t>(a.c) * BN_GROUP), range(BN_GROUP), x, w, b, rm, rv, out, m);
    return;
  }
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  const Kernel k = dev.kernel(f64 ? "batch_norm_f64_apply" : "batch_norm_elems_apply");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, x, w, b, rm, rv, out, m);
}

// Training needs BN_GROUP-item work-groups (OpenCL promises only one item).
static_assert(BN_GROUP == 256, "the registration below names the work-group size");
bool batch_norm_fits(const rt::DeviceImpl& d, const rt::BatchNormArgs& a) {
  const std::uint64_t max_group = d.capabilities().max_work_group;
  const bool group_fits = !a.training || max_group == 0 || max_group >= BN_GROUP;
  return group_fits && (a.x.dtype != DType::F64 || d.capabilities().f64);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::BatchNorm, entry<rt::OpKind::BatchNorm, batch_norm>>(
      gpu::kWindowDTypes, batch_norm_fits, "f64 needs cl_khr_fp64; training: 256-item work-groups");
});

}  // namespace
}  // namespace torsh::opencl
