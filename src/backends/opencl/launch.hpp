#pragma once
// The one launch idiom of the OpenCL backend, used by every op file:
//
//   launch(stream, dev.kernel("name"), global, local, arg0, arg1, ...);
//
// Arguments are set in order with clSetKernelArg (cl_mem buffers, cl_long,
// cl_int, cl_float, cl_double and the kernels/meta.h structs, by value), the kernel is
// enqueued on the stream's queue and the queue flushed. While a graph capture
// records the op, the same launch is also recorded (graph.hpp).
#include <array>
#include <cstdint>
#include <type_traits>

#include "backends/gpu/kernel_set.hpp"
#include "device.hpp"
#include "graph.hpp"
#include "program.hpp"

namespace torsh::opencl {

// A global or local size. A local size with dims == 0 leaves the work-group
// size to the driver (a NULL local_work_size).
struct NDRange {
  cl_uint dims = 1;
  std::array<std::size_t, 3> size{1, 1, 1};
};
inline NDRange range(std::size_t x) { return {1, {x, 1, 1}}; }
inline NDRange range(std::size_t x, std::size_t y, std::size_t z) { return {3, {x, y, z}}; }

template <class T>
concept KernelArg = std::is_same_v<T, cl_mem> || std::is_same_v<T, cl_long> || std::is_same_v<T, cl_int> ||
    std::is_same_v<T, cl_float> || std::is_same_v<T, cl_double> || std::is_same_v<T, StridedMeta> ||
    std::is_same_v<T, MatmulMeta> || std::is_same_v<T, AttentionMeta> || std::is_same_v<T, BatchNormMeta> ||
    std::is_same_v<T, Conv2dMeta> || std::is_same_v<T, Pool2dMeta>;

// Sets `args` on k, enqueues it and, during a capture, records it.
void launch_args(OpenClStream& s, const Kernel& k, const NDRange& global, const NDRange& local,
                 std::span<const ArgValue> args);

template <KernelArg... Args>
void launch(OpenClStream& s, const Kernel& k, const NDRange& global, const NDRange& local, const Args&... args) {
  const ArgValue values[] = {{sizeof(Args), &args}...};
  launch_args(s, k, global, local, values);
}

// An op file's kernel as a kernel-table entry: runs Fn on the stream's queue.
template <rt::OpKind K, void (*Fn)(OpenClStream&, const rt::ArgsOf<K>&)>
void entry(rt::DeviceImpl&, rt::StreamImpl& s, const rt::ArgsOf<K>& a) {
  Fn(stream_of(s), a);
}

// Global and local size for the grid-stride kernels (binary, copy): enough
// work-groups to fill the device, each item looping over the rest. The
// work-group size is the device's preferred one, or the tuned one with
// auto-tuning on (tuning.hpp).
std::pair<NDRange, NDRange> grid_1d(OpenClDevice& dev, const Kernel& k, std::int64_t n);
// The same grid for a given work-group size; 0 leaves it to the driver.
std::pair<NDRange, NDRange> grid_1d_with(OpenClDevice& dev, std::int64_t n, std::size_t local);

// A cl_mem whose byte 0 is a tensor's first element, for kernels that take no
// offset: the buffer itself at offset 0, a sub-buffer at aligned offsets, else a
// staged copy on the stream (outputs are copied back by commit()).
class ElementView {
 public:
  // What the kernel does with the `bytes`: a staged copy is filled from the
  // tensor unless the kernel overwrites all of them, and copied back unless it only reads.
  enum class Access { Read, Overwrite, ReadWrite };
  ElementView(OpenClStream& s, const rt::TensorArg& t, std::size_t bytes, Access access);
  ElementView(OpenClStream& s, const rt::TensorArg& t, std::size_t bytes, bool output)
      : ElementView(s, t, bytes, output ? Access::Overwrite : Access::Read) {}
  ~ElementView();
  ElementView(const ElementView&) = delete;
  ElementView& operator=(const ElementView&) = delete;
  cl_mem mem() const { return mem_; }
  void commit();  // after the kernel: copies a staged output back into the tensor

 private:
  void copy(cl_mem src, cl_mem dst, std::size_t src_offset, std::size_t dst_offset, const char* what);

  OpenClStream& s_;
  cl_mem base_;
  std::size_t origin_, bytes_;
  Access access_;
  cl_mem mem_ = nullptr;
  cl_mem owned_ = nullptr;  // sub-buffer or staging buffer
  bool staged_ = false;
};

}  // namespace torsh::opencl
