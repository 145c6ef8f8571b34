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

}  // namespace torsh::cpu::simd
