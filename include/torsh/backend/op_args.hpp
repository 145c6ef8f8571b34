#pragma once
// What each op family hands a backend. The op layer (src/ops) has validated
// every field; layouts stated as "contiguous" are guaranteed contiguous. The
// kinds themselves are listed once, in torsh/runtime/op_kinds.hpp.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "torsh/core/dtype.hpp"
#include "torsh/core/quant.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/runtime/op_kinds.hpp"

namespace torsh::rt {

class BufferImpl;
class PreparedOperand;

// A strided view handed to kernels. Offsets and strides count elements.
// An optional operand is absent when buffer == nullptr.
struct TensorArg {
  BufferImpl* buffer = nullptr;
  DType dtype = DType::F32;
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;
  std::int64_t numel() const { return shape.numel(); }
  bool present() const { return buffer != nullptr; }
};

// out[i] = a[i] (op) b[i]; a and b are already broadcast to out.shape
// (stride 0 on broadcast dims); all three share one dtype.
struct BinaryArgs {
  BinaryOp op;
  TensorArg a, b, out;
};

// out[i] = op(x[i]); same shape and dtype, strides arbitrary (out may be x: in place).
struct UnaryArgs {
  UnaryOp op;
  TensorArg x, out;
};

// out = src (converted when the dtypes differ: OpKind::Cast); shapes equal, strides arbitrary.
struct CopyArgs {
  TensorArg src, out;
};

// Reduces the middle axis of contiguous x viewed as [outer, n, inner] into
// contiguous out [outer, inner] (i64 for Argmax, x's dtype otherwise).
// Var divides by max(n - correction, 0). n >= 1 for Max/Min/Argmax.
struct ReduceArgs {
  ReduceOp op;
  TensorArg x, out;
  std::int64_t outer = 1, n = 1, inner = 1;
  std::int64_t correction = 1;
};

// out[bi] = alpha * a[bi] @ b[bi] + beta * out[bi], all rank 3 (batch, rows, cols)
// with arbitrary strides (transposes are strides; broadcast batches have stride 0).
// beta == 0 never reads out.
struct MatmulArgs {
  TensorArg a, b, out;
  float alpha = 1.0f, beta = 0.0f;
};

// Softmax over the middle axis of contiguous [outer, n, inner] tensors.
struct SoftmaxArgs {
  TensorArg x, out;
  std::int64_t outer = 1, n = 1, inner = 1;
  bool log = false;
};

// LayerNorm (rms == false): (x - mean) / sqrt(var + eps) * weight + bias;
// RMSNorm (rms == true): x / sqrt(mean(x^2) + eps) * weight.
// x and out contiguous [rows, n]; weight and bias contiguous [n], optional.
struct NormArgs {
  TensorArg x, weight, bias, out;
  std::int64_t rows = 1, n = 1;
  float eps = 1e-5f;
  bool rms = false;
};

// x and out contiguous [N, C, spatial]; all per-channel tensors contiguous [C], optional
// except running stats in inference. training: normalise with batch statistics
// (biased variance) and update running_mean/var with momentum (unbiased variance).
struct BatchNormArgs {
  TensorArg x, weight, bias, running_mean, running_var, out;
  std::int64_t n = 1, c = 1, spatial = 1;
  bool training = false;
  float momentum = 0.1f, eps = 1e-5f;
};

// Rotary embedding on contiguous x [batch, seq, heads, head_dim] into out (same layout).
// cos and sin are contiguous f32 [max_pos, rot_dim / 2]; position of token s is pos0 + s.
// neox: rotate halves (x[i], x[i + rot_dim/2]); else GPT-J: interleaved pairs (x[2i], x[2i+1]).
// Dimensions past rot_dim are copied unchanged.
struct RopeArgs {
  TensorArg x, cos, sin, out;
  std::int64_t rot_dim = 0;
  std::int64_t pos0 = 0;
  bool neox = true;
};

// Scaled dot-product attention on q [B, Hq, Sq, D], k [B, Hkv, Skv, D],
// v [B, Hkv, Skv, Dv] into out [B, Hq, Sq, Dv]; Hq is a multiple of Hkv (grouped-query).
// q and out are contiguous; k and v have packed rows (each head's [Skv, D] block is
// contiguous) but any batch and head strides (a KV cache's prefix: use k.strides[0..1]).
// A query that sees no key (BottomRight with Sq > Skv) gets zeros, not 0/0.
struct AttentionArgs {
  TensorArg q, k, v, out;
  float scale = 1.0f;
  bool causal = false;
  CausalAlign align = CausalAlign::TopLeft;
  // > 0 (with causal): query i sees keys j with i + shift - window < j <= i + shift.
  std::int64_t window = 0;
  // > 0: each scaled score s is softcap * tanh(s / softcap) before the softmax.
  float softcap = 0.0f;
  // k and v are Q8_0 blocks: U8 [B, Hkv, S, row bytes of D (Dv) values]
  // (a quantized KV cache); only backends that say so in `fits` take it.
  bool kv_q8_0 = false;
};

// out [m, n] = x [m, k] @ dequantize(w)^T, a linear layer on block-quantized
// weights: w is the contiguous U8 block bytes of a [n, k] QTensor in `format`
// (k a multiple of 32); x and out contiguous, of the activation dtype (key).
struct QMatmulArgs {
  TensorArg x, w, out;
  QuantFormat format = QuantFormat::Q8_0;
  QuantActivations activations = QuantActivations::Int16;
  std::int64_t m = 1, n = 1, k = 32;
};

// out [m, cols] = rows of dequantize(w) (contiguous U8 blocks of a [rows, cols]
// QTensor in `format`): row ids[i] when ids (contiguous i32 or i64 [m]) is present
// (an embedding lookup; the op layer has range-checked it), else row i (m == rows).
// out contiguous, f32, f16 or bf16 (key).
struct DequantizeArgs {
  TensorArg w, ids, out;
  QuantFormat format = QuantFormat::Q8_0;
  std::int64_t rows = 0, cols = 32, m = 0;
};

// out [outer, m, inner] = x [outer, n, inner] at [o, ids[j], i]: index_select
// along one axis (x and out contiguous, one dtype: the key; elements are moved
// as bytes). ids is contiguous i32 or i64 [m], every id in [0, n) (checked by
// the op layer on the host).
struct IndexSelectArgs {
  TensorArg x, ids, out;
  std::int64_t outer = 1, n = 0, inner = 1, m = 0;
};

// ONNX QuantizeLinear (OpKind::QuantizeLinear: floating x -> U8/I8 out,
// saturate(round_half_even(x / scale[c]) + zero_point[c]), NaN -> zero_point[c])
// and DequantizeLinear (OpKind::DequantizeLinear: U8/I8 x -> floating out,
// (x - zero_point[c]) * scale[c] in f32). x and out contiguous, viewed as
// [outer, channels, inner]; scale contiguous f32 [channels], every value finite
// and > 0 (the op layer checked); zero_point contiguous [channels] of the
// integer side's dtype, or absent (0). The key dtype is the floating side's.
struct LinearQuantArgs {
  TensorArg x, scale, zero_point, out;
  std::int64_t outer = 1, channels = 1, inner = 1;
};

// ONNX MatMulInteger / QLinearMatMul (OpKind::IntegerMatmul): a [batch, m, k]
// and b ([batch or 1], k, n), each U8 or I8, contiguous. The sum over k of
// (a - a_zero_point[row]) * (b - b_zero_point[col]), exact in wrapping int32,
// becomes out (contiguous [batch, m, n], the key dtype):
//   I32: the sum (MatMulInteger);
//   U8 / I8: saturate(round_half_even(sum * ((a_scale[row] * b_scale[col]) /
//            y_scale)) + y_zero_point), in f32 (QLinearMatMul);
//   F32: sum * (a_scale[row] * b_scale[col]).
// Zero points have their operand's dtype, scales are f32 (finite, > 0: the op
// layer checked); each is contiguous with one value (per tensor) or m (a's,
// per row) / n (b's, per column) values; an absent zero point is 0. bias
// (optional, I32 [n], QLinearConv's) is added to the sum before the conversion.
// b_batched: b holds `batch` matrices, else one shared by every batch.
// b_prepared (optional, never with b_batched): b is a prepared weight
// (ops::IntegerWeight) whose values never change; a kernel may keep a form
// of it there (torsh/backend/prepared_operand.hpp) and reuse it on later calls.
struct IntegerMatmulArgs {
  TensorArg a, b, a_zero_point, b_zero_point, a_scale, b_scale, y_scale, y_zero_point, bias, out;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  bool b_batched = false;
  std::shared_ptr<PreparedOperand> b_prepared;
};

// Sparse (CSR) @ dense (OpKind::SparseMatmul): out [rows, n] = a @ x with a
// given by indptr [rows + 1] and indices [nnz] (both I32 or I64) and values
// [nnz]; x [cols, n] and out contiguous; values, x and out share the key
// dtype (F32 or F64). The op layer has checked the structure: indptr from 0,
// non-decreasing, to nnz; columns in [0, cols), increasing within a row.
struct SparseMatmulArgs {
  TensorArg indptr, indices, values, x, out;
  std::int64_t rows = 0, cols = 0, n = 1;
};

// One-dimensional DFTs along the middle axis of contiguous [outer, len, inner]
// arrays (OpKind::Fft); a complex value is a pair of reals (re, im), so a
// complex array of shape [..] is a real one of shape [.., 2]. n is the
// transform length:
//   C2C: x and out complex, len n;
//   R2C: x real, len n -> out complex, len n / 2 + 1 (the non-negative
//        frequencies: the rest is their conjugate);
//   C2R: x complex, len n / 2 + 1 (Hermitian; the imaginary parts of
//        frequency 0 and, for even n, n / 2 are ignored) -> out real, len n.
// Forward is sum_t x_t exp(-2 pi i t k / n), inverse the same with +i; both
// are multiplied by scale (the op layer's normalisation). x, out and the key
// dtype are F32 or F64; x and out never overlap.
enum class FftKind { C2C, R2C, C2R };
struct FftArgs {
  TensorArg x, out;
  FftKind kind = FftKind::C2C;
  bool inverse = false;
  std::int64_t outer = 1, n = 1, inner = 1;
  double scale = 1.0;
};

// One step of an LSTM or GRU layer's gates, fused (OpKind::RnnGates): rows
// b < B, columns j < H = hidden; every operand is 2-D with unit column stride
// and its own row stride; sigma is the logistic function.
//   LSTM: gates [B, 4H] the pre-activations (i, f, g, o) and state [B, H] the
//         cell state c: c_out = sigma(f) c + sigma(i) tanh(g),
//         h_out = sigma(o) tanh(c_out).
//   GRU:  gates [B, 3H] = x W_ih^T + b_ih (r, z, n), gh [B, 3H] = h W_hh^T +
//         b_hh and state [B, H] = h: r = sigma(gates_r + gh_r),
//         z = sigma(gates_z + gh_z), n = tanh(gates_n + r gh_n),
//         h_out = (1 - z) n + z h. c_out is absent.
// acts (absent unless training) [B, 4H]: what backward needs: LSTM
// sigma(i), sigma(f), tanh(g), sigma(o); GRU r, z, n, gh_n.
enum class RnnCell { Lstm, Gru };
struct RnnGatesArgs {
  RnnCell cell = RnnCell::Lstm;
  TensorArg gates, gh, state, h_out, c_out, acts;
  std::int64_t hidden = 0;
};

// NCHW convolution: x [N, C, H, W], w [K, C / groups, R, S], bias [K] (optional),
// out [N, K, P, Q]; all contiguous.
struct Conv2dArgs {
  TensorArg x, w, bias, out;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  ConvAlgo algo = ConvAlgo::Auto;
};

enum class PoolKind { Max, Avg };
// x [N, C, H, W] -> out [N, C, P, Q], contiguous. Padding counts as -inf for Max;
// Avg divides by the full window when count_include_pad, else by the in-bounds part.
struct Pool2dArgs {
  PoolKind kind = PoolKind::Max;
  TensorArg x, out;
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  bool count_include_pad = true;
};

// One Adam / AdamW step on one parameter tensor, in place; all four contiguous
// with equal numel. param/grad may be f32, f16 or bf16; exp_avg / exp_avg_sq are f32.
// grad_scale multiplies the gradient first (1 / loss scale for mixed precision).
struct AdamArgs {
  TensorArg param, grad, exp_avg, exp_avg_sq;
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  bool adamw = false;
  std::int64_t step = 1;  // 1-based, after increment
  float grad_scale = 1.0f;
};

// flag (a Bool scalar) is set to true when contiguous floating x holds a NaN or
// an infinity and left as it is otherwise, so one flag collects many tensors
// and only its byte need reach the host (the loss scaler's overflow check).
struct NonFiniteArgs {
  TensorArg x, flag;
};

enum class RandomKind { Uniform, Normal, Bernoulli };
// Fills contiguous out from Philox4x32-10 keyed by seed; element i uses counter
// (offset + i / 4) so results do not depend on threads or devices.
// Uniform: [a, b); Normal: mean a, std b (Box-Muller); Bernoulli: 1 with probability a.
struct RandomArgs {
  RandomKind kind = RandomKind::Uniform;
  TensorArg out;
  std::uint64_t seed = 0, offset = 0;
  float a = 0.0f, b = 1.0f;
};

// The argument struct of each kind: ArgsOf<OpKind::Binary> is BinaryArgs.
template <OpKind K>
struct ArgsOfT;
#define TORSH_X(e, name, family, args, key) \
  template <>                               \
  struct ArgsOfT<OpKind::e> {               \
    using type = args;                      \
  };
TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
template <OpKind K>
using ArgsOf = typename ArgsOfT<K>::type;

// Whether op kind k takes arguments of type A (Copy and Cast share CopyArgs).
template <class A>
constexpr bool takes(OpKind k) {
  switch (k) {
#define TORSH_X(e, name, family, args, key) \
  case OpKind::e: return std::is_same_v<A, args>;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return false;
}

// The key dtype of an argument set of kind k.
template <OpKind K>
DType key_dtype(const ArgsOf<K>& a);
#define TORSH_X(e, n, family, args, key)             \
  template <>                                        \
  inline DType key_dtype<OpKind::e>(const args& a) { \
    return key;                                      \
  }
TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X

// The same, with the kind known only at run time (a must be of k's type).
template <class A>
DType key_dtype(OpKind k, const A& a) {
  switch (k) {
#define TORSH_X(e, n, family, args, key)                                   \
  case OpKind::e:                                                          \
    if constexpr (std::is_same_v<A, args>) return key_dtype<OpKind::e>(a); \
    break;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return DType::F32;
}

}  // namespace torsh::rt
