#pragma once
// What the shared kernels of src/backends/gpu/kernels take, so every C-family backend
// registers them with the same dtypes and limits (and a new backend cannot
// claim more than the kernel body does). A backend adds its own limits (grid
// sizes, say) in its op file.
#include <algorithm>
#include "kernel_meta.hpp"
#include "torsh/backend/kernel_table.hpp"
#include "torsh/core/quant.hpp"

namespace torsh::gpu {

// copy_b{8,16,32,64}_strided move any element unchanged; cast_strided and
// cast_f64_strided convert between any two dtypes as the CPU's convert() does
// (f64 only on devices with doubles).
inline constexpr rt::DTypes kCopyDTypes = rt::DTypes::all();
// binary_f32_*, binary_strided and binary_f64_strided: every dtype but bool
// (which the CPU refuses too), f64 only on devices with doubles.
inline constexpr rt::DTypes kBinaryDTypes = rt::DTypes::all().without({DType::Bool});
// index_select_elems moves elements of 1, 2, 4 or 8 bytes unchanged: any dtype.
inline constexpr rt::DTypes kIndexSelectDTypes = rt::DTypes::all();
// qmatmul_f32 (f32 activations).
inline constexpr rt::DTypes kF32{DType::F32};
// matmul.kern.h's matmul_*_f32 / _h16 (f32 accumulation) and, on devices with
// doubles, matmul_f64_*.
inline constexpr rt::DTypes kMatmulDTypes{DType::F32, DType::F16, DType::BF16, DType::F64};
// dequantize_f32 and dequantize_b16 write the CPU's dtypes, rounded as it rounds; qmatmul_f32 is kF32.
inline constexpr rt::DTypes kDequantizeDTypes{DType::F32, DType::F16, DType::BF16};

// attention_rows loads and stores f32, f16 and bf16 (load_elem / store_elem)
// and computes in f32, as the CPU does. softmax, norm and rope do too, and
// have f64 twins besides (rt::DTypes::floating(), f64 where the device has it).
inline constexpr rt::DTypes kElemDTypes{DType::F32, DType::F16, DType::BF16};
// The ELEM_* code of a dtype.
inline int elem_code(DType t) {
  switch (t) {
    case DType::F32: return ELEM_F32;
    case DType::F16: return ELEM_F16;
    case DType::BF16: return ELEM_BF16;
    case DType::F64: return ELEM_F64;
    case DType::I8: return ELEM_I8;
    case DType::U8: return ELEM_U8;
    case DType::I32: return ELEM_I32;
    case DType::I64: return ELEM_I64;
    case DType::Bool: return ELEM_BOOL;
  }
  return ELEM_F32;
}

// copy_b*_strided's name for an element size in bytes.
inline const char* copy_kernel(std::size_t element_size) {
  return element_size == 1   ? "copy_b8_strided"
         : element_size == 2 ? "copy_b16_strided"
         : element_size == 4 ? "copy_b32_strided"
                             : "copy_b64_strided";
}
// Whether a cast touches f64 (cast_f64_strided, doubles on the device).
inline bool uses_f64(const rt::CopyArgs& a) { return a.src.dtype == DType::F64 || a.out.dtype == DType::F64; }
// Integer division: the op layer never hands it to kernels (it divides in f64),
// and the CPU's raises on a zero divisor, so it stays there.
inline bool binary_fits(const rt::BinaryArgs& a) { return !(is_integral(a.out.dtype) && a.op == rt::BinaryOp::Div); }

// unary.kern.h's op code: UnaryOp's own value.
static_assert(UNARY_NEG == static_cast<int>(rt::UnaryOp::Neg) && UNARY_ABS == static_cast<int>(rt::UnaryOp::Abs) &&
              UNARY_EXP == static_cast<int>(rt::UnaryOp::Exp) && UNARY_LOG == static_cast<int>(rt::UnaryOp::Log) &&
              UNARY_SQRT == static_cast<int>(rt::UnaryOp::Sqrt) &&
              UNARY_RSQRT == static_cast<int>(rt::UnaryOp::Rsqrt) &&
              UNARY_TANH == static_cast<int>(rt::UnaryOp::Tanh) &&
              UNARY_SIGMOID == static_cast<int>(rt::UnaryOp::Sigmoid) &&
              UNARY_RELU == static_cast<int>(rt::UnaryOp::Relu) && UNARY_GELU == static_cast<int>(rt::UnaryOp::Gelu) &&
              UNARY_GELU_TANH == static_cast<int>(rt::UnaryOp::GeluTanh) &&
              UNARY_SILU == static_cast<int>(rt::UnaryOp::Silu));
inline int unary_code(rt::UnaryOp op) { return static_cast<int>(op); }

// reduce_elem (f32, f16, bf16), reduce_int (the integers) and reduce_f64 (on
// devices with doubles): every dtype but bool, which the CPU refuses too.
inline constexpr rt::DTypes kReduceDTypes = rt::DTypes::all().without({DType::Bool});
static_assert(RD_SUM == static_cast<int>(rt::ReduceOp::Sum) && RD_MEAN == static_cast<int>(rt::ReduceOp::Mean) &&
              RD_MAX == static_cast<int>(rt::ReduceOp::Max) && RD_MIN == static_cast<int>(rt::ReduceOp::Min) &&
              RD_ARGMAX == static_cast<int>(rt::ReduceOp::Argmax) && RD_VAR == static_cast<int>(rt::ReduceOp::Var));
inline int reduce_code(rt::ReduceOp op) { return static_cast<int>(op); }
inline const char* reduce_kernel(DType t) {
  return t == DType::F64 ? "reduce_f64" : is_integral(t) ? "reduce_int" : "reduce_elem";
}
// What the reduce kernels leave to the CPU: max, min and argmax of nothing
// (no identity; the op layer refuses them), and an integer variance with no
// degrees of freedom (the CPU's integer division by zero).
inline bool reduce_fits(const rt::ReduceArgs& a) {
  const bool extreme = a.op == rt::ReduceOp::Max || a.op == rt::ReduceOp::Min || a.op == rt::ReduceOp::Argmax;
  if (extreme && a.n < 1) return false;
  return !(is_integral(a.x.dtype) && a.op == rt::ReduceOp::Var && a.n <= a.correction);
}
// The work-group of the column-tiled kernels (reduce.kern.h, softmax.kern.h):
// `cols` neighbouring columns (up to max_cols, the next power of two of inner)
// x `split` items along the reduced axis (group / cols), and `tiles` column
// tiles per outer index; `groups` in all.
struct TileGrid {
  std::int64_t cols, split, tiles, groups;
};
inline TileGrid tile_grid(std::int64_t outer, std::int64_t inner, std::int64_t group, std::int64_t max_cols) {
  std::int64_t cols = 1;
  while (cols < inner && cols < max_cols) cols *= 2;
  const std::int64_t tiles = (inner + cols - 1) / cols;
  return {cols, group / cols, tiles, outer * tiles};
}
inline TileGrid reduce_grid(const rt::ReduceArgs& a) { return tile_grid(a.outer, a.inner, RD_GROUP, RD_MAX_COLS); }
inline TileGrid softmax_grid(const rt::SoftmaxArgs& a) { return tile_grid(a.outer, a.inner, SM_GROUP, SM_MAX_COLS); }

// unary_strided (f32, f16, bf16 and the integers) and unary_f64_strided
// (devices with doubles): every dtype but bool, as the CPU.
inline constexpr rt::DTypes kUnaryDTypes = rt::DTypes::all().without({DType::Bool});
// The integers take neg, abs and relu only (the CPU refuses the rest).
inline bool unary_fits(const rt::UnaryArgs& a) {
  return !is_integral(a.out.dtype) || a.op == rt::UnaryOp::Neg || a.op == rt::UnaryOp::Abs || a.op == rt::UnaryOp::Relu;
}

// What attention_rows takes beyond the dtypes: head sizes up to AT_MAX_D, and
// k and v with packed rows (the op layer guarantees them; checked all the same).
inline bool attention_fits(const rt::AttentionArgs& a) {
  const auto packed = [](const rt::TensorArg& t) {
    return (t.shape[3] <= 1 || t.strides[3] == 1) && (t.shape[2] <= 1 || t.strides[2] == t.shape[3]);
  };
  return !a.kv_q8_0 && a.q.shape[3] <= AT_MAX_D && a.v.shape[3] <= AT_MAX_D && a.k.shape[1] > 0 && packed(a.k) &&
         packed(a.v);
}
// Query rows: attention_rows' work-groups without split-K, attention_combine's with.
inline std::int64_t attention_groups(const rt::AttentionArgs& a) { return a.q.shape[0] * a.q.shape[1] * a.q.shape[2]; }
// Split-K for decoding: with fewer query rows than would fill a GPU (a few
// per head) and a long cache, each row's keys are split into parts of at
// least kAttentionSplitMin keys, at most kAttentionSplitMax parts, so that
// ~1024 work-groups run; 1 (no split) otherwise.
inline constexpr std::int64_t kAttentionSplitMin = 256, kAttentionSplitMax = 64;
inline std::int64_t attention_splits(const rt::AttentionArgs& a) {
  const std::int64_t rows = attention_groups(a), skv = a.k.shape[2];
  if (rows >= 1024 || skv < 2 * kAttentionSplitMin) return 1;
  std::int64_t s = (1024 + rows - 1) / rows;
  s = std::min(s, std::min(kAttentionSplitMax, skv / kAttentionSplitMin));
  return std::max<std::int64_t>(s, 1);
}
// AttentionMeta with the tensors' own element offsets (CUDA passes pointers to
// the first elements and zeroes them).
inline AttentionMeta attention_meta(const rt::AttentionArgs& a) {
  AttentionMeta m{};
  m.hq = a.q.shape[1];
  m.sq = a.q.shape[2];
  m.d = a.q.shape[3];
  m.hkv = a.k.shape[1];
  m.skv = a.k.shape[2];
  m.dv = a.v.shape[3];
  m.kb = a.k.strides[0];
  m.kh = a.k.strides[1];
  m.vb = a.v.strides[0];
  m.vh = a.v.strides[1];
  m.oq = a.q.offset;
  m.ok = a.k.offset;
  m.ov = a.v.offset;
  m.oo = a.out.offset;
  m.shift = a.align == rt::CausalAlign::BottomRight ? m.skv - m.sq : 0;
  m.scale = a.scale;
  m.window = a.window;
  m.softcap = a.softcap;
  m.causal = a.causal ? 1 : 0;
  m.dt = elem_code(a.q.dtype);
  m.splits = attention_splits(a);
  // Whole tiles of AT_GROUP keys per split.
  m.split_len = ((m.skv + m.splits - 1) / m.splits + AT_GROUP - 1) / AT_GROUP * AT_GROUP;
  return m;
}

// quant.kern.h's format code: QuantFormat's own value.
static_assert(QUANT_Q4_0 == static_cast<int>(QuantFormat::Q4_0) && QUANT_Q4_1 == static_cast<int>(QuantFormat::Q4_1) &&
              QUANT_Q8_0 == static_cast<int>(QuantFormat::Q8_0) && QUANT_Q5_0 == static_cast<int>(QuantFormat::Q5_0) &&
              QUANT_Q5_1 == static_cast<int>(QuantFormat::Q5_1) && QUANT_Q4_K == static_cast<int>(QuantFormat::Q4_K) &&
              QUANT_Q5_K == static_cast<int>(QuantFormat::Q5_K) && QUANT_Q6_K == static_cast<int>(QuantFormat::Q6_K) &&
              QUANT_IQ4_NL == static_cast<int>(QuantFormat::IQ4_NL) &&
              QUANT_IQ4_XS == static_cast<int>(QuantFormat::IQ4_XS) &&
              QUANT_Q2_K == static_cast<int>(QuantFormat::Q2_K) && QUANT_Q3_K == static_cast<int>(QuantFormat::Q3_K));
inline int quant_code(QuantFormat f) { return static_cast<int>(f); }
// Work-groups of qmatmul_f32: one per weight row and QM_ROWS activation rows.
inline std::int64_t qmatmul_groups(const rt::QMatmulArgs& a) { return a.n * ((a.m + QM_ROWS - 1) / QM_ROWS); }
// dequantize_*'s ids_width: 0 without ids, else the id's bytes.
inline int ids_width(const rt::DequantizeArgs& a) {
  return a.ids.present() ? static_cast<int>(dtype_size(a.ids.dtype)) : 0;
}

}  // namespace torsh::gpu
