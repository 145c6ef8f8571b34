#pragma once
// The interface a backend implements. Plugins derive from these classes; the
// op layer above has already validated shapes, dtypes and devices, so a backend
// only computes. Ops are not methods here: a device hands the runtime its
// backend's kernel table (kernel_table.hpp), so the interface does not grow
// with the op set.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "torsh/core/dtype.hpp"
#include "torsh/core/error.hpp"
#include "torsh/core/shape.hpp"
#include "torsh/runtime/device_info.hpp"
#include "torsh/runtime/kernel_source.hpp"

namespace torsh::rt {

using torsh::kMaxDims;  // core/shape.hpp: kernels index at most this many dimensions

class BufferImpl {
 public:
  virtual ~BufferImpl() = default;
  virtual std::size_t size() const = 0;
  // Host address of the storage where the host can address it directly, else null.
  virtual void* host_ptr() const { return nullptr; }
};

class EventImpl {
 public:
  virtual ~EventImpl() = default;
  virtual void synchronize() = 0;
  virtual bool query() = 0;
  // Milliseconds from this event to `later`; both must have been recorded.
  virtual double elapsed_ms(EventImpl& later) = 0;
};

class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  virtual void synchronize() = 0;
  virtual void record(EventImpl& e) = 0;
  virtual void wait(EventImpl& e) = 0;
};

}  // namespace torsh::rt

#include "torsh/backend/kernel_table.hpp"
#include "torsh/backend/op_args.hpp"

namespace torsh::rt {

// A user kernel's source as the runtime hands it to a backend. `params` is
// the entry's signature as the runtime parsed it from the source (empty when
// it could not find the entry); the backend may refine it with what its API
// reports.
struct UserKernelSpec {
  KernelSource src;
  std::vector<KernelParam> params;
  bool params_known = false;
  std::string label;  // "kernel 'bias_gelu' (torsh dialect)" for messages
};

// One launch argument, checked and converted by the runtime against the
// entry's parameters: a tensor (its storage from its first element; `tensor`
// is the kernel-facing view, `writable` whether the parameter may write) or
// the bytes of a value, already of the parameter's size and type.
struct LaunchArg {
  const TensorArg* tensor = nullptr;
  bool writable = true;
  const void* data = nullptr;
  std::size_t size = 0;
};

// The text of include/torsh/kernel_dialect.h, for backends that build the Torsh dialect.
const char* kernel_dialect_header();
// What a C-family backend compiles: for the Torsh dialect, `target` (the
// target's macros, e.g. "#define TORSH_DIALECT_CPU 1\n"), the dialect header
// and the user's source; for the other dialects the user's source alone. The
// user's source follows a `#line 1 "<name>"` so compiler messages give its
// own line numbers.
std::string kernel_translation_unit(const UserKernelSpec& spec, std::string_view target = {});

// A compiled user kernel on one device. launch() is called from any thread;
// it enqueues on `s` and returns (the runtime has validated the arguments).
// It refuses, with the device's limit in the message, a grid or block the
// device cannot run.
class UserKernelImpl {
 public:
  virtual ~UserKernelImpl() = default;
  // The parameters the launch checks against: the spec's, refined by the backend.
  virtual const std::vector<KernelParam>& params() const = 0;
  virtual bool params_known() const = 0;
  virtual void launch(StreamImpl& s, const Dim3& grid, const Dim3& block, std::span<const LaunchArg> args) = 0;
};

// What a build produced: the bytes load_kernel() takes (a program binary, PTX,
// a shared object, the module's text), and the compiler's messages.
struct KernelBinary {
  std::vector<std::uint8_t> bytes;
  std::string log;        // warnings of a successful build; may be empty
  bool cacheable = true;  // false: the bytes cannot be reused by another process
};

// A backend's own form of a captured graph (OpenCL: a cl_khr_command_buffer).
// The runtime's kernel list re-issues every op from the host on replay; a
// native graph holds the device commands, recorded once during the capture,
// and replays them with one enqueue. The runtime arms it around each op it
// records, and the backend records what that op enqueues on the captured
// stream from the capturing thread (nothing else: host transfers and work
// outside ops are not part of a graph). Whatever the backend cannot record
// invalidates it; replay then falls back to the kernel list, which is always
// complete.
class NativeGraph {
 public:
  virtual ~NativeGraph() = default;
  // On while the runtime runs one recorded op on the capturing thread.
  virtual void arm(bool on) = 0;
  // Native replay is off for good; the first reason is the one reported.
  virtual void invalidate(const std::string& reason) = 0;
  // Ends recording. False when the graph cannot be replayed natively.
  virtual bool finalize() = 0;
  virtual bool ok() const = 0;
  // Why ok() is false ("" while it is true).
  virtual std::string reason() const = 0;
  // Enqueues the recorded commands on `s`; the caller waits for them.
  virtual void replay(StreamImpl& s) = 0;
  // The name Graph::replay_mode() reports, e.g. "cl_khr_command_buffer".
  virtual std::string mode() const = 0;
};

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual BackendType type() const = 0;
  virtual const DeviceInfo& info() const = 0;
  virtual Capabilities capabilities() const = 0;
  virtual PerformanceHints hints() const = 0;

