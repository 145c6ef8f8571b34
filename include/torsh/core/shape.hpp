#pragma once
// Tensor shapes and element strides.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "torsh/core/small_vector.hpp"

namespace torsh {

// Tensors have at most this many dimensions (what kernels index).
inline constexpr std::size_t kMaxDims = 8;

using Strides = DimVec;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(const std::vector<std::int64_t>& dims);
  explicit Shape(const DimVec& dims);

  std::size_t ndim() const { return dims_.size(); }
  std::int64_t operator[](std::size_t i) const { return dims_[i]; }
  std::int64_t& operator[](std::size_t i) { return dims_[i]; }
  // Negative axes count from the back; throws OutOfRange naming `op`.
  std::int64_t dim(std::int64_t axis, const char* op = "shape") const;
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : dims_) n *= d;
    return n;
  }
  const DimVec& dims() const { return dims_; }
  std::string to_string() const;
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

 private:
  DimVec dims_;
};

// Row-major strides (elements).
Strides contiguous_strides(const Shape& s);
bool is_contiguous(const Shape& s, const Strides& st);
std::string strides_to_string(const Strides& st);
// Normalises a possibly negative axis against ndim; throws OutOfRange naming `op`.
std::size_t normalize_axis(std::int64_t axis, std::size_t ndim, const char* op);

}  // namespace torsh
