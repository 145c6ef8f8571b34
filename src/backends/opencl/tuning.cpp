#include "tuning.hpp"

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "launch.hpp"
#include "torsh/backend/op_args.hpp"
#include "torsh/runtime/autotune.hpp"

namespace torsh::opencl {

namespace {

constexpr int kCandidateSizes[] = {64, 32, 128, 256};  // 64 first: the usual built-in default

int slot_of(const char* kernel) {
  if (std::strcmp(kernel, "binary_f32_contig") == 0) return 0;
  if (std::strcmp(kernel, "binary_f32_strided") == 0) return 1;
  if (std::strcmp(kernel, "copy_b32_strided") == 0) return 2;
  return -1;
}

StridedMeta dense_meta(std::int64_t n) {
  StridedMeta m{};
  m.nd = 1;
  m.numel = n;
  m.dims[0] = n;
  for (auto& st : m.st) st[0] = 1;
  return m;
}

// Measures k over 2^bucket elements with each candidate size on scratch
// buffers and a queue of its own, so neither the caller's data nor the work
// queued on its streams is touched. Each run is several launches (about 2^20
// elements in all) ended by clFinish, so the host clock the tuner reads
// covers the device work.
std::string measure(OpenClDevice& dev, const Kernel& k, int slot, int bucket, std::size_t max_local) {
  const std::int64_t n = std::int64_t{1} << bucket;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  auto stream = dev.create_stream();
  cl_command_queue q = stream_of(*stream).queue();
  std::vector<std::unique_ptr<OpenClBuffer>> bufs;
  for (int i = 0; i < (slot == 2 ? 2 : 3); ++i) {
    bufs.push_back(dev.scratch(bytes));
    const float zero = 0.0f;
    check_cl(clEnqueueFillBuffer(q, bufs.back()->mem(), &zero, sizeof zero, 0, bytes, 0, nullptr, nullptr),
             "clEnqueueFillBuffer (tuning scratch)", dev.label());
  }
  const cl_mem x = bufs[0]->mem(), y = bufs[1]->mem(), z = slot == 2 ? nullptr : bufs[2]->mem();
  const StridedMeta meta = dense_meta(n);
  const cl_long count = n;
  const cl_int op = BINARY_ADD;
  const int launches = std::max(1, (1 << 20) >> bucket);

  const auto run = [&](int local) {
    const auto [global, group] = grid_1d_with(dev, n, local);
    {
      std::lock_guard lk(*k.mu);
      cl_uint i = 0;
      k.set_arg(i++, sizeof x, &x);
      k.set_arg(i++, sizeof y, &y);
      if (slot != 2) k.set_arg(i++, sizeof z, &z);
      if (slot == 0) {
        const cl_long zero = 0;  // the element offsets of a, b and out
        for (int t = 0; t < 3; ++t) k.set_arg(i++, sizeof zero, &zero);
        k.set_arg(i++, sizeof count, &count);
      } else {
        k.set_arg(i++, sizeof meta, &meta);
      }
      if (slot != 2) k.set_arg(i++, sizeof op, &op);
      for (int l = 0; l < launches; ++l)
        check_cl(clEnqueueNDRangeKernel(q, k.handle, 1, nullptr, global.size.data(),
                                        group.dims ? group.size.data() : nullptr, 0, nullptr, nullptr),
                 "clEnqueueNDRangeKernel (tuning)", dev.label());
    }
    check_cl(clFinish(q), "clFinish (tuning)", dev.label());
  };

  std::vector<autotune::Candidate> candidates;
  for (int size : kCandidateSizes)
    if (static_cast<std::size_t>(size) <= max_local)
      candidates.push_back({"local=" + std::to_string(size), [&run, size] { run(size); }});
  candidates.push_back({"driver", [&run] { run(WorkGroupTuning::kDriverChoice); }});
  const std::string shape =
      bucket == WorkGroupTuning::kHi ? "n>=2^" + std::to_string(bucket) : "n=2^" + std::to_string(bucket);
  return autotune::choose({"opencl:" + dev.info().name, std::string("work_group_1d:") + k.name, shape, DType::F32},
                          candidates, 3);
}

}  // namespace

int WorkGroupTuning::local_size(OpenClDevice& dev, const Kernel& k, std::int64_t n, std::size_t max_local) {
  if (n < (std::int64_t{1} << kLo) || !autotune::enabled()) return kDefault;
  const int slot = slot_of(k.name);
  if (slot < 0) return kDefault;
  const int bucket = std::min(kHi, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n))) - 1);
  std::atomic<int>& c = choice_[slot][bucket - kLo];
  int v = c.load(std::memory_order_relaxed);
  if (v == 0) {
    const std::string pick = measure(dev, k, slot, bucket, max_local);
    v = pick == "driver" ? -1 : std::stoi(pick.substr(pick.find('=') + 1));
    c.store(v, std::memory_order_relaxed);
  }
  return v < 0 ? kDriverChoice : v;
}

