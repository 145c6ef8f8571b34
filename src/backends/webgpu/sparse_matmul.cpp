// CSR @ dense: sparse_matmul.wgsl, one invocation per output element, f32
// (WebGPU has no f64).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void sparse_matmul(WebGpuDevice& dev, const rt::SparseMatmulArgs& a) {
  const std::int64_t n = a.rows * a.n;
  if (n == 0) return;
  Launch l(dev);
  l.tensor(a.indptr).tensor(a.indices).tensor(a.values).tensor(a.x).tensor(a.out);
  l.param(l.offset(0)).param(l.offset(1)).param(gpu::elem_code(a.indptr.dtype)).param(l.offset(2));
  l.param(l.offset(3)).param(l.offset(4)).param(a.rows).param(a.n);
  l.run("sparse_matmul", "sparse_matmul_elems", n);
}

bool sparse_fits(const rt::DeviceImpl& d, const rt::SparseMatmulArgs& a) {
  // A row's nonzeros (at most cols) are one invocation's loop.
  return loops_fit(d, a.cols) && fits(d, {&a.indptr, &a.indices, &a.values, &a.x, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::SparseMatmul, entry<rt::OpKind::SparseMatmul, sparse_matmul>>(gpu::kF32, sparse_fits, kFitsNote);
});

}  // namespace
}  // namespace torsh::webgpu
