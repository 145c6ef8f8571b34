// DFTs: cuFFT where it loads (cufft_fft.cpp), else fft.kern.h's passes in
// the order gpu/fft_passes.hpp gives (and always on HIP). Row buffers come
// from the stream-ordered allocator and are freed on the stream after the
// passes.
#include <algorithm>

#include "backends/gpu/fft_passes.hpp"
#include "cufft_fft.hpp"
#include "launch.hpp"

#include "backends/gpu/kernels/fft.kern.h"

namespace torsh::cuda {
namespace {

template <class T>
struct Passes {
  CudaStream& s;
  const rt::FftArgs& a;

  struct Buf {
    CudaStream* s = nullptr;
    T* p = nullptr;
    Buf() = default;
    Buf(CudaStream& st, std::size_t bytes) : s(&st) {
      check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&p), bytes, st.handle()), "cudaMallocAsync (fft rows)",
                 st.device().label());
    }
    Buf(Buf&& o) noexcept : s(o.s), p(o.p) { o.p = nullptr; }
    Buf& operator=(Buf&&) = delete;
    ~Buf() {
      if (p) (void)cudaFreeAsync(p, s->handle());
    }
  };
  Buf alloc(std::size_t bytes) { return Buf(s, bytes); }

  T* x() const { return static_cast<T*>(ptr_of(*a.x.buffer)); }
  T* out() const { return static_cast<T*>(ptr_of(*a.out.buffer)); }
  void gather(Buf& to, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x) {
    const auto [grid, block] = grid_1d(s.device(), lines * n);
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_gather_f64), grid, block, static_cast<const T*>(x()), long{a.x.offset}, to.p,
             long{lines}, long{n}, long{inner}, kind, long{len_x});
    else
      launch(s, TORSH_CUDA_KERNEL(fft_gather_f32), grid, block, static_cast<const T*>(x()), long{a.x.offset}, to.p,
             long{lines}, long{n}, long{inner}, kind, long{len_x});
  }
  void stage(Buf& from, Buf& to, std::int64_t lines, std::int64_t n, std::int64_t len, std::int64_t st, int r,
             int sign) {
    const auto [grid, block] = grid_1d(s.device(), lines * (len / r) * st);
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_stage_f64), grid, block, static_cast<const T*>(from.p), to.p, long{lines},
             long{n}, long{len}, long{st}, r, sign);
    else
      launch(s, TORSH_CUDA_KERNEL(fft_stage_f32), grid, block, static_cast<const T*>(from.p), to.p, long{lines},
             long{n}, long{len}, long{st}, r, sign);
  }
  void scatter(Buf& from, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_out,
               double scale) {
    const auto [grid, block] = grid_1d(s.device(), lines * len_out);
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_scatter_f64), grid, block, static_cast<const T*>(from.p), out(),
             long{a.out.offset}, long{lines}, long{n}, long{inner}, kind, long{len_out}, scale);
    else
      launch(s, TORSH_CUDA_KERNEL(fft_scatter_f32), grid, block, static_cast<const T*>(from.p), out(),
             long{a.out.offset}, long{lines}, long{n}, long{inner}, kind, long{len_out}, static_cast<float>(scale));
  }
  void chirp(Buf& rows, Buf& p, std::int64_t lines, std::int64_t n, std::int64_t m, int sign, int mode) {
    const auto [grid, block] = grid_1d(s.device(), (mode == 1 ? 1 : lines) * (mode == 2 ? n : m));
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_chirp_f64), grid, block, rows.p, p.p, long{lines}, long{n}, long{m}, sign, mode);
    else
      launch(s, TORSH_CUDA_KERNEL(fft_chirp_f32), grid, block, rows.p, p.p, long{lines}, long{n}, long{m}, sign, mode);
  }
  void local(std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x, std::int64_t len_out,
             int radices, int sign, double scale) {
    // One block of kLocalItems per line, at most kMaxGroups blocks (each then takes several lines).
    constexpr unsigned kLocalItems = 128, kMaxGroups = 8192;
    const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(lines, kMaxGroups))), block(kLocalItems);
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_local_f64), grid, block, static_cast<const T*>(x()), long{a.x.offset}, out(),
             long{a.out.offset}, long{lines}, long{n}, long{inner}, kind, long{len_x}, long{len_out}, radices, sign,
             scale);
    else
      launch(s, TORSH_CUDA_KERNEL(fft_local_f32), grid, block, static_cast<const T*>(x()), long{a.x.offset}, out(),
             long{a.out.offset}, long{lines}, long{n}, long{inner}, kind, long{len_x}, long{len_out}, radices, sign,
             static_cast<float>(scale));
  }
  void pointwise(Buf& p, Buf& b, std::int64_t lines, std::int64_t m) {
    const auto [grid, block] = grid_1d(s.device(), lines * m);
    if constexpr (std::is_same_v<T, double>)
      launch(s, TORSH_CUDA_KERNEL(fft_pointwise_f64), grid, block, p.p, static_cast<const T*>(b.p), long{lines},
             long{m});
    else
      launch(s, TORSH_CUDA_KERNEL(fft_pointwise_f32), grid, block, p.p, static_cast<const T*>(b.p), long{lines},
             long{m});
  }
};

}  // namespace

void fft_scale(CudaStream& s, const rt::TensorArg& out, std::int64_t count, double scale) {
  const auto [grid, block] = grid_1d(s.device(), count);
  if (out.dtype == DType::F64)
    launch(s, TORSH_CUDA_KERNEL(fft_scale_f64), grid, block, static_cast<double*>(ptr_of(*out.buffer)),
           long{out.offset}, long{count}, scale);
  else
    launch(s, TORSH_CUDA_KERNEL(fft_scale_f32), grid, block, static_cast<float*>(ptr_of(*out.buffer)), long{out.offset},
           long{count}, static_cast<float>(scale));
}

namespace {

void fft(CudaStream& s, const rt::FftArgs& a) {
  if (cufft_run(s, a)) return;
  if (a.out.dtype == DType::F64) {
    Passes<double> p{s, a};
    gpu::run_fft_passes(p, a, sizeof(double));
  } else {
    Passes<float> p{s, a};
    gpu::run_fft_passes(p, a, sizeof(float));
  }
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Fft, entry<rt::OpKind::Fft, fft>>(rt::DTypes{DType::F32, DType::F64});
});

}  // namespace
}  // namespace torsh::cuda
