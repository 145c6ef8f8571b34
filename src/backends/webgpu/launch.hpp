#pragma once
// The one launch idiom of the WebGPU backend, used by every op file:
//
//   Launch l(dev);
//   l.tensor(a.x).tensor(a.out);          // bindings, in the kernel's order
//   l.strided(a.out.shape, {&a.x, &a.out});  // P[0 .. STRIDED_END): prelude.wgsl's layout
//   l.param(op).param(dtype);             // the kernel's own parameters
//   l.run("unary", "unary_strided", n);   // one invocation per item, 256 per group
//
// Each tensor is bound whole, or through a window holding its elements when
// its buffer is larger than maxStorageBufferBindingSize; the element offsets
// the kernel sees are relative to what is bound.
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "backends/gpu/kernel_set.hpp"
#include "device.hpp"

namespace torsh::webgpu {

class Launch {
 public:
  explicit Launch(WebGpuDevice& dev) : dev_(dev) {}
  // Binds t (its buffer, or the window over its elements); remembers its element offset there.
  Launch& tensor(const rt::TensorArg& t);
  // StridedMeta for `shape` over tensors bound earlier (by their args), in P[0 .. STRIDED_END).
  Launch& strided(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors);
  Launch& param(std::uint32_t v) {
    params_.push_back(v);
    return *this;
  }
  Launch& param(std::int64_t v) { return param(static_cast<std::uint32_t>(v)); }
  Launch& param(int v) { return param(static_cast<std::uint32_t>(v)); }
  Launch& param(float v);
  // The element offset of the i-th bound tensor within its binding.
  std::uint32_t offset(std::size_t i) const { return offsets_.at(i); }
  // Runs entry over `items` invocations in work-groups of `group` (a 2-D grid past 65535 groups).
  void run(const char* module, const char* entry, std::int64_t items, std::uint32_t group = 256);
  // Runs entry over exactly groups_x * groups_y * groups_z work-groups.
  void run_groups(const char* module, const char* entry, std::uint32_t groups_x, std::uint32_t groups_y = 1,
                  std::uint32_t groups_z = 1);
  // Runs entry over `groups` work-groups, as rows of at most 65535 (prelude.wgsl's group_index).
  void run_rows(const char* module, const char* entry, std::int64_t groups);

 private:
  WebGpuDevice& dev_;
  std::vector<Binding> bindings_;
  std::vector<std::uint32_t> offsets_;
  std::vector<const rt::TensorArg*> args_;
  std::vector<std::uint32_t> params_;
};

// Bytes of t's buffer from its first element to one past its last ([first, end); strides are not negative).
std::pair<std::uint64_t, std::uint64_t> span_bytes(const rt::TensorArg& t);

// Whether a tensor fits the kernels' 32-bit indexing and one binding: every
// element index, stride and offset below 2^31, and its elements within
// maxStorageBufferBindingSize of one another.
bool fits_binding(const WebGpuDevice& dev, const rt::TensorArg& t);
inline bool fits(const rt::DeviceImpl& d, std::initializer_list<const rt::TensorArg*> ts) {
  for (const rt::TensorArg* t : ts)
    if (t->present() && !fits_binding(static_cast<const WebGpuDevice&>(d), *t)) return false;
  return true;
}
inline constexpr const char* kFitsNote = "elements indexable in 32 bits and within one storage binding";
inline constexpr const char* kLoopFitsNote =
    "elements indexable in 32 bits and within one storage binding, loops within the device's budget";
// Whether one invocation's loop iterations (the op's estimate) stay within
// the device's budget (WebGpuDevice::max_loop_trip).
inline bool loops_fit(const rt::DeviceImpl& d, std::int64_t iterations) {
  return iterations <= static_cast<const WebGpuDevice&>(d).max_loop_trip();
}
// Passes of a work-group of `group` threads striding over n values.
inline std::int64_t strided(std::int64_t n, std::int64_t group) { return (n + group - 1) / group; }

// An op file's kernel as a kernel-table entry.
template <rt::OpKind K, void (*Fn)(WebGpuDevice&, const rt::ArgsOf<K>&)>
void entry(rt::DeviceImpl& d, rt::StreamImpl&, const rt::ArgsOf<K>& a) {
  Fn(static_cast<WebGpuDevice&>(d), a);
}

}  // namespace torsh::webgpu
