#pragma once
// The column matrix of a convolution (im2col) as a GEMM B operand that is
// never written out: the GEMM's B packing reads the image directly. Row
// k = (c, r, s) and column j = (p, q) of the [C * R * S, P * Q] matrix hold
// x[c, p * stride_h - pad_h + r * dil_h, q * stride_w - pad_w + s * dil_w],
// zero where that falls outside the image. Packing straight from the image
// saves writing the whole column matrix and reading it back.
#include <cstdint>

#include "../gemm/gemm.hpp"

namespace torsh::cpu {

struct ConvGeometry {
  std::int64_t C = 0, H = 0, W = 0;  // input channels (of one group) and size
  std::int64_t R = 0, S = 0;         // filter taps
  std::int64_t P = 0, Q = 0;         // output size
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
};

// Whether every row, column and offset the packers compute for g fits int32
// (the AVX2 packer computes them in int32 lanes).
bool conv_fits_int32(const ConvGeometry& g);

class ConvColumns final : public gemm::BSource {
 public:
  // x: channel 0 of the image (or group) in NCHW, of dtype f32, f16 or bf16.
  ConvColumns(const void* x, DType dtype, const ConvGeometry& g)
      : x_(x), dtype_(dtype), g_(g), fits_int32_(conv_fits_int32(g)) {}

  void pack(const gemm::Kernel& kern, std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t cols,
            void* dst) const override;

 private:
  const void* x_;
  DType dtype_;
  ConvGeometry g_;
  bool fits_int32_;
};

// Offsets from the channel base of the image of the taps (r, s) for columns
// j0 .. j0 + nr - 1: off[rs * nr + l] is the element column j0 + l reads
// through tap rs, or -1 where it reads padding (or l >= cols).
void conv_tap_offsets(const ConvGeometry& g, std::int64_t j0, std::int64_t cols, int nr, std::int32_t* off);

// The packers ConvColumns::pack chooses from: any dtype and panel layout
// (through the kernel's own pack_b), and f32 into f32 panels with AVX2 (NR a
// multiple of 8 up to 64, geometry within int32), in conv_columns_avx2.cpp.
void conv_pack_any(const void* x, DType dtype, const ConvGeometry& g, const gemm::Kernel& kern, std::int64_t k0,
                   std::int64_t kc, std::int64_t j0, std::int64_t cols, void* dst);
void conv_pack_f32_avx2(const float* x, const ConvGeometry& g, std::int64_t k0, std::int64_t kc, std::int64_t j0,
                        std::int64_t cols, int nr, float* dst);

}  // namespace torsh::cpu
