// Batched matmul: the op layer's rank-3 strided views become one gemm::Batch
// (gemm.hpp: packed, cache-blocked micro-kernels for f32, f16 and bf16 with
// f32 accumulation; an unpacked loop for tiny products and f64).
#include "device.hpp"
#include "gemm/gemm.hpp"

namespace torsh::cpu {
namespace {

gemm::Mat mat(const rt::TensorArg& t) {
  const auto* base = static_cast<const char*>(t.buffer->host_ptr());
  return {base + t.offset * static_cast<std::int64_t>(dtype_size(t.dtype)), t.dtype, t.strides[1], t.strides[2]};
}

}  // namespace

void matmul(const rt::MatmulArgs& g) {
  gemm::Batch bt;
  gemm::Problem& p = bt.p;
  p.a = mat(g.a);
  p.b = mat(g.b);
  const gemm::Mat c = mat(g.out);
  p.c = const_cast<void*>(c.p);
  p.c_dtype = c.dtype;
  p.c_rs = c.rs;
  p.c_cs = c.cs;
  p.m = g.out.shape[1];
  p.n = g.out.shape[2];
  p.k = g.a.shape[2];
  p.alpha = g.alpha;
  p.beta = g.beta;
  bt.count = g.out.shape[0];
  bt.a_bs = g.a.strides[0];
  bt.b_bs = g.b.strides[0];
  bt.c_bs = g.out.strides[0];
  gemm::run(bt);
}

namespace {
const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(rt::DTypes::floating());
});
}  // namespace

}  // namespace torsh::cpu
