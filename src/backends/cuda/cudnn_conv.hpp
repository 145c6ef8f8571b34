#pragma once
// conv2d through cuDNN, for the CUDA plugin built where CMake found cuDNN
// (TORSH_CUDNN; never for HIP). cuDNN is opened at run time, so the plugin
// still loads on machines without it and conv2d.cu runs the shared kernel there.
#include "device.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::cuda {

// Runs `a` on s through cuDNN and returns true, or does nothing and returns
// false: built without cuDNN, cuDNN not loadable, or a convolution it does
// not take (sizes past its int range, no direct-sum algorithm for the case).
// A failure after cuDNN took the convolution throws.
bool cudnn_conv2d(CudaStream& s, const rt::Conv2dArgs& a);

}  // namespace torsh::cuda
