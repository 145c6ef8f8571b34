#pragma once
// DFTs through cuFFT for the CUDA plugin (never for HIP). cuFFT is opened at
// run time, so the plugin still loads on machines without it and fft.cu
// runs the shared passes there.
#include "device.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::cuda {

// Runs `a` on s through cuFFT and returns true, or does nothing and returns
// false: a HIP build, cuFFT not loadable, sizes past its int range, or
// operands not aligned to whole complex values. A failure after cuFFT took
// the transform throws.
bool cufft_run(CudaStream& s, const rt::FftArgs& a);

}  // namespace torsh::cuda
