#pragma once
// The op layer: one definition per op. Arguments are validated here, output
// shapes and dtypes decided here, then the op runs on the inputs' device, or on
// the CPU with explicit, counted copies when that device lacks it.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "torsh/runtime/qtensor.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh::rt {
class PreparedOperand;  // torsh/backend/prepared_operand.hpp
}  // namespace torsh::rt

namespace torsh::ops {

// Elementwise binary ops with NumPy broadcasting; both inputs share a dtype.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor binary(rt::BinaryOp op, const Tensor& a, const Tensor& b);
// Writes into `out` (shape = broadcast shape); `out` may alias a or b exactly (in-place).
void binary_out(rt::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// a @ b with batch broadcasting: [..., m, k] @ [..., k, n]; 1-D operands as in NumPy.
Tensor matmul(const Tensor& a, const Tensor& b);
// alpha * op(a) @ op(b) + beta * c, 2-D or batched 3-D; c may be absent when beta == 0.
Tensor gemm(const Tensor& a, const Tensor& b, float alpha = 1.0f, float beta = 0.0f,
            const std::optional<Tensor>& c = std::nullopt, bool trans_a = false, bool trans_b = false);

Tensor softmax(const Tensor& x, std::int64_t axis = -1);
Tensor log_softmax(const Tensor& x, std::int64_t axis = -1);

// Copies into a new tensor of `dtype` on the same device (contiguous).
Tensor cast(const Tensor& x, DType dtype);
Tensor contiguous(const Tensor& x);
// Strided copy with conversion: out must have x's shape.
void copy_into(const Tensor& x, Tensor& out);

// ---- elementwise unary (any float dtype; neg/abs/relu also integers). *_ variants write in place.
Tensor unary(rt::UnaryOp op, const Tensor& x);
void unary_out(rt::UnaryOp op, const Tensor& x, Tensor& out);  // out may be x
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor pow(const Tensor& a, const Tensor& b);
// In-place binary: a = a (op) b, b broadcast to a's shape.
void binary_(rt::BinaryOp op, Tensor& a, const Tensor& b);

// ---- reductions over any set of axes (empty = all axes)
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& axes = {}, bool keepdim = false);
Tensor max(const Tensor& x, const std::vector<std::int64_t>& axes = {}, bool keepdim = false);
Tensor min(const Tensor& x, const std::vector<std::int64_t>& axes = {}, bool keepdim = false);
Tensor var(const Tensor& x, const std::vector<std::int64_t>& axes = {}, std::int64_t correction = 1,
           bool keepdim = false);
Tensor argmax(const Tensor& x, std::int64_t axis, bool keepdim = false);  // i64

// ---- normalisation over the last dimension (layer_norm, rms_norm) and per channel (batch_norm)
Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, float eps = 1e-5f);
Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt, float eps = 1e-6f);
// x [N, C, ...]; training updates running_mean / running_var in place.
Tensor batch_norm(const Tensor& x, const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                  const std::optional<Tensor>& weight = std::nullopt, const std::optional<Tensor>& bias = std::nullopt,
                  bool training = false, float momentum = 0.1f, float eps = 1e-5f);

// ---- transformer kernels
enum class RopeStyle { NeoX, GptJ };
// cos/sin tables [max_pos, rot_dim / 2] of the angles pos * base^(-2i/rot_dim),
// as f32 on `backend`; with freq_factors (rot_dim / 2 of them, each > 0: Llama
// 3.1's rope_freqs) angle i is divided by factor i.
std::pair<Tensor, Tensor> rope_cache(Backend& backend, std::int64_t max_pos, std::int64_t rot_dim,
                                     float base = 10000.0f, std::span<const float> freq_factors = {});
// x [batch, seq, heads, head_dim]; rot_dim defaults to head_dim.
Tensor rope(const Tensor& x, const Tensor& cos, const Tensor& sin, RopeStyle style = RopeStyle::NeoX,
            std::int64_t pos0 = 0, std::int64_t rot_dim = 0);
// q [B, Hq, Sq, D], k/v [B, Hkv, Skv, D]; scale defaults to 1/sqrt(D). Flash-style: no Sq x Skv matrix.
// With Sq != Skv the causal mask's alignment matters: TopLeft (the default) is
// PyTorch's is_causal, BottomRight a KV cache's (see rt::CausalAlign).
// window > 0 (causal only): a sliding window, query i seeing only the last
// `window` keys of its causal range (j > i + shift - window: Mistral's and
// Gemma's local layers). softcap > 0: each scaled score s becomes
// softcap * tanh(s / softcap) before the softmax (Gemma 2).
using rt::CausalAlign;
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false,
                 std::optional<float> scale = std::nullopt, CausalAlign align = CausalAlign::TopLeft,
                 std::int64_t window = 0, float softcap = 0.0f);
