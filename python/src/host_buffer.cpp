// Zero-copy import: host memory owned by a Python object (a NumPy array, a
// PyTorch CPU tensor, a DLPack capsule) becomes the storage of a CPU tensor.
#include <nanobind/ndarray.h>

#include <memory>

#include "common.hpp"

namespace torsh::py {

Tensor wrap_host_memory(void* base, std::size_t bytes, DType dtype, const Shape& shape, const Strides& strides,
                        std::int64_t offset, nb::ndarray<nb::ro> keep) {
  // The array handle releases its producer with the GIL taken (or not at all
  // during interpreter shutdown), so the last tensor may die on any thread.
  auto owner = std::make_shared<nb::ndarray<nb::ro>>(std::move(keep));
  // wrap_host makes contiguous tensors only: the buffer is the whole byte span
  // the array reaches, viewed with the array's strides.
  const Tensor span = Tensor::wrap_host(base, DType::U8, Shape{static_cast<std::int64_t>(bytes)}, std::move(owner));
  return Tensor(span.buffer(), dtype, shape, strides, offset);
}

}  // namespace torsh::py
