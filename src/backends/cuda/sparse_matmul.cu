// CSR @ dense: sparse_matmul.kern.h, one thread per output element.
#include "launch.hpp"

#include "backends/gpu/kernels/sparse_matmul.kern.h"

namespace torsh::cuda {
namespace {

void sparse_matmul(CudaStream& s, const rt::SparseMatmulArgs& a) {
  const auto [grid, block] = grid_1d(s.device(), a.rows * a.n);
  const auto* p = bytes_of(*a.indptr.buffer);
  const auto* c = bytes_of(*a.indices.buffer);
  const int i64 = a.indptr.dtype == DType::I64;
  if (a.out.dtype == DType::F64) {
    const auto d = [](const rt::TensorArg& t) { return static_cast<double*>(ptr_of(*t.buffer)); };
    launch(s, TORSH_CUDA_KERNEL(sparse_matmul_f64), grid, block, p, long{a.indptr.offset}, c, long{a.indices.offset},
           i64, d(a.values), long{a.values.offset}, d(a.x), long{a.x.offset}, d(a.out), long{a.out.offset},
           long{a.rows}, long{a.n});
    return;
  }
  const auto f = [](const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)); };
  launch(s, TORSH_CUDA_KERNEL(sparse_matmul_f32), grid, block, p, long{a.indptr.offset}, c, long{a.indices.offset}, i64,
         f(a.values), long{a.values.offset}, f(a.x), long{a.x.offset}, f(a.out), long{a.out.offset}, long{a.rows},
         long{a.n});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::SparseMatmul, entry<rt::OpKind::SparseMatmul, sparse_matmul>>(rt::DTypes{DType::F32, DType::F64});
});

}  // namespace
}  // namespace torsh::cuda
