// Tensors over host memory owned elsewhere (Tensor::wrap_host): the buffer's
// implementation holds the owner, and the buffer is released like any other
// when its last view goes, which drops the owner.
#include <utility>

#include "registry_internal.hpp"
#include "torsh/core/error.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh {
namespace {

class ForeignHostBuffer final : public rt::BufferImpl {
 public:
  ForeignHostBuffer(void* data, std::size_t bytes, std::shared_ptr<const void> owner)
      : data_(data), size_(bytes), owner_(std::move(owner)) {}
  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return data_; }

 private:
  void* data_;
  std::size_t size_;
  std::shared_ptr<const void> owner_;
};

}  // namespace

Tensor Tensor::wrap_host(void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner) {
  const std::int64_t n = shape.numel();
  if (!data && n > 0)
    throw Error(ErrorCode::InvalidArgument, "wrap_host needs a non-null address for " + shape.to_string(),
                {.op = "wrap_host", .shapes = {shape.to_string()}, .dtypes = {std::string(dtype_name(dtype))}});
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
  Backend cpu = Backend::create(BackendType::Cpu);
  auto st = std::make_shared<detail::BufferState>();
  st->backend = detail::backend_state(cpu);
  st->impl = std::make_unique<ForeignHostBuffer>(data, bytes, std::move(owner));
  st->size = bytes;
  Buffer buffer;
  detail::Access::state(buffer) = std::move(st);
  return Tensor(std::move(buffer), dtype, shape, contiguous_strides(shape), 0);
}

}  // namespace torsh
