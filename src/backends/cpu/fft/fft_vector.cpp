// Which x86 level's vector stages run: AVX-512 (16 floats / 8 doubles a
// vector), else AVX2 with FMA (8 / 4), else none, under TORSH_CPU_ISA's cap.
#include "fft_vector.hpp"
#include "../platform/isa.hpp"

#include "../platform/cpu_info.hpp"
#include "../simd/simd_avx2.hpp"
#include "../simd/simd_avx512.hpp"
#include "fft_vector_isa.hpp"

namespace torsh::cpu::fft {
namespace {
// The level the vector stages run at: Avx512, Avx2 or Generic (none).
Isa level() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  return vector_isa();
#else
  return Isa::Generic;
#endif
}
}  // namespace

const char* vector_level_name() { return level() == Isa::Avx512 ? "avx512" : level() == Isa::Avx2 ? "avx2" : ""; }

template <class T>
int vector_lanes() {
  const int bytes = level() == Isa::Avx512 ? 64 : level() == Isa::Avx2 ? 32 : 0;
  return bytes / static_cast<int>(sizeof(T));
}

template <class T>
VectorPlanShape vector_plan_shape() {
  const int bytes = vector_lanes<T>() * static_cast<int>(sizeof(T));
  if (level() == Isa::Avx512 && sizeof(T) == 4 && intel_cpu())
    return {.radix16 = true,
            .max_bytes = kFourStepMin * static_cast<std::int64_t>(sizeof(T)),
            .y_scratch = true,
            .fuse_min_bytes = l1d_bytes() / 3};
  if (level() == Isa::Avx2 && sizeof(T) == 4 && l1d_ways() >= 12)
    return {.radix16 = false, .max_bytes = kFourStepMin * static_cast<std::int64_t>(sizeof(T))};
  return {.radix16 = false, .max_bytes = vector_max_bytes(bytes), .fuse_min_bytes = bytes == 32 ? 0 : l1d_bytes() / 3};
}

template <class T>
void vector_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs,
                      bool conj, T scale, T* a, T* b) {
  // A plan's lanes came from vector_lanes(), so the level is the one it was factored for.
  if (level() == Isa::Avx512)
    return avx512::run_transform(plan, xr, xi, yr, yi, in_pairs, out_pairs, conj, scale, a, b);
  avx2::run_transform(plan, xr, xi, yr, yi, in_pairs, out_pairs, conj, scale, a, b);
}

template <class T>
void vector_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch) {
  if (level() == Isa::Avx512) return avx512::run_batched(plan, re, im, work, batch);
  avx2::run_batched(plan, re, im, work, batch);
}

template int vector_lanes<float>();
template int vector_lanes<double>();
template VectorPlanShape vector_plan_shape<float>();
template VectorPlanShape vector_plan_shape<double>();
template void vector_transform<float>(const Plan<float>&, const float*, const float*, float*, float*, bool, bool, bool,
                                      float, float*, float*);
template void vector_transform<double>(const Plan<double>&, const double*, const double*, double*, double*, bool, bool,
                                       bool, double, double*, double*);
template void vector_batched<float>(const Plan<float>&, float*, float*, float*, std::int64_t);
template void vector_batched<double>(const Plan<double>&, double*, double*, double*, std::int64_t);

}  // namespace torsh::cpu::fft
