// Neural-network ops with PyTorch-style keywords: normalisation, RoPE,
// attention, conv2d and pooling, the fused Adam step and random numbers.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <random>

#include "common.hpp"

namespace torsh::py {
namespace {

// Ids keep their own integer dtype (a list becomes int64, not x's dtype, as
// as_tensor's `like` would make it) and are moved to x's device.
Tensor ids_on(const Tensor& x, const TensorLike& ids) {
  Tensor i = as_tensor(ids);
  if (i.device() == x.device()) return i;
  Backend b = x.backend();
  return i.to(b);
}

using nb::arg;

std::optional<Tensor> optional_tensor(const std::optional<TensorLike>& x, const Tensor& like) {
  if (!x || x->obj.is_none()) return std::nullopt;
  return as_tensor(*x, &like);
}

std::uint64_t seed_arg(std::optional<std::uint64_t> seed) {
  if (seed) return *seed;
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::vector<Tensor> tensor_list(const std::vector<TensorLike>& xs) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const auto& x : xs) out.push_back(as_tensor(x));
  return out;
}

std::optional<Tensor> optional_inplace(const std::optional<TensorLike>& x, const char* op, const char* arg) {
  if (!x || x->obj.is_none()) return std::nullopt;
  return as_inplace_tensor(*x, op, arg);
}

// Operands the op writes: each must be shared with the caller ("params[2]" names the culprit).
std::vector<Tensor> inplace_list(const std::vector<TensorLike>& xs, const char* op, const char* arg) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    out.push_back(as_inplace_tensor(xs[i], op, std::string(arg) + "[" + std::to_string(i) + "]"));
  return out;
}

void bind_norms(nb::module_& m) {
  m.def(
      "layer_norm",
      [](const TensorLike& x, std::optional<TensorLike> weight, std::optional<TensorLike> bias, double eps) {
        Tensor t = as_tensor(x);
        auto w = optional_tensor(weight, t), b = optional_tensor(bias, t);
        nb::gil_scoped_release r;
        return ops::layer_norm(t, w, b, eps);
      },
      arg("x"), arg("weight").none() = nb::none(), arg("bias").none() = nb::none(), arg("eps") = 1e-5,
      "Normalises over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias.");
  m.def(
      "rms_norm",
      [](const TensorLike& x, std::optional<TensorLike> weight, double eps) {
        Tensor t = as_tensor(x);
        auto w = optional_tensor(weight, t);
        nb::gil_scoped_release r;
        return ops::rms_norm(t, w, eps);
      },
      arg("x"), arg("weight").none() = nb::none(), arg("eps") = 1e-6,
      "x / sqrt(mean(x**2) + eps) * weight over the last dimension.");
  m.def(
      "batch_norm",
      [](const TensorLike& x, std::optional<TensorLike> running_mean, std::optional<TensorLike> running_var,
         std::optional<TensorLike> weight, std::optional<TensorLike> bias, bool training, double momentum, double eps) {
        Tensor t = as_tensor(x);
        // training=True writes the running statistics: they must be shared, not copied.
        auto stat = [&](const std::optional<TensorLike>& v, const char* arg) {
          return training ? optional_inplace(v, "batch_norm", arg) : optional_tensor(v, t);
        };
        auto rm = stat(running_mean, "running_mean"), rv = stat(running_var, "running_var");
        auto w = optional_tensor(weight, t), b = optional_tensor(bias, t);
        nb::gil_scoped_release r;
        return ops::batch_norm(t, rm, rv, w, b, training, momentum, eps);
      },
      arg("x"), arg("running_mean").none() = nb::none(), arg("running_var").none() = nb::none(),
      arg("weight").none() = nb::none(), arg("bias").none() = nb::none(), arg("training") = false,
      arg("momentum") = 0.1, arg("eps") = 1e-5,
      "Per-channel normalisation of x [N, C, ...]. training=True normalises with the batch statistics and updates "
      "running_mean / running_var in place (NumPy arrays passed there are updated too: they are shared; "
      "read-only arrays and lists raise TorshError).");
}

