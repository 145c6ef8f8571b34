// Ops on block-quantized weights (QTensor): the weight's block bytes are one
// more u8 operand of the launch, so a backend without the kernel falls back to
// the CPU like any other op.
#include <vector>

#include "dispatch.hpp"
#include "torsh/backend/backend_impl.hpp"

namespace torsh::ops {
namespace {

ErrorContext qcontext(const char* op, const QTensor& w,
                      std::initializer_list<std::reference_wrapper<const Tensor>> ts) {
  ErrorContext c = detail::context(op, ts);
  c.shapes.insert(c.shapes.begin(), w.shape().to_string());
  c.dtypes.insert(c.dtypes.begin(), std::string(quant_format_name(w.format())));
  if (w.defined()) c.device = w.device().to_string();
  return c;
}

void check_weight(const char* op, const QTensor& w) {
  if (!w.defined()) throw Error(ErrorCode::InvalidState, "the quantized weight is undefined", {.op = op});
}

void check_device(const char* op, const QTensor& w, const Tensor& t, const char* what) {
  if (!t.defined()) throw Error(ErrorCode::InvalidState, std::string(what) + " is undefined", {.op = op});
  if (t.device() != w.device())
    throw Error(ErrorCode::DeviceMismatch,
                std::string(what) + " is on " + t.device().to_string() + " but the weight " + w.describe(),
                qcontext(op, w, {t}), {"Move both to one backend with .to(backend) first"});
}

void check_out_dtype(const char* op, const QTensor& w, DType dtype) {
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
    throw Error(ErrorCode::DTypeMismatch,
                std::string(op) + " produces f32, f16 or bf16, not " + std::string(dtype_name(dtype)),
                qcontext(op, w, {}), {"Ask for f32 and cast the result"});
}

// Rows of w (all of them, or those ids picks) into out [m, cols].
void launch_dequantize(const char* op, const QTensor& w, const Tensor* ids, Tensor& out, std::int64_t m) {
  rt::DequantizeArgs proto;
  proto.format = w.format();
  proto.rows = w.rows();
  proto.cols = w.cols();
  proto.m = m;
  if (ids) {
    detail::launch<rt::OpKind::Dequantize>(op, {w.blocks(), *ids}, {out}, [proto](auto& in, auto& o) {
      rt::DequantizeArgs a = proto;
      a.w = in[0];
      a.ids = in[1];
      a.out = o[0];
      return a;
    });
  } else {
    detail::launch<rt::OpKind::Dequantize>(op, {w.blocks()}, {out}, [proto](auto& in, auto& o) {
      rt::DequantizeArgs a = proto;
      a.w = in[0];
      a.out = o[0];
      return a;
    });
  }
}

void check_ids(const char* op, const QTensor& w, const Tensor& ids) {
  if (const auto bad = detail::first_id_outside(ids, w.rows()))
    throw Error(ErrorCode::OutOfRange,
                "id " + std::to_string(bad->second) + " at position " + std::to_string(bad->first) +
                    " is outside [0, " + std::to_string(w.rows()) + ") for " + w.describe(),
                qcontext(op, w, {ids}), {"Ids index the weight's rows (the vocabulary); check the tokenizer"});
}

}  // namespace

Tensor dequantize(const QTensor& w, DType dtype) {
  const char* op = "dequantize";
  check_weight(op, w);
  check_out_dtype(op, w, dtype);
  Tensor out = detail::empty_like(w.blocks(), w.shape(), dtype);
  if (out.numel() == 0) return out;
  launch_dequantize(op, w, nullptr, out, w.rows());
  return out;
}

Tensor embedding(const QTensor& w, const Tensor& ids_in, DType dtype) {
  const char* op = "embedding";
  check_weight(op, w);
  check_device(op, w, ids_in, "ids");
  check_out_dtype(op, w, dtype);
  if (ids_in.dtype() != DType::I32 && ids_in.dtype() != DType::I64)
    throw Error(ErrorCode::DTypeMismatch, "ids must be i32 or i64, got " + ids_in.describe(), qcontext(op, w, {ids_in}),
                {"Cast the ids with .cast(DType::I64)"});
  check_ids(op, w, ids_in);
  std::vector<std::int64_t> dims = ids_in.shape().dims();
  dims.push_back(w.cols());
  Tensor out = detail::empty_like(w.blocks(), Shape(dims), dtype);
  const std::int64_t m = ids_in.numel();
  if (m == 0) return out;
  const Tensor ids = ids_in.contiguous().reshape({m});
  Tensor out2 = out.reshape({m, w.cols()});
  launch_dequantize(op, w, &ids, out2, m);
  return out;
}

Tensor qmatmul(const Tensor& x_in, const QTensor& w, QuantActivations activations) {
  const char* op = "qmatmul";
  check_weight(op, w);
  check_device(op, w, x_in, "x");
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "qmatmul needs floating activations, got " + x_in.describe(),
                qcontext(op, w, {x_in}), {"Cast x to f32"});
  if (x_in.ndim() == 0)
    throw Error(ErrorCode::ShapeMismatch, "qmatmul of a 0-d tensor", qcontext(op, w, {x_in}),
                {"x must be [..., k] with k = the weight's columns"});
  const std::int64_t k = x_in.shape()[x_in.ndim() - 1], n = w.rows();
  if (k != w.cols())
    throw Error(ErrorCode::ShapeMismatch,
                "x " + x_in.shape().to_string() + " has " + std::to_string(k) + " features but " + w.describe() +
                    " takes " + std::to_string(w.cols()),
                qcontext(op, w, {x_in}), {"x's last dimension must equal the weight's columns (w is [out, in])"});
  // Kernels take f32 activations; other floating dtypes are cast there and back.
  const Tensor x = (x_in.dtype() == DType::F32 ? x_in : x_in.cast(DType::F32)).contiguous();
  const std::int64_t m = x.numel() / k;
  std::vector<std::int64_t> dims = x_in.shape().dims();
  dims.back() = n;
  Tensor out = detail::empty_like(x, Shape{m, n}, DType::F32);
  if (m > 0 && n > 0) {
    const Tensor x2 = x.reshape({m, k});
    rt::QMatmulArgs proto;
    proto.format = w.format();
    proto.activations = activations;
    proto.m = m;
    proto.n = n;
    proto.k = k;
    detail::launch<rt::OpKind::QMatmul>(op, {x2, w.blocks()}, {out}, [proto](auto& in, auto& o) {
      rt::QMatmulArgs a = proto;
      a.x = in[0];
      a.w = in[1];
      a.out = o[0];
      return a;
    });
  }
  Tensor shaped = out.reshape(dims);
  return x_in.dtype() == DType::F32 ? shaped : shaped.cast(x_in.dtype());
}

