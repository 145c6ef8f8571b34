// Launching a user kernel: the grid and block checked against the device and
// the kernel, tensors bound at their first element (ElementView), values by
// their bytes, and one launch_args call so that capture and profiling see it.
#include <cstdint>
#include <memory>
#include <optional>

#include "launch.hpp"
#include "user_kernel.hpp"

namespace torsh::opencl {

namespace {

// Bytes from a tensor's first element to the end of its last one (its strides may leave gaps).
std::size_t extent_bytes(const rt::TensorArg& t) {
  if (t.numel() == 0) return 0;
  std::int64_t last = 0;
  for (std::size_t d = 0; d < t.shape.ndim() && d < t.strides.size(); ++d)
    if (t.strides[d] > 0) last += (t.shape[d] - 1) * t.strides[d];
  return static_cast<std::size_t>(last + 1) * dtype_size(t.dtype);
}

// Where a tensor argument lies: its buffer and the bytes from its first element to its last.
struct Binding {
  const rt::TensorArg* tensor = nullptr;
  cl_mem base = nullptr;
  std::size_t origin = 0, bytes = 0;
  bool writable = false;
  bool staged = false;             // at an offset a sub-buffer cannot start at
  std::size_t same_as = SIZE_MAX;  // an earlier argument with the same range, whose view this one shares
};

}  // namespace

void UserKernel::launch(rt::StreamImpl& si, const Dim3& grid, const Dim3& block, std::span<const rt::LaunchArg> args) {
  OpenClStream& s = stream_of(si);
  const std::string& device = dev_.label();
  const auto refuse = [&](const std::string& why, const std::string& hint) {
    return Error(ErrorCode::InvalidArgument,
                 what() + ": grid " + grid.to_string() + ", block " + block.to_string() + ": " + why,
                 {.op = entry_, .device = device}, {hint});
  };

  // Geometry: grid = work-groups per dimension, block = work-group size (CUDA style).
  const std::uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  const char* axis = "xyz";
  const std::size_t group_limit = std::min(limits_.device_group, limits_.kernel_group);
  if (block.volume() > group_limit)
    throw refuse("a work-group of " + std::to_string(block.volume()) + " items is more than " +
                     std::to_string(group_limit) + ", the most this kernel can run in one group (device " +
                     std::to_string(limits_.device_group) + ", CL_DEVICE_MAX_WORK_GROUP_SIZE; this kernel " +
                     std::to_string(limits_.kernel_group) + ", CL_KERNEL_WORK_GROUP_SIZE)",
                 "Use a block of at most " + std::to_string(group_limit) + " items and more groups in the grid");
  for (int d = 0; d < 3; ++d)
    if (b[d] > limits_.item_sizes[d])
      throw refuse("block." + std::string(1, axis[d]) + " = " + std::to_string(b[d]) + " is more than " +
                       std::to_string(limits_.item_sizes[d]) + ", the device's CL_DEVICE_MAX_WORK_ITEM_SIZES[" +
                       std::to_string(d) + "]",
                   "Use a smaller block along " + std::string(1, axis[d]) + " and more groups in the grid");
  if (limits_.required[0] != 0)
    for (int d = 0; d < 3; ++d)
      if (b[d] != limits_.required[d])
        throw refuse("the kernel declares reqd_work_group_size(" + std::to_string(limits_.required[0]) + ", " +
                         std::to_string(limits_.required[1]) + ", " + std::to_string(limits_.required[2]) + ")",
                     "Launch it with exactly that block");
  NDRange global, local;
  global.dims = local.dims = block.z > 1 || grid.z > 1 ? 3 : block.y > 1 || grid.y > 1 ? 2 : 1;
  std::uint64_t total = 1;
  for (int d = 0; d < 3; ++d) {
    const std::uint64_t items = std::uint64_t(g[d]) * b[d];  // < 2^64: both factors are 32-bit
    if (items > limits_.max_global)
      throw refuse(std::to_string(items) + " work-items along " + std::string(1, axis[d]) +
                       " do not fit the device's size_t (at most " + std::to_string(limits_.max_global) + ")",
                   "Launch fewer groups and let each item handle several elements");
    if (__builtin_mul_overflow(total, items, &total))
      throw refuse(
          "the total number of work-items overflows 64 bits (the most is " + std::to_string(~std::uint64_t{0}) + ")",
          "Launch fewer groups and let each item handle several elements");
    global.size[static_cast<std::size_t>(d)] = static_cast<std::size_t>(items);
    local.size[static_cast<std::size_t>(d)] = b[d];
  }

  // Arguments. The runtime has checked them against params() when those are
  // known; the count is checked here regardless, as the driver's answer to a
  // missing argument is a bare CL_INVALID_KERNEL_ARGS at enqueue.
  if (args.size() != num_args_)
    throw refuse(std::to_string(args.size()) + " arguments given, but the kernel takes " + std::to_string(num_args_),
                 "Pass one argument per kernel parameter, in order");
  std::vector<Binding> bound(args.size());
  std::vector<ArgValue> values(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const rt::LaunchArg& a = args[i];
    const KernelParam* p = i < params_.size() ? &params_[i] : nullptr;
    const auto which = [&] {
      return "argument " + std::to_string(i) + (p && !p->name.empty() ? " ('" + p->name + "')" : std::string());
    };
    if (a.tensor) {
      if (params_known_ && p && p->kind != KernelParam::Kind::Buffer)
        throw refuse(which() + " is a tensor, but the parameter is " + p->to_string(), "Pass a scalar there");
      Binding& b = bound[i];
      b.tensor = a.tensor;
      b.base = mem_of(*a.tensor->buffer);
      b.origin = static_cast<std::size_t>(a.tensor->offset) * dtype_size(a.tensor->dtype);
      b.bytes = extent_bytes(*a.tensor);
      b.writable = a.writable;
      b.staged = b.origin % dev_.base_align() != 0;
    } else {
      if (params_known_ && p && p->kind != KernelParam::Kind::Value)
        throw refuse(which() + " is a value, but the parameter is " + p->to_string(), "Pass a tensor there");
      if (p && p->kind == KernelParam::Kind::Value && p->size != 0 && p->size != a.size)
        throw refuse(which() + " has " + std::to_string(a.size) + " bytes, but the parameter (" + p->to_string() +
                         ") takes " + std::to_string(p->size),
                     "Pass a value of the parameter's type");
      values[i] = {a.size, a.data};
    }
  }

  // Tensors that share memory. The same range twice shares one view. A staged
  // copy goes back whole after the kernel, so a staged range that is written
  // may not overlap another written range: its copy would undo that one's writes.
  const auto tensor_at = [&](std::size_t i) { return bound[i].tensor && bound[i].bytes > 0; };
  for (std::size_t i = 0; i < bound.size(); ++i)
    for (std::size_t j = 0; j < i && tensor_at(i); ++j)
      if (tensor_at(j) && bound[j].same_as == SIZE_MAX && bound[j].base == bound[i].base &&
          bound[j].origin == bound[i].origin && bound[j].bytes == bound[i].bytes) {
        bound[i].same_as = j;
        bound[j].writable = bound[j].writable || bound[i].writable;
        break;
      }
  for (std::size_t i = 0; i < bound.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const Binding &bi = bound[i], &bj = bound[j];
      if (!tensor_at(i) || !tensor_at(j) || bi.same_as != SIZE_MAX || bj.same_as != SIZE_MAX || bi.base != bj.base)
        continue;
      const bool overlap = bi.origin < bj.origin + bj.bytes && bj.origin < bi.origin + bi.bytes;
      if (overlap && bi.writable && bj.writable && (bi.staged || bj.staged))
        throw refuse("tensor arguments " + std::to_string(j) + " and " + std::to_string(i) +
                         " overlap in memory, both may be written, and one starts " +
                         std::to_string((bi.staged ? bi.origin : bj.origin) % dev_.base_align()) +
                         " bytes past the device's buffer alignment (" + std::to_string(dev_.base_align()) +
                         " bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN), so it can only be bound through a copy",
                     "Pass the storage once (one tensor) and index it in the kernel, or pass contiguous() "
                     "copies and write them back");
    }
  std::vector<std::optional<ElementView>> views(args.size());
  std::vector<cl_mem> mems(args.size(), nullptr);
  for (std::size_t i = 0; i < bound.size(); ++i) {
    const Binding& b = bound[i];
    if (!b.tensor) continue;
    if (b.bytes == 0) {
      mems[i] = b.base;  // nothing to address; any valid buffer will do
    } else if (b.same_as != SIZE_MAX) {
      mems[i] = mems[b.same_as];
    } else {
      views[i].emplace(s, *b.tensor, b.bytes, b.writable ? ElementView::Access::ReadWrite : ElementView::Access::Read);
      mems[i] = views[i]->mem();
    }
    values[i] = {sizeof(cl_mem), &mems[i]};
  }
  const Kernel k{kernel_, &launch_mu_, entry_.c_str(), &device};
  launch_args(s, k, global, local, values);
  // Staged tensors go back after the kernel, in stream order.
  for (auto& v : views)
    if (v) v->commit();
}

}  // namespace torsh::opencl
