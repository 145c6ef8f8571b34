#include "torsh/runtime/tensor.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "registry_internal.hpp"

namespace torsh {

namespace {
ErrorContext ctx_of(const char* op, const Tensor& t) {
  return {.op = op,
          .shapes = {t.shape().to_string()},
          .dtypes = {std::string(dtype_name(t.dtype()))},
          .device = t.device().to_string()};
}

// "[-1, 0]": a requested target, which may hold the -1 a Shape cannot.
std::string sizes_text(const std::vector<std::int64_t>& sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}
}  // namespace

Tensor::Tensor(Buffer buffer, DType dtype, Shape shape, Strides strides, std::int64_t offset)
    : buffer_(std::move(buffer)),
      dtype_(dtype),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset) {
  if (strides_.size() != shape_.ndim())
    throw Error(ErrorCode::InvalidArgument,
                "strides " + strides_to_string(strides_) + " do not match shape " + shape_.to_string(),
                {.op = "Tensor"});
  if (shape_.ndim() > rt::kMaxDims)
    throw Error(ErrorCode::InvalidArgument, "tensors have at most " + std::to_string(rt::kMaxDims) + " dimensions",
                {.op = "Tensor", .shapes = {shape_.to_string()}});
  if (offset_ < 0) throw Error(ErrorCode::InvalidArgument, "negative offset", {.op = "Tensor"});
  if (numel() == 0) return;
  // Every step is checked: strides come from callers (DLPack producers, views
  // built by hand), and an overflowing product must not pass for a small span.
  std::int64_t lo = offset_, hi = offset_;
  bool overflow = false;
  // The negative and positive parts go to lo and hi by value: picking the one
  // to add to by reference made GCC keep both in memory, and the load after
  // each store waited on it (a sixth of a small op's overhead).
  for (std::size_t i = 0; i < shape_.ndim(); ++i) {
    std::int64_t span = 0;
    overflow |= __builtin_mul_overflow(shape_[i] - 1, strides_[i], &span);
    const std::int64_t down = span < 0 ? span : 0;
    overflow |= __builtin_add_overflow(lo, down, &lo);
    overflow |= __builtin_add_overflow(hi, span - down, &hi);
  }
  const auto esize = static_cast<std::int64_t>(dtype_size(dtype_));
  const auto bytes = static_cast<std::int64_t>(buffer_.size());
  // hi >= bytes / esize, tested without a division (this runs for every tensor
  // made); hi >= bytes first keeps the multiply from overflowing.
  if (overflow || lo < 0 || hi >= bytes || (hi + 1) * esize > bytes)
    throw Error(ErrorCode::OutOfRange,
                "view " + shape_.to_string() + " strides " + strides_to_string(strides_) + " offset " +
                    std::to_string(offset_) +
                    (overflow ? " reaches beyond any addressable element"
                              : " reaches element " + std::to_string(lo < 0 ? lo : hi)) +
                    " of a buffer holding " + std::to_string(bytes / esize),
                ctx_of("Tensor", *this), {"Strides and offset count elements; keep the view inside the buffer"});
}

Tensor::Tensor(Fresh, Buffer&& buffer, DType dtype, const Shape& shape)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(shape), strides_(contiguous_strides(shape)) {}

Tensor detail::Access::fresh_tensor(Buffer&& b, DType dtype, const Shape& shape) {
  return Tensor(Tensor::Fresh{}, std::move(b), dtype, shape);
}

Backend Tensor::backend() const { return detail::backend_from_state(detail::buffer_backend(buffer_)); }

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_.to_string() + " on " + device().to_string();
}

rt::TensorArg Tensor::arg() const {
  // Kernels address the pool segment; the buffer's place in it is a whole number
  // of elements because blocks start at multiples of the pool's rounding.
  // The state is read directly (Buffer::live() is a call; arg() runs for
  // every operand of every op), and live() only reports a dead buffer.
  const auto& sp = detail::Access::state(buffer_);
  const detail::BufferState& st = sp && !sp->freed ? *sp : buffer_.live();
  rt::TensorArg a;
  a.buffer = &st.raw();
  a.dtype = dtype_;
  a.shape = shape_;
  a.strides = strides_;
  const std::size_t base = st.offset();
  // Element sizes are powers of two: a shift, not a division, on every op.
  a.offset = offset_ + static_cast<std::int64_t>(base >> std::countr_zero(dtype_size(dtype_)));
  return a;
}

