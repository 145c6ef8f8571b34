#pragma once
// The one registry of op kinds. Every list of op kinds in the library (the
// OpKind enum, names, name parsing for Python and the CLI, error text, the
// kernel tables' slots) is generated from TORSH_OP_KINDS, so a new family is
// one line here plus its argument struct in op_args.hpp.
//
//   X(Enum, "name", ArgsStruct, key dtype of an args value `a`)
//
// The key dtype is the one supports() is asked with and kernel tables are
// keyed by; the kernel's predicate sees every other field.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "torsh/runtime/op_args.hpp"

#define TORSH_OP_KINDS(X)                                                \
  X(Copy, "copy", CopyArgs, a.out.dtype)                                 \
  X(Cast, "cast", CopyArgs, a.out.dtype)                                 \
  X(Binary, "binary", BinaryArgs, a.out.dtype)                           \
  X(Unary, "unary", UnaryArgs, a.out.dtype)                              \
  X(Reduce, "reduce", ReduceArgs, a.x.dtype)                             \
  X(Matmul, "matmul", MatmulArgs, a.out.dtype)                           \
  X(Softmax, "softmax", SoftmaxArgs, a.out.dtype)                        \
  X(Norm, "norm", NormArgs, a.x.dtype)                                   \
  X(BatchNorm, "batch_norm", BatchNormArgs, a.x.dtype)                   \
  X(Rope, "rope", RopeArgs, a.x.dtype)                                   \
  X(Attention, "attention", AttentionArgs, a.q.dtype)                    \
  X(Conv2d, "conv2d", Conv2dArgs, a.x.dtype)                             \
  X(Pool2d, "pool2d", Pool2dArgs, a.x.dtype)                             \
  X(Adam, "adam", AdamArgs, a.param.dtype)                               \
  X(NonFinite, "non_finite", NonFiniteArgs, a.x.dtype)                   \
  X(Random, "random", RandomArgs, a.out.dtype)                           \
  X(QMatmul, "qmatmul", QMatmulArgs, a.x.dtype)                          \
  X(Dequantize, "dequantize", DequantizeArgs, a.out.dtype)               \
  X(QuantizeLinear, "quantize_linear", LinearQuantArgs, a.x.dtype)       \
  X(DequantizeLinear, "dequantize_linear", LinearQuantArgs, a.out.dtype) \
  X(IntegerMatmul, "integer_matmul", IntegerMatmulArgs, a.out.dtype)     \
  X(SparseMatmul, "sparse_matmul", SparseMatmulArgs, a.out.dtype)        \
  X(Fft, "fft", FftArgs, a.out.dtype)                                    \
  X(RnnGates, "rnn_gates", RnnGatesArgs, a.h_out.dtype)

namespace torsh::rt {

// Copy: strided copy within one dtype. Cast: strided copy converting between
// dtypes (keyed by the destination dtype).
enum class OpKind {
#define TORSH_X(e, name, args, key) e,
  TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
};

inline constexpr std::size_t kOpKindCount = 0
#define TORSH_X(e, name, args, key) +1
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
    ;

inline constexpr OpKind kAllOpKinds[] = {
#define TORSH_X(e, name, args, key) OpKind::e,
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
};

// "binary", "batch_norm", ...
const char* op_kind_name(OpKind k);
// The kind named `name`, case-insensitive, '_' optional ("batchnorm" too); nullopt if none.
std::optional<OpKind> op_kind_from_name(std::string_view name);
// "copy, cast, binary, ...": every name, for error messages.
std::string op_kind_names();

// The argument struct of each kind: ArgsOf<OpKind::Binary> is BinaryArgs.
template <OpKind K>
struct ArgsOfT;
#define TORSH_X(e, name, args, key) \
  template <>                       \
  struct ArgsOfT<OpKind::e> {       \
    using type = args;              \
  };
TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
template <OpKind K>
using ArgsOf = typename ArgsOfT<K>::type;

// Whether op kind k takes arguments of type A (Copy and Cast share CopyArgs).
template <class A>
constexpr bool takes(OpKind k) {
  switch (k) {
#define TORSH_X(e, name, args, key) \
  case OpKind::e: return std::is_same_v<A, args>;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return false;
}

// The key dtype of an argument set of kind k.
template <OpKind K>
DType key_dtype(const ArgsOf<K>& a);
#define TORSH_X(e, n, args, key)                     \
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
#define TORSH_X(e, n, args, key)                                           \
  case OpKind::e:                                                          \
    if constexpr (std::is_same_v<A, args>) return key_dtype<OpKind::e>(a); \
    break;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return DType::F32;
}

}  // namespace torsh::rt