void bind_transformer(nb::module_& m) {
  m.def(
      "rope_cache",
      [](std::int64_t max_pos, std::int64_t rot_dim, double base, const DeviceArg& device,
         const std::optional<std::vector<float>>& freq_factors) {
        Backend b = to_backend(device);
        const std::vector<float> factors = freq_factors.value_or(std::vector<float>{});
        nb::gil_scoped_release r;
        return ops::rope_cache(b, max_pos, rot_dim, base, factors);
      },
      arg("max_pos"), arg("rot_dim"), arg("base") = 10000.0, arg("device").none() = nb::none(),
      arg("freq_factors").none() = nb::none(),
      "(cos, sin) tables [max_pos, rot_dim / 2] for the frequencies base ** (-2i / rot_dim), each divided by "
      "freq_factors[i] when given (rot_dim / 2 factors > 0: Llama 3.1's rope_freqs).");
  m.def(
      "rope",
      [](const TensorLike& x, const TensorLike& cos, const TensorLike& sin, const std::string& style, std::int64_t pos0,
         std::int64_t rot_dim) {
        if (style != "neox" && style != "gptj")
          raise_error(ErrorCode::InvalidArgument, "style='" + style + "'", "rope",
                      {"Use style='neox' (rotate halves) or 'gptj' (rotate interleaved pairs)"});
        Tensor t = as_tensor(x);
        Tensor c = as_tensor(cos, &t), s = as_tensor(sin, &t);
        nb::gil_scoped_release r;
        return ops::rope(t, c, s, style == "neox" ? ops::RopeStyle::NeoX : ops::RopeStyle::GptJ, pos0, rot_dim);
      },
      arg("x"), arg("cos"), arg("sin"), arg("style") = "neox", arg("pos0") = 0, arg("rot_dim") = 0,
      "Rotary position embedding of x [batch, seq, heads, head_dim] at positions pos0...; rot_dim=0 rotates the "
      "whole head.");
  m.def(
      "index_select",
      [](const TensorLike& x, std::int64_t axis, const TensorLike& ids) {
        Tensor t = as_tensor(x);
        Tensor i = ids_on(t, ids);
        nb::gil_scoped_release r;
        return ops::index_select(t, axis, i);
      },
      arg("x"), arg("axis"), arg("ids"),
      "x's entries at ids (int32 or int64, any shape, flattened) along axis: numpy.take(x, ids.ravel(), axis) "
      "and torch.index_select. An id outside [0, x.shape[axis]) raises TorshError.");
  m.def(
      "embedding",
      [](const TensorLike& table, const TensorLike& ids) {
        Tensor t = as_tensor(table);
        Tensor i = ids_on(t, ids);
        nb::gil_scoped_release r;
        return ops::embedding(t, i);
      },
      arg("table"), arg("ids"),
      "Rows of table [V, D] (any dtype) at ids (int32 or int64, any shape): ids.shape + [D].");
  m.def(
      "attention",
      [](const TensorLike& q, const TensorLike& k, const TensorLike& v, bool causal, std::optional<double> scale,
         const std::string& align, std::int64_t window, double softcap) {
        if (align != "top_left" && align != "bottom_right")
          raise_error(ErrorCode::InvalidArgument, "unknown causal alignment '" + align + "'", "attention",
                      {"Use 'top_left' (PyTorch's is_causal) or 'bottom_right' (queries at the end of the keys, as "
                       "with a KV cache)"});
        Tensor tq = as_tensor(q);
        Tensor tk = as_tensor(k, &tq), tv = as_tensor(v, &tq);
        nb::gil_scoped_release r;
        return ops::attention(tq, tk, tv, causal, scale,
                              align == "top_left" ? ops::CausalAlign::TopLeft : ops::CausalAlign::BottomRight, window,
                              static_cast<float>(softcap));
      },
      arg("q"), arg("k"), arg("v"), arg("causal") = false, arg("scale").none() = nb::none(), arg("align") = "top_left",
      arg("window") = 0, arg("softcap") = 0.0,
      "Scaled dot-product attention: q [B, Hq, Sq, D], k/v [B, Hkv, Skv, D] (grouped heads when Hkv divides Hq); "
      "scale defaults to 1/sqrt(D). With causal=True and Sq != Skv, align='top_left' (the default, PyTorch's "
      "is_causal) lets query i see keys j <= i; align='bottom_right' puts the queries at the end of the keys "
      "(j <= i + Skv - Sq, a KV cache); a query that sees no key gets zeros. window > 0 (causal only): a sliding "
      "window, each query seeing only the last `window` keys of its causal range; softcap > 0: each scaled score "
      "s becomes softcap * tanh(s / softcap) before the softmax (Gemma 2).");
}