Tensor Tensor::reshape(const std::vector<std::int64_t>& target) const {
  std::vector<std::int64_t> dims = target;
  if (dims.size() > kMaxRank)
    throw Error(ErrorCode::InvalidArgument,
                "the target has " + std::to_string(dims.size()) + " dimensions; tensors have at most " +
                    std::to_string(kMaxRank),
                ctx_of("reshape", *this), {"Merge adjacent dimensions of the target"});
  // The product of the known sizes, checked: a huge target must be refused, not wrap around to a match.
  std::int64_t known = 1;
  bool overflow = false, has_zero = false;
  int infer = -1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (infer >= 0)
        throw Error(ErrorCode::InvalidArgument, "reshape allows one -1 dimension", ctx_of("reshape", *this));
      infer = static_cast<int>(i);
    } else if (dims[i] < 0) {
      throw Error(ErrorCode::InvalidArgument, "size " + std::to_string(dims[i]) + " in the target",
                  ctx_of("reshape", *this), {"Use sizes >= 0, and -1 for the one size to infer"});
    } else {
      overflow |= __builtin_mul_overflow(known, dims[i], &known);
      has_zero |= dims[i] == 0;
    }
  }
  if (has_zero) {
    known = 0;
    overflow = false;
  }
  if (overflow && infer < 0)
    throw Error(ErrorCode::ShapeMismatch,
                "cannot reshape " + std::to_string(numel()) + " elements to " + sizes_text(target) +
                    ": that is more than 2^63 - 1 elements",
                ctx_of("reshape", *this));
  if (infer >= 0) {
    // With a 0 among the known sizes any size fits the -1, so it cannot be inferred.
    if (overflow || known == 0 || numel() % known)
      throw Error(ErrorCode::ShapeMismatch,
                  "cannot infer the -1 in " + sizes_text(target) + ": " + std::to_string(numel()) + " elements " +
                      (known == 0 ? std::string("do not determine it when another size is 0")
                                  : "are not a multiple of " +
                                        (overflow ? std::string("the other sizes' product") : std::to_string(known))),
                  ctx_of("reshape", *this), {"Give every size explicitly, or make the known sizes divide numel()"});
    dims[static_cast<std::size_t>(infer)] = numel() / known;
  }
  Shape s(dims);
  if (s.numel() != numel())
    throw Error(
        ErrorCode::ShapeMismatch,
        "cannot reshape " + shape_.to_string() + " (" + std::to_string(numel()) + " elements) to " + s.to_string(),
        ctx_of("reshape", *this));
  if (!is_contiguous())
    throw Error(ErrorCode::InvalidArgument, "reshape needs a contiguous tensor", ctx_of("reshape", *this),
                {"Call contiguous() first"});
  return Tensor(buffer_, dtype_, s, contiguous_strides(s), offset_);
}

Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const {
  const auto a = normalize_axis(d0, ndim(), "transpose"), b = normalize_axis(d1, ndim(), "transpose");
  Shape s = shape_;
  Strides st = strides_;
  std::swap(s[a], s[b]);
  std::swap(st[a], st[b]);
  return Tensor(buffer_, dtype_, s, st, offset_);
}

Tensor Tensor::permute(const std::vector<std::int64_t>& order) const {
  if (order.size() != ndim())
    throw Error(ErrorCode::InvalidArgument, "permute needs " + std::to_string(ndim()) + " axes",
                ctx_of("permute", *this));
  std::vector<bool> seen(ndim());
  std::vector<std::int64_t> dims(ndim());
  Strides st(ndim());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto ax = normalize_axis(order[i], ndim(), "permute");
    if (seen[ax]) throw Error(ErrorCode::InvalidArgument, "permute repeats an axis", ctx_of("permute", *this));
    seen[ax] = true;
    dims[i] = shape_[ax];
    st[i] = strides_[ax];
  }
  return Tensor(buffer_, dtype_, Shape(dims), st, offset_);
}