Tensor matmul_vec(const QTensor& w, const Tensor& x, QuantActivations activations) {
  check_weight("matmul_vec", w);
  if (x.defined() && x.ndim() != 1)
    throw Error(ErrorCode::ShapeMismatch, "matmul_vec takes w [n, k] and x [k], got x " + x.shape().to_string(),
                qcontext("matmul_vec", w, {x}), {"Use qmatmul for [..., k] activations"});
  return qmatmul(x, w, activations);
}

bool supports_qmatmul(const Backend& backend, QuantFormat format, DType activation) {
  // The op hands kernels f32 for every floating activation (it casts the others).
  if (!is_floating(activation)) return false;
  rt::QMatmulArgs a;
  a.format = format;
  a.x.dtype = a.out.dtype = DType::F32;
  a.w.dtype = DType::U8;
  a.k = quant_block_elems(format);
  a.x.shape = Shape{1, a.k};
  a.w.shape = Shape{1, static_cast<std::int64_t>(quant_row_bytes(format, a.k))};
  a.out.shape = Shape{1, 1};
  a.x.strides = contiguous_strides(a.x.shape);
  a.w.strides = contiguous_strides(a.w.shape);
  a.out.strides = contiguous_strides(a.out.shape);
  return backend.impl().supports(rt::OpKind::QMatmul, a);
}

}  // namespace torsh::ops