void bind_conv(nb::module_& m) {
  m.def(
      "conv2d",
      [](const TensorLike& x, const TensorLike& w, std::optional<TensorLike> bias, const PairArg& stride,
         const PairArg& padding, const PairArg& dilation, std::int64_t groups, const std::string& algorithm) {
        Tensor tx = as_tensor(x);
        Tensor tw = as_tensor(w, &tx);
        auto b = optional_tensor(bias, tx);
        ops::Conv2dParams p;
        std::tie(p.stride_h, p.stride_w) = pair_arg(stride, "stride");
        std::tie(p.pad_h, p.pad_w) = pair_arg(padding, "padding");
        std::tie(p.dil_h, p.dil_w) = pair_arg(dilation, "dilation");
        p.groups = groups;
        if (algorithm == "auto")
          p.algo = ops::ConvAlgo::Auto;
        else if (algorithm == "gemm")
          p.algo = ops::ConvAlgo::Gemm;
        else if (algorithm == "winograd")
          p.algo = ops::ConvAlgo::Winograd;
        else
          throw Error(ErrorCode::InvalidArgument, "unknown conv2d algorithm '" + algorithm + "'", {.op = "conv2d"},
                      {"Use 'auto', 'gemm' or 'winograd'"});
        nb::gil_scoped_release r;
        return ops::conv2d(tx, tw, b, p);
      },
      arg("x"), arg("weight"), arg("bias").none() = nb::none(), nb::kw_only(), arg("stride") = 1, arg("padding") = 0,
      arg("dilation") = 1, arg("groups") = 1, arg("algorithm") = "auto",
      "2-D convolution (cross-correlation, as PyTorch) of x [N, C, H, W] with weight [K, C / groups, R, S]. "
      "algorithm: 'auto' (the backend chooses), 'gemm' (the direct sum), or 'winograd' (F(2x2, 3x3): f32, 3x3, "
      "stride 1, dilation 1; fewer multiply-adds, a few times the rounding error).");
  auto pool = [](bool is_max) {
    return [is_max](const TensorLike& x, const PairArg& kernel_size, const std::optional<PairArg>& stride,
                    const PairArg& padding, bool count_include_pad) {
      Tensor t = as_tensor(x);
      ops::Pool2dParams p;
      std::tie(p.kernel_h, p.kernel_w) = pair_arg(kernel_size, "kernel_size");
      if (stride) std::tie(p.stride_h, p.stride_w) = pair_arg(*stride, "stride");
      std::tie(p.pad_h, p.pad_w) = pair_arg(padding, "padding");
      p.count_include_pad = count_include_pad;
      nb::gil_scoped_release r;
      return is_max ? ops::max_pool2d(t, p) : ops::avg_pool2d(t, p);
    };
  };
  m.def(
      "max_pool2d",
      [pool](const TensorLike& x, const PairArg& kernel_size, const std::optional<PairArg>& stride,
             const PairArg& padding) { return pool(true)(x, kernel_size, stride, padding, true); },
      arg("x"), arg("kernel_size"), arg("stride").none() = nb::none(), arg("padding") = 0,
      "Max pooling of x [N, C, H, W]; stride defaults to kernel_size.");
  m.def("avg_pool2d", pool(false), arg("x"), arg("kernel_size"), arg("stride").none() = nb::none(), arg("padding") = 0,
        arg("count_include_pad") = true,
        "Average pooling of x [N, C, H, W]; stride defaults to kernel_size; padding counts in the divisor unless "
        "count_include_pad=False.");
}

