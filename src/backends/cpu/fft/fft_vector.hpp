#pragma once
// The hand-vectorised stages (fft_vector_body.hpp) for plans factored for
// them: power-of-two lengths of at least lanes^2, a first stage of radix
// `lanes` and radices 16, 8, 4, 2 after it (Plan::lanes). fft_stages.cpp
// sends such plans here; every other plan runs the scalar stages.
#include <cstdint>

#include "fft_plan.hpp"

namespace torsh::cpu::fft {

// The vector width in lanes of T that this CPU runs the stages at: 16 floats
// or 8 doubles with AVX-512 (under TORSH_CPU_ISA's cap); 0 for none.
template <class T>
int vector_lanes();

// The level those stages run at: "avx512", "avx2" or "" (none: every plan
// runs the scalar stages).
const char* vector_level_name();

// The transform of a plan with lanes > 0, from x (pairs at xr when in_pairs,
// else split xr / xi) to pairs at yr (out_pairs; times scale) or split yr /
// yi (which may be xr / xi: in place). conj (pairs in and out only) makes it
// the unnormalised inverse. a and, with pairs out, b hold plan.work_size()
// values each.
template <class T>
void vector_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs,
                      bool conj, T scale, T* a, T* b);

// forward_batched for a plan with lanes > 0 and batch a multiple of lanes.
template <class T>
void vector_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch);

}  // namespace torsh::cpu::fft
