// Scaled-dot-product attention (causal or not, grouped-query heads).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dispatch.hpp"

namespace torsh::ops {
namespace {

// k and v keep their batch and head strides when each head's [S, D] rows are
// packed: a KV cache's prefix is such a view, and copying it every decoded
// token would cost more than the attention itself.
bool rows_packed(const Tensor& t) {
  const auto& sh = t.shape();
  const auto& st = t.strides();
  return (sh[3] <= 1 || st[3] == 1) && (sh[2] <= 1 || st[2] == sh[3]);
}

void check_mask(const char* name, std::int64_t window, float softcap, bool causal, const detail::TensorRefs& ts) {
  if (window < 0 || (window > 0 && !causal))
    throw Error(ErrorCode::InvalidArgument,
                "attention's sliding window " + std::to_string(window) + " must be >= 0, and > 0 only with causal",
                detail::context(name, ts), {"Pass causal=true with a window, or window 0 for none"});
  if (!(softcap >= 0.0f) || !std::isfinite(softcap))
    throw Error(ErrorCode::InvalidArgument,
                "attention's logit soft-cap " + std::to_string(softcap) + " must be finite and >= 0 (0: none)",
                detail::context(name, ts));
}

}  // namespace

Tensor attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, bool causal, std::optional<float> scale,
                 CausalAlign align, std::int64_t window, float softcap) {
  const char* name = "attention";
  check_mask(name, window, softcap, causal, {q_in, k_in, v_in});
  detail::check_same_device(name, {q_in, k_in, v_in});
  detail::check_same_dtype(name, {q_in, k_in, v_in});
  if (!is_floating(q_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "attention needs floating inputs", detail::context(name, {q_in, k_in, v_in}));
  if (q_in.ndim() != 4 || k_in.ndim() != 4 || v_in.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch, "attention takes q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]",
                detail::context(name, {q_in, k_in, v_in}));
  const auto& qs = q_in.shape();
  const auto& ks = k_in.shape();
  const auto& vs = v_in.shape();
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != vs[1] || ks[2] != vs[2] || ks[3] != qs[3] || ks[1] == 0 ||
      qs[1] % ks[1] != 0)
    throw Error(ErrorCode::ShapeMismatch,
                "incompatible attention shapes (batch must match, k/v must share heads and length, D must match, "
                "Hq must be a multiple of Hkv)",
                detail::context(name, {q_in, k_in, v_in}));
  const Tensor q = q_in.contiguous();
  const Tensor k = rows_packed(k_in) ? k_in : k_in.contiguous();
  const Tensor v = rows_packed(v_in) ? v_in : v_in.contiguous();
  Tensor out = detail::empty_like(q, Shape{qs[0], qs[1], qs[2], vs[3]}, q.dtype());
  if (out.numel() == 0) return out;
  const float sc = scale.value_or(1.0f / std::sqrt(static_cast<float>(qs[3] > 0 ? qs[3] : 1)));
  detail::launch<rt::OpKind::Attention>(name, {q, k, v}, {out}, [=](auto& in, auto& o) {
    rt::AttentionArgs a{in[0], in[1], in[2], o[0], sc, causal, align};
    a.window = window;
    a.softcap = softcap;
    return a;
  });
  return out;
}

Tensor attention(const Tensor& q_in, const Tensor& k, const Tensor& v, QuantFormat kv_format, bool causal,
                 std::optional<float> scale, CausalAlign align, std::int64_t window, float softcap) {
  const char* name = "attention";
  check_mask(name, window, softcap, causal, {q_in, k, v});
  detail::check_same_device(name, {q_in, k, v});
  if (kv_format != QuantFormat::Q8_0)
    throw Error(
        ErrorCode::Unsupported,
        "attention reads a block-quantized KV cache in q8_0 only, not " + std::string(quant_format_name(kv_format)),
        detail::context(name, {q_in, k, v}), {"Store the cache as q8_0, f16, bf16 or f32"});
  if (!is_floating(q_in.dtype()) || k.dtype() != DType::U8 || v.dtype() != DType::U8)
    throw Error(ErrorCode::DTypeMismatch, "attention on a q8_0 cache takes floating q and U8 block rows k and v",
                detail::context(name, {q_in, k, v}));
  if (q_in.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch,
                "attention on a q8_0 cache takes q [B, Hq, Sq, D], k [B, Hkv, Skv, row bytes], v [B, Hkv, Skv, "
                "row bytes]",
                detail::context(name, {q_in, k, v}));
  const auto& qs = q_in.shape();
  const auto& ks = k.shape();
  const auto& vs = v.shape();
  const auto kBlockBytes = static_cast<std::int64_t>(quant_row_bytes(QuantFormat::Q8_0, kQuantBlock));
  const std::int64_t dv = vs[3] / kBlockBytes * kQuantBlock;
  if (qs[3] % kQuantBlock != 0 || ks[3] != static_cast<std::int64_t>(quant_row_bytes(QuantFormat::Q8_0, qs[3])) ||
      vs[3] % kBlockBytes != 0 || ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != vs[1] || ks[2] != vs[2] || ks[1] == 0 ||
      qs[1] % ks[1] != 0)
    throw Error(ErrorCode::ShapeMismatch,
                "incompatible shapes for attention on a q8_0 cache (D a multiple of 32 with k rows of its q8_0 "
                "bytes, batch matching, k/v sharing heads and length, Hq a multiple of Hkv)",
                detail::context(name, {q_in, k, v}));
  if (!rows_packed(k) || !rows_packed(v))
    throw Error(ErrorCode::InvalidArgument, "a q8_0 KV cache's rows must be packed (each head's rows contiguous)",
                detail::context(name, {q_in, k, v}));
  const Tensor q = q_in.contiguous();
  Tensor out = detail::empty_like(q, Shape{qs[0], qs[1], qs[2], dv}, q.dtype());
  if (out.numel() == 0) return out;
  const float sc = scale.value_or(1.0f / std::sqrt(static_cast<float>(qs[3] > 0 ? qs[3] : 1)));
  detail::launch<rt::OpKind::Attention>(name, {q, k, v}, {out}, [=](auto& in, auto& o) {
    rt::AttentionArgs a{in[0], in[1], in[2], o[0], sc, causal, align};
    a.window = window;
    a.softcap = softcap;
    a.kv_q8_0 = true;
    return a;
  });
  return out;
}

}  // namespace torsh::ops
