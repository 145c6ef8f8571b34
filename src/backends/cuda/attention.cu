// Scaled dot-product attention: attention.kern.h's attention_rows, one
// AT_GROUP block per query row with an online softmax over key tiles (no
// score matrix), causal with either alignment, grouped-query, and k/v as
// strided views with packed rows (a KV cache's prefix) read in place. f32,
// f16 and bf16 storage with f32 math; head sizes up to AT_MAX_D. Decoding
// (few query rows, a long cache) splits each row's keys over blocks and
// combines their partial softmaxes (attention_combine).
#include "launch.hpp"

#include <climits>

#include "backends/gpu/kernels/attention.kern.h"

namespace torsh::cuda {
namespace {

// One block per query row in gridDim.x: B * Hq * Sq up to 2^31 - 1.
bool fits(const rt::DeviceImpl&, const rt::AttentionArgs& a) {
  return gpu::attention_fits(a) && gpu::attention_groups(a) * gpu::attention_splits(a) <= INT_MAX;
}

// Split-K's partials: stream-ordered scratch, freed on the stream after both kernels.
struct Partials {
  CudaStream& s;
  float* p = nullptr;
  Partials(CudaStream& st, std::size_t bytes) : s(st) {
    check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&p), bytes, st.handle()),
               "cudaMallocAsync (attention partials)", st.device().label());
  }
  Partials(const Partials&) = delete;
  Partials& operator=(const Partials&) = delete;
  ~Partials() { (void)cudaFreeAsync(p, s.handle()); }
};

void attention(CudaStream& s, const rt::AttentionArgs& a) {
  const std::int64_t rows = gpu::attention_groups(a);
  if (rows == 0 || a.v.shape[3] == 0) return;
  const AttentionMeta m = gpu::attention_meta(a);
  if (m.splits == 1) {
    launch(s, TORSH_CUDA_KERNEL(attention_rows), dim3(static_cast<unsigned>(rows)), dim3(AT_GROUP),
           bytes_of(*a.q.buffer), bytes_of(*a.k.buffer), bytes_of(*a.v.buffer), bytes_of(*a.out.buffer),
           static_cast<float*>(nullptr), m);
    return;
  }
  Partials part(s, static_cast<std::size_t>(rows * m.splits * (m.dv + 2)) * sizeof(float));
  launch(s, TORSH_CUDA_KERNEL(attention_rows), dim3(static_cast<unsigned>(rows * m.splits)), dim3(AT_GROUP),
         bytes_of(*a.q.buffer), bytes_of(*a.k.buffer), bytes_of(*a.v.buffer), bytes_of(*a.out.buffer), part.p, m);
  launch(s, TORSH_CUDA_KERNEL(attention_combine), dim3(static_cast<unsigned>(rows)), dim3(AT_GROUP),
         static_cast<const float*>(part.p), bytes_of(*a.out.buffer), m);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Attention, entry<rt::OpKind::Attention, attention>>(
      gpu::kElemDTypes, fits, "head sizes up to 256, k/v rows packed, fewer than 2^31 query rows");
});

}  // namespace
}  // namespace torsh::cuda
