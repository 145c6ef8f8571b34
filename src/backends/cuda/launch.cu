#include "launch.hpp"

namespace torsh::cuda {

void check_launch(CudaStream& s, const char* kernel) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda(err, std::string("launch of ") + kernel, s.device().label());
}

std::pair<dim3, dim3> grid_1d(const CudaDevice& dev, std::int64_t n) {
  const std::int64_t block = static_cast<std::int64_t>(dev.hints().preferred_work_group);
  const std::int64_t blocks = gpu::grid_groups(n, block, dev.info().compute_units);
  return {dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(block))};
}

}  // namespace torsh::cuda