int MatmulTuning::known(DType dtype, const std::array<int, 3>& cls) {
  std::lock_guard lk(mu_);
  const auto it = chosen_.find(std::make_pair(dtype, cls));
  return it == chosen_.end() ? -1 : it->second;
}

int MatmulTuning::choose(OpenClDevice& dev, DType dtype, const std::array<int, 3>& cls,
                         std::span<const Candidate> candidates, Runner run) {
  std::lock_guard lk(mu_);
  const auto key = std::make_pair(dtype, cls);
  if (const auto it = chosen_.find(key); it != chosen_.end()) return it->second;

  // The class's representative shape: m = 2^cls[0] and so on, dense row-major, batch 1.
  const std::int64_t m = std::int64_t{1} << cls[0], n = std::int64_t{1} << cls[1], k = std::int64_t{1} << cls[2];
  const std::size_t es = dtype_size(dtype);
  auto stream = dev.create_stream();
  OpenClStream& s = stream_of(*stream);
  std::vector<std::unique_ptr<OpenClBuffer>> bufs;
  for (std::int64_t elems : {m * k, k * n, m * n}) {
    const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(elems, 1)) * es;
    bufs.push_back(dev.scratch(bytes));
    const std::uint8_t zero = 0;
    check_cl(clEnqueueFillBuffer(s.queue(), bufs.back()->mem(), &zero, 1, 0, bytes, 0, nullptr, nullptr),
             "clEnqueueFillBuffer (tuning scratch)", dev.label());
  }
  const auto arg = [&](int i, std::int64_t rows, std::int64_t cols) {
    rt::TensorArg t;
    t.buffer = bufs[static_cast<std::size_t>(i)].get();
    t.dtype = dtype;
    t.shape = Shape{1, rows, cols};
    t.strides = Strides{rows * cols, cols, 1};
    return t;
  };
  rt::MatmulArgs a;
  a.a = arg(0, m, k);
  a.b = arg(1, k, n);
  a.out = arg(2, m, n);
  // Small classes repeat the GEMM so that a run is long enough for the host clock.
  const std::int64_t flops = std::max<std::int64_t>(m * n * k, 1);
  const int launches = static_cast<int>(std::clamp<std::int64_t>((std::int64_t{1} << 24) / flops, 1, 64));

  std::vector<autotune::Candidate> measured;
  for (const Candidate& c : candidates)
    measured.push_back({c.name, [&s, &a, run, launches, choice = c.choice] {
                          for (int l = 0; l < launches; ++l) run(s, a, choice);
                          s.synchronize();
                        }});
  const std::string shape =
      "m=2^" + std::to_string(cls[0]) + " n=2^" + std::to_string(cls[1]) + " k=2^" + std::to_string(cls[2]);
  const std::string pick = autotune::choose({"opencl:" + dev.info().name, "matmul", shape, dtype}, measured, 3);
  int choice = candidates.front().choice;
  for (const Candidate& c : candidates)
    if (c.name == pick) choice = c.choice;
  chosen_.emplace(key, choice);
  return choice;
}

}  // namespace torsh::opencl
