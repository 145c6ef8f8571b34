#pragma once
// Kernels of the user's own, compiled from source at run time and launched on
// a stream like the library's ops (the profiler, graph capture and stream
// order see them the same way):
//
//   torsh::Kernel k = backend.compile_kernel({.source = src, .entry = "scale"});
//   backend.default_stream().launch(k, {blocks}, {256}, out, x, 2.0f, n);
//
// Tensors bind as device pointers (storage buffers on WebGPU) to their first
// element; scalars and POD structs are passed by value (uniform buffers on
// WebGPU). Every launch is checked against the entry's parameters before it
// reaches the driver: count, tensor or value, element type, device, and the
// grid against the device's limits. Numbers convert to the parameter's type
// where no value changes (an int to a long, a double to a float; never a
// fractional or out-of-range number to an integer).
//
// Builds are cached in memory per device and on disk under
// $TORSH_KERNEL_CACHE_DIR (default $XDG_CACHE_HOME/torsh/kernels, else
// ~/.cache/torsh/kernels; "off" disables it), keyed by the source, entry,
// dialect, defines, options, device, compiler and driver versions.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "torsh/runtime/backend.hpp"
#include "torsh/runtime/kernel_source.hpp"
#include "torsh/runtime/tensor.hpp"

namespace torsh {

namespace detail {
struct KernelState;
}

// Where compile_kernel() found the kernel.
enum class KernelOrigin { Compiled, MemoryCache, DiskCache };
std::string_view kernel_origin_name(KernelOrigin o);  // "compiled", "memory cache", "disk cache"

class Kernel {
 public:
  Kernel() = default;
  bool valid() const { return s_ != nullptr; }
  const std::string& name() const;
  const std::string& entry() const;
  KernelDialect dialect() const;
  Device device() const;
  // The entry's parameters as the launch checks them; params_known() is false
  // when neither the source nor the driver told them (then only the count the
  // driver reports, if any, is checked).
  const std::vector<KernelParam>& params() const;
  bool params_known() const;
  KernelOrigin origin() const;
  // Wall time compile_kernel() took for this handle: the compile, or the cache lookup and load.
  double build_ms() const;
  // The compiler's messages of a successful build (warnings); may be empty.
  const std::string& build_log() const;
  // The disk cache's file for this kernel ("" when the disk cache is off or not used).
  const std::string& cache_path() const;

 private:
  friend class Backend;
  friend class Stream;
  friend struct detail::Access;
  std::shared_ptr<detail::KernelState> s_;
};

// One launch argument: a tensor, a number, or the bytes of a POD struct.
class KernelArg {
 public:
  enum class Kind : std::uint8_t { Tensor, Int, UInt, Float, Bytes };
  KernelArg(const Tensor& t) : kind_(Kind::Tensor), tensor_(&t) {}  // NOLINT: implicit by design
  template <class T>
  requires std::is_integral_v<T> && std::is_signed_v<T> &&(!std::is_same_v<T, bool>)KernelArg(T v)
      : kind_(Kind::Int), type_(signed_type(sizeof(T))), i_(v) {}  // NOLINT
  template <class T>
  requires std::is_integral_v<T> && std::is_unsigned_v<T> &&(!std::is_same_v<T, bool>)KernelArg(T v)
      : kind_(Kind::UInt), type_(unsigned_type(sizeof(T))), u_(v) {}         // NOLINT
  KernelArg(float v) : kind_(Kind::Float), type_(ParamType::F32), f_(v) {}   // NOLINT
  KernelArg(double v) : kind_(Kind::Float), type_(ParamType::F64), f_(v) {}  // NOLINT
  // A POD struct passed by value; the parameter must have its size.
  template <class T>
  requires std::is_trivially_copyable_v<T> && std::is_class_v<T>
  static KernelArg pod(const T& v) { return bytes(&v, sizeof(T)); }
  // Raw bytes passed by value (at most 256); the parameter must have this size.
  static KernelArg bytes(const void* data, std::size_t size);

  Kind kind() const { return kind_; }
  ParamType type() const { return type_; }  // the C++ type it was made from
  const Tensor* tensor() const { return tensor_; }
  std::int64_t as_int() const { return i_; }
  std::uint64_t as_uint() const { return u_; }
  double as_float() const { return f_; }
  std::span<const std::uint8_t> raw() const { return bytes_; }
  std::string describe() const;  // "f32[4] on opencl:0", "int 3", "double 2.5", "12 bytes"

 private:
  KernelArg() = default;
  static constexpr ParamType signed_type(std::size_t n) {
    return n == 1 ? ParamType::I8 : n == 2 ? ParamType::I16 : n == 4 ? ParamType::I32 : ParamType::I64;
  }
  static constexpr ParamType unsigned_type(std::size_t n) {
    return n == 1 ? ParamType::U8 : n == 2 ? ParamType::U16 : n == 4 ? ParamType::U32 : ParamType::U64;
  }
  Kind kind_ = Kind::Bytes;
  ParamType type_ = ParamType::Struct;
  const Tensor* tensor_ = nullptr;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
  double f_ = 0;
  std::vector<std::uint8_t> bytes_;
};

template <class... A>
requires(std::is_constructible_v<KernelArg, const A&>&&...) void Stream::launch(const Kernel& k, Dim3 grid, Dim3 block,
                                                                                const A&... args) {
  const KernelArg a[] = {KernelArg(args)..., KernelArg(0)};  // the last one keeps the array non-empty
  launch(k, grid, block, std::span<const KernelArg>(a, sizeof...(A)));
}

// Compile-time and cache counters of one device (Backend::kernel_stats) or of
// the process (torsh::kernel_stats()).
struct KernelStats {
  std::size_t kernels_cached = 0;  // kernels held in memory
  std::size_t compiles = 0;        // builds from source
  std::size_t memory_hits = 0;     // compile_kernel() answered from memory
  std::size_t disk_hits = 0;       // ... from the disk cache
  std::size_t disk_writes = 0;     // binaries written to the disk cache
  std::size_t disk_rebuilds = 0;   // corrupt or stale disk entries rebuilt (each warned about)
  std::size_t launches = 0;
  double compile_ms = 0;    // total time spent compiling
  double disk_load_ms = 0;  // total time spent loading from the disk cache
};
KernelStats kernel_stats();
// Warnings the kernel cache raised in this process (a corrupt entry rebuilt, an
// unwritable directory), oldest first; each is also printed to stderr once.
std::vector<std::string> kernel_cache_warnings();
// Where the disk cache lives ("" when it is off).
std::string kernel_cache_dir();
// Empties the in-memory cache of every device (handles stay usable).
void clear_kernel_memory_cache();

}  // namespace torsh
