// Elementwise f32 binary ops: binary.kern.h's binary_f32_contig when all three
// tensors are dense from element 0, binary_f32_strided for everything else
// (broadcast stride-0 operands, transposes, offsets).
#include "launch.hpp"

namespace torsh::opencl {

namespace {

void binary(OpenClStream& s, const rt::BinaryArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const StridedMeta m = gpu::strided_meta(a.out.shape, {&a.a, &a.b, &a.out});
  const bool dense = gpu::dense(m, 3);
  const bool at_zero = a.a.offset == 0 && a.b.offset == 0 && a.out.offset == 0;
  const cl_mem x = mem_of(*a.a.buffer), y = mem_of(*a.b.buffer), z = mem_of(*a.out.buffer);
  if (dense && at_zero) {
    const Kernel k = dev.kernel("binary_f32_contig");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, cl_long{n}, cl_int{gpu::binary_code(a.op)});
  } else {
    const Kernel k = dev.kernel("binary_f32_strided");
    const auto [global, local] = grid_1d(dev, k, n);
    launch(s, k, global, local, x, y, z, m, cl_int{gpu::binary_code(a.op)});
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Binary, entry<rt::OpKind::Binary, binary>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::opencl
