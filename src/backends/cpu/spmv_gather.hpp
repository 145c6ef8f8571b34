#pragma once
// SpMV rows with x read by vector gathers (spmv_gather.cpp): on Intel's
// cores a gather of 16 (or 8) x values issues fewer load operations than as
// many scalar loads, and the loop stops being bound by them. From memory
// gathers lose, so sparse_matmul.cpp sends only matrices within a quarter of
// the last-level cache here; on AMD's cores gathers are no faster than the
// scalar loop, so they keep it (src/backends/cpu/README.md, sparse_matmul).
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
