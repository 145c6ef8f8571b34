#pragma once
// The single launch idiom every op uses: validated tensors in, a closure that
// calls one DeviceImpl method. When the device lacks the op (its supports()
// says no), inputs and outputs are copied to the CPU, the op runs there and
// the outputs are copied back; each copy is counted in fallback_stats().
#include <functional>
#include <vector>

#include "torsh/ops/ops.hpp"

namespace torsh::ops::detail {

using Launch = std::function<void(rt::DeviceImpl&, rt::StreamImpl&, const std::vector<rt::TensorArg>& in,
                                  const std::vector<rt::TensorArg>& out)>;

void launch(rt::OpKind kind, DType dtype, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Launch& fn);

// Every input on one device, else DeviceMismatch naming all of them.
void check_same_device(const char* op, const std::vector<Tensor>& ts);
void check_same_dtype(const char* op, const std::vector<Tensor>& ts);
ErrorContext context(const char* op, const std::vector<Tensor>& ts);

}  // namespace torsh::ops::detail
