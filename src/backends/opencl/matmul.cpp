// Batched f32 GEMM: matmul.kern.h's matmul_f32_tiled, one TILE x TILE
// work-group per output tile and batch. Transposes and broadcast batches are
// strides in MatmulMeta, so no operand is copied.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void matmul(OpenClStream& s, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  if (batch == 0 || m == 0 || n == 0) return;
  const MatmulMeta g = gpu::matmul_meta(a);
  const auto tiles = [](std::int64_t v) { return static_cast<std::size_t>(gpu::round_up(v, MM_TILE)); };
  const Kernel kern = s.device().kernel("matmul_f32_tiled");
  launch(s, kern, range(tiles(n), tiles(m), static_cast<std::size_t>(batch)), range(MM_TILE, MM_TILE, 1),
         mem_of(*a.a.buffer), mem_of(*a.b.buffer), mem_of(*a.out.buffer), g);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(gpu::kF32);
});

}  // namespace
}  // namespace torsh::opencl
