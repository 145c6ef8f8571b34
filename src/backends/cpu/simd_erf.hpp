#pragma once
// erf on [0, 4) as 4 pieces of width 1, each a degree-8 polynomial in the
// offset from the piece's middle (least squares, scripts/fit_erf.py; max
// error 9.91e-08): row j holds coefficient j of every piece. The vector gelu
// bodies broadcast a row to each 128-bit lane, so an in-lane permute
// (vpermilps: a cheap instruction, where a lane-crossing permute costs
// several cycles) picks each element's piece; AVX2 and AVX-512 evaluate the
// same operations and agree bit for bit. erf(4) rounds to 1 in f32. No exp
// and no division.
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

}  // namespace torsh::cpu::simd
