// Rotary embedding (NeoX and GPT-J) on contiguous [batch, seq, heads, head_dim]:
// rope.kern.h's rope_elems (f32, f16 and bf16 storage with f32 math) and
// rope_f64_elems (devices with cl_khr_fp64 only), one work-item per output
// element; the cos/sin tables are f32.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

void rope(OpenClStream& s, const rt::RopeArgs& a) {
  const std::int64_t n = a.out.numel();
  if (n == 0) return;
  OpenClDevice& dev = s.device();
  const bool f64 = a.x.dtype == DType::F64;
  const Kernel k = dev.kernel(f64 ? "rope_f64_elems" : "rope_elems");
  const auto [global, local] = grid_1d(dev, k, n);
  const cl_mem x = mem_of(*a.x.buffer), cs = mem_of(*a.cos.buffer), sn = mem_of(*a.sin.buffer),
               out = mem_of(*a.out.buffer);
  const cl_long total{n}, seq{a.x.shape[1]}, heads{a.x.shape[2]}, hd{a.x.shape[3]}, rot{a.rot_dim}, pos0{a.pos0},
      ox{a.x.offset}, oc{a.cos.offset}, os{a.sin.offset}, oo{a.out.offset};
  const cl_int neox{a.neox ? 1 : 0};
  if (f64)
    launch(s, k, global, local, x, cs, sn, out, total, seq, heads, hd, rot, pos0, ox, oc, os, oo, neox);
  else
    launch(s, k, global, local, x, cs, sn, out, total, seq, heads, hd, rot, pos0, ox, oc, os, oo, neox,
           cl_int{gpu::elem_code(a.x.dtype)});
}

bool rope_fits(const rt::DeviceImpl& d, const rt::RopeArgs& a) {
  return a.x.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Rope, entry<rt::OpKind::Rope, rope>>(rt::DTypes::floating(), rope_fits, "f64 needs cl_khr_fp64");
});

}  // namespace
}  // namespace torsh::opencl
