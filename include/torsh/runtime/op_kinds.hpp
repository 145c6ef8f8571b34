#pragma once
// The one registry of op kinds. Every list of op kinds in the library (the
// OpKind enum, names, name parsing for Python and the CLI, error text, the
// kernel tables' slots) is generated from TORSH_OP_KINDS, so a new family is
// one line here plus its argument struct in torsh/backend/op_args.hpp.
//
//   X(Enum, "name", "family", ArgsStruct, key dtype of an args value `a`)
//
// The family names the files that implement the kind in every layer
// (src/ops/<family>.cpp, each backend's <family>.cpp or .cu, the shared GPU
// body <family>.kern.h, <family>.wgsl); kinds that share code share a family
// (copy and cast: "copy"). The key dtype is the one supports() is asked with
// and kernel tables are keyed by; the kernel's predicate sees every other field.
//
// This header is the user's vocabulary (Backend::supports takes an OpKind;
// ops.hpp takes the selector enums below); what kernels receive is in
// torsh/backend/op_args.hpp.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#define TORSH_OP_KINDS(X)                                                                \
  X(Copy, "copy", "copy", CopyArgs, a.out.dtype)                                         \
  X(Cast, "cast", "copy", CopyArgs, a.out.dtype)                                         \
  X(Binary, "binary", "binary", BinaryArgs, a.out.dtype)                                 \
  X(Unary, "unary", "unary", UnaryArgs, a.out.dtype)                                     \
  X(Reduce, "reduce", "reduce", ReduceArgs, a.x.dtype)                                   \
  X(Matmul, "matmul", "matmul", MatmulArgs, a.out.dtype)                                 \
  X(Softmax, "softmax", "softmax", SoftmaxArgs, a.out.dtype)                             \
  X(Norm, "norm", "norm", NormArgs, a.x.dtype)                                           \
  X(BatchNorm, "batch_norm", "batch_norm", BatchNormArgs, a.x.dtype)                     \
  X(Rope, "rope", "rope", RopeArgs, a.x.dtype)                                           \
  X(Attention, "attention", "attention", AttentionArgs, a.q.dtype)                       \
  X(Conv2d, "conv2d", "conv2d", Conv2dArgs, a.x.dtype)                                   \
  X(Pool2d, "pool2d", "pool2d", Pool2dArgs, a.x.dtype)                                   \
  X(Adam, "adam", "adam", AdamArgs, a.param.dtype)                                       \
  X(NonFinite, "non_finite", "non_finite", NonFiniteArgs, a.x.dtype)                     \
  X(Random, "random", "random", RandomArgs, a.out.dtype)                                 \
  X(QMatmul, "qmatmul", "quant", QMatmulArgs, a.x.dtype)                                 \
  X(Dequantize, "dequantize", "quant", DequantizeArgs, a.out.dtype)                      \
  X(QuantizeLinear, "quantize_linear", "linear_quant", LinearQuantArgs, a.x.dtype)       \
  X(DequantizeLinear, "dequantize_linear", "linear_quant", LinearQuantArgs, a.out.dtype) \
  X(IntegerMatmul, "integer_matmul", "integer_matmul", IntegerMatmulArgs, a.out.dtype)   \
  X(SparseMatmul, "sparse_matmul", "sparse_matmul", SparseMatmulArgs, a.out.dtype)       \
  X(Fft, "fft", "fft", FftArgs, a.out.dtype)                                             \
  X(RnnGates, "rnn_gates", "rnn_gates", RnnGatesArgs, a.h_out.dtype)                     \
  X(IndexSelect, "index_select", "index_select", IndexSelectArgs, a.out.dtype)

namespace torsh::rt {

enum class BinaryOp { Add, Sub, Mul, Div, Maximum, Minimum, Pow };
const char* binary_op_name(BinaryOp op);

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Silu };
const char* unary_op_name(UnaryOp op);

enum class ReduceOp { Sum, Mean, Max, Min, Argmax, Var };
const char* reduce_op_name(ReduceOp op);

// Where a causal mask's diagonal starts when Sq != Skv. TopLeft: query i sees
// keys j <= i (PyTorch's scaled_dot_product_attention(is_causal=True)).
// BottomRight: the queries are the last Sq positions of the keys, so query i
// sees keys j <= i + Skv - Sq (a KV cache: decoding one token sees every key;
// FlashAttention's convention). The two agree when Sq == Skv.
enum class CausalAlign { TopLeft, BottomRight };

// How conv2d computes: Auto lets the backend choose; Gemm is the direct sum
// (as a GEMM over unfolded input); Winograd is F(2x2, 3x3), for f32 3x3
// filters at stride 1 and dilation 1 only: 2.25x fewer multiply-adds, a few
// times the rounding error of the direct sum.
enum class ConvAlgo { Auto, Gemm, Winograd };

// Copy: strided copy within one dtype. Cast: strided copy converting between
// dtypes (keyed by the destination dtype).
enum class OpKind {
#define TORSH_X(e, name, family, args, key) e,
  TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
};

inline constexpr std::size_t kOpKindCount = 0
#define TORSH_X(e, name, family, args, key) +1
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
    ;

inline constexpr OpKind kAllOpKinds[] = {
#define TORSH_X(e, name, family, args, key) OpKind::e,
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
};

// "binary", "batch_norm", ...
const char* op_kind_name(OpKind k);
// The family k belongs to: "copy" for cast, "quant" for qmatmul and dequantize, ...
const char* op_kind_family(OpKind k);
// The kind named `name`, case-insensitive, '_' optional ("batchnorm" too); nullopt if none.
std::optional<OpKind> op_kind_from_name(std::string_view name);
// "copy, cast, binary, ...": every name, for error messages.
std::string op_kind_names();

}  // namespace torsh::rt