// The same with k and v block-quantized (a Q8_0 KV cache): U8 [B, Hkv, Skv,
// quant_row_bytes(Q8_0, D)] and [B, Hkv, Skv, quant_row_bytes(Q8_0, Dv)]
// with packed rows, D and Dv multiples of 32; `kv_format` must be Q8_0.
// The result is q's dtype.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, QuantFormat kv_format, bool causal = false,
                 std::optional<float> scale = std::nullopt, CausalAlign align = CausalAlign::TopLeft,
                 std::int64_t window = 0, float softcap = 0.0f);
// LLM helpers: w [n, k] @ x [k] -> [n]; weights [m] . matrix [m, n] -> [n].
Tensor matmul_vec(const Tensor& w, const Tensor& x);
Tensor weighted_sum_rows(const Tensor& weights, const Tensor& matrix);

// ---- int8 quantization, ONNX QuantizeLinear / DequantizeLinear semantics
// scale is f32 with one element (per tensor: a scalar or shape [1]) or
// x.shape(axis) (per channel, a 1-D tensor along `axis`, ONNX's default 1);
// every value finite and > 0. zero_point, when given, has scale's shape; its
// dtype (U8 or I8) is the quantized dtype.
// saturate(round_half_even(x / scale) + zero_point) as U8 or I8 (without a
// zero point: 0 of `dtype`); x floating; +-inf saturate, NaN gives the zero point.
Tensor quantize_linear(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point = std::nullopt,
                       int axis = 1, DType dtype = DType::U8);
// (x - zero_point) * scale, computed in f32, as `dtype` (f32, f16 or bf16); x U8
// or I8, and zero_point, when given, of x's dtype.
Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point = std::nullopt,
                         int axis = 1, DType dtype = DType::F32);

// ---- int8 matrix products, ONNX MatMulInteger / QLinearMatMul semantics
// a [..., m, k] and b [..., k, n] (rank >= 2, batch dimensions broadcast as in
// matmul), each U8 or I8. The products (a - a_zero_point) (b - b_zero_point)
// are summed exactly in int32 (wrapping past 2^31, as ONNX's int32). Zero
// points have their operand's dtype and hold one value (a scalar or [1]) or one
// per row of a ([m]) / per column of b ([n]); absent means 0.
Tensor matmul_integer(const Tensor& a, const Tensor& b, const std::optional<Tensor>& a_zero_point = std::nullopt,
                      const std::optional<Tensor>& b_zero_point = std::nullopt);
// QLinearMatMul: the int32 sum s of matmul_integer, requantized to y_zero_point's
// dtype (U8 or I8) as saturate(round_half_even(s * ((a_scale * b_scale) / y_scale))
// + y_zero_point) in f32. Scales are f32, finite and > 0: a_scale one value or
// [m], b_scale one value or [n], y_scale one value. Without y_scale (and
// y_zero_point) the result is f32, s * (a_scale * b_scale): the dequantized product.
Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const Tensor& b,
                      const Tensor& b_scale, const Tensor& b_zero_point,
                      const std::optional<Tensor>& y_scale = std::nullopt,
                      const std::optional<Tensor>& y_zero_point = std::nullopt);

// ---- int8 weights prepared once (ONNX initializers)
// An int8 weight b [k, n] (U8 or I8, any device) for repeated products. It
// holds a private copy of b, so later writes to b do not reach it. A backend
// with a faster form of a constant operand builds that form on the first
// product and reuses it: the CPU keeps b packed in its tile layout with its
// column sums, which a product with a plain tensor redoes on every call.
// Other backends read the copy. Results equal those with the plain tensor.
class IntegerWeight {
 public:
  IntegerWeight() = default;
  explicit IntegerWeight(const Tensor& b);
  bool defined() const { return b_.defined(); }
  const Tensor& tensor() const { return b_; }
  const std::shared_ptr<rt::PreparedOperand>& prepared() const { return prepared_; }

 private:
  Tensor b_;
  std::shared_ptr<rt::PreparedOperand> prepared_;
};
Tensor matmul_integer(const Tensor& a, const IntegerWeight& b, const std::optional<Tensor>& a_zero_point = std::nullopt,
                      const std::optional<Tensor>& b_zero_point = std::nullopt);
Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const IntegerWeight& b,
                      const Tensor& b_scale, const Tensor& b_zero_point,
                      const std::optional<Tensor>& y_scale = std::nullopt,
                      const std::optional<Tensor>& y_zero_point = std::nullopt);

