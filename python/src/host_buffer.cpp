// Zero-copy import: host memory owned by a Python object (a NumPy array, a
// PyTorch CPU tensor, a DLPack capsule) becomes the storage of a CPU tensor.
//
// The public API allocates every buffer itself, so this builds the buffer
// handle from the runtime's internal state (runtime/registry_internal.hpp),
// the same way plugins reach the runtime: a buffer state whose `impl` is the
// wrapper, released like any buffer when its last tensor goes.
#include <nanobind/ndarray.h>

#include <algorithm>
#include <mutex>

#include "common.hpp"

#include "runtime/registry_internal.hpp"

namespace torsh::py {
namespace {

class HostArrayBuffer final : public rt::BufferImpl {
 public:
  // The array handle releases its producer with the GIL taken (or not at all
  // during interpreter shutdown), so the last tensor may die on any thread.
  HostArrayBuffer(void* data, std::size_t bytes, nb::ndarray<nb::ro> owner)
      : data_(data), size_(bytes), owner_(std::move(owner)) {}

  std::size_t size() const override { return size_; }
  void* host_ptr() const override { return data_; }

 private:
  void* data_;
  std::size_t size_;
  nb::ndarray<nb::ro> owner_;
};

// A runtime that keeps a live-memory counter per backend decrements it when a
// buffer is released, so an external buffer must be counted when it is made;
// a runtime whose pool does its own accounting (it never sees this memory)
// has no such counter.
template <class State>
void count_external(State& backend, std::size_t bytes) {
  if constexpr (requires { backend.mem->stats.live_bytes; }) {
    std::lock_guard lk(backend.mem->mu);
    auto& s = backend.mem->stats;
    s.live_buffers++;
    s.live_bytes += bytes;
    s.peak_bytes = std::max(s.peak_bytes, s.live_bytes);
  }
}

}  // namespace

Tensor wrap_host_memory(void* base, std::size_t bytes, DType dtype, const Shape& shape, const Strides& strides,
                        std::int64_t offset, nb::ndarray<nb::ro> keep) {
  Backend cpu = cpu_backend();
  auto backend = detail::backend_state(cpu);
  auto st = std::make_shared<detail::BufferState>();
  st->backend = backend;
  st->impl = std::make_unique<HostArrayBuffer>(base, bytes, std::move(keep));
  st->size = bytes;
  count_external(*backend, bytes);
  Buffer buffer;
  detail::Access::state(buffer) = std::move(st);
  return Tensor(std::move(buffer), dtype, shape, strides, offset);
}

}  // namespace torsh::py
