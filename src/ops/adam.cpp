// Fused Adam / AdamW over lists of parameters.
#include "dispatch.hpp"

namespace torsh::ops {

void adam_step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avg,
               std::vector<Tensor>& exp_avg_sq, const AdamConfig& cfg, std::int64_t step, float grad_scale) {
  const char* name = "adam_step";
  if (grads.size() != params.size() || exp_avg.size() != params.size() || exp_avg_sq.size() != params.size())
    throw Error(ErrorCode::InvalidArgument,
                "lists differ in length: " + std::to_string(params.size()) + " params, " +
                    std::to_string(grads.size()) + " grads, " + std::to_string(exp_avg.size()) + " exp_avg, " +
                    std::to_string(exp_avg_sq.size()) + " exp_avg_sq",
                {.op = name});
  if (step < 1) throw Error(ErrorCode::InvalidArgument, "step is 1-based", {.op = name});
  if (!(cfg.lr >= 0) || !(cfg.beta1 >= 0 && cfg.beta1 < 1) || !(cfg.beta2 >= 0 && cfg.beta2 < 1) || !(cfg.eps >= 0) ||
      !(cfg.weight_decay >= 0))
    throw Error(ErrorCode::InvalidArgument, "need lr >= 0, betas in [0, 1), eps >= 0, weight_decay >= 0", {.op = name});
  // Validate every tensor before touching any, so bad input changes nothing.
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::vector<Tensor> group{params[i], grads[i], exp_avg[i], exp_avg_sq[i]};
    detail::check_same_device(name, group);
    const DType pt = params[i].dtype();
    if (pt != DType::F32 && pt != DType::F16 && pt != DType::BF16)
      throw Error(ErrorCode::DTypeMismatch, "parameters must be f32, f16 or bf16", detail::context(name, group));
    if (grads[i].dtype() != pt || exp_avg[i].dtype() != DType::F32 || exp_avg_sq[i].dtype() != DType::F32)
      throw Error(ErrorCode::DTypeMismatch, "grad must match the parameter's dtype and the moments must be f32",
                  detail::context(name, group));
    for (const auto& t : group) {
      if (t.shape() != params[i].shape())
        throw Error(ErrorCode::ShapeMismatch, "tensor " + std::to_string(i) + " of the lists differ in shape",
                    detail::context(name, group));
      if (!t.is_contiguous())
        throw Error(ErrorCode::InvalidArgument, "adam_step updates contiguous tensors in place",
                    detail::context(name, group), {"Call contiguous() on the parameter storage"});
    }
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 0) continue;
    detail::launch<rt::OpKind::Adam>(name, {grads[i]}, {params[i], exp_avg[i], exp_avg_sq[i]}, [=](auto& in, auto& o) {
      rt::AdamArgs a;
      a.param = o[0];
      a.grad = in[0];
      a.exp_avg = o[1];
      a.exp_avg_sq = o[2];
      a.lr = cfg.lr, a.beta1 = cfg.beta1, a.beta2 = cfg.beta2, a.eps = cfg.eps;
      a.weight_decay = cfg.weight_decay, a.adamw = cfg.adamw, a.step = step, a.grad_scale = grad_scale;
      return a;
    });
  }
}

}  // namespace torsh::ops
