#pragma once
// The per-step scalars of adam.kern.h's adam_elems, computed from AdamArgs as
// the CPU backend's adam.cpp computes them (the bias corrections in f64, then
// rounded), so device and CPU update with the same constants.
#include <cmath>

#include "torsh/backend/kernel_table.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::gpu {

struct AdamScalars {
  float step_size, inv_sqrt_bc2, decay, l2;
};

inline AdamScalars adam_scalars(const rt::AdamArgs& a) {
  const auto bias_correction = [&](float beta) {
    return 1.0f - static_cast<float>(std::pow(static_cast<double>(beta), static_cast<double>(a.step)));
  };
  const float bc1 = bias_correction(a.beta1), bc2 = bias_correction(a.beta2);
  return {a.lr / bc1, 1.0f / std::sqrt(bc2), a.adamw ? 1.0f - a.lr * a.weight_decay : 1.0f,
          a.adamw ? 0.0f : a.weight_decay};
}

// The dtypes adam_elems takes for param and grad (the moments are f32), as the CPU's.
inline constexpr rt::DTypes kAdamDTypes{DType::F32, DType::F16, DType::BF16};

}  // namespace torsh::gpu
