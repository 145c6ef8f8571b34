#include "graph.hpp"

#include <cstring>

#include "program.hpp"

namespace torsh::opencl {

namespace {

// The graph armed on this thread. Captures are per thread (runtime/graph.cpp),
// so a thread-local needs no lock and never sees another thread's ops.
thread_local CommandBufferGraph* t_armed = nullptr;

// The cl_khr_command_buffer revisions whose entry points match the header this
// plugin is compiled against (opencl-c-headers 2023.02): 0.9.0 to 0.9.4. 0.9.5
// added a properties argument to every recording call but the kernel one, so
// calling a later revision through these signatures would shift arguments.
constexpr cl_uint kMinVersion = (0u << 22) | (9u << 12) | 0u;
constexpr cl_uint kMaxVersion = (0u << 22) | (9u << 12) | 4u;

std::string version_string(cl_uint v) {
  return std::to_string(v >> 22) + "." + std::to_string((v >> 12) & 0x3ff) + "." + std::to_string(v & 0xfff);
}

// The extension's version from CL_DEVICE_EXTENSIONS_WITH_VERSION (OpenCL 3.0),
// or 0 where the device does not report versions. Spelled out here because the
// plugin targets the 1.2 headers.
cl_uint extension_version(cl_device_id dev, const char* name) {
  constexpr cl_device_info kExtensionsWithVersion = 0x1060;
  struct NameVersion {
    cl_uint version;
    char name[64];
  };
  std::size_t bytes = 0;
  if (clGetDeviceInfo(dev, kExtensionsWithVersion, 0, nullptr, &bytes) != CL_SUCCESS || bytes == 0) return 0;
  std::vector<NameVersion> list(bytes / sizeof(NameVersion));
  if (clGetDeviceInfo(dev, kExtensionsWithVersion, list.size() * sizeof(NameVersion), list.data(), nullptr) !=
      CL_SUCCESS)
    return 0;
  for (const auto& e : list)
    if (std::strncmp(e.name, name, sizeof e.name) == 0) return e.version;
  return 0;
}

template <class F>
F entry(cl_platform_id p, const char* name) {
  return reinterpret_cast<F>(clGetExtensionFunctionAddressForPlatform(p, name));
}

}  // namespace

CommandBufferApi load_command_buffer_api(cl_platform_id platform, cl_device_id device) {
  CommandBufferApi api;
  std::size_t n = 0;
  std::string ext;
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) == CL_SUCCESS && n) {
    ext.resize(n);
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, ext.data(), nullptr);
    ext.resize(std::strlen(ext.c_str()));
  }
  if ((" " + ext + " ").find(" cl_khr_command_buffer ") == std::string::npos) {
    api.unusable = "the device does not offer cl_khr_command_buffer";
    return api;
  }
  const cl_uint v = extension_version(device, "cl_khr_command_buffer");
  if (v == 0) {
    api.unusable = "the device does not report which cl_khr_command_buffer revision it implements";
    return api;
  }
  if (v < kMinVersion || v > kMaxVersion) {
    api.unusable = "cl_khr_command_buffer " + version_string(v) + " is a revision this build does not know (it calls " +
                   version_string(kMinVersion) + " to " + version_string(kMaxVersion) + ")";
    return api;
  }
  // Our queues have profiling on and are in order; a device that needs more cannot record on them.
  cl_command_queue_properties required = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required, &required,
                      nullptr) != CL_SUCCESS ||
      (required & ~static_cast<cl_command_queue_properties>(CL_QUEUE_PROFILING_ENABLE)) != 0) {
    api.unusable = "cl_khr_command_buffer needs queue properties the plugin's queues do not have";
    return api;
  }
  api.create = entry<clCreateCommandBufferKHR_fn>(platform, "clCreateCommandBufferKHR");
  api.kernel = entry<clCommandNDRangeKernelKHR_fn>(platform, "clCommandNDRangeKernelKHR");
  api.copy = entry<clCommandCopyBufferKHR_fn>(platform, "clCommandCopyBufferKHR");
  api.fill = entry<clCommandFillBufferKHR_fn>(platform, "clCommandFillBufferKHR");
  api.finalize = entry<clFinalizeCommandBufferKHR_fn>(platform, "clFinalizeCommandBufferKHR");
  api.enqueue = entry<clEnqueueCommandBufferKHR_fn>(platform, "clEnqueueCommandBufferKHR");
  api.release = entry<clReleaseCommandBufferKHR_fn>(platform, "clReleaseCommandBufferKHR");
  if (!api.create || !api.kernel || !api.copy || !api.fill || !api.finalize || !api.enqueue || !api.release)
    api.unusable = "the platform advertises cl_khr_command_buffer but does not export all of its entry points";
  return api;
}

CommandBufferGraph::CommandBufferGraph(OpenClStream& s, const CommandBufferApi& api) : stream_(s), api_(api) {
  if (!api.unusable.empty()) {
    reason_ = api.unusable;
    return;
  }
  cl_command_queue q = s.queue();
  cl_int err = CL_SUCCESS;
  cb_ = api.create(1, &q, nullptr, &err);
  if (err != CL_SUCCESS) {
    cb_ = nullptr;
    reason_ = "clCreateCommandBufferKHR failed with " + cl_error_name(err);
  }
}

