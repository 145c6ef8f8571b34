#pragma once
// AVX2 + FMA versions of the simd.hpp loops that are bound by vector math
// (simd_avx2.cpp); simd.cpp calls them when isa_usable(Isa::Avx2).
#include <cstdint>

#include "torsh/backend/op_args.hpp"

namespace torsh::cpu::simd {

// False when `op` has no AVX2 body here (the caller runs the portable loop).
// stream: as in simd::unary_f32.
bool unary_f32_avx2(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream = false);
// out = op(a, b) as simd::binary_f32 (Pow has no body here); stream: as above.
bool binary_f32_avx2(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                     bool stream = false);
// next: the row the caller reads after this one (or null), prefetched during
// the passes that run from L1 so its DRAM read overlaps this row's math.
void softmax_row_f32_avx2(const float* x, float* y, std::int64_t n, bool log, const float* next = nullptr);
// f16 bits -> f32 with F16C (part of the Avx2 level).
void widen_f16_avx2(const std::uint16_t* x, float* y, std::int64_t n);
void norm_row_f32_avx2(const float* x, float* y, const float* w, const float* b, std::int64_t n, float eps, bool rms,
                       const float* next = nullptr);

}  // namespace torsh::cpu::simd
