// The vector stages at 512 bits: 16 floats or 8 doubles a vector (fft_vector_body.hpp).
#include "fft_vector_isa.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Everything below runs only where fft_vector.cpp found this level.
#pragma GCC push_options
#pragma GCC target("avx512f")
#include "fft_vector_body.hpp"
TORSH_FFT_VECTOR_LEVEL(avx512, 64)
#pragma GCC pop_options
#else
TORSH_FFT_VECTOR_ABSENT(avx512)
#endif
