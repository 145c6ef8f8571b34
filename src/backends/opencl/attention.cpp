// Scaled dot-product attention: attention.kern.h's attention_rows, one
// AT_GROUP work-group per query row with an online softmax over key tiles
// (no score matrix), causal with either alignment, grouped-query, and k/v as
// strided views with packed rows (a KV cache's prefix) read in place. f32,
// f16 and bf16 storage with f32 math; head sizes up to AT_MAX_D. Decoding
// (few query rows, a long cache) splits each row's keys over work-groups
// and combines their partial softmaxes (attention_combine).
#include "launch.hpp"

namespace torsh::opencl {
namespace {

bool fits(const rt::DeviceImpl&, const rt::AttentionArgs& a) { return gpu::attention_fits(a); }

void attention(OpenClStream& s, const rt::AttentionArgs& a) {
  const std::int64_t rows = gpu::attention_groups(a);
  if (rows == 0 || a.v.shape[3] == 0) return;
  const AttentionMeta m = gpu::attention_meta(a);
  if (m.splits == 1) {
    launch(s, s.device().kernel("attention_rows"), range(static_cast<std::size_t>(rows) * AT_GROUP), range(AT_GROUP),
           mem_of(*a.q.buffer), mem_of(*a.k.buffer), mem_of(*a.v.buffer), mem_of(*a.out.buffer), mem_of(*a.out.buffer),
           m);
    return;
  }
  // The partials live until both kernels ran: the buffer is released after
  // its last use on the queue (clReleaseMemObject waits for enqueued work).
  const auto part = s.device().scratch(static_cast<std::size_t>(rows * m.splits * (m.dv + 2)) * sizeof(float));
  if (CommandBufferGraph* g = recording(s)) g->keep(part->mem());  // replays reuse it
  launch(s, s.device().kernel("attention_rows"), range(static_cast<std::size_t>(rows * m.splits) * AT_GROUP),
         range(AT_GROUP), mem_of(*a.q.buffer), mem_of(*a.k.buffer), mem_of(*a.v.buffer), mem_of(*a.out.buffer),
         mem_of(*part), m);
  launch(s, s.device().kernel("attention_combine"), range(static_cast<std::size_t>(rows) * AT_GROUP), range(AT_GROUP),
         mem_of(*part), mem_of(*a.out.buffer), m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Attention, entry<rt::OpKind::Attention, attention>>(gpu::kElemDTypes, fits,
                                                                        "head sizes up to 256, k/v rows packed");
});

}  // namespace
}  // namespace torsh::opencl
