// The overflow check of mixed precision: one flag for a list of tensors.
#include "dispatch.hpp"

namespace torsh::ops {

Tensor any_non_finite(const std::vector<Tensor>& tensors) {
  const char* name = "any_non_finite";
  if (tensors.empty()) throw Error(ErrorCode::InvalidArgument, "no tensors: the flag's device is theirs", {.op = name});
  for (const Tensor& t : tensors)
    if (t.device() != tensors[0].device()) detail::check_same_device(name, {tensors[0], t});
  Backend b = tensors[0].backend();
  const bool no = false;
  Tensor flag = b.from_host(&no, Shape{}, DType::Bool);
  for (const Tensor& t : tensors) {
    if (t.numel() == 0 || !is_floating(t.dtype())) continue;
    const Tensor x = t.is_contiguous() ? t : t.contiguous();
    detail::launch<rt::OpKind::NonFinite>(name, {x}, {flag}, [](auto& in, auto& o) {
      rt::NonFiniteArgs a;
      a.x = in[0];
      a.flag = o[0];
      return a;
    });
  }
  return flag;
}

}  // namespace torsh::ops
