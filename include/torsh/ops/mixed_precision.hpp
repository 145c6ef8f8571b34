#pragma once
// Mixed precision: f16/bf16 storage with f32 accumulation (matmul and conv2d
// accumulate in f32 for f16/bf16 operands on every backend), and a dynamic
// loss scaler as in PyTorch's GradScaler.
#include <cstdint>
#include <vector>

#include "torsh/ops/ops.hpp"

namespace torsh {

struct MixedPrecisionConfig {
  DType compute_dtype = DType::F16;  // storage of activations and gradients: F16 or BF16
  DType accum_dtype = DType::F32;    // accumulation: F32 only
  float scale_factor = 65536.0f;     // initial loss scale
  float growth_factor = 2.0f;        // applied after growth_interval finite steps in a row
  float backoff_factor = 0.5f;       // applied on each overflowing step
  std::int64_t growth_interval = 2000;
  float max_scale = 16777216.0f;  // 2^24: larger scales overflow f16 gradients at once
  float min_scale = 1.0f;
};

class LossScaler {
 public:
  // Throws InvalidArgument naming the field when the configuration is unusable.
  explicit LossScaler(const MixedPrecisionConfig& cfg = {});

  const MixedPrecisionConfig& config() const { return cfg_; }
  float scale() const { return scale_; }
  // loss * scale in f32 on the loss's device: the default scale (65536)
  // already exceeds f16's range, so the scaled loss is never kept in f16.
  Tensor scale_loss(const Tensor& loss) const;
  // True when any gradient holds an inf or NaN: ops::any_non_finite on their
  // device (one check per gradient into one flag), so one byte per device,
  // not the gradients, is read back.
  static bool has_non_finite(const std::vector<Tensor>& grads);
  // Backs off on overflow, grows after growth_interval finite steps.
  void update(bool found_non_finite);

  // A fused Adam/AdamW step on scaled gradients: unscales inside the kernel
  // (grad_scale = 1/scale), skips the step when a gradient overflowed, then
  // updates the scale. Returns whether the parameters were updated. `step`
  // counts taken steps only, as bias correction requires.
  bool adam_step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avg,
                 std::vector<Tensor>& exp_avg_sq, const ops::AdamConfig& adam, std::int64_t& step);

  std::int64_t skipped_steps() const { return skipped_; }
  std::int64_t finite_streak() const { return streak_; }

 private:
  MixedPrecisionConfig cfg_;
  float scale_;
  std::int64_t streak_ = 0;
  std::int64_t skipped_ = 0;
};

}  // namespace torsh