void bind_optim(nb::module_& m) {
  m.def(
      "adam_step",
      [](const std::vector<TensorLike>& params, const std::vector<TensorLike>& grads,
         const std::vector<TensorLike>& exp_avg, const std::vector<TensorLike>& exp_avg_sq, std::int64_t step,
         double lr, double beta1, double beta2, double eps, double weight_decay, bool adamw, double grad_scale) {
        auto p = inplace_list(params, "adam_step", "params"), g = tensor_list(grads);
        auto m1 = inplace_list(exp_avg, "adam_step", "exp_avg"),
             m2 = inplace_list(exp_avg_sq, "adam_step", "exp_avg_sq");
        auto f = [](double v) { return static_cast<float>(v); };
        ops::AdamConfig cfg{.lr = f(lr),
                            .beta1 = f(beta1),
                            .beta2 = f(beta2),
                            .eps = f(eps),
                            .weight_decay = f(weight_decay),
                            .adamw = adamw};
        nb::gil_scoped_release r;
        ops::adam_step(p, g, m1, m2, cfg, step, grad_scale);
      },
      arg("params"), arg("grads"), arg("exp_avg"), arg("exp_avg_sq"), nb::kw_only(), arg("step"), arg("lr") = 1e-3,
      arg("beta1") = 0.9, arg("beta2") = 0.999, arg("eps") = 1e-8, arg("weight_decay") = 0.0, arg("adamw") = false,
      arg("grad_scale") = 1.0,
      "One fused Adam (adamw=True: AdamW) step over lists of tensors, in place; step is 1-based. grad_scale "
      "multiplies the gradients first (the inverse loss scale). NumPy arrays are updated in place (shared memory); "
      "read-only arrays and lists raise TorshError.");
}

void bind_random(nb::module_& m) {
  m.def(
      "rand",
      [](const ShapeArg& shape, std::optional<std::uint64_t> seed, const DTypeArg& dtype, double low, double high,
         std::uint64_t offset, const DeviceArg& device) {
        Backend b = to_backend(device);
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        const auto sd = seed_arg(seed);
        nb::gil_scoped_release r;
        return ops::rand(b, s, sd, d, low, high, offset);
      },
      arg("shape"), nb::kw_only(), arg("seed").none() = nb::none(), arg("dtype") = "f32", arg("low") = 0.0,
      arg("high") = 1.0, arg("offset") = 0, arg("device").none() = nb::none(),
      "Uniform [low, high) from Philox4x32-10: the same seed gives the same numbers on every device and thread "
      "count. seed=None draws a fresh seed.");
  m.def(
      "randn",
      [](const ShapeArg& shape, std::optional<std::uint64_t> seed, const DTypeArg& dtype, double mean, double std,
         std::uint64_t offset, const DeviceArg& device) {
        Backend b = to_backend(device);
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        const auto sd = seed_arg(seed);
        nb::gil_scoped_release r;
        return ops::randn(b, s, sd, d, mean, std, offset);
      },
      arg("shape"), nb::kw_only(), arg("seed").none() = nb::none(), arg("dtype") = "f32", arg("mean") = 0.0,
      arg("std") = 1.0, arg("offset") = 0, arg("device").none() = nb::none(),
      "Normal(mean, std) from Philox4x32-10, reproducible across devices. seed=None draws a fresh seed.");
  m.def(
      "bernoulli",
      [](const ShapeArg& shape, double p, std::optional<std::uint64_t> seed, const DTypeArg& dtype,
         std::uint64_t offset, const DeviceArg& device) {
        Backend b = to_backend(device);
        Shape s = to_shape(shape);
        DType d = to_dtype(dtype);
        const auto sd = seed_arg(seed);
        nb::gil_scoped_release r;
        return ops::bernoulli(b, s, p, sd, d, offset);
      },
      arg("shape"), arg("p") = 0.5, nb::kw_only(), arg("seed").none() = nb::none(), arg("dtype") = "f32",
      arg("offset") = 0, arg("device").none() = nb::none(),
      "1 with probability p, else 0. seed=None draws a fresh seed.");
}

}  // namespace

void bind_ops_nn(nb::module_& m) {
  bind_norms(m);
  bind_transformer(m);
  bind_conv(m);
  bind_optim(m);
  bind_random(m);
}

}  // namespace torsh::py
