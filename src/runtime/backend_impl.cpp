#include "torsh/runtime/backend_impl.hpp"

#include <string>

namespace torsh::rt {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Copy: return "copy";
    case OpKind::Cast: return "cast";
    case OpKind::Binary: return "binary";
    case OpKind::Matmul: return "matmul";
    case OpKind::Softmax: return "softmax";
  }
  return "?";
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
  }
  return "?";
}

void DeviceImpl::unsupported(OpKind op, DType dtype) const {
  Device d{type(), info().index};
  throw Error(ErrorCode::Unsupported,
              std::string("op '") + op_kind_name(op) + "' is not implemented for " +
                  std::string(dtype_name(dtype)) + " on this device",
              {.op = op_kind_name(op), .dtypes = {std::string(dtype_name(dtype))}, .device = d.to_string()});
}

void DeviceImpl::copy_strided(const CopyArgs& a, StreamImpl&) { unsupported(OpKind::Copy, a.src.dtype); }
void DeviceImpl::binary(const BinaryArgs& a, StreamImpl&) { unsupported(OpKind::Binary, a.out.dtype); }
void DeviceImpl::matmul(const MatmulArgs& a, StreamImpl&) { unsupported(OpKind::Matmul, a.out.dtype); }
void DeviceImpl::softmax(const SoftmaxArgs& a, StreamImpl&) { unsupported(OpKind::Softmax, a.out.dtype); }

}  // namespace torsh::rt
