#pragma once
// A typed, shaped, strided view of a Buffer. Views share the buffer.
#include <cstdint>
#include <memory>
#include <vector>

#include "torsh/core/dtype.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/runtime/backend.hpp"

namespace torsh {
namespace rt {
struct TensorArg;  // torsh/backend/op_args.hpp
}  // namespace rt

class Tensor {
 public:
  Tensor() = default;
  // Wraps `buffer` (offset and strides in elements); checks that the view fits.
  Tensor(Buffer buffer, DType dtype, Shape shape, Strides strides, std::int64_t offset = 0);

  // A contiguous CPU tensor over host memory the library does not own (a
  // memory-mapped file, another library's array): no copy. `owner` is kept
  // alive while any view of the buffer lives; the memory must stay valid and
  // writable-or-never-written for that long (ops may write into it in place).
  static Tensor wrap_host(void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner);

  bool defined() const { return buffer_.valid(); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  std::size_t ndim() const { return shape_.ndim(); }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }
  bool is_contiguous() const { return torsh::is_contiguous(shape_, strides_); }
  Device device() const { return buffer_.device(); }
  const Buffer& buffer() const { return buffer_; }
  Backend backend() const;       // the backend handle of the device holding the data
  std::string describe() const;  // "f32[2, 3] on cpu:0"

  // Views (no copy).
  Tensor reshape(const std::vector<std::int64_t>& dims) const;  // needs a contiguous tensor; -1 infers one dim
  Tensor transpose(std::int64_t d0, std::int64_t d1) const;
  Tensor permute(const std::vector<std::int64_t>& order) const;
  Tensor slice(std::int64_t axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  Tensor broadcast_to(const Shape& shape) const;
  Tensor unsqueeze(std::int64_t axis) const;

  // Copies.
  Tensor contiguous() const;
  Tensor to(Backend& target) const;
  Tensor cast(DType dtype) const;

  // Copies src's elements into this tensor (any devices, strides); shape and dtype must match.
  void copy_(const Tensor& src);

  // Host helpers: element data in logical (row-major) order.
  void copy_from_host(const void* data, std::size_t bytes);  // contiguous tensors only
  std::vector<unsigned char> to_host_bytes() const;
  std::vector<float> to_vector() const;  // converts any dtype to f32
  template <class T>
  std::vector<T> to_host() const {
    auto bytes = to_host_bytes();
    std::vector<T> v(bytes.size() / sizeof(T));
    std::copy(bytes.data(), bytes.data() + v.size() * sizeof(T), reinterpret_cast<unsigned char*>(v.data()));
    return v;
  }

  rt::TensorArg arg() const;  // for kernels; throws InvalidState when the buffer was freed

 private:
  friend struct detail::Access;
  // A new contiguous tensor over a buffer allocated for exactly `shape`:
  // nothing to check (every op's output is made this way).
  struct Fresh {};
  Tensor(Fresh, Buffer&& buffer, DType dtype, const Shape& shape);

  Buffer buffer_;
  DType dtype_ = DType::F32;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
};

}  // namespace torsh
