// Scaled dot-product attention: attention.wgsl's attention_rows, one
// work-group per query row with an online softmax over tiles of 64 keys;
// decoding (few query rows, a long cache) splits each row's keys over
// work-groups and combines their partial softmaxes (attention_combine).
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

void attention(WebGpuDevice& dev, const rt::AttentionArgs& a) {
  const std::int64_t rows = gpu::attention_groups(a);
  if (rows == 0 || a.v.shape[3] == 0) return;
  const AttentionMeta m = gpu::attention_meta(a);
  // Split-K's partials; without a split `out` is bound in their place, unused.
  std::unique_ptr<rt::BufferImpl> part_memory;
  rt::TensorArg part = a.out;
  if (m.splits > 1) {
    const std::int64_t n = rows * m.splits * (m.dv + 2);
    part_memory = dev.allocate(static_cast<std::size_t>(n) * sizeof(float));
    part = rt::TensorArg{};
    part.buffer = part_memory.get();
    part.dtype = DType::F32;
    part.shape = Shape{n};
    part.strides = Strides{1};
  }
  auto bind = [&](Launch& l) {
    l.tensor(a.q).tensor(a.k).tensor(a.v).tensor(a.out).tensor(part);
    l.param(m.hq).param(m.sq).param(m.d).param(m.hkv).param(m.skv).param(m.dv);
    l.param(m.kb).param(m.kh).param(m.vb).param(m.vh);
    l.param(l.offset(0)).param(l.offset(1)).param(l.offset(2)).param(l.offset(3));
    l.param(static_cast<std::uint32_t>(static_cast<std::int32_t>(m.shift))).param(m.scale).param(m.causal);
    l.param(m.dt).param(m.splits).param(m.split_len);
    l.param(m.window).param(m.softcap);
  };
  Launch rows_launch(dev);
  bind(rows_launch);
  rows_launch.run_rows("attention", "attention_rows", rows * m.splits);
  if (m.splits == 1) return;
  Launch combine(dev);
  bind(combine);
  combine.run_rows("attention", "attention_combine", rows);
}

bool attention_fits(const rt::DeviceImpl& d, const rt::AttentionArgs& a) {
  const std::int64_t shift = gpu::attention_meta(a).shift;
  // Per tile of 64 keys: the scores (d), the weighted values (64 per 64 of dv) and the reductions.
  const std::int64_t skv = a.k.shape[2], dq = a.q.shape[3], dv = a.v.shape[3];
  // The shader's window arithmetic is in i32.
  return gpu::attention_fits(a) && shift > -(std::int64_t{1} << 30) && shift < (std::int64_t{1} << 30) &&
         a.window < (std::int64_t{1} << 30) && loops_fit(d, strided(skv, 64) * (dq + 64 * strided(dv, 64) + 32) + 16) &&
         fits(d, {&a.q, &a.k, &a.v, &a.out});
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Attention, entry<rt::OpKind::Attention, attention>>(
      gpu::kElemDTypes, attention_fits, "head sizes up to 256, k/v rows packed, loops within the device's budget");
});

}  // namespace
}  // namespace torsh::webgpu
