#include "torsh/core/shape.hpp"

#include <sstream>

#include "torsh/core/error.hpp"

namespace torsh {

Shape::Shape(std::initializer_list<std::int64_t> dims) : Shape(DimVec(dims)) {}

Shape::Shape(const std::vector<std::int64_t>& dims) : Shape(DimVec(dims)) {}

void throw_rank_exceeded(std::size_t rank) {
  throw Error(
      ErrorCode::InvalidArgument,
      "tensors have at most " + std::to_string(kMaxRank) + " dimensions; this one would have " + std::to_string(rank),
      {.op = "shape"}, {"Merge adjacent dimensions with reshape() first"});
}

Shape::Shape(const DimVec& dims) : dims_(dims) {
  // numel() multiplies without checks (it runs on every op), so a shape whose
  // element count does not fit in int64 is refused here, once. Zeros count as
  // 1: numel() and contiguous_strides() multiply the sizes before a 0 as well.
  std::int64_t n = 1;
  bool overflow = false;
  for (auto d : dims_) {
    if (d < 0)
      throw Error(ErrorCode::InvalidArgument, "shape " + to_string() + " has a negative dimension", {.op = "shape"},
                  {"Use sizes >= 0; a size of 0 makes an empty tensor"});
    overflow |= __builtin_mul_overflow(n, d > 0 ? d : 1, &n);
  }
  if (overflow)
    throw Error(ErrorCode::InvalidArgument, "the sizes of shape " + to_string() + " multiply past 2^63 - 1",
                {.op = "shape", .shapes = {to_string()}}, {"Use smaller dimensions"});
}

std::int64_t Shape::dim(std::int64_t axis, const char* op) const {
  return dims_[normalize_axis(axis, dims_.size(), op)];
}

std::string Shape::to_string() const {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < dims_.size(); ++i) os << (i ? ", " : "") << dims_[i];
  os << ']';
  return os.str();
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.ndim());
  std::int64_t acc = 1;
  for (std::size_t i = s.ndim(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i] > 0 ? s[i] : 1;
  }
  return st;
}

bool is_contiguous(const Shape& s, const Strides& st) {
  // An empty tensor holds no elements to be out of place (and its strides,
  // from contiguous_strides, count a zero dimension as 1).
  for (std::size_t i = 0; i < s.ndim(); ++i)
    if (s[i] == 0) return true;
  std::int64_t acc = 1;
  for (std::size_t i = s.ndim(); i-- > 0;) {
    if (s[i] != 1 && st[i] != acc) return false;
    acc *= s[i];
  }
  return true;
}

std::string strides_to_string(const Strides& st) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < st.size(); ++i) os << (i ? ", " : "") << st[i];
  os << ']';
  return os.str();
}

std::size_t normalize_axis(std::int64_t axis, std::size_t ndim, const char* op) {
  const auto n = static_cast<std::int64_t>(ndim);
  const std::int64_t a = axis < 0 ? axis + n : axis;
  if (a < 0 || a >= n)
    throw Error(
        ErrorCode::OutOfRange,
        "axis " + std::to_string(axis) + " is out of range for a tensor with " + std::to_string(ndim) + " dimension(s)",
        {.op = op}, {"Use an axis in [-" + std::to_string(n) + ", " + std::to_string(n) + ")"});
  return static_cast<std::size_t>(a);
}

}  // namespace torsh
