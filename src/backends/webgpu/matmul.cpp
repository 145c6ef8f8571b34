// Batched GEMM: matmul.wgsl's matmul_tiled, one 64 x 64 tile of out per
// work-group, each invocation a 4 x 4 block, or matmul_small (one invocation
// per element) for outputs of a few rows or columns; transposes and broadcast
// batches are strides, so no operand is copied. f32, f16 and bf16 storage with f32
// accumulation.
#include <algorithm>

#include "launch.hpp"

namespace torsh::webgpu {
namespace {

constexpr std::int64_t kTile = 64;

// Outputs of at most this many elements per batch take matmul_small.
constexpr std::int64_t kSmallOutput = 1024;

void matmul(WebGpuDevice& dev, const rt::MatmulArgs& a) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  if (batch == 0 || m == 0 || n == 0) return;
  const MatmulMeta g = gpu::matmul_meta(a);
  const bool small = m * n <= kSmallOutput;
  const auto tiles = [](std::int64_t v) { return static_cast<std::uint32_t>((v + kTile - 1) / kTile); };
  // Grids stop at maxComputeWorkgroupsPerDimension: batches go in slices, each from its own offsets.
  const std::int64_t slice = small ? std::max<std::int64_t>(1, (std::int64_t{1} << 30) / (m * n))
                                   : std::int64_t{dev.limits().maxComputeWorkgroupsPerDimension};
  for (std::int64_t b0 = 0; b0 < batch; b0 += slice) {
    const std::int64_t nb = std::min(slice, batch - b0);
    Launch l(dev);
    l.tensor(a.a).tensor(a.b).tensor(a.out);
    l.param(g.m).param(g.n).param(g.k);
    for (const long* s : {g.sa, g.sb, g.so})
      for (int i = 0; i < 3; ++i) l.param(static_cast<std::int64_t>(s[i]));
    l.param(l.offset(0) + b0 * g.sa[0]).param(l.offset(1) + b0 * g.sb[0]).param(l.offset(2) + b0 * g.so[0]);
    l.param(a.alpha).param(a.beta).param(gpu::elem_code(a.out.dtype)).param(nb * m * n);
    if (small)
      l.run("matmul", "matmul_small", nb * m * n);
    else
      l.run_groups("matmul", "matmul_tiled", tiles(n), tiles(m), static_cast<std::uint32_t>(nb));
  }
}

bool matmul_fits(const rt::DeviceImpl& d, const rt::MatmulArgs& a) {
  const auto& lim = static_cast<const WebGpuDevice&>(d).limits();
  const std::int64_t max_groups = lim.maxComputeWorkgroupsPerDimension;
  return (a.out.shape[1] + kTile - 1) / kTile <= max_groups && (a.out.shape[2] + kTile - 1) / kTile <= max_groups &&
         a.a.shape[2] < (std::int64_t{1} << 31) && loops_fit(d, a.a.shape[2]) && fits(d, {&a.a, &a.b, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(
      gpu::kElemDTypes, matmul_fits,
      "64-row and 64-column tiles within the grid, k within the device's "
      "loop limit");
});

}  // namespace
}  // namespace torsh::webgpu
