// Rotary position embeddings: the cos/sin tables and their application.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dispatch.hpp"

namespace torsh::ops {

namespace {
// The device tensors come first: a table the device cannot hold is an
// OutOfMemory error of this op, with the pool's limit, not a failed host allocation.
Tensor rope_table(Backend& backend, std::int64_t max_pos, std::int64_t half) {
  const char* name = "rope_cache";
  std::int64_t n = 0;
  if (__builtin_mul_overflow(max_pos, half, &n) || n > std::numeric_limits<std::int64_t>::max() / 4)
    throw Error(ErrorCode::OutOfRange,
                "tables of " + std::to_string(max_pos) + " x " + std::to_string(half) + " f32 exceed 2^63 - 1 bytes",
                {.op = name, .dtypes = {"f32"}, .device = backend.device().to_string()}, {"Use a smaller max_pos"});
  const Shape shape{max_pos, half};
  try {
    return backend.empty(shape, DType::F32);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::OutOfMemory) throw;
    throw Error(
        ErrorCode::OutOfMemory,
        "two tables of " + shape.to_string() + " f32 (" + std::to_string(n * 4) + " bytes each): " + e.message(),
        {.op = name, .shapes = {shape.to_string()}, .dtypes = {"f32"}, .device = backend.device().to_string()},
        {"Use a smaller max_pos: each table holds max_pos * rot_dim / 2 floats"});
  }
}
}  // namespace

std::pair<Tensor, Tensor> rope_cache(Backend& backend, std::int64_t max_pos, std::int64_t rot_dim, float base,
                                     std::span<const float> freq_factors) {
  if (max_pos <= 0 || rot_dim <= 0 || rot_dim % 2 || !(base > 0.0f))
    throw Error(ErrorCode::InvalidArgument, "rope_cache needs max_pos > 0, an even rot_dim > 0 and base > 0",
                {.op = "rope_cache"});
  const std::int64_t half = rot_dim / 2;
  if (!freq_factors.empty()) {
    if (static_cast<std::int64_t>(freq_factors.size()) != half)
      throw Error(ErrorCode::ShapeMismatch,
                  std::to_string(freq_factors.size()) + " frequency factors for " + std::to_string(half) +
                      " rotated pairs (rot_dim " + std::to_string(rot_dim) + ")",
                  {.op = "rope_cache"}, {"Pass rot_dim / 2 factors, or none"});
    for (float f : freq_factors)
      if (!(f > 0.0f) || !std::isfinite(f))
        throw Error(ErrorCode::InvalidArgument,
                    "frequency factor " + std::to_string(f) + ": each must be finite and > 0 (it divides an angle)",
                    {.op = "rope_cache"});
  }
  Tensor cos_t = rope_table(backend, max_pos, half), sin_t = rope_table(backend, max_pos, half);
  // Filled a block of rows at a time: the host holds a block, not a second copy of the tables.
  const std::int64_t rows = std::max<std::int64_t>(1, (std::int64_t{1} << 16) / half);
  std::vector<float> c(static_cast<std::size_t>(std::min(rows, max_pos) * half)), s(c.size());
  for (std::int64_t p0 = 0; p0 < max_pos; p0 += rows) {
    const std::int64_t p1 = std::min(max_pos, p0 + rows);
    for (std::int64_t p = p0; p < p1; ++p)
      for (std::int64_t i = 0; i < half; ++i) {
        // Angles in double so long contexts keep their precision.
        double theta = static_cast<double>(p) * std::pow(static_cast<double>(base), -2.0 * i / rot_dim);
        if (!freq_factors.empty()) theta /= freq_factors[static_cast<std::size_t>(i)];
        c[(p - p0) * half + i] = static_cast<float>(std::cos(theta));
        s[(p - p0) * half + i] = static_cast<float>(std::sin(theta));
      }
    const auto bytes = static_cast<std::size_t>((p1 - p0) * half) * sizeof(float);
    cos_t.slice(0, p0, p1).copy_from_host(c.data(), bytes);
    sin_t.slice(0, p0, p1).copy_from_host(s.data(), bytes);
  }
  return {cos_t, sin_t};
}

Tensor rope(const Tensor& x_in, const Tensor& cos, const Tensor& sin, RopeStyle style, std::int64_t pos0,
            std::int64_t rot_dim) {
  const char* name = "rope";
  detail::check_same_device(name, {x_in, cos, sin});
  if (!is_floating(x_in.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "rope needs a floating input", detail::context(name, {x_in}));
  if (x_in.ndim() != 4)
    throw Error(ErrorCode::ShapeMismatch, "rope takes x as [batch, seq, heads, head_dim]",
                detail::context(name, {x_in}));
  const std::int64_t seq = x_in.shape()[1], hd = x_in.shape()[3];
  if (rot_dim == 0) rot_dim = hd;
  if (rot_dim <= 0 || rot_dim > hd || rot_dim % 2)
    throw Error(ErrorCode::InvalidArgument, "rot_dim must be even and in (0, head_dim]", detail::context(name, {x_in}));
  if (cos.dtype() != DType::F32 || sin.dtype() != DType::F32)
    throw Error(ErrorCode::DTypeMismatch, "cos/sin tables must be f32 (see rope_cache)",
                detail::context(name, {x_in, cos, sin}));
  if (cos.ndim() != 2 || cos.shape() != sin.shape() || cos.shape()[1] != rot_dim / 2)
    throw Error(ErrorCode::ShapeMismatch, "cos/sin must both be [max_pos, rot_dim / 2]",
                detail::context(name, {x_in, cos, sin}));
  if (pos0 < 0 || pos0 + seq > cos.shape()[0])
    throw Error(ErrorCode::OutOfRange,
                "positions [" + std::to_string(pos0) + ", " + std::to_string(pos0 + seq) + ") exceed the table's " +
                    std::to_string(cos.shape()[0]),
                detail::context(name, {x_in, cos}), {"Build the tables with a larger max_pos"});
  const Tensor x = x_in.contiguous();
  Tensor out = detail::empty_like(x, x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  const Tensor cc = cos.contiguous(), sc = sin.contiguous();
  detail::launch<rt::OpKind::Rope>(name, {x, cc, sc}, {out}, [=](auto& in, auto& o) {
    return rt::RopeArgs{in[0], in[1], in[2], o[0], rot_dim, pos0, style == RopeStyle::NeoX};
  });
  return out;
}

}  // namespace torsh::ops
