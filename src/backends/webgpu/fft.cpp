// DFTs: kernels/fft.wgsl's passes in the order gpu/fft_passes.hpp gives
// (f32; WGSL has no doubles, so f64 transforms run on the CPU): short lines
// in one fft_local dispatch, longer ones a dispatch per stage. Row buffers
// are device buffers per call, bound like tensors; wgpu keeps a buffer alive
// until the work that uses it has run.
#include <algorithm>
#include <cstring>
#include <memory>

#include "backends/gpu/fft_passes.hpp"
#include "launch.hpp"

namespace torsh::webgpu {
namespace {

std::uint32_t f32_bits(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

struct Passes {
  WebGpuDevice& dev;
  const rt::FftArgs& a;

  // A row buffer as an f32 tensor argument over its own device buffer.
  struct Buf {
    std::unique_ptr<rt::BufferImpl> buffer;
    rt::TensorArg arg;
  };
  Buf alloc(std::size_t bytes) {
    Buf b{dev.allocate(bytes), {}};
    b.arg.buffer = b.buffer.get();
    b.arg.dtype = DType::F32;
    b.arg.shape = Shape{static_cast<std::int64_t>(bytes / 4)};
    b.arg.strides = Strides{1};
    return b;
  }
  void gather(Buf& to, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x) {
    Launch l(dev);
    l.tensor(a.x).tensor(to.arg);
    // fft_load's layout, shared with fft_local (P[1] unused here).
    l.param(l.offset(0)).param(0).param(lines).param(n).param(inner).param(kind).param(len_x);
    l.run("fft", "fft_gather", lines * n);
  }
  void stage(Buf& from, Buf& to, std::int64_t lines, std::int64_t n, std::int64_t len, std::int64_t s, int r,
             int sign) {
    Launch l(dev);
    l.tensor(from.arg).tensor(to.arg);
    l.param(lines).param(n).param(len).param(s).param(r).param(sign > 0 ? 1 : 0);
    l.run("fft", "fft_stage", lines * (len / r) * s);
  }
  void scatter(Buf& from, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_out,
               double scale) {
    Launch l(dev);
    l.tensor(from.arg).tensor(a.out);
    l.param(l.offset(1)).param(lines).param(n).param(inner).param(kind).param(len_out).param(f32_bits(scale));
    l.run("fft", "fft_scatter", lines * len_out);
  }
  // Modes as fft.kern.h's fft_chirp: 0 reads rows, writes p; 1 writes p; 2 reads p, writes rows.
  void chirp(Buf& rows, Buf& p, std::int64_t lines, std::int64_t n, std::int64_t m, int sign, int mode) {
    Launch l(dev);
    if (mode == 2)
      l.tensor(p.arg).tensor(rows.arg);
    else
      l.tensor(rows.arg).tensor(p.arg);
    l.param(lines).param(n).param(m).param(sign > 0 ? 1 : 0).param(mode);
    l.run("fft", "fft_chirp", (mode == 1 ? 1 : lines) * (mode == 2 ? n : m));
  }
  void local(std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x, std::int64_t len_out,
             int radices, int sign, double scale) {
    Launch l(dev);
    l.tensor(a.x).tensor(a.out);
    l.param(l.offset(0)).param(l.offset(1)).param(lines).param(n).param(inner).param(kind).param(len_x);
    l.param(len_out).param(radices).param(sign > 0 ? 1 : 0).param(f32_bits(scale));
    // One work-group per line, at most kMaxGroups (each then takes several lines).
    constexpr std::int64_t kMaxGroups = 8192;
    l.run_rows("fft", "fft_local", std::min(lines, kMaxGroups));
  }
  void pointwise(Buf& p, Buf& b, std::int64_t lines, std::int64_t m) {
    Launch l(dev);
    l.tensor(b.arg).tensor(p.arg);
    l.param(lines).param(m);
    l.run("fft", "fft_pointwise", lines * m);
  }
};

void fft(WebGpuDevice& dev, const rt::FftArgs& a) {
  Passes p{dev, a};
  gpu::run_fft_passes(p, a, sizeof(float));
}

// f32, every index of the row buffers (and of x and out) below 2^31, Bluestein's m included.
bool fft_fits(const rt::DeviceImpl& d, const rt::FftArgs& a) {
  if (a.out.dtype != DType::F32 || !fits(d, {&a.x, &a.out})) return false;
  std::int64_t m = 1;
  while (m < 2 * a.n - 1) m *= 2;
  const std::int64_t longest = gpu::fft_radices(a.n).empty() && a.n > 1 ? m : a.n;
  return a.outer * a.inner * longest * 2 < (std::int64_t{1} << 31);
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Fft, entry<rt::OpKind::Fft, fft>>(gpu::kF32, fft_fits,
                                                      "f32 (WGSL has no doubles), every index below 2^31");
});

}  // namespace
}  // namespace torsh::webgpu
