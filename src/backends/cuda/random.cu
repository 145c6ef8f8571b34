// rand / randn / bernoulli: random.kern.h's random_elems (f32, f16, bf16) and
// random_f64, the CPU's Philox bits.
#include "launch.hpp"

#include "backends/gpu/kernels/philox.kern.h"
#include "backends/gpu/kernels/random.kern.h"

namespace torsh::cuda {
namespace {

void random(CudaStream& s, const rt::RandomArgs& r) {
  const std::int64_t n = r.out.numel();
  if (n == 0) return;
  const auto [grid, block] = grid_1d(s.device(), (n + 3) / 4);  // a thread per Philox block
  // The kernels take the 64-bit seed and offset as long and use their bits unsigned.
  const auto seed = static_cast<std::int64_t>(r.seed), offset = static_cast<std::int64_t>(r.offset);
  const int kind = static_cast<int>(r.kind);
  if (r.out.dtype == DType::F64)
    launch(s, TORSH_CUDA_KERNEL(random_f64), grid, block, static_cast<double*>(ptr_of(*r.out.buffer)), r.out.offset, n,
           seed, offset, kind, r.a, r.b);
  else
    launch(s, TORSH_CUDA_KERNEL(random_elems), grid, block, bytes_of(*r.out.buffer), r.out.offset, n, seed, offset,
           kind, r.a, r.b, gpu::elem_code(r.out.dtype));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Random, entry<rt::OpKind::Random, random>>(rt::DTypes::floating());
});

}  // namespace
}  // namespace torsh::cuda
