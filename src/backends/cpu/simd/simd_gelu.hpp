#pragma once
// gelu (erf form), written once for every vector width. simd_avx2.cpp and
// simd_avx512.cpp include this inside their `#pragma GCC target` region, so
// the body is compiled for their instruction set, and instantiate it with
// their vector traits V: the same operations lane for lane, so the widths
// agree bit for bit.
//
// erf on [0, 4) is 4 pieces of width 1, each a degree-8 polynomial in the
// offset from the piece's middle (least squares, scripts/golden/fit-erf.py; max
// error 9.91e-08): row j of kErfPieces holds coefficient j of every piece.
// V::row broadcasts a row to each 128-bit lane, so an in-lane permute
// (vpermilps: a cheap instruction, where a lane-crossing permute costs
// several cycles) picks each element's piece. erf(4) rounds to 1 in f32.
// No exp and no division.
namespace torsh::cpu::simd {

alignas(16) inline constexpr float kErfPieces[9][4] = {
    {0.520499885f, 0.966105163f, 0.999593019f, 0.999999285f},
    {0.878782809f, 0.118930072f, 0.0021783181f, 5.39729444e-06f},
    {-0.439390749f, -0.17839542f, -0.00544573693f, -1.8896344e-05f},
    {-0.146477684f, 0.138763487f, 0.00834828522f, 4.24091668e-05f},
    {0.183061972f, -0.0445994474f, -0.0086215185f, -6.77708304e-05f},
    {0.00752667151f, -0.0150333075f, 0.00614338135f, 8.04814335e-05f},
    {-0.0498414077f, 0.0193334296f, -0.00280821207f, -7.71457126e-05f},
    {0.00428718049f, -0.00383468205f, 0.000403042475f, 6.68906869e-05f},
    {0.00911555905f, -0.00240193028f, 0.000306311907f, -3.70374364e-05f},
};

// Each including file compiles its own copy, for its own target.
namespace {

// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x + 0.5 |x| erf(|x| / sqrt 2)
// for N vectors at once: erf is odd, so no sign is restored, and a NaN x
// (whose clamped z gives a finite erf) is NaN in both terms; -inf gives NaN,
// as the formula does. Each step runs on all N vectors before the next, so
// the 9-deep Horner chains overlap: one vector at a time leaves the loop
// waiting on FMA latency (the out-of-order window holds about two).
template <class V, int N>
__attribute__((always_inline)) inline void gelu_erf_n(const typename V::reg (&x)[N], typename V::reg (&y)[N]) {
  typename V::reg t[N], p[N];
  typename V::ireg piece[N];
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) {
    // z = |x| / sqrt 2, below 4
    const auto z = V::min(V::mul(V::abs(x[i]), V::set1(0.70710678118654752f)), V::set1(3.99999976f));
    const auto zf = V::trunc(z);
    piece[i] = V::to_int(zf);
    t[i] = V::sub(V::sub(z, zf), V::set1(0.5f));
    p[i] = V::permute(V::row(kErfPieces[8]), piece[i]);
  }
#pragma GCC unroll 8
  for (int j = 7; j >= 0; --j) {
    const auto row = V::row(kErfPieces[j]);
#pragma GCC unroll 4
    for (int i = 0; i < N; ++i) p[i] = V::fmadd(p[i], t[i], V::permute(row, piece[i]));
  }
#pragma GCC unroll 4
  for (int i = 0; i < N; ++i) {
    const auto h = V::mul(x[i], V::set1(0.5f));
    y[i] = V::fmadd(V::abs(h), V::min(p[i], V::set1(1.0f)), h);
  }
}

}  // namespace
}  // namespace torsh::cpu::simd