CommandBufferGraph::~CommandBufferGraph() {
  if (t_armed == this) t_armed = nullptr;
  // Replays are waited for (Graph::replay), so nothing still runs the buffer.
  if (cb_) api_.release(cb_);
  for (cl_kernel k : kernels_) clReleaseKernel(k);
  for (cl_mem m : mems_) clReleaseMemObject(m);
}

void CommandBufferGraph::arm(bool on) { t_armed = on && !finalized_ ? this : nullptr; }

void CommandBufferGraph::invalidate(const std::string& reason) {
  if (reason_.empty()) reason_ = reason.empty() ? "invalidated" : reason;
}

bool CommandBufferGraph::check(cl_int err, const char* call) {
  if (err == CL_SUCCESS) return true;
  invalidate(std::string(call) + " failed with " + cl_error_name(err));
  return false;
}

// The wait list that orders the next command after the last one.
cl_sync_point_khr* CommandBufferGraph::after_last(cl_uint& n) {
  n = has_last_ ? 1 : 0;
  return has_last_ ? &last_ : nullptr;
}

void CommandBufferGraph::kernel(const Kernel& k, cl_uint dims, const std::size_t* global, const std::size_t* local,
                                std::span<const ArgValue> args) {
  if (!ok()) return;
  cl_program prog = nullptr;
  if (!check(clGetKernelInfo(k.handle, CL_KERNEL_PROGRAM, sizeof prog, &prog, nullptr), "clGetKernelInfo")) return;
  cl_int err = CL_SUCCESS;
  cl_kernel own = clCreateKernel(prog, k.name, &err);
  if (!check(err, "clCreateKernel (recorded copy)")) return;
  kernels_.push_back(own);
  for (cl_uint i = 0; i < args.size(); ++i)
    if (!check(clSetKernelArg(own, i, args[i].size, args[i].value), "clSetKernelArg (recorded copy)")) return;
  cl_uint nwait = 0;
  cl_sync_point_khr* wait = after_last(nwait);
  cl_sync_point_khr point = 0;
  if (!check(api_.kernel(cb_, nullptr, nullptr, own, dims, nullptr, global, local, nwait, wait, &point, nullptr),
             "clCommandNDRangeKernelKHR"))
    return;
  last_ = point;
  has_last_ = true;
}

void CommandBufferGraph::copy(cl_mem src, cl_mem dst, std::size_t src_offset, std::size_t dst_offset,
                              std::size_t bytes) {
  if (!ok()) return;
  cl_uint nwait = 0;
  cl_sync_point_khr* wait = after_last(nwait);
  cl_sync_point_khr point = 0;
  if (!check(api_.copy(cb_, nullptr, src, dst, src_offset, dst_offset, bytes, nwait, wait, &point, nullptr),
             "clCommandCopyBufferKHR"))
    return;
  last_ = point;
  has_last_ = true;
}

// The pattern is copied when the command is recorded (as by clEnqueueFillBuffer).
void CommandBufferGraph::fill(cl_mem dst, const void* pattern, std::size_t pattern_size, std::size_t offset,
                              std::size_t bytes) {
  if (!ok()) return;
  cl_uint nwait = 0;
  cl_sync_point_khr* wait = after_last(nwait);
  cl_sync_point_khr point = 0;
  if (!check(api_.fill(cb_, nullptr, dst, pattern, pattern_size, offset, bytes, nwait, wait, &point, nullptr),
             "clCommandFillBufferKHR"))
    return;
  last_ = point;
  has_last_ = true;
}

void CommandBufferGraph::keep(cl_mem m) {
  if (check(clRetainMemObject(m), "clRetainMemObject")) mems_.push_back(m);
}

bool CommandBufferGraph::finalize() {
  if (t_armed == this) t_armed = nullptr;
  if (finalized_) return ok();
  finalized_ = true;
  if (ok() && !has_last_) invalidate("the capture recorded no device commands");
  if (ok()) check(api_.finalize(cb_), "clFinalizeCommandBufferKHR");
  if (!ok()) {
    // The kernel list replays instead; what the recording held is not needed.
    if (cb_) api_.release(cb_);
    cb_ = nullptr;
    for (cl_kernel k : kernels_) clReleaseKernel(k);
    for (cl_mem m : mems_) clReleaseMemObject(m);
    kernels_.clear();
    mems_.clear();
  }
  return ok();
}

void CommandBufferGraph::replay(rt::StreamImpl& s) {
  OpenClStream& st = stream_of(s);
  if (!finalized_ || !ok() || &st != &stream_)
    throw Error(ErrorCode::InvalidState,
                "the command buffer cannot be replayed: " +
                    (ok() ? std::string(finalized_ ? "wrong queue" : "not finalized") : reason_),
                {.op = "graph.replay", .device = st.device().label()});
  check_cl(api_.enqueue(0, nullptr, cb_, 0, nullptr, nullptr), "clEnqueueCommandBufferKHR", st.device().label());
  check_cl(clFlush(st.queue()), "clFlush", st.device().label());
}

CommandBufferGraph* recording(OpenClStream& s) {
  CommandBufferGraph* g = t_armed;
  if (!g || !g->ok()) return nullptr;
  if (&g->stream() != &s) {
    g->invalidate("an op enqueued work on a queue other than the captured one");
    return nullptr;
  }
  return g;
}

}  // namespace torsh::opencl
