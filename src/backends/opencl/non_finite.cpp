// The loss scaler's overflow check: non_finite.kern.h's non_finite_elems sets
// a Bool flag when an f32, f64, f16 or bf16 tensor holds a NaN or an infinity
// (bit tests: f64 needs no cl_khr_fp64).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void non_finite(OpenClStream& s, const rt::NonFiniteArgs& a) {
  const std::int64_t n = a.x.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const Kernel k = dev.kernel("non_finite_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  launch(s, k, global, local, mem_of(*a.x.buffer), cl_long{a.x.offset}, cl_long{n}, cl_int{gpu::elem_code(a.x.dtype)},
         mem_of(*a.flag.buffer), cl_long{a.flag.offset});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::NonFinite, entry<rt::OpKind::NonFinite, non_finite>>(rt::DTypes::floating());
});

}  // namespace
}  // namespace torsh::opencl
