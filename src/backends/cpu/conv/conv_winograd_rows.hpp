#pragma once
// The Winograd transforms of conv_winograd.cpp, AVX2 bodies
// (conv_winograd_avx2.cpp), eight tiles or filters at a time. Each returns
// how many it did from the start; the caller's portable loop runs the rest.
// Callers check isa_usable(Isa::Avx2) first.
#include <cstdint>

namespace torsh::cpu::winograd {

// rows: 4 zero-padded input rows of row_len, readable 18 floats past the
// last group's first column; V of tile tx, point ξ goes to
// v[ξ * xi_stride + tx]. Does the whole row (a last short group masked).
std::int64_t input_row_avx2(const float* rows, std::int64_t row_len, std::int64_t TQ, float* v, std::int64_t xi_stride);
// m[ξ * xi_stride + tx] -> output rows y0, y1 (columns 2tx, 2tx + 1), each
// with room for 2 * TQ + 16 floats. Does the whole row.
std::int64_t output_row_avx2(const float* m, std::int64_t xi_stride, std::int64_t TQ, float* y0, float* y1);

// U of the filters w[c] (9 floats each) for c from 0 in groups of 8.
std::int64_t filters_avx2(const float* w, std::int64_t Cg, std::int64_t xi_stride, float* u);

}  // namespace torsh::cpu::winograd
