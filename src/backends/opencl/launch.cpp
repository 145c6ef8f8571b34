#include "launch.hpp"

#include <algorithm>

#include "tuning.hpp"

namespace torsh::opencl {

StridedMeta make_strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  StridedMeta m{};
  const std::size_t K = tensors.size();
  int nd = 0;
  for (std::size_t d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      std::size_t k = 0;
      for (const auto* t : tensors) merge = merge && m.st[k++][nd - 1] == t->strides[d] * shape[d];
      if (merge) {
        m.dims[nd - 1] *= shape[d];
        k = 0;
        for (const auto* t : tensors) m.st[k++][nd - 1] = t->strides[d];
        continue;
      }
    }
    if (nd == kKernelMaxDims)
      throw Error(ErrorCode::Unsupported,
                  "a strided view of " + shape.to_string() + " needs more than " + std::to_string(kKernelMaxDims) +
                      " dimensions after merging contiguous ones",
                  {.op = "opencl strided kernel", .shapes = {shape.to_string()}}, {"Make the operands contiguous first"});
    m.dims[nd] = shape[d];
    std::size_t k = 0;
    for (const auto* t : tensors) m.st[k++][nd] = t->strides[d];
    ++nd;
  }
  if (nd == 0) {
    m.dims[0] = 1;
    for (std::size_t k = 0; k < K; ++k) m.st[k][0] = 1;
    nd = 1;
  }
  m.nd = nd;
  m.numel = shape.numel();
  std::size_t k = 0;
  for (const auto* t : tensors) m.off[k++] = t->offset;
  return m;
}

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
  // Enough groups to occupy every compute unit several times over; the kernels stride over the rest.
  const std::size_t max_groups = static_cast<std::size_t>(std::max(1, dev.info().compute_units)) * 16;
  const std::size_t items = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
  if (local == 0) {
    // The driver picks the group size; the grid is as large as the default one would be.
    const std::size_t cap = max_groups * std::max<std::size_t>(1, dev.hints().preferred_work_group);
    return {range(std::min(items, cap)), NDRange{0, {1, 1, 1}}};
  }
  const std::size_t groups = std::clamp<std::size_t>((items + local - 1) / local, 1, max_groups);
  return {range(groups * local), range(local)};
}

ElementView::ElementView(OpenClStream& s, const rt::TensorArg& t, std::size_t bytes, bool output)
    : s_(s), base_(mem_of(*t.buffer)), origin_(static_cast<std::size_t>(t.offset) * dtype_size(t.dtype)),
      bytes_(bytes), output_(output) {
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
  if (!output_) {
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
  if (staged_ && output_) copy(owned_, base_, 0, origin_, "clEnqueueCopyBuffer (staging out)");
}

// Releasing is safe with commands in flight: OpenCL frees the object once they finish.
ElementView::~ElementView() {
  if (owned_) clReleaseMemObject(owned_);
}

}  // namespace torsh::opencl
