#pragma once
// AVX-512 versions of the simd.hpp loops whose vector math, not memory,
// limits them at 256 bits on CPUs with two 512-bit FMA pipes
// (simd_avx512.cpp); simd.cpp calls them before the AVX2 ones when
// isa_usable(Isa::Avx512).
#include <cstdint>

#include "torsh/backend/op_args.hpp"

namespace torsh::cpu::simd {

// False when `op` has no AVX-512 body here (the caller tries the next level).
// stream: as in simd::unary_f32.
bool unary_f32_avx512(rt::UnaryOp op, const float* x, float* y, std::int64_t n, bool stream = false);
// out = op(a, b) as simd::binary_f32 (Pow has no body here); stream: as above.
bool binary_f32_avx512(rt::BinaryOp op, const float* a, const float* b, std::int64_t bs, float* out, std::int64_t n,
                       bool stream = false);

// The two halves of simd::attention_rows at 16 lanes, reading k and v in
// their dtype (F32, F16 or BF16): scores s[i, j] = q_i . k_j for j <
// min(jmax[i], nk) (16 keys reduced at once), and acc[i] += sum_j s[i, j] v_j.
// False when D (Dv) is not a multiple of 16 (or D > 256).
bool attention_scores_avx512(const float* q, std::int64_t nq, const void* k, DType kd, std::int64_t nk, std::int64_t D,
                             const std::int64_t* jmax, float* s);
bool attention_values_avx512(const float* s, std::int64_t nq, std::int64_t nk, const void* v, DType vd, std::int64_t Dv,
                             const std::int64_t* jmax, float* acc);
// The online-softmax step between them (simd.cpp's portable one at 16 lanes).
bool attention_softmax_avx512(std::int64_t nq, std::int64_t nk, std::int64_t Dv, const std::int64_t* jmax, float* s,
                              float* m, float* l, float* acc);
// f16 bits -> f32 (vcvtph2ps on 16 values).
void widen_f16_avx512(const std::uint16_t* x, float* y, std::int64_t n);

}  // namespace torsh::cpu::simd
