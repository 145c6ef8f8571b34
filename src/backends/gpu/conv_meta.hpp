#pragma once
// The metadata of the shared batch_norm, pool2d and conv2d kernels
// (kernels/batch_norm.kern.h, pool2d.kern.h, conv2d.kern.h), filled from the op
// arguments once for every C-family backend, and what those kernels take.
#include "kernel_set.hpp"

namespace torsh::gpu {

// batch_norm_*, pool2d_* and conv2d_*: f32, f16 and bf16 storage with f32
// math, and f64 (double math) where the device has doubles.
inline constexpr rt::DTypes kWindowDTypes = rt::DTypes::floating();

inline BatchNormMeta batch_norm_meta(const rt::BatchNormArgs& a) {
  BatchNormMeta m{};
  m.n = a.n;
  m.c = a.c;
  m.spatial = a.spatial;
  m.ox = a.x.offset;
  m.ow = a.weight.offset;
  m.ob = a.bias.offset;
  m.orm = a.running_mean.offset;
  m.orv = a.running_var.offset;
  m.oo = a.out.offset;
  m.momentum = a.momentum;
  m.eps = a.eps;
  m.has_weight = a.weight.present() ? 1 : 0;
  m.has_bias = a.bias.present() ? 1 : 0;
  m.has_running = a.running_mean.present() && a.running_var.present() ? 1 : 0;
  m.dt = elem_code(a.x.dtype);
  return m;
}

inline Conv2dMeta conv2d_meta(const rt::Conv2dArgs& a) {
  Conv2dMeta m{};
  m.n = a.x.shape[0];
  m.c = a.x.shape[1];
  m.h = a.x.shape[2];
  m.w = a.x.shape[3];
  m.k = a.w.shape[0];
  m.r = a.w.shape[2];
  m.s = a.w.shape[3];
  m.p = a.out.shape[2];
  m.q = a.out.shape[3];
  m.stride_h = a.stride_h;
  m.stride_w = a.stride_w;
  m.pad_h = a.pad_h;
  m.pad_w = a.pad_w;
  m.dil_h = a.dil_h;
  m.dil_w = a.dil_w;
  m.groups = a.groups;
  m.ox = a.x.offset;
  m.ow = a.w.offset;
  m.ob = a.bias.offset;
  m.oo = a.out.offset;
  m.has_bias = a.bias.present() ? 1 : 0;
  m.dt = elem_code(a.x.dtype);
  return m;
}
// Whether conv2d_direct_* takes it (few output channels per group) rather than the tiled GEMM.
inline bool conv2d_direct(const Conv2dMeta& m) { return m.k / m.groups <= CV_DIRECT_MAX_KG; }
// The tiled conv2d_*'s work-groups: GEMM-row tiles (output pixels of every image) x
// column tiles (output channels of one group) x groups.
inline std::int64_t conv2d_row_tiles(const Conv2dMeta& m) { return (m.n * m.p * m.q + CV_TM - 1) / CV_TM; }
inline std::int64_t conv2d_col_tiles(const Conv2dMeta& m) { return (m.k / m.groups + CV_TN - 1) / CV_TN; }

inline Pool2dMeta pool2d_meta(const rt::Pool2dArgs& a) {
  Pool2dMeta m{};
  m.planes = a.x.shape[0] * a.x.shape[1];
  m.h = a.x.shape[2];
  m.w = a.x.shape[3];
  m.p = a.out.shape[2];
  m.q = a.out.shape[3];
  m.kernel_h = a.kernel_h;
  m.kernel_w = a.kernel_w;
  m.stride_h = a.stride_h;
  m.stride_w = a.stride_w;
  m.pad_h = a.pad_h;
  m.pad_w = a.pad_w;
  m.ox = a.x.offset;
  m.oo = a.out.offset;
  m.is_max = a.kind == rt::PoolKind::Max ? 1 : 0;
  m.count_include_pad = a.count_include_pad ? 1 : 0;
  m.dt = elem_code(a.x.dtype);
  return m;
}

}  // namespace torsh::gpu
