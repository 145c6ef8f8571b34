// CSR @ dense: sparse_matmul.kern.h, one work-item per output element
// (f64 on devices with doubles).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void sparse_matmul(OpenClStream& s, const rt::SparseMatmulArgs& a) {
  OpenClDevice& dev = s.device();
  const bool f64 = a.out.dtype == DType::F64;
  const Kernel k = dev.kernel(f64 ? "sparse_matmul_f64" : "sparse_matmul_f32");
  const auto [global, local] = grid_1d(dev, k, a.rows * a.n);
  launch(s, k, global, local, mem_of(*a.indptr.buffer), cl_long{a.indptr.offset}, mem_of(*a.indices.buffer),
         cl_long{a.indices.offset}, cl_int{a.indptr.dtype == DType::I64}, mem_of(*a.values.buffer),
         cl_long{a.values.offset}, mem_of(*a.x.buffer), cl_long{a.x.offset}, mem_of(*a.out.buffer),
         cl_long{a.out.offset}, cl_long{a.rows}, cl_long{a.n});
}

bool sparse_fits(const rt::DeviceImpl& d, const rt::SparseMatmulArgs& a) {
  return a.out.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::SparseMatmul, entry<rt::OpKind::SparseMatmul, sparse_matmul>>(
      rt::DTypes{DType::F32, DType::F64}, sparse_fits, "f64 where the device has doubles");
});

}  // namespace
}  // namespace torsh::opencl
