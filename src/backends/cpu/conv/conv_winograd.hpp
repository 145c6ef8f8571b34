#pragma once
// conv2d by Winograd's minimal filtering F(2x2, 3x3) (Lavin & Gray): each
// 4x4 input tile d and 3x3 filter g meet in a 4x4 transformed domain,
//   Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A,
// so a 2x2 block of outputs costs 16 multiplies instead of 36. Across
// channels the elementwise products are 16 GEMMs, [K, C] · [C, tiles], run by
// the blocked GEMM; the transforms are adds. 2.25x fewer multiply-adds than
// the direct (GEMM) form, at a rounding error a few times larger (the
// transforms add up to 9 terms before the product).
#include "torsh/backend/op_args.hpp"

namespace torsh::cpu {

// f32, 3x3, stride 1, dilation 1, and a tile chunk that fits the scratch cap.
bool winograd_fits(const rt::Conv2dArgs& a);
// What ConvAlgo::Auto picks: it fits, and the channels are many enough for
// the transform-domain GEMMs (k = C / groups) to run at speed.
bool winograd_pays(const rt::Conv2dArgs& a);
// out = conv2d(x, w) without bias; the caller checked winograd_fits.
void conv2d_winograd(const rt::Conv2dArgs& a);

}  // namespace torsh::cpu
