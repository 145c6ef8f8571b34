#pragma once
// SpMV rows with x read by vector gathers (spmv_gather.cpp): on Intel's
// cores a gather of 16 (or 8) x values issues fewer load operations than as
// many scalar loads, and the loop stops being bound by them. Measured on an
// Emerald Rapids against the scalar loop of sparse_matmul.cpp, 2 threads,
// f32 values and i32 indices: a 5 MB matrix (in cache) 1.68x at 512 bits and
// 1.32x at 256; rows of power-law length, 1% of 20000^2, 1.44x / 1.50x;
// 0.1% of 100000^2 1.12x / 1.24x (all of these held in its 260 MB L3).
// From memory they lose: matrices of 160 and 320 MB ran 0.84-0.99x, so
// sparse_matmul.cpp sends only matrices within a quarter of the last-level
// cache here. On Zen 4 gathers measured the same or slower than the scalar
// loop, so AMD's cores keep it.
#include <cstdint>

namespace torsh::cpu {

// "avx512 gather", "avx2 gather", or nullptr where the scalar loop runs
// (not an Intel CPU, or neither level usable under TORSH_CPU_ISA's cap).
const char* spmv_gather_level();

// y[r] = sum over row r's nonzeros j of values[j] * x[indices[j]], rows
// [r0, r1); the values and indices are prefetched `ahead` nonzeros ahead
// (0: none). Only where spmv_gather_level() is not null.
void spmv_gather(const std::int32_t* indptr, const std::int32_t* indices, const float* values, const float* x, float* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead);
void spmv_gather(const std::int64_t* indptr, const std::int64_t* indices, const float* values, const float* x, float* y,
                 std::int64_t r0, std::int64_t r1, std::int64_t ahead);
void spmv_gather(const std::int32_t* indptr, const std::int32_t* indices, const double* values, const double* x,
                 double* y, std::int64_t r0, std::int64_t r1, std::int64_t ahead);
void spmv_gather(const std::int64_t* indptr, const std::int64_t* indices, const double* values, const double* x,
                 double* y, std::int64_t r0, std::int64_t r1, std::int64_t ahead);

}  // namespace torsh::cpu
