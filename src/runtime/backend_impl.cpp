#include "torsh/runtime/backend_impl.hpp"

#include <string>

namespace torsh::rt {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Copy: return "copy";
    case OpKind::Cast: return "cast";
    case OpKind::Binary: return "binary";
    case OpKind::Unary: return "unary";
    case OpKind::Reduce: return "reduce";
    case OpKind::Matmul: return "matmul";
    case OpKind::Softmax: return "softmax";
    case OpKind::Norm: return "norm";
    case OpKind::BatchNorm: return "batch_norm";
    case OpKind::Rope: return "rope";
    case OpKind::Attention: return "attention";
    case OpKind::Conv2d: return "conv2d";
    case OpKind::Pool2d: return "pool2d";
    case OpKind::Adam: return "adam";
    case OpKind::Random: return "random";
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
    case BinaryOp::Pow: return "pow";
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::GeluTanh: return "gelu_tanh";
    case UnaryOp::Silu: return "silu";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Argmax: return "argmax";
    case ReduceOp::Var: return "var";
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
void DeviceImpl::unary(const UnaryArgs& a, StreamImpl&) { unsupported(OpKind::Unary, a.out.dtype); }
void DeviceImpl::reduce(const ReduceArgs& a, StreamImpl&) { unsupported(OpKind::Reduce, a.x.dtype); }
void DeviceImpl::norm(const NormArgs& a, StreamImpl&) { unsupported(OpKind::Norm, a.x.dtype); }
void DeviceImpl::batch_norm(const BatchNormArgs& a, StreamImpl&) { unsupported(OpKind::BatchNorm, a.x.dtype); }
void DeviceImpl::rope(const RopeArgs& a, StreamImpl&) { unsupported(OpKind::Rope, a.x.dtype); }
void DeviceImpl::attention(const AttentionArgs& a, StreamImpl&) { unsupported(OpKind::Attention, a.q.dtype); }
void DeviceImpl::conv2d(const Conv2dArgs& a, StreamImpl&) { unsupported(OpKind::Conv2d, a.x.dtype); }
void DeviceImpl::pool2d(const Pool2dArgs& a, StreamImpl&) { unsupported(OpKind::Pool2d, a.x.dtype); }
void DeviceImpl::adam(const AdamArgs& a, StreamImpl&) { unsupported(OpKind::Adam, a.param.dtype); }
void DeviceImpl::random(const RandomArgs& a, StreamImpl&) { unsupported(OpKind::Random, a.out.dtype); }

}  // namespace torsh::rt
