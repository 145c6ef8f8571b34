#include "launch.hpp"

#include <algorithm>

namespace torsh::cuda {

void check_launch(CudaStream& s, const char* kernel) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda(err, std::string("launch of ") + kernel, s.device().label());
}

std::pair<dim3, dim3> grid_1d(const CudaDevice& dev, std::int64_t n) {
  const std::int64_t block = static_cast<std::int64_t>(dev.hints().preferred_work_group);
  const std::int64_t max_blocks = std::int64_t{std::max(1, dev.info().compute_units)} * 16;
  const std::int64_t blocks = std::clamp<std::int64_t>((n + block - 1) / block, 1, max_blocks);
  return {dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(block))};
}

StridedMeta make_strided_meta(const Shape& shape, std::initializer_list<const rt::TensorArg*> tensors) {
  StridedMeta m{};
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
    if (nd == TORSH_MAX_DIMS)
      throw Error(ErrorCode::Unsupported,
                  "a strided view of " + shape.to_string() + " needs more than " + std::to_string(TORSH_MAX_DIMS) +
                      " dimensions after merging contiguous ones",
                  {.op = "cuda strided kernel", .shapes = {shape.to_string()}}, {"Make the operands contiguous first"});
    m.dims[nd] = shape[d];
    std::size_t k = 0;
    for (const auto* t : tensors) m.st[k++][nd] = t->strides[d];
    ++nd;
  }
  if (nd == 0) {
    m.dims[0] = 1;
    for (std::size_t k = 0; k < tensors.size(); ++k) m.st[k][0] = 1;
    nd = 1;
  }
  m.nd = nd;
  m.numel = shape.numel();
  std::size_t k = 0;
  for (const auto* t : tensors) m.off[k++] = t->offset;
  return m;
}

}  // namespace torsh::cuda
