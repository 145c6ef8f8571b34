// LayerNorm / RMSNorm over contiguous rows: norm.kern.h's norm_rows (f32, f16
// and bf16 storage with f32 math) and norm_f64_rows (devices with cl_khr_fp64
// only), one NM_GROUP work-group per row.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void norm(OpenClStream& s, const rt::NormArgs& a) {
  if (a.rows == 0 || a.n == 0) return;
  // An absent weight or bias is never read: x stands in for its buffer.
  const cl_mem x = mem_of(*a.x.buffer);
  const cl_mem w = a.weight.present() ? mem_of(*a.weight.buffer) : x;
  const cl_mem b = a.bias.present() ? mem_of(*a.bias.buffer) : x;
  const NDRange global = range(static_cast<std::size_t>(a.rows) * NM_GROUP), local = range(NM_GROUP);
  const cl_mem out = mem_of(*a.out.buffer);
  const cl_long n{a.n}, ox{a.x.offset}, ow{a.weight.offset}, ob{a.bias.offset}, oo{a.out.offset};
  const cl_int rms{a.rms ? 1 : 0}, has_w{a.weight.present() ? 1 : 0}, has_b{a.bias.present() ? 1 : 0};
  if (a.x.dtype == DType::F64)
    launch(s, s.device().kernel("norm_f64_rows"), global, local, x, w, b, out, n, ox, ow, ob, oo, cl_float{a.eps}, rms,
           has_w, has_b);
  else
    launch(s, s.device().kernel("norm_rows"), global, local, x, w, b, out, n, ox, ow, ob, oo, cl_float{a.eps}, rms,
           has_w, has_b, cl_int{gpu::elem_code(a.x.dtype)});
}

bool norm_fits(const rt::DeviceImpl& d, const rt::NormArgs& a) {
  return a.x.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Norm, entry<rt::OpKind::Norm, norm>>(rt::DTypes::floating(), norm_fits, "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
