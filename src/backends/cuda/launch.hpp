#pragma once
// The one launch idiom of the CUDA backend, used by every op file:
//
//   launch(stream, TORSH_CUDA_KERNEL(name), grid, block, arg0, arg1, ...);
//
// The kernel is launched on the stream with <<<>>> and the launch checked at
// once, so a bad configuration or a GPU the binary has no code for is reported
// naming the kernel and the device. Arguments must have the kernel's parameter
// types exactly (pointers may gain const): a `long` parameter given an `int`
// is a compile error, not a silent conversion. Included by .cu files only.
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "backends/gpu/kernel_set.hpp"
#include "device.hpp"
// After the torsh headers: the dialect's macros (KERNEL, GLOBAL, ...) must not reach them.
#include "backends/gpu/kernels/dialect.h"

namespace torsh::cuda {

template <class... Params>
struct KernelRef {
  void (*fn)(Params...);
  const char* name;
};
template <class... Params>
KernelRef<Params...> kernel_ref(void (*fn)(Params...), const char* name) {
  return {fn, name};
}
#define TORSH_CUDA_KERNEL(fn) ::torsh::cuda::kernel_ref(fn, #fn)

template <class Param, class Arg>
inline constexpr bool kExactArg = std::is_same_v<Param, Arg> || (std::is_pointer_v<Param> && std::is_pointer_v<Arg> &&
                                                                 std::is_convertible_v<Arg, Param>);

// Throws DeviceError naming the kernel when the launch just made failed.
void check_launch(CudaStream& s, const char* kernel);

// The caller holds a DeviceGuard for the stream's device (entry<> below does).
template <class... Params, class... Args>
void launch(CudaStream& s, KernelRef<Params...> k, dim3 grid, dim3 block, const Args&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
  static_assert((kExactArg<Params, Args> && ...), "kernel argument types must match the parameters");
  // A failure left behind by an earlier call (already reported) must not be blamed on this launch.
  (void)cudaGetLastError();
  k.fn<<<grid, block, 0, s.handle()>>>(args...);
  check_launch(s, k.name);
}

// An op file's kernel as a kernel-table entry: selects the stream's device
// for the calling thread (the runtime may call from any thread), then runs Fn.
template <rt::OpKind K, void (*Fn)(CudaStream&, const rt::ArgsOf<K>&)>
void entry(rt::DeviceImpl&, rt::StreamImpl& s, const rt::ArgsOf<K>& a) {
  CudaStream& cs = stream_of(s);
  DeviceGuard g(cs.device().ordinal(), cs.device().label());
  Fn(cs, a);
}

// Grid and block for the grid-stride kernels (binary, copy, fill): enough
// blocks to fill the device several times over, each thread looping over the rest.
std::pair<dim3, dim3> grid_1d(const CudaDevice& dev, std::int64_t n);

// A tensor's first element.
inline float* f32_at(const rt::TensorArg& t) { return static_cast<float*>(ptr_of(*t.buffer)) + t.offset; }

}  // namespace torsh::cuda