// ---- block-quantized weights (QTensor: Q4_0, Q4_1, Q8_0, Q5_0, Q5_1)
// The dense [rows, cols] tensor of `dtype` (f32, f16 or bf16) on w's device.
Tensor dequantize(const QTensor& w, DType dtype = DType::F32);
// A linear layer on quantized weights: x [..., k] @ dequantize(w)^T for w [n, k] -> [..., n].
// Kernels take f32 activations: x of another floating dtype is cast to f32 and the
// result back to x's dtype. The CPU backend quantizes the activations per 32-block
// on the fly for integer dot products, to `activations` levels: an output differs
// from the exact product by at most the sum over blocks of max|x| / L times the
// block's sum of |w| (plus f32 rounding), L = 65534 for Int16 (the default) and
// 254 for Int8 (ggml's numerics, less integer work); a non-finite activation makes
// its row of the result NaN. supports_qmatmul says what a backend runs natively.
Tensor qmatmul(const Tensor& x, const QTensor& w, QuantActivations activations = QuantActivations::Int16);
// w [n, k] @ x [k] -> [n]
Tensor matmul_vec(const QTensor& w, const Tensor& x, QuantActivations activations = QuantActivations::Int16);
// torch.index_select / numpy.take along `axis` (negative counts from the end): x's shape
// with dimension axis replaced by ids.numel(), out[..., j, ...] = x[..., ids[j], ...].
// ids: i32 or i64 of any shape (flattened) on x's device; any dtype of x. An id
// outside [0, x.shape[axis]) is an OutOfRange error naming it.
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& ids);
// Rows of a dense table [V, D] (any dtype) picked by ids (i32 or i64, any shape)
// -> ids.shape + [D]: index_select along axis 0.
Tensor embedding(const Tensor& table, const Tensor& ids);
// Rows of w picked by integer ids (i32 or i64, any shape) -> ids.shape + [cols] of `dtype`;
// an id outside [0, rows) is an OutOfRange error naming it.
Tensor embedding(const QTensor& w, const Tensor& ids, DType dtype = DType::F32);
// Whether `backend` runs qmatmul natively for weights in `format` with `activation` inputs
// (otherwise qmatmul falls back to the CPU, counted in fallback_stats()). Floating
// activations are asked about as the f32 the op hands kernels; others are never taken.
bool supports_qmatmul(const Backend& backend, QuantFormat format, DType activation);

// ---- convolution and pooling (NCHW)
using rt::ConvAlgo;
struct Conv2dParams {
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  ConvAlgo algo = ConvAlgo::Auto;  // Winograd: f32, 3x3, stride 1, dilation 1 (else InvalidArgument)
};
Tensor conv2d(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias = std::nullopt,
              const Conv2dParams& p = {});
// ONNX ConvInteger: the int32 convolution of (x - x_zero_point) by (w - w_zero_point),
// x [N, C, H, W] and w [K, C / groups, R, S] u8 or i8 (OIHW, NCHW out [N, K, P, Q]);
// x_zero_point one value of x's dtype (also the padding's value), w_zero_point one
// value or [K] of w's dtype. stride, padding, dilation and groups from p (algo ignored).
Tensor conv_integer(const Tensor& x, const Tensor& w, const std::optional<Tensor>& x_zero_point = std::nullopt,
                    const std::optional<Tensor>& w_zero_point = std::nullopt, const Conv2dParams& p = {});
// ONNX QLinearConv: the sums of conv_integer plus bias (optional, i32 [K]),
// requantized as qlinear_matmul does with x_scale (one value), w_scale (one value
// or [K]) and y_scale, to y_zero_point's dtype (u8 or i8).
Tensor qlinear_conv(const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point, const Tensor& w,
                    const Tensor& w_scale, const Tensor& w_zero_point, const Tensor& y_scale,
                    const Tensor& y_zero_point, const std::optional<Tensor>& bias = std::nullopt,
                    const Conv2dParams& p = {});
struct Pool2dParams {
  std::int64_t kernel_h = 2, kernel_w = 2;
  // Unset: the kernel size. A set stride must be >= 1 (0 is an error, not the default).
  std::optional<std::int64_t> stride_h, stride_w;
  std::int64_t pad_h = 0, pad_w = 0;
  bool count_include_pad = true;
};
Tensor max_pool2d(const Tensor& x, const Pool2dParams& p);
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p);

// ---- optimisers
struct AdamConfig {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  bool adamw = false;
};
// One fused step over every parameter tensor (in place); `step` is the 1-based step number.
// grad_scale multiplies gradients first (the inverse loss scale in mixed precision).
void adam_step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<Tensor>& exp_avg,
               std::vector<Tensor>& exp_avg_sq, const AdamConfig& cfg, std::int64_t step, float grad_scale = 1.0f);
// Whether any element of `tensors` is NaN or infinite (integer and bool
// tensors never are): a Bool scalar on their device, set there by one check
// per tensor, so a loss scaler reads one byte instead of every gradient.
// The tensors share a device; the list is not empty.
Tensor any_non_finite(const std::vector<Tensor>& tensors);

// ---- random numbers: Philox4x32-10, reproducible across thread counts and devices
Tensor rand(Backend& backend, const Shape& shape, std::uint64_t seed, DType dtype = DType::F32, float low = 0.0f,
            float high = 1.0f, std::uint64_t offset = 0);
Tensor randn(Backend& backend, const Shape& shape, std::uint64_t seed, DType dtype = DType::F32, float mean = 0.0f,
             float stddev = 1.0f, std::uint64_t offset = 0);
Tensor bernoulli(Backend& backend, const Shape& shape, float p, std::uint64_t seed, DType dtype = DType::F32,
                 std::uint64_t offset = 0);

// How often ops fell back to the CPU, and what that cost in copies.
struct FallbackStats {
  std::uint64_t ops = 0;
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;
};
FallbackStats fallback_stats();
void reset_fallback_stats();

}  // namespace torsh::ops
