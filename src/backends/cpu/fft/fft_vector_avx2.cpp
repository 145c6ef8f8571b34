// The vector stages at 256 bits: 8 floats or 4 doubles a vector (fft_vector_body.hpp).
#include "fft_vector_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Everything below runs only where fft_vector.cpp found this level.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "fft_vector_body.hpp"
TORSH_FFT_VECTOR_LEVEL(avx2, 32)
#pragma GCC pop_options
#else
TORSH_FFT_VECTOR_ABSENT(avx2)
#endif
