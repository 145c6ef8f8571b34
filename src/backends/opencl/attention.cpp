// Scaled dot-product attention: attention.kern.h's attention_rows, one
// AT_GROUP work-group per query row with an online softmax over key tiles
// (no score matrix), causal with either alignment, grouped-query, and k/v as
// strided views with packed rows (a KV cache's prefix) read in place. f32,
// f16 and bf16 storage with f32 math; head sizes up to AT_MAX_D.
#include "launch.hpp"

namespace torsh::opencl {
namespace {

bool fits(const rt::DeviceImpl&, const rt::AttentionArgs& a) { return gpu::attention_fits(a); }

void attention(OpenClStream& s, const rt::AttentionArgs& a) {
  const std::int64_t rows = gpu::attention_groups(a);
  if (rows == 0 || a.v.shape[3] == 0) return;
  launch(s, s.device().kernel("attention_rows"), range(static_cast<std::size_t>(rows) * AT_GROUP), range(AT_GROUP),
         mem_of(*a.q.buffer), mem_of(*a.k.buffer), mem_of(*a.v.buffer), mem_of(*a.out.buffer), gpu::attention_meta(a));
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Attention, entry<rt::OpKind::Attention, attention>>(gpu::kElemDTypes, fits,
                                                                        "head sizes up to 256, k/v rows packed");
});

}  // namespace
}  // namespace torsh::opencl
