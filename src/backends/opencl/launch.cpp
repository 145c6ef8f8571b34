#include "launch.hpp"

#include <algorithm>

#include "tuning.hpp"

namespace torsh::opencl {

void launch_args(OpenClStream& s, const Kernel& k, const NDRange& global, const NDRange& local,
                 std::span<const ArgValue> args) {
  std::lock_guard lk(*k.mu);
  for (cl_uint i = 0; i < args.size(); ++i) k.set_arg(i, args[i].size, args[i].value);
  const std::string call = std::string("clEnqueueNDRangeKernel(") + k.name + ")";
  const std::size_t* group = local.dims ? local.size.data() : nullptr;
  const cl_int err =
      clEnqueueNDRangeKernel(s.queue(), k.handle, global.dims, nullptr, global.size.data(), group, 0, nullptr, nullptr);
  if (err != CL_SUCCESS)
    throw_cl(err, call.c_str(), s.device().label(),
             is_allocation_failure(err) ? ErrorCode::OutOfMemory : ErrorCode::DeviceError);
  if (CommandBufferGraph* g = recording(s)) g->kernel(k, global.dims, global.size.data(), group, args);
  check_cl(clFlush(s.queue()), "clFlush", s.device().label());
  s.enqueued();
}

std::pair<NDRange, NDRange> grid_1d(OpenClDevice& dev, const Kernel& k, std::int64_t n) {
  std::size_t wg = 0;
  check_cl(clGetKernelWorkGroupInfo(k.handle, dev.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr),
           "clGetKernelWorkGroupInfo", dev.label());
  const int tuned = dev.work_groups().local_size(dev, k, n, wg);
  if (tuned != WorkGroupTuning::kDefault) return grid_1d_with(dev, n, static_cast<std::size_t>(tuned));
  return grid_1d_with(dev, n, std::max<std::size_t>(1, std::min<std::size_t>(wg, dev.hints().preferred_work_group)));
}

std::pair<NDRange, NDRange> grid_1d_with(OpenClDevice& dev, std::int64_t n, std::size_t local) {
  if (local == 0) {
    // The driver picks the group size; the grid is as large as the default one would be.
    const std::int64_t group = static_cast<std::int64_t>(std::max<std::size_t>(1, dev.hints().preferred_work_group));
    const std::int64_t items =
        std::min(std::max<std::int64_t>(n, 1), gpu::max_groups(dev.info().compute_units) * group);
    return {range(static_cast<std::size_t>(items)), NDRange{0, {1, 1, 1}}};
  }
  const std::int64_t groups = gpu::grid_groups(n, static_cast<std::int64_t>(local), dev.info().compute_units);
  return {range(static_cast<std::size_t>(groups) * local), range(local)};
}

ElementView::ElementView(OpenClStream& s, const rt::TensorArg& t, std::size_t bytes, Access access)
    : s_(s),
      base_(mem_of(*t.buffer)),
      origin_(static_cast<std::size_t>(t.offset) * dtype_size(t.dtype)),
      bytes_(bytes),
      access_(access) {
  OpenClDevice& dev = s.device();
  if (origin_ == 0) {
    mem_ = base_;
    return;
  }
  cl_int err = CL_SUCCESS;
  if (origin_ % dev.base_align() == 0) {
    const cl_buffer_region region{origin_, bytes_};
    owned_ = clCreateSubBuffer(base_, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err == CL_SUCCESS) {
      mem_ = owned_;
      // A recorded kernel names the sub-buffer; it must outlive this op.
      if (CommandBufferGraph* g = recording(s)) g->keep(owned_);
      return;
    }
    owned_ = nullptr;  // fall through to staging
  }
  owned_ = clCreateBuffer(dev.context(), CL_MEM_READ_WRITE, bytes_, nullptr, &err);
  if (err != CL_SUCCESS)
    throw_cl(err, "clCreateBuffer (staging)", dev.label(),
             is_allocation_failure(err) ? ErrorCode::OutOfMemory : ErrorCode::DeviceError);
  mem_ = owned_;
  staged_ = true;
  if (CommandBufferGraph* g = recording(s)) g->keep(owned_);
  if (access_ != Access::Overwrite) {
    try {
      copy(base_, owned_, origin_, 0, "clEnqueueCopyBuffer (staging in)");
    } catch (...) {
      clReleaseMemObject(owned_);
      throw;
    }
  }
}

void ElementView::copy(cl_mem src, cl_mem dst, std::size_t src_offset, std::size_t dst_offset, const char* what) {
  check_cl(clEnqueueCopyBuffer(s_.queue(), src, dst, src_offset, dst_offset, bytes_, 0, nullptr, nullptr), what,
           s_.device().label());
  if (CommandBufferGraph* g = recording(s_)) g->copy(src, dst, src_offset, dst_offset, bytes_);
}

void ElementView::commit() {
  if (staged_ && access_ != Access::Read) copy(owned_, base_, 0, origin_, "clEnqueueCopyBuffer (staging out)");
}

// Releasing is safe with commands in flight: OpenCL frees the object once they finish.
ElementView::~ElementView() {
  if (owned_) clReleaseMemObject(owned_);
}

}  // namespace torsh::opencl
