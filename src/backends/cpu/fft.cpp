// DFTs along one axis (rt::FftArgs) with the engine of fft/. A last-axis
// line is read as (re, im) pairs by the engine's first stage and written as
// pairs, scaled, by its last; a line with a stride is copied into split
// arrays first, and lines along an inner axis go through side by side in
// blocks. Many lines go to the pool a line per task; one long line (the
// four-step form) is split over its column and row blocks instead. Real
// transforms of even length run the half-length complex plan on the pairs
// (x_2t, x_2t+1) and untangle the two half spectra with the plan's
// post-twiddles; odd lengths take the full complex plan with zero imaginary
// parts.
#include <algorithm>

#include "device.hpp"
#include "fft/fft_plan.hpp"
#include "platform/scratch.hpp"
#include "platform/thread_pool.hpp"

namespace torsh::cpu {
namespace {

// fn over [b, e): split over the CPU pool when the line is long and its
// transform was split too (threads > 1); the untangling of a real line of
// 2^20 is a fifth of its time on one thread.
template <class F>
void over(int threads, std::int64_t b, std::int64_t e, F&& fn) {
  constexpr std::int64_t kGrain = std::int64_t{1} << 14;
  if (threads <= 1 || e - b < 2 * kGrain) return fn(b, e);
  pool().parallel_for(e - b, kGrain, [&](std::int64_t i0, std::int64_t i1) { fn(b + i0, b + i1); });
}

template <class T>
struct Line {
  const rt::FftArgs& a;
  const fft::Plan<T>& plan;  // length n (C2C, odd real) or n / 2 (even real)
  std::int64_t len_x, len_out;
  T scale;

  // One line: o, i select it in [outer, len, inner]; buf holds buffer_size(plan) values.
  void operator()(const T* x, T* out, std::int64_t o, std::int64_t i, T* buf, int threads) const {
    // A last-axis line has constant steps, so its copy loops vectorise.
    a.inner == 1 ? line<true>(x, out, o, i, buf, threads) : line<false>(x, out, o, i, buf, threads);
  }

