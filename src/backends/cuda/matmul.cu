// Batched f32 GEMM: matmul.kern.h's matmul_f32_tiled, one MM_TILE x MM_TILE
// block per output tile and batch. Transposes and broadcast batches are
// strides in MatmulMeta, so no operand is copied.
#include "launch.hpp"

#include <algorithm>

#include "kernels/matmul.kern.h"

namespace torsh::cuda {

namespace {
// gridDim.y and gridDim.z stop at 65535: larger batches and taller outputs
// are launched in slices, each starting at an element offset.
constexpr std::int64_t kMaxGridYZ = 65535;

void matmul(CudaStream& s, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  if (batch == 0 || m == 0 || n == 0) return;
  MatmulMeta g = gpu::matmul_meta(a);
  const auto tiles = [](std::int64_t v) { return static_cast<unsigned>((v + MM_TILE - 1) / MM_TILE); };
  const std::int64_t rows_per_launch = kMaxGridYZ * MM_TILE;
  const auto* A = static_cast<const float*>(ptr_of(*a.a.buffer));
  const auto* B = static_cast<const float*>(ptr_of(*a.b.buffer));
  auto* C = static_cast<float*>(ptr_of(*a.out.buffer));
  for (std::int64_t b0 = 0; b0 < batch; b0 += kMaxGridYZ) {
    const std::int64_t nb = std::min(kMaxGridYZ, batch - b0);
    for (std::int64_t r0 = 0; r0 < m; r0 += rows_per_launch) {
      g.m = std::min(rows_per_launch, m - r0);
      g.oa = a.a.offset + b0 * g.sa[0] + r0 * g.sa[1];
      g.ob = a.b.offset + b0 * g.sb[0];
      g.oo = a.out.offset + b0 * g.so[0] + r0 * g.so[1];
      launch(s, TORSH_CUDA_KERNEL(matmul_f32_tiled), dim3(tiles(n), tiles(g.m), static_cast<unsigned>(nb)),
             dim3(MM_TILE, MM_TILE, 1), A, B, C, g);
    }
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::cuda
