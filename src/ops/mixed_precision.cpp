#include "torsh/ops/mixed_precision.hpp"

#include <cmath>
#include <string>

namespace torsh {
namespace {
[[noreturn]] void bad(const std::string& what, const std::string& hint) {
  throw Error(ErrorCode::InvalidArgument, "MixedPrecisionConfig: " + what, {.op = "LossScaler"}, {hint});
}
}  // namespace

LossScaler::LossScaler(const MixedPrecisionConfig& cfg) : cfg_(cfg), scale_(cfg.scale_factor) {
  if (cfg.compute_dtype != DType::F16 && cfg.compute_dtype != DType::BF16)
    bad("compute_dtype is " + std::string(dtype_name(cfg.compute_dtype)), "Use f16 or bf16");
  if (cfg.accum_dtype != DType::F32)
    bad("accum_dtype is " + std::string(dtype_name(cfg.accum_dtype)), "Accumulation is f32");
  if (!(cfg.min_scale > 0) || !(cfg.max_scale >= cfg.min_scale) || !std::isfinite(cfg.max_scale))
    bad("min_scale " + std::to_string(cfg.min_scale) + " / max_scale " + std::to_string(cfg.max_scale),
        "Need 0 < min_scale <= max_scale < inf");
  if (!(cfg.scale_factor >= cfg.min_scale && cfg.scale_factor <= cfg.max_scale))
    bad("scale_factor " + std::to_string(cfg.scale_factor) + " outside [min_scale, max_scale]",
        "Start inside the allowed range, e.g. 65536");
  if (!(cfg.growth_factor > 1)) bad("growth_factor " + std::to_string(cfg.growth_factor), "Need growth_factor > 1");
  if (!(cfg.backoff_factor > 0 && cfg.backoff_factor < 1))
    bad("backoff_factor " + std::to_string(cfg.backoff_factor), "Need 0 < backoff_factor < 1");
  if (cfg.growth_interval < 1)
    bad("growth_interval " + std::to_string(cfg.growth_interval), "Need growth_interval >= 1");
}

Tensor LossScaler::scale_loss(const Tensor& loss) const {
  Backend b = loss.backend();
  const float s = scale_;
  Tensor f = b.from_host(&s, Shape{}, DType::F32);
  return ops::mul(loss.dtype() == DType::F32 ? loss : loss.cast(DType::F32), f);
}

bool LossScaler::has_non_finite(const std::vector<Tensor>& grads) {
  // One device-side check per gradient into a flag per device; only the
  // flag's byte comes back to the host.
  std::vector<Tensor> same_device;
  const auto found = [&] {
    return !same_device.empty() && ops::any_non_finite(same_device).to_host<unsigned char>().at(0) != 0;
  };
  for (const auto& g : grads) {
    if (!same_device.empty() && g.device() != same_device[0].device()) {
      if (found()) return true;
      same_device.clear();
    }
    same_device.push_back(g);
  }
  return found();
}

void LossScaler::update(bool found_non_finite) {
  if (found_non_finite) {
    scale_ = std::max(cfg_.min_scale, scale_ * cfg_.backoff_factor);
    streak_ = 0;
    return;
  }
  if (++streak_ >= cfg_.growth_interval) {
    scale_ = std::min(cfg_.max_scale, scale_ * cfg_.growth_factor);
    streak_ = 0;
  }
}

bool LossScaler::adam_step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avg,
                           std::vector<Tensor>& exp_avg_sq, const ops::AdamConfig& adam, std::int64_t& step) {
  const bool overflow = has_non_finite(grads);
  if (overflow) {
    ++skipped_;
  } else {
    ++step;
    ops::adam_step(params, grads, exp_avg, exp_avg_sq, adam, step, 1.0f / scale_);
  }
  update(overflow);
  return !overflow;
}

}  // namespace torsh