  template <bool Contiguous>
  void line(const T* x, T* out, std::int64_t o, std::int64_t i, T* buf, int threads) const {
    const std::int64_t n = a.n, h = plan.n, inner = Contiguous ? 1 : a.inner;
    T* re = buf;
    T* im = buf + h + 2 * fft::kPad;  // apart modulo 4 KiB (fft::kPad)
    T* work = buf + 2 * h + 4 * fft::kPad;
    const std::int64_t cx = a.kind == rt::FftKind::R2C ? 1 : 2, co = a.kind == rt::FftKind::C2R ? 1 : 2;
    const T* xl = x + (o * len_x * inner + i) * cx;
    T* ol = out + (o * len_out * inner + i) * co;
    // x's and out's step between values: 2 for complex, 1 for real, times inner.
    constexpr std::int64_t one = 1, two = 2;
    switch (a.kind) {
      case rt::FftKind::C2C: {
        const std::int64_t xs = Contiguous ? two : 2 * inner, os = xs;
        if (Contiguous && !plan.bluestein) return fft::forward_pairs(plan, xl, ol, a.inverse, scale, buf, threads);
        for (std::int64_t t = 0; t < n; ++t) re[t] = xl[t * xs], im[t] = xl[t * xs + 1];
        a.inverse ? fft::forward(plan, im, re, work, threads) : fft::forward(plan, re, im, work, threads);
        for (std::int64_t t = 0; t < n; ++t) ol[t * os] = re[t] * scale, ol[t * os + 1] = im[t] * scale;
        return;
      }
      case rt::FftKind::R2C: {
        const std::int64_t xs = Contiguous ? one : inner, os = Contiguous ? two : 2 * inner;
        if (n % 2 == 1) {
          for (std::int64_t t = 0; t < n; ++t) re[t] = xl[t * xs], im[t] = 0;
          fft::forward(plan, re, im, work, threads);
          for (std::int64_t k = 0; k <= n / 2; ++k) ol[k * os] = re[k] * scale, ol[k * os + 1] = im[k] * scale;
          return;
        }
        if (Contiguous && !plan.bluestein) {
          fft::forward_from_pairs(plan, xl, re, im, work, threads);
        } else {
          for (std::int64_t t = 0; t < h; ++t) re[t] = xl[2 * t * xs], im[t] = xl[(2 * t + 1) * xs];
          fft::forward(plan, re, im, work, threads);
        }
        // X_k = E_k + w^k O_k, E = (Z_k + conj Z_(h-k)) / 2, O = -i (Z_k - conj Z_(h-k)) / 2.
        // Frequencies 0 and h take Z_0 alone; the loop between reads Z from
        // both ends (vectorised: the reversed reads are permutes).
        // The loop starts at k = 0 (which reads Z_h, the pad after re and im,
        // and is then overwritten) so that its vectors fall on cache lines:
        // from k = 1 every store would be split across two, 1.5x the pass's time.
        const T half = T(0.5) * scale, z0r = re[0], z0i = im[0];
        over(threads, 0, h,
             [&](std::int64_t k0, std::int64_t k1) { fft::untangle_r2c(plan, re, im, ol, os, k0, k1, half); });
        ol[0] = (z0r + z0i) * scale, ol[1] = 0;
        ol[h * os] = (z0r - z0i) * scale, ol[h * os + 1] = 0;
        return;
      }
      case rt::FftKind::C2R: {
        const std::int64_t xs = Contiguous ? two : 2 * inner, os = Contiguous ? one : inner;
        if (n % 2 == 1) {
          // The whole Hermitian spectrum, then a complex inverse.
          for (std::int64_t k = 0; k <= n / 2; ++k) re[k] = xl[k * xs], im[k] = k == 0 ? T(0) : xl[k * xs + 1];
          for (std::int64_t k = 1; k <= n / 2; ++k) re[n - k] = re[k], im[n - k] = -im[k];
          fft::forward(plan, im, re, work, threads);
          for (std::int64_t t = 0; t < n; ++t) ol[t * os] = re[t] * scale;
          return;
        }
        // Z_k = E_k + i O_k with E = (X_k + conj X_(h-k)) / 2, O = (X_k - conj X_(h-k)) conj(w^k) / 2;
        // the imaginary parts of X_0 and X_h do not exist in a real signal's spectrum.
        const T x0 = xl[0], xh = xl[h * xs];
        // From k = 0, overwritten below, so that the vectors fall on cache lines.
        over(threads, 0, h, [&](std::int64_t k0, std::int64_t k1) { fft::untangle_c2r(plan, xl, xs, re, im, k0, k1); });
        // k = 0 (w = 1): E = (X_0 + X_h) / 2, O = (X_0 - X_h) / 2, both real.
        re[0] = T(0.5) * (x0 + xh), im[0] = T(0.5) * (x0 - xh);
        fft::forward(plan, im, re, work, threads);
        const T s2 = scale * T(2);
        over(threads, 0, h,
             [&](std::int64_t t0, std::int64_t t1) { fft::interleave_scaled(re, im, ol, os, t0, t1, s2); });
        return;
      }
    }
  }
};

// The calling thread's line buffer: grow-only, so repeated transforms fault
// no pages in; given back after a call that needed more than kKeepBytes.
constexpr std::size_t kKeepBytes = std::size_t{64} << 20;
template <class T>
struct LineBuffer {
  // The thread-local is looked up once: each lookup is a call (through the
  // TLS descriptor or __tls_get_addr), and a short transform makes few others.
  explicit LineBuffer(std::size_t values) : s(scratch()), p(static_cast<T*>(s.get(values * sizeof(T)))) {}
  ~LineBuffer() { s.trim(kKeepBytes); }
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;
  static Scratch& scratch() {
    thread_local Scratch t;
    return t;
  }
  Scratch& s;
  T* p;
};

// C2C along an axis that is not the last: lines i .. i + b of one outer
// index sit side by side (a row of b pairs per t), so a block of them goes
// through the batched engine as it lies, every stage vectorised across the
// block, instead of being gathered line by line.
template <class T>
void run_side_by_side(const rt::FftArgs& a, const fft::Plan<T>& plan) {
  constexpr std::int64_t B = fft::kBlock<T>;
  const std::int64_t n = a.n, inner = a.inner, per_outer = (inner + B - 1) / B;
  const T* x = data_of<T>(a.x);
  T* out = data_of<T>(a.out);
  const T scale = static_cast<T>(a.scale);
  const std::int64_t grain = std::max<std::int64_t>(1, 4096 / (n * B));
  pool().parallel_for(a.outer * per_outer, grain, [&](std::int64_t b0, std::int64_t b1) {
    LineBuffer<T> buf(static_cast<std::size_t>(4 * n * B + 8 * fft::kPad));
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      const std::int64_t o = blk / per_outer, i0 = (blk % per_outer) * B, b = std::min(B, inner - i0);
      const std::int64_t at = (o * n * inner + i0) * 2;
      fft::forward_side_by_side(plan, x + at, out + at, inner, b, a.inverse, scale, buf.p);
    }
  });
}

template <class T>
void run(const rt::FftArgs& a) {
  const bool real = a.kind != rt::FftKind::C2C;
  const bool half = real && a.n % 2 == 0;
  std::shared_ptr<const fft::Plan<T>> hold;
  const fft::Plan<T>* plan = &fft::plan_ref<T>(half ? a.n / 2 : a.n, hold);
  // One contiguous complex line of a flat plan, the common short call: to the
  // engine directly, without the general setup below (130 instructions a call).
  if (a.kind == rt::FftKind::C2C && a.outer == 1 && a.inner == 1 && plan->batchable()) {
    LineBuffer<T> buf(static_cast<std::size_t>(2 * plan->work_size()));
    return fft::forward_pairs(*plan, data_of<T>(a.x), data_of<T>(a.out), a.inverse, static_cast<T>(a.scale), buf.p, 1);
  }
  const std::int64_t spectrum = a.n / 2 + 1;
  const std::int64_t len_x = a.kind == rt::FftKind::C2R ? spectrum : a.n;
  const std::int64_t len_out = a.kind == rt::FftKind::R2C ? spectrum : a.n;
  const Line<T> line{a, *plan, len_x, len_out, static_cast<T>(a.scale)};
  const T* x = data_of<T>(a.x);
  T* out = data_of<T>(a.out);
  const std::int64_t lines = a.outer * a.inner;
  const auto buf_size = static_cast<std::size_t>(2 * plan->n + 4 * fft::kPad + plan->work_size());
  const int threads = pool().size();
  if (a.kind == rt::FftKind::C2C && a.inner > 1 && plan->batchable()) return run_side_by_side(a, *plan);
  // Only the four-step form splits one line over threads: a shorter line's
  // stages are too quick to pay for a handoff each.
  const bool split = plan->cols != nullptr;
  if (lines == 1) {
    // Without the divisions that place line l: two of them cost a short transform more than its plan lookup.
    LineBuffer<T> buf(buf_size);
    return line(x, out, 0, 0, buf.p, split ? threads : 1);
  }
  if (lines < threads && split) {
    LineBuffer<T> buf(buf_size);
    for (std::int64_t l = 0; l < lines; ++l) line(x, out, l / a.inner, l % a.inner, buf.p, threads);
    return;
  }
  // Lines per task: enough work (about n log n) to pay for the handoff.
  const std::int64_t grain = std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, a.n));
  pool().parallel_for(lines, grain, [&](std::int64_t l0, std::int64_t l1) {
    LineBuffer<T> buf(buf_size);
    for (std::int64_t l = l0; l < l1; ++l) line(x, out, l / a.inner, l % a.inner, buf.p, 1);
  });
}

void fft_kernel(const rt::FftArgs& a) { a.out.dtype == DType::F64 ? run<double>(a) : run<float>(a); }

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Fft, entry<rt::OpKind::Fft, fft_kernel>>(rt::DTypes{DType::F32, DType::F64});
});

}  // namespace
}  // namespace torsh::cpu
