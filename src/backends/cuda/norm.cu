// LayerNorm / RMSNorm over contiguous rows: norm.kern.h's norm_rows (f32, f16
// and bf16 storage with f32 math) and norm_f64_rows, one NM_GROUP block per row.
#include "launch.hpp"

#include <climits>

#include "backends/gpu/kernels/norm.kern.h"

namespace torsh::cuda {
namespace {

// One block per row in gridDim.x: up to 2^31 - 1 rows; more run on the CPU.
bool fits_grid(const rt::DeviceImpl&, const rt::NormArgs& a) { return a.rows <= INT_MAX; }

void norm(CudaStream& s, const rt::NormArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  // An absent weight or bias is never read: x stands in for its pointer.
  unsigned char* x = bytes_of(*a.x.buffer);
  unsigned char* w = a.weight.present() ? bytes_of(*a.weight.buffer) : x;
  unsigned char* b = a.bias.present() ? bytes_of(*a.bias.buffer) : x;
  const dim3 grid(static_cast<unsigned>(a.rows)), block(NM_GROUP);
  const int has_w = a.weight.present() ? 1 : 0, has_b = a.bias.present() ? 1 : 0, rms = a.rms ? 1 : 0;
  if (a.x.dtype == DType::F64) {
    const auto f64 = [](unsigned char* p) { return reinterpret_cast<double*>(p); };
    launch(s, TORSH_CUDA_KERNEL(norm_f64_rows), grid, block, f64(x), f64(w), f64(b), f64(bytes_of(*a.out.buffer)), a.n,
           a.x.offset, a.weight.offset, a.bias.offset, a.out.offset, a.eps, rms, has_w, has_b);
    return;
  }
  launch(s, TORSH_CUDA_KERNEL(norm_rows), grid, block, x, w, b, bytes_of(*a.out.buffer), a.n, a.x.offset,
         a.weight.offset, a.bias.offset, a.out.offset, a.eps, rms, has_w, has_b, gpu::elem_code(a.x.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Norm, entry<rt::OpKind::Norm, norm>>(rt::DTypes::floating(), fits_grid, "fewer than 2^31 rows");
});

}  // namespace
}  // namespace torsh::cuda
