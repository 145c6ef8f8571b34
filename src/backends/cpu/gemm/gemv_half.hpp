#pragma once
// Dot products of f16 / bf16 matrix rows with an f32 vector at the widest
// vector level (gemv_half.cpp).
#include <cstdint>

#include "../platform/isa.hpp"

namespace torsh::cpu::gemm {

// out[i] = sum_p a[i * rs + p] * x[p] for i < rows, a holding f16 (bf16 when
// `bf16`) bits with contiguous rows. isa: vector_isa(); false (nothing
// written) for Generic, where the caller runs its portable loop.
bool dot_rows_half(Isa isa, const std::uint16_t* a, std::int64_t rs, bool bf16, const float* x, std::int64_t k,
                   std::int64_t rows, float* out);

}  // namespace torsh::cpu::gemm