Tensor Tensor::slice(std::int64_t axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  const auto ax = normalize_axis(axis, ndim(), "slice");
  if (step <= 0) throw Error(ErrorCode::InvalidArgument, "slice step must be positive", ctx_of("slice", *this));
  const std::int64_t n = shape_[ax];
  auto clampi = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
  start = clampi(start);
  stop = clampi(stop);
  const std::int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  Shape s = shape_;
  Strides st = strides_;
  s[ax] = len;
  st[ax] = strides_[ax] * step;
  return Tensor(buffer_, dtype_, s, st, offset_ + (len ? start * strides_[ax] : 0));
}

Tensor Tensor::broadcast_to(const Shape& target) const {
  if (target.ndim() < ndim())
    throw Error(ErrorCode::ShapeMismatch, "cannot broadcast " + shape_.to_string() + " to " + target.to_string(),
                ctx_of("broadcast_to", *this));
  Strides st(target.ndim(), 0);
  const std::size_t lead = target.ndim() - ndim();
  for (std::size_t i = 0; i < ndim(); ++i) {
    if (shape_[i] == target[lead + i])
      st[lead + i] = strides_[i];
    else if (shape_[i] == 1)
      st[lead + i] = 0;
    else
      throw Error(ErrorCode::ShapeMismatch, "cannot broadcast " + shape_.to_string() + " to " + target.to_string(),
                  ctx_of("broadcast_to", *this));
  }
  return Tensor(buffer_, dtype_, target, st, offset_);
}

Tensor Tensor::unsqueeze(std::int64_t axis) const {
  if (ndim() == kMaxRank)
    throw Error(ErrorCode::InvalidArgument, "tensors have at most " + std::to_string(kMaxRank) + " dimensions",
                ctx_of("unsqueeze", *this), {"Merge adjacent dimensions with reshape() first"});
  const auto ax = normalize_axis(axis, ndim() + 1, "unsqueeze");
  std::vector<std::int64_t> dims = shape_.dims();
  Strides st = strides_;
  dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(ax), 1);
  st.insert(st.begin() + static_cast<std::ptrdiff_t>(ax), ax < strides_.size() ? strides_[ax] * shape_[ax] : 1);
  return Tensor(buffer_, dtype_, Shape(dims), st, offset_);
}

Tensor Tensor::to(Backend& target) const {
  const Tensor src = contiguous();
  Tensor out = target.empty(shape_, dtype_);
  if (nbytes())
    const_cast<Buffer&>(out.buffer())
        .copy_from(src.buffer(), nbytes(), static_cast<std::size_t>(src.offset()) * dtype_size(dtype_), 0);
  return out;
}

void Tensor::copy_from_host(const void* data, std::size_t bytes) {
  if (!is_contiguous())
    throw Error(ErrorCode::InvalidArgument, "copy_from_host needs a contiguous tensor",
                ctx_of("copy_from_host", *this));
  if (bytes != nbytes())
    throw Error(ErrorCode::ShapeMismatch,
                "got " + std::to_string(bytes) + " bytes for a tensor of " + std::to_string(nbytes()),
                ctx_of("copy_from_host", *this), {"Pass exactly numel() * dtype size bytes"});
  buffer_.copy_from_host(data, bytes, static_cast<std::size_t>(offset_) * dtype_size(dtype_));
}

std::vector<unsigned char> Tensor::to_host_bytes() const {
  const Tensor c = contiguous();
  std::vector<unsigned char> out(nbytes());
  if (!out.empty())
    c.buffer().copy_to_host(out.data(), out.size(), static_cast<std::size_t>(c.offset()) * dtype_size(dtype_));
  return out;
}

std::vector<float> Tensor::to_vector() const {
  auto bytes = to_host_bytes();
  std::vector<float> out(static_cast<std::size_t>(numel()));
  convert(bytes.data(), dtype_, out.data(), DType::F32, out.size());
  return out;
}

}  // namespace torsh
