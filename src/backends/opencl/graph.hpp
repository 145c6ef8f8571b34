#pragma once
// Native graph replay: a captured op sequence recorded into one
// cl_khr_command_buffer, so that Graph::replay() is one
// clEnqueueCommandBufferKHR instead of one enqueue (and its arguments) per op.
//
// The launch idiom (launch.cpp), the device copies (device.cpp) and
// ElementView ask recording(stream) whether the op now running is being
// captured; if so they record the same command into the command buffer. What
// cannot be recorded (host transfers) invalidates the graph, and the runtime
// replays its kernel list instead.
//
// Two things the extension leaves to the implementation are pinned down here:
// - Order. Commands without sync points may run in any order (PoCL 3.1 does
//   run them concurrently), so each command waits on the previous one,
//   reproducing the in-order queue the ops were issued on.
// - Kernel arguments. PoCL 3.1 reads a kernel's arguments when the command
//   buffer runs, not when the command is recorded, so every recorded launch
//   gets a kernel object of its own, set once and never touched again.
#include <span>
#include <string>
#include <vector>

#include "device.hpp"

namespace torsh::opencl {

struct ArgValue {
  std::size_t size;
  const void* value;
};

// The extension's entry points for one platform, or why they cannot be used.
struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandNDRangeKernelKHR_fn kernel = nullptr;
  clCommandCopyBufferKHR_fn copy = nullptr;
  clCommandFillBufferKHR_fn fill = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  std::string unusable;  // empty when every entry point above is set
};
CommandBufferApi load_command_buffer_api(cl_platform_id platform, cl_device_id device);

class CommandBufferGraph final : public rt::NativeGraph {
 public:
  CommandBufferGraph(OpenClStream& s, const CommandBufferApi& api);
  ~CommandBufferGraph() override;
  CommandBufferGraph(const CommandBufferGraph&) = delete;
  CommandBufferGraph& operator=(const CommandBufferGraph&) = delete;

  void arm(bool on) override;
  void invalidate(const std::string& reason) override;
  bool finalize() override;
  bool ok() const override { return reason_.empty(); }
  std::string reason() const override { return reason_; }
  void replay(rt::StreamImpl& s) override;
  std::string mode() const override { return "cl_khr_command_buffer"; }

  // Record one command after those recorded so far. A failure invalidates the
  // graph; the eager command has run regardless.
  void kernel(const Kernel& k, cl_uint dims, const std::size_t* global, const std::size_t* local,
              std::span<const ArgValue> args);
  void copy(cl_mem src, cl_mem dst, std::size_t src_offset, std::size_t dst_offset, std::size_t bytes);
  void fill(cl_mem dst, const void* pattern, std::size_t pattern_size, std::size_t offset, std::size_t bytes);
  // Keeps a temporary the recorded commands use (a sub-buffer, a staging buffer) alive with the graph.
  void keep(cl_mem m);

  OpenClStream& stream() const { return stream_; }

 private:
  bool check(cl_int err, const char* call);
  cl_sync_point_khr* after_last(cl_uint& n);

  OpenClStream& stream_;
  const CommandBufferApi& api_;
  cl_command_buffer_khr cb_ = nullptr;
  cl_sync_point_khr last_ = 0;
  bool has_last_ = false;
  bool finalized_ = false;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> mems_;
  std::string reason_;
};

// The graph recording what this thread enqueues on `s` for the op now running,
// or null. An op that enqueues on another queue while armed invalidates it.
CommandBufferGraph* recording(OpenClStream& s);

}  // namespace torsh::opencl
