// Batched f32 GEMM: matmul.kern.h's matmul_f32_tiled, one TILE x TILE
// work-group per output tile and batch. Transposes and broadcast batches are
// strides in MatmulMeta, so no operand is copied.
#include "launch.hpp"

namespace torsh::opencl {

void matmul(OpenClStream& s, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  const std::int64_t k = a.a.shape[2];
  if (batch == 0 || m == 0 || n == 0) return;
  MatmulMeta g{};
  g.m = m;
  g.n = n;
  g.k = k;
  for (int i = 0; i < 3; ++i) {
    g.sa[i] = a.a.strides[i];
    g.sb[i] = a.b.strides[i];
    g.so[i] = a.out.strides[i];
  }
  g.oa = a.a.offset;
  g.ob = a.b.offset;
  g.oo = a.out.offset;
  g.alpha = a.alpha;
  g.beta = a.beta;
  const auto tiles = [](std::int64_t v) { return static_cast<std::size_t>((v + kMatmulTile - 1) / kMatmulTile) * kMatmulTile; };
  const Kernel kern = s.device().kernel("matmul_f32_tiled");
  launch(s, kern, range(tiles(n), tiles(m), static_cast<std::size_t>(batch)), range(kMatmulTile, kMatmulTile, 1),
         mem_of(*a.a.buffer), mem_of(*a.b.buffer), mem_of(*a.out.buffer), g);
}

}  // namespace torsh::opencl
