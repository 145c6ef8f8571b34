// The convolution column packers against the plain route they replace:
// unfold the image into the column matrix, then pack that with the kernel's
// own pack_b. Every packer must write the same bytes, for every kernel this
// CPU runs, every dtype, and windows of k and columns that start and end
// anywhere (mid-tap, mid-output-row, past the last column).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/conv/conv_columns.hpp"
#include "backends/cpu/platform/isa.hpp"
#include "backends/cpu/simd/simd_avx2.hpp"

namespace {

namespace g = torsh::cpu::gemm;
using torsh::DType;
using torsh::cpu::ConvGeometry;

ConvGeometry geometry(std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t R, std::int64_t S, std::int64_t sh,
                      std::int64_t sw, std::int64_t ph, std::int64_t pw, std::int64_t dh, std::int64_t dw) {
  ConvGeometry geo{C, H, W, R, S, 0, 0, sh, sw, ph, pw, dh, dw};
  geo.P = (H + 2 * ph - dh * (R - 1) - 1) / sh + 1;
  geo.Q = (W + 2 * pw - dw * (S - 1) - 1) / sw + 1;
  return geo;
}

// Random finite values of `dt`, as raw element bytes.
std::vector<unsigned char> random_image(const ConvGeometry& geo, DType dt, std::mt19937& rng) {
  const std::size_t count = static_cast<std::size_t>(geo.C * geo.H * geo.W), es = torsh::dtype_size(dt);
  std::vector<unsigned char> x(count * es);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (std::size_t i = 0; i < count; ++i) {
    float f = u(rng);
    if (f == 0.0f) f = 1.0f;  // no zeros, so a missed padding lane cannot pass
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (dt == DType::F32) {
      std::memcpy(&x[i * 4], &bits, 4);
    } else {
      // bf16: the top half of the float; f16: a value in +-[1, 2) with the float's mantissa bits.
      const std::uint16_t h =
          dt == DType::BF16 ? static_cast<std::uint16_t>(bits >> 16)
                            : static_cast<std::uint16_t>(((bits >> 16) & 0x8000) | 0x3C00 | ((bits >> 13) & 0x3FF));
      std::memcpy(&x[i * 2], &h, 2);
    }
  }
  return x;
}

// The [C * R * S, P * Q] column matrix, written out element by element.
std::vector<unsigned char> unfold(const std::vector<unsigned char>& x, const ConvGeometry& geo, std::size_t es) {
  const std::int64_t PQ = geo.P * geo.Q;
  std::vector<unsigned char> col(static_cast<std::size_t>(geo.C * geo.R * geo.S * PQ) * es, 0);
  for (std::int64_t c = 0; c < geo.C; ++c)
    for (std::int64_t r = 0; r < geo.R; ++r)
      for (std::int64_t s = 0; s < geo.S; ++s)
        for (std::int64_t p = 0; p < geo.P; ++p)
          for (std::int64_t q = 0; q < geo.Q; ++q) {
            const std::int64_t h = p * geo.stride_h - geo.pad_h + r * geo.dil_h;
            const std::int64_t w = q * geo.stride_w - geo.pad_w + s * geo.dil_w;
            if (h < 0 || h >= geo.H || w < 0 || w >= geo.W) continue;
            const std::int64_t row = (c * geo.R + r) * geo.S + s;
            std::memcpy(&col[static_cast<std::size_t>(row * PQ + p * geo.Q + q) * es],
                        &x[static_cast<std::size_t>((c * geo.H + h) * geo.W + w) * es], es);
          }
  return col;
}

// Packed panels are written with aligned vector stores, as into the GEMM's scratch.
struct Panels {
  explicit Panels(std::size_t n)
      : bytes(n), p(static_cast<unsigned char*>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {
    std::memset(p, 0xAB, n);
  }
  ~Panels() { std::free(p); }
  Panels(const Panels&) = delete;
  Panels& operator=(const Panels&) = delete;
  bool operator==(const Panels& o) const { return bytes == o.bytes && std::memcmp(p, o.p, bytes) == 0; }
  std::size_t bytes;
  unsigned char* p;
};

std::vector<const g::Kernel*> kernels_here() {
  std::vector<const g::Kernel*> ks = {&g::kernel_generic_f32()};
#if defined(__x86_64__) && defined(__GNUC__)
  if (torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2)) ks.push_back(&g::kernel_avx2_f32());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    ks.push_back(&g::kernel_avx512_f32());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bf16"))
    ks.push_back(&g::kernel_avx512_bf16());
#endif
  return ks;
}

TEST(ConvColumns, PackLikeTheUnfoldedMatrix) {
  const std::vector<ConvGeometry> geos = {
      geometry(3, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1),    // same size: panels run across output rows unbroken
      geometry(2, 6, 9, 3, 3, 1, 1, 0, 0, 1, 1),    // output narrower than the input: breaks at row ends
      geometry(2, 9, 8, 3, 2, 2, 1, 1, 2, 2, 1),    // strides, dilation, uneven padding
      geometry(2, 4, 3, 3, 3, 2, 3, 3, 3, 1, 2),    // padding wider than the image
      geometry(3, 7, 9, 1, 1, 2, 2, 0, 0, 1, 1),    // strided 1x1
      geometry(2, 5, 40, 1, 5, 1, 1, 0, 2, 1, 1),   // rows wider than a panel
      geometry(1, 20, 21, 3, 3, 1, 1, 1, 1, 1, 1),  // many panels, one channel
  };
  std::mt19937 rng(7);
  int checked = 0;
  for (const g::Kernel* kern : kernels_here())
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      if (kern->panel == g::Panel::Bf16Pairs && dt != DType::BF16) continue;
      const std::size_t es = torsh::dtype_size(dt);
      for (const ConvGeometry& geo : geos) {
        const auto x = random_image(geo, dt, rng);
        const auto col = unfold(x, geo, es);
        const std::int64_t K = geo.C * geo.R * geo.S, PQ = geo.P * geo.Q;
        const torsh::cpu::ConvColumns source(x.data(), dt, geo);
        for (int trial = 0; trial < 12; ++trial) {
          // Windows: the whole matrix first, then random ones.
          std::int64_t k0 = 0, kc = K, j0 = 0, cols = PQ;
          if (trial > 0) {
            k0 = std::uniform_int_distribution<std::int64_t>(0, K - 1)(rng);
            kc = std::uniform_int_distribution<std::int64_t>(1, K - k0)(rng);
            j0 = std::uniform_int_distribution<std::int64_t>(0, PQ - 1)(rng);
            cols = std::uniform_int_distribution<std::int64_t>(1, PQ - j0)(rng);
          }
          const std::size_t bytes =
              static_cast<std::size_t>((cols + kern->nr - 1) / kern->nr) * g::b_panel_bytes(*kern, kc);
          Panels want(bytes), got(bytes), any(bytes);
          kern->pack_b(*kern, g::Mat{col.data() + (k0 * PQ + j0) * es, dt, PQ, 1}, kc, cols, want.p);
          source.pack(*kern, k0, kc, j0, cols, got.p);
          torsh::cpu::conv_pack_any(x.data(), dt, geo, *kern, k0, kc, j0, cols, any.p);
          const std::string where = std::string(kern->name) + " " + std::string(torsh::dtype_name(dt)) + " C" +
                                    std::to_string(geo.C) + " H" + std::to_string(geo.H) + " W" +
                                    std::to_string(geo.W) + " k0=" + std::to_string(k0) + " kc=" + std::to_string(kc) +
                                    " j0=" + std::to_string(j0) + " cols=" + std::to_string(cols);
          ASSERT_TRUE(got == want) << "ConvColumns::pack, " << where;
          ASSERT_TRUE(any == want) << "conv_pack_any, " << where;
          if (dt == DType::F32 && kern->panel == g::Panel::F32 && kern->nr % 8 == 0 &&
              torsh::cpu::isa_usable(torsh::cpu::Isa::Avx2)) {
            Panels avx2(bytes);
            torsh::cpu::conv_pack_f32_avx2(reinterpret_cast<const float*>(x.data()), geo, k0, kc, j0, cols, kern->nr,
                                           reinterpret_cast<float*>(avx2.p));
            ASSERT_TRUE(avx2 == want) << "conv_pack_f32_avx2, " << where;
          }
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, 0);
}

}  // namespace
