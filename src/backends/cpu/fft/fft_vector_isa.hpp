#pragma once
// The vector stages' entry points per x86 level (fft_vector_avx512.cpp,
// fft_vector_avx2.cpp); fft_vector.cpp picks one by the CPU.
#include <cstdint>

#include "fft_plan.hpp"

namespace torsh::cpu::fft {

#define TORSH_FFT_VECTOR_ENTRIES(isa)                                                                            \
  namespace isa {                                                                                                \
  template <class T>                                                                                             \
  void run_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs, \
                     bool conj, T scale, T* a, T* b);                                                            \
  template <class T>                                                                                             \
  void run_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch);                              \
  }
TORSH_FFT_VECTOR_ENTRIES(avx512)
TORSH_FFT_VECTOR_ENTRIES(avx2)
#undef TORSH_FFT_VECTOR_ENTRIES

// Explicit instantiations of one level's entries for float and double, in
// the file that defines them.
#define TORSH_FFT_VECTOR_INSTANTIATE(isa)                                                                             \
  template void isa::run_transform<float>(const Plan<float>&, const float*, const float*, float*, float*, bool, bool, \
                                          bool, float, float*, float*);                                               \
  template void isa::run_transform<double>(const Plan<double>&, const double*, const double*, double*, double*, bool, \
                                           bool, bool, double, double*, double*);                                     \
  template void isa::run_batched<float>(const Plan<float>&, float*, float*, float*, std::int64_t);                    \
  template void isa::run_batched<double>(const Plan<double>&, double*, double*, double*, std::int64_t);

// Where this compiler cannot build the vector stages (not GCC on x86):
// entry points that are never called, since fft_vector.cpp reports no level.
#define TORSH_FFT_VECTOR_ABSENT(isa)                                                                  \
  namespace torsh::cpu::fft {                                                                         \
  template <class T>                                                                                  \
  void isa::run_transform(const Plan<T>&, const T*, const T*, T*, T*, bool, bool, bool, T, T*, T*) {} \
  template <class T>                                                                                  \
  void isa::run_batched(const Plan<T>&, T*, T*, T*, std::int64_t) {}                                  \
  TORSH_FFT_VECTOR_INSTANTIATE(isa)                                                                   \
  }

}  // namespace torsh::cpu::fft