  // Throws OutOfMemory when the device cannot satisfy the request. The runtime's
  // pool (src/runtime/memory_pool_internal.hpp) calls this for whole segments and
  // hands out pieces of them: ops and copies receive the segment's BufferImpl and
  // a byte offset. Destroying a BufferImpl must be safe while queued work still
  // uses it (OpenCL defers the release, cudaFree waits, CPU work is synchronous).
  virtual std::unique_ptr<BufferImpl> allocate(std::size_t bytes) = 0;
  // Host memory that this device copies to and from without staging, with
  // host_ptr() set: page-locked (cudaHostAlloc) or mapped (CL_MEM_ALLOC_HOST_PTR).
  // Null: the device has none, and the runtime uses ordinary host memory.
  virtual std::unique_ptr<BufferImpl> allocate_host(std::size_t bytes) {
    (void)bytes;
    return nullptr;
  }
  virtual std::unique_ptr<StreamImpl> create_stream() = 0;
  virtual StreamImpl& default_stream() = 0;
  virtual std::unique_ptr<EventImpl> create_event() = 0;
  virtual void synchronize() = 0;
  // Starts a native recording of the ops a graph capture issues on `s`, or
  // null where graphs replay as a kernel list only (see NativeGraph). A backend
  // that has the means but cannot use them returns an invalidated graph whose
  // reason() says why.
  virtual std::unique_ptr<NativeGraph> begin_native_capture(StreamImpl& s) {
    (void)s;
    return nullptr;
  }

  // User kernels (user_kernel.hpp). The dialects this device builds; empty
  // when it builds none.
  virtual std::vector<KernelDialect> kernel_dialects() const { return {}; }
  // Names the compiler and driver that build_kernel uses, with their versions:
  // part of the disk cache's key, so an upgrade rebuilds.
  virtual std::string kernel_compiler_id() const { return {}; }
  // Compiles; throws Error(KernelCompile) with the complete log on failure.
  virtual KernelBinary build_kernel(const UserKernelSpec& spec);
  // Makes a launchable kernel from build_kernel's bytes (from this process or
  // the disk cache). Throws when the bytes are not a valid binary for this
  // device: the runtime then warns and rebuilds.
  virtual std::unique_ptr<UserKernelImpl> load_kernel(const UserKernelSpec& spec, std::span<const std::uint8_t> binary);

  // Host -> device and device -> host. With blocking=false the host memory
  // must stay valid until the stream has passed this point.
  virtual void write(BufferImpl& dst, std::size_t offset, const void* src, std::size_t bytes, StreamImpl& s,
                     bool blocking) = 0;
  virtual void read(BufferImpl& src, std::size_t offset, void* dst, std::size_t bytes, StreamImpl& s,
                    bool blocking) = 0;
  // Device -> device within this device, stream-ordered.
  virtual void copy(BufferImpl& src, std::size_t src_offset, BufferImpl& dst, std::size_t dst_offset, std::size_t bytes,
                    StreamImpl& s) = 0;
  // Repeats `pattern` (1, 2, 4 or 8 bytes) over [offset, offset + bytes).
  virtual void fill(BufferImpl& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                    std::size_t pattern_size, StreamImpl& s) = 0;

  // Ops: the kernels of this device's backend. Arguments must be of kind k's
  // type (ArgsOf<k>); the op layer has validated them.
  const KernelTable& kernels() const { return *kernels_; }
  // Whether these exact arguments run natively (the dispatcher's question).
  template <class A>
  bool supports(OpKind k, const A& a) const {
    static_assert(takes_some<A>(), "not an op argument struct");
    if (!takes<A>(k)) wrong_args(k);
    return kernels_->find(*this, k, key_dtype(k, a), &a) != nullptr;
  }
  // Whether some arguments of kind k with key dtype t run natively.
  bool supports(OpKind k, DType t) const { return kernels_->has(k, t); }
  // Runs the op; Unsupported, saying what the device takes, when no kernel does.
  template <class A>
  void run(OpKind k, const A& a, StreamImpl& s) {
    static_assert(takes_some<A>(), "not an op argument struct");
    if (!takes<A>(k)) wrong_args(k);
    const KernelTable::Entry* e = kernels_->find(*this, k, key_dtype(k, a), &a);
    if (!e) unsupported(k, key_dtype(k, a));
    (*e)(*this, s, &a);
  }
  [[noreturn]] void unsupported(OpKind k, DType t) const;
  [[noreturn]] static void wrong_args(OpKind k);

 protected:
  DeviceImpl();  // no kernels: every op falls back to the CPU
  explicit DeviceImpl(const KernelTable& kernels) : kernels_(&kernels) {}

 private:
  template <class A>
  static constexpr bool takes_some() {
    for (OpKind k : kAllOpKinds)
      if (takes<A>(k)) return true;
    return false;
  }
  const KernelTable* kernels_;
};

// One per backend type: enumerates the devices of that backend.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual BackendType type() const = 0;
  virtual std::string version() const = 0;
  virtual int device_count() const = 0;
  // Devices live as long as the process; the same index returns the same object.
  virtual std::shared_ptr<DeviceImpl> device(int index) = 0;
};

}  // namespace torsh::rt
