#include "dispatch.hpp"

namespace torsh::ops {

namespace {
Tensor pool_impl(rt::PoolKind kind, const Tensor& x_in, const Pool2dParams& p) {
  const char* name = kind == rt::PoolKind::Max ? "max_pool2d" : "avg_pool2d";
  detail::check_same_device(name, {x_in});
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, std::string(name) + " needs a floating dtype", detail::context(name, {x_in}));
  if (x_in.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch, "pooling takes [N, C, H, W]", detail::context(name, {x_in}));
  const std::int64_t sh = p.stride_h.value_or(p.kernel_h), sw = p.stride_w.value_or(p.kernel_w);
  auto bad = [&](const std::string& what, std::int64_t h, std::int64_t w, const std::string& rule) {
    throw Error(ErrorCode::InvalidArgument, what + " (" + std::to_string(h) + ", " + std::to_string(w) + ") " + rule,
                detail::context(name, {x_in}),
                {"Use kernel_size >= 1, stride >= 1 (or leave it unset for the kernel size) and 0 <= padding <= "
                 "kernel_size / 2"});
  };
  if (p.kernel_h < 1 || p.kernel_w < 1) bad("kernel_size", p.kernel_h, p.kernel_w, "must be >= 1");
  if (sh < 1 || sw < 1) bad("stride", sh, sw, "must be >= 1");
  if (p.pad_h < 0 || p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2)
    bad("padding", p.pad_h, p.pad_w, "must lie in [0, kernel_size / 2]");
  const auto& xs = x_in.shape();
  const std::int64_t P = detail::window_out_size(xs[2], p.kernel_h, sh, p.pad_h, 1),
                     Q = detail::window_out_size(xs[3], p.kernel_w, sw, p.pad_w, 1);
  if (P <= 0 || Q <= 0)
    throw Error(ErrorCode::ShapeMismatch, "the pooling window is larger than the padded input",
                detail::context(name, {x_in}));
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty_like(x, Shape{xs[0], xs[1], P, Q}, x.dtype());
  if (out.numel() == 0) return out;
  detail::launch<rt::OpKind::Pool2d>(name, {x}, {out}, [=](auto& in, auto& o) {
    rt::Pool2dArgs a;
    a.kind = kind;
    a.x = in[0];
    a.out = o[0];
    a.kernel_h = p.kernel_h, a.kernel_w = p.kernel_w, a.stride_h = sh, a.stride_w = sw;
    a.pad_h = p.pad_h, a.pad_w = p.pad_w, a.count_include_pad = p.count_include_pad;
    return a;
  });
  return out;
}
}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dParams& p) { return pool_impl(rt::PoolKind::Max, x, p); }
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p) { return pool_impl(rt::PoolKind::Avg, x, p); }

}  // namespace torsh::ops
