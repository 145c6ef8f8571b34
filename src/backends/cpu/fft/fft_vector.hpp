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

// How plans for vector_lanes<T>() are shaped on this CPU.
//  - radix16: radix-16 stages where the powers of two would otherwise end
//    in 8 4 4 or 8 8 4 (16 8, 16 16), so a stage fewer;
//  - max_bytes: the longest length, in bytes of complex values, that runs
//    the vector stages (longer ones run the scalar stages, or four-step);
//  - y_scratch: a transform from pairs to pairs elsewhere uses y as its
//    second intermediate (Plan::y_scratch);
//  - fuse_min_bytes, fuse_max_bytes: lengths in between (in bytes of
//    complex values) run stages two to a pass (Plan::passes). At 256 bits
//    from the shortest; at 512 bits from where the transform's three arrays
//    outgrow the L1 (a third of it), as in L1 the fused pass costs more than
//    it saves. Up to 128 KiB (16384 floats) on both: past it a fused pair's
//    R1 R2 streams (against a stage's 2 R) outrun the L1's ways and the
//    prefetchers.
// Elsewhere (AMD's cores, 256 bits, doubles): none of the first three,
// max_bytes from vector_max_bytes. On Intel's at 512 bits (floats): all three,
// max_bytes taking every power of two below the four-step: the 32 registers
// hold a radix-16 butterfly's data, and a stage fewer is a pass fewer over
// arrays that outgrow the L1. At 256 bits (floats) with an L1 of 12 ways or
// more, max_bytes likewise; with fewer ways the first stage's streams
// conflict in the L1 (fft_plan.hpp, vector_max_bytes).
// The measurements behind each choice: src/backends/cpu/README.md, fft_vector.
struct VectorPlanShape {
  bool radix16 = false;
  std::int64_t max_bytes = 0;
  bool y_scratch = false;
  std::int64_t fuse_min_bytes = 0;
  std::int64_t fuse_max_bytes = std::int64_t{128} << 10;
};
template <class T>
VectorPlanShape vector_plan_shape();

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
