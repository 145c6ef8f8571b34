// The vector stages at 512 bits: 16 floats or 8 doubles a vector.
#include "fft_vector.hpp"

#include <cstring>
#include <type_traits>
#include <utility>

#include "../simd/simd_avx512.hpp"

namespace torsh::cpu::fft {

template <>
int vector_lanes<float>() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  return simd::avx512_usable() ? 16 : 0;
#else
  return 0;
#endif
}
template <>
int vector_lanes<double>() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  return simd::avx512_usable() ? 8 : 0;
#else
  return 0;
#endif
}

}  // namespace torsh::cpu::fft

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Everything below runs only where vector_lanes() said AVX-512.
#pragma GCC push_options
#pragma GCC target("avx512f")
#include "fft_vector_body.hpp"

namespace torsh::cpu::fft {
namespace {
using F16 = float __attribute__((vector_size(64)));
using D8 = double __attribute__((vector_size(64)));
template <class T>
using Vec = std::conditional_t<std::is_same_v<T, float>, F16, D8>;
}  // namespace

template <class T>
void vector_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs,
                      bool conj, T scale, T* a, T* b) {
  transform<Vec<T>>(plan, xr, xi, yr, yi, in_pairs, out_pairs, conj, scale, a, b);
}
template <class T>
void vector_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch) {
  batched<Vec<T>>(plan, re, im, work, batch);
}

template void vector_transform<float>(const Plan<float>&, const float*, const float*, float*, float*, bool, bool, bool,
                                      float, float*, float*);
template void vector_transform<double>(const Plan<double>&, const double*, const double*, double*, double*, bool, bool,
                                       bool, double, double*, double*);
template void vector_batched<float>(const Plan<float>&, float*, float*, float*, std::int64_t);
template void vector_batched<double>(const Plan<double>&, double*, double*, double*, std::int64_t);

}  // namespace torsh::cpu::fft
#pragma GCC pop_options
#else
namespace torsh::cpu::fft {
// No vector stages here: vector_lanes() is 0, so no plan asks for them.
template <class T>
void vector_transform(const Plan<T>&, const T*, const T*, T*, T*, bool, bool, bool, T, T*, T*) {}
template <class T>
void vector_batched(const Plan<T>&, T*, T*, T*, std::int64_t) {}
template void vector_transform<float>(const Plan<float>&, const float*, const float*, float*, float*, bool, bool, bool,
                                      float, float*, float*);
template void vector_transform<double>(const Plan<double>&, const double*, const double*, double*, double*, bool, bool,
                                       bool, double, double*, double*);
template void vector_batched<float>(const Plan<float>&, float*, float*, float*, std::int64_t);
template void vector_batched<double>(const Plan<double>&, double*, double*, double*, std::int64_t);
}  // namespace torsh::cpu::fft
#endif
