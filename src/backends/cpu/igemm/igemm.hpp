#pragma once
// int8 GEMM on the CPU (rt::IntegerMatmulArgs): exact int32 sums of u8 x s8
// products from packed panels, every instruction set with its own tile.
//
// Operands are normalised while packing so one instruction shape fits all four
// dtype pairs: a becomes unsigned (a' = a, or a + 128 for i8: the byte XOR
// 0x80) and b signed (b' = b, or b - 128 for u8), the zero points with them.
// With ra[m] = sum_k a'[m][k] and cb[n] = sum_k b'[k][n] (kept while packing),
//
//   sum_k (a' - za')(b' - zb') = acc + za'[m] (K zb'[n] - cb[n]) - zb'[n] ra[m]
//
// where acc = sum_k a' b' is what the tiles compute; all in wrapping 32-bit
// arithmetic, which keeps the identity exact modulo 2^32.
//
// Lane formats: one 32-bit lane of a vector holds consecutive k values of one
// column of b, and a row of a offers the same k values as one 32-bit word to
// broadcast:
//   U8x4:  four k per lane, bytes (vpdpbusd: AVX-512 VNNI, AVX-VNNI; generic)
//   S16x2: two k per lane, int16 (vpmaddwd: AVX2 without VNNI, which has no
//          u8 x s8 instruction that cannot saturate)
// AVX2 without VNNI also has a U8x4 tile on vpmaddubsw, which sums each pair
// of products (k = 2t, 2t + 1) into int16 with saturation. It is exact when
// max a' x max (|b'[2t][j]| + |b'[2t+1][j]|) <= 32767, as with weights
// quantized to 7 bits (|b'| <= 64, onnxruntime's reduce_range for CPUs
// without VNNI); integer_matmul measures the operands and takes it only then.
// Panels: a in mr-row panels, for each group of k: mr words; b in nr-column
// panels, for each group: nr words. K is padded with zeros to whole groups.
#include <cstddef>
#include <cstdint>

#include "torsh/backend/op_args.hpp"

namespace torsh::cpu::igemm {

enum class Lane { U8x4, S16x2 };
constexpr int k_per_lane(Lane l) { return l == Lane::U8x4 ? 4 : 2; }

// Where a tile's mr x nr sums go: c[r * ldc + j]. With col and row given,
// each sum leaves the registers finished, sum + col[j] + row[r] (wrapping):
// the zero-point terms of igemm.hpp's identity when both zero points are per
// tensor, so no second pass reads the tile back.
// With acc, the sums of earlier blocks of k (acc[r * ld_acc + j], which may
// be c itself) are added too (igemm_run.cpp runs long k in blocks).
struct TileOut {
  std::int32_t* c;
  std::int64_t ldc;
  const std::int32_t* col = nullptr;
  const std::int32_t* row = nullptr;
  const std::int32_t* acc = nullptr;
  std::int64_t ld_acc = 0;
};

struct Kernel {
  const char* name;  // "avx512_vnni-14x32"
  Lane lane;
  int mr, nr;
  // The sums over `groups` groups of a row r . b column j, for a full mr x nr
  // tile (padding rows and columns are zeros in the panels), into out.
  void (*tile)(const unsigned char* a, const unsigned char* b, std::int64_t groups, const TileOut& out);
  // Optional, for QLinearMatMul: rows x cols finished sums (c, ldc apart) times
  // the column multipliers s, rounded half to even, plus z, saturated to u8
  // [0, 255] (to_u8) or s8 [-128, 127], into out (ldo apart), as
  // igemm_run.cpp's portable loop does; a NaN product gives z. `plain`
  // promises every product finite and below 2^22 in magnitude, which lets
  // the kernel skip its guards for those.
  void (*requantize)(const std::int32_t* c, int ldc, int rows, int cols, const float* s, std::int32_t z, bool to_u8,
                     unsigned char* out, std::int64_t ldo, bool plain) = nullptr;
};

const Kernel& kernel_generic();
const Kernel& kernel_avx2();
const Kernel& kernel_avx2_maddubs();  // exact only for operands that cannot saturate it
const Kernel& kernel_avx_vnni();
const Kernel& kernel_avx512_vnni();
const Kernel& kernel_avx512_vnni_8x48();
const Kernel& kernel_avx512_vnni_6x64();
// The best this CPU runs (capped by TORSH_CPU_ISA).
const Kernel& active_kernel();

// Bytes of one packed panel of `rows` (mr or nr) by k.
std::size_t panel_bytes(const Kernel& kn, int rows, std::int64_t k);
// Rows [r0, r0 + kn.mr) of a (contiguous [m, k], i8 when `a_signed`) into one
// panel at dst; row sums of a' into sums[0 .. mr) (rows past m: 0).
void pack_a(const Kernel& kn, const unsigned char* a, std::int64_t m, std::int64_t k, bool a_signed, std::int64_t r0,
            unsigned char* dst, std::int32_t* sums);
// Columns [c0, c0 + kn.nr) of b (contiguous [k, n], u8 when `b_unsigned`) into
// one panel at dst; column sums of b' into sums[0 .. nr).
void pack_b(const Kernel& kn, const unsigned char* b, std::int64_t k, std::int64_t n, bool b_unsigned, std::int64_t c0,
            unsigned char* dst, std::int32_t* sums);

// The whole op.
void integer_matmul(const rt::IntegerMatmulArgs& a);
// For tests: 1 runs every product whose k spans more than one block in
// blocks (igemm_run.cpp), 0 none, -1 (the default) decides by its size.
void force_long_k_blocks(int mode);

}  // namespace torsh::cpu::igemm
