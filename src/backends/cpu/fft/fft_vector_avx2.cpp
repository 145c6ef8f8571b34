// The vector stages at 256 bits: 8 floats or 4 doubles a vector (fft_vector_body.hpp).
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "fft_vector_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Everything below runs only where fft_vector.cpp found this level.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "fft_vector_body.hpp"

namespace torsh::cpu::fft {
namespace {
using FloatV = float __attribute__((vector_size(32)));
using DoubleV = double __attribute__((vector_size(32)));
template <class T>
using Vec = std::conditional_t<std::is_same_v<T, float>, FloatV, DoubleV>;
}  // namespace

template <class T>
void avx2::run_transform(const Plan<T>& plan, const T* xr, const T* xi, T* yr, T* yi, bool in_pairs, bool out_pairs,
                         bool conj, T scale, T* a, T* b) {
  transform<Vec<T>>(plan, xr, xi, yr, yi, in_pairs, out_pairs, conj, scale, a, b);
}
template <class T>
void avx2::run_batched(const Plan<T>& plan, T* re, T* im, T* work, std::int64_t batch) {
  batched<Vec<T>>(plan, re, im, work, batch);
}
TORSH_FFT_VECTOR_INSTANTIATE(avx2)

}  // namespace torsh::cpu::fft
#pragma GCC pop_options
#else
namespace torsh::cpu::fft {
// Not x86 with GCC: fft_vector.cpp reports no level, so no plan comes here.
template <class T>
void avx2::run_transform(const Plan<T>&, const T*, const T*, T*, T*, bool, bool, bool, T, T*, T*) {}
template <class T>
void avx2::run_batched(const Plan<T>&, T*, T*, T*, std::int64_t) {}
TORSH_FFT_VECTOR_INSTANTIATE(avx2)
}  // namespace torsh::cpu::fft
#endif
