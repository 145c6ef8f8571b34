// rand / randn / bernoulli: random.kern.h's random_elems (f32, f16, bf16) and
// random_f64 (devices with cl_khr_fp64), the CPU's Philox bits.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void random(OpenClStream& s, const rt::RandomArgs& r) {
  const std::int64_t n = r.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const bool f64 = r.out.dtype == DType::F64;
  const Kernel k = dev.kernel(f64 ? "random_f64" : "random_elems");
  const auto [global, local] = grid_1d(dev, k, (n + 3) / 4);  // a work-item per Philox block
  const cl_mem out = mem_of(*r.out.buffer);
  // The kernels take the 64-bit seed and offset as long and use their bits unsigned.
  const cl_long seed = static_cast<cl_long>(r.seed), offset = static_cast<cl_long>(r.offset);
  const cl_int kind{static_cast<int>(r.kind)};
  if (f64)
    launch(s, k, global, local, out, cl_long{r.out.offset}, cl_long{n}, seed, offset, kind, cl_float{r.a},
           cl_float{r.b});
  else
    launch(s, k, global, local, out, cl_long{r.out.offset}, cl_long{n}, seed, offset, kind, cl_float{r.a},
           cl_float{r.b}, cl_int{gpu::elem_code(r.out.dtype)});
}

bool random_fits(const rt::DeviceImpl& d, const rt::RandomArgs& r) {
  return r.out.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Random, entry<rt::OpKind::Random, random>>(rt::DTypes::floating(), random_fits,
                                                               "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
