/* The structs and constants the kernels take from the host, in one place that
 * both sides include: the kernel sources (OpenCL C, CUDA, HIP) and the host
 * code that fills them (src/backends/gpu). `long` is 64-bit in OpenCL C and on
 * the LP64 hosts the C-family plugins are built for (checked on the host side
 * in gpu/kernel_meta.hpp), so the layouts agree byte for byte. Plain C only:
 * no dialect macros. */
#ifndef TORSH_KERNELS_META_H
#define TORSH_KERNELS_META_H

#define TORSH_MAX_DIMS 8

/* binary.kern.h op codes */
#define BINARY_ADD 0
#define BINARY_SUB 1
#define BINARY_MUL 2
#define BINARY_DIV 3
#define BINARY_MAX 4
#define BINARY_MIN 5
#define BINARY_POW 6

/* matmul.kern.h: the largest block of C one work-item accumulates (rows x
 * columns); the variants themselves are listed in gpu/matmul_variants.hpp */
#define MM_MAX_TM 8
#define MM_MAX_TN 8
/* softmax.kern.h: work-items per work-group, laid out as up to SM_MAX_COLS
 * columns x slices of the softmax axis */
#define SM_GROUP 128
#define SM_MAX_COLS 32

/* quant.kern.h: block formats (torsh::QuantFormat's values), work-items per
 * output row of qmatmul and activation rows one work-group takes at a time */
#define QUANT_Q4_0 0
#define QUANT_Q4_1 1
#define QUANT_Q8_0 2
#define QUANT_Q5_0 3
#define QUANT_Q5_1 4
#define QUANT_Q4_K 5
#define QUANT_Q5_K 6
#define QUANT_Q6_K 7
#define QUANT_IQ4_NL 8
#define QUANT_IQ4_XS 9
#define QUANT_Q2_K 10
#define QUANT_Q3_K 11
#define QM_GROUP 64
#define QM_ROWS 4

/* Storage dtype codes of the kernels that load and store through
 * load_elem / store_elem (dialect.h): f32, IEEE half, bfloat16; math in f32.
 * The rest (copy.kern.h's cast, binary.kern.h, reduce.kern.h, unary.kern.h)
 * also take f64 (where the device has it: TORSH_FP64), the integers and bool
 * (load_int / store_int), as far as the op does. */
#define ELEM_F32 0
#define ELEM_F16 1
#define ELEM_BF16 2
#define ELEM_F64 3
#define ELEM_I8 4
#define ELEM_U8 5
#define ELEM_I32 6
#define ELEM_I64 7
#define ELEM_BOOL 8

/* unary.kern.h op codes: torsh::rt::UnaryOp's values */
#define UNARY_NEG 0
#define UNARY_ABS 1
#define UNARY_EXP 2
#define UNARY_LOG 3
#define UNARY_SQRT 4
#define UNARY_RSQRT 5
#define UNARY_TANH 6
#define UNARY_SIGMOID 7
#define UNARY_RELU 8
#define UNARY_GELU 9
#define UNARY_GELU_TANH 10
#define UNARY_SILU 11

/* norm.kern.h: work-items per row */
#define NM_GROUP 128

/* batch_norm.kern.h: work-items per channel while training (the statistics) */
#define BN_GROUP 256

/* pool2d.kern.h and conv2d.kern.h. conv2d is an implicit GEMM: a CV_WG x CV_WG
 * work-group computes CV_TM output pixels (GEMM rows) x CV_TN output channels
 * (GEMM columns), CV_RM x CV_RN per work-item, stepping CV_TK reduction
 * indices (input channel, filter tap) at a time through local memory. */
#define CV_WG 16
#define CV_RM 4
#define CV_RN 4
#define CV_TM (CV_WG * CV_RM)
#define CV_TN (CV_WG * CV_RN)
#define CV_TK 16
/* Up to this many output channels per group (depthwise: 1), conv2d_direct_*
 * instead: a GEMM tile CV_TN channels wide would compute mostly zeros. */
#define CV_DIRECT_MAX_KG 8

/* attention.kern.h: work-items per query row (also the keys one tile holds),
 * and the largest head size (D and Dv) a work-group keeps in registers */
#define AT_GROUP 64
#define AT_MAX_D 256

/* reduce.kern.h op codes (torsh::rt::ReduceOp's values) and work-items per
 * work-group, laid out as columns x slices of the reduced axis */
#define RD_SUM 0
#define RD_MEAN 1
#define RD_MAX 2
#define RD_MIN 3
#define RD_ARGMAX 4
#define RD_VAR 5
#define RD_GROUP 128
#define RD_MAX_COLS 32

/* Shapes and strides (elements) of up to three tensors walking one index space. */
typedef struct {
  long nd;
  long numel;
  long dims[TORSH_MAX_DIMS];
  long st[3][TORSH_MAX_DIMS];
  long off[3];
} StridedMeta;

/* Batched GEMM: strides in elements, {batch, row, col} per operand; element
 * offsets; dt: the storage dtype (ELEM_*) of all three. */
typedef struct {
  long m, n, k;
  long sa[3], sb[3], so[3];
  long oa, ob, oo;
  float alpha, beta;
  int dt;
} MatmulMeta;

/* Attention on q [b, hq, sq, d], k [b, hkv, skv, d], v [b, hkv, skv, dv] into
 * out [b, hq, sq, dv]: q and out contiguous, k and v with packed rows and the
 * given batch and head strides; element offsets of the first elements.
 * Causal: query i sees keys j <= i + shift, and with window > 0 only those
 * with j > i + shift - window; softcap > 0: scores s become softcap *
 * tanh(s / softcap). Split-K (decoding): with splits
 * > 1 each query row's keys go to `splits` work-groups of split_len keys,
 * whose partial softmaxes (max, sum, dv unnormalised outputs) land in f32
 * scratch and are combined by attention_combine. */
typedef struct {
  long hq, sq, d, hkv, skv, dv;
  long kb, kh, vb, vh;
  long oq, ok, ov, oo;
  long shift;
  long splits, split_len;
  long window;
  float scale, softcap;
  int causal, dt;
} AttentionMeta;

/* batch_norm on contiguous x and out [n, c, spatial] with per-channel [c]
 * weight, bias, running_mean, running_var (each read only when its has_ flag
 * is set); element offsets of the first elements. */
typedef struct {
  long n, c, spatial;
  long ox, ow, ob, orm, orv, oo;
  float momentum, eps;
  int has_weight, has_bias, has_running, dt;
} BatchNormMeta;

/* NCHW convolution: x [n, c, h, w], w [k, c / groups, r, s], bias [k] (read
 * only when has_bias), out [n, k, p, q], all contiguous; element offsets. */
typedef struct {
  long n, c, h, w, k, r, s, p, q;
  long stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
  long ox, ow, ob, oo;
  int has_bias, dt;
} Conv2dMeta;

/* Max or average pooling of contiguous x [planes, h, w] (planes = N * C) into
 * out [planes, p, q]; element offsets. */
typedef struct {
  long planes, h, w, p, q;
  long kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  long ox, oo;
  int is_max, count_include_pad, dt;
} Pool2dMeta;

#endif
