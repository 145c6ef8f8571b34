// Batched GEMM in f32, f16, bf16 and f64. f32, f16 and bf16 go to cuBLAS
// (cublas_gemm.hpp: f32 compute, TF32 only when precision::allow_tf32())
// wherever it can express the layout; the rest, f64 and the ROCm build (no
// cuBLAS) run matmul.kern.h's register-blocked kernels with the size-based
// default variant, one block per output tile and batch. Transposes and
// broadcast batches are strides in MatmulMeta, so no operand is copied.
#include "launch.hpp"

#include <algorithm>

#include "backends/gpu/kernels/matmul.kern.h"
#include "backends/gpu/matmul_variants.hpp"
#if !defined(TORSH_HIP)
#include "cublas_gemm.hpp"
#endif

namespace torsh::cuda {

namespace {
using MatmulKernel = KernelRef<const uchar*, const uchar*, uchar*, MatmulMeta>;
struct VariantKernels {
  MatmulKernel f32, h16;
};
#define TORSH_MM_KERNELS(name) \
  VariantKernels { TORSH_CUDA_KERNEL(matmul_##name##_f32), TORSH_CUDA_KERNEL(matmul_##name##_h16) }
// In gpu::kMatmulVariants' order.
const VariantKernels kVariantKernels[] = {TORSH_MM_KERNELS(t16x16_r1x1),  TORSH_MM_KERNELS(t32x32_r4x4),
                                          TORSH_MM_KERNELS(t64x64_r4x4),  TORSH_MM_KERNELS(t64x64_r8x4),
                                          TORSH_MM_KERNELS(t128x64_r8x4), TORSH_MM_KERNELS(t128x128_r8x8),
                                          TORSH_MM_KERNELS(t8x128_r1x8),  TORSH_MM_KERNELS(t128x8_r8x1)};
#undef TORSH_MM_KERNELS
static_assert(std::size(kVariantKernels) == gpu::kMatmulVariants.size());

// gridDim.y and gridDim.z stop at 65535: larger batches and taller outputs
// are launched in slices, each starting at an element offset.
constexpr std::int64_t kMaxGridYZ = 65535;

template <class K, class T>
void run_kernel(CudaStream& s, const rt::MatmulArgs& a, const gpu::MatmulVariant& v, K kernel, T* out) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  MatmulMeta g = gpu::matmul_meta(a);
  const auto tiles = [](std::int64_t e, int t) { return static_cast<unsigned>((e + t - 1) / t); };
  const std::int64_t rows_per_launch = kMaxGridYZ * v.bm;
  const auto* A = static_cast<const T*>(ptr_of(*a.a.buffer));
  const auto* B = static_cast<const T*>(ptr_of(*a.b.buffer));
  for (std::int64_t b0 = 0; b0 < batch; b0 += kMaxGridYZ) {
    const std::int64_t nb = std::min(kMaxGridYZ, batch - b0);
    for (std::int64_t r0 = 0; r0 < m; r0 += rows_per_launch) {
      g.m = std::min(rows_per_launch, m - r0);
      g.oa = a.a.offset + b0 * g.sa[0] + r0 * g.sa[1];
      g.ob = a.b.offset + b0 * g.sb[0];
      g.oo = a.out.offset + b0 * g.so[0] + r0 * g.so[1];
      launch(s, kernel, dim3(tiles(n, v.bn), tiles(g.m, v.bm), static_cast<unsigned>(nb)),
             dim3(static_cast<unsigned>(v.threads_x()), static_cast<unsigned>(v.threads_y()), 1), A, B, out, g);
    }
  }
}

void matmul(CudaStream& s, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  if (batch == 0 || m == 0 || n == 0) return;
  if (a.out.dtype == DType::F64) {
    run_kernel(s, a, gpu::kMatmulF64, TORSH_CUDA_KERNEL(matmul_f64_t32x32_r2x2),
               static_cast<double*>(ptr_of(*a.out.buffer)));
    return;
  }
#if !defined(TORSH_HIP)
  if (cublas_gemm(s, a)) return;
#endif
  const gpu::MatmulVariant& v = gpu::default_matmul_variant(batch, m, n);
  const VariantKernels& k = kVariantKernels[&v - gpu::kMatmulVariants.data()];
  run_kernel(s, a, v, a.out.dtype == DType::F32 ? k.f32 : k.h16, bytes_of(*a.out.buffer));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(gpu::kMatmulDTypes);
});

}  // namespace
}  // namespace torsh::cuda
