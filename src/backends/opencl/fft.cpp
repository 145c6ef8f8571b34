// DFTs: fft.kern.h's passes in the order gpu/fft_passes.hpp gives (f64 on
// devices with doubles): short lines in one fft_local launch, longer ones a
// launch per stage. Row buffers are per call; a graph capture keeps them
// alive for its replays.
#include <algorithm>

#include "backends/gpu/fft_passes.hpp"
#include "launch.hpp"

namespace torsh::opencl {
namespace {

struct Passes {
  OpenClStream& s;
  const rt::FftArgs& a;
  bool f64;

  using Buf = std::unique_ptr<OpenClBuffer>;
  Buf alloc(std::size_t bytes) {
    Buf b = s.device().scratch(bytes);
    if (CommandBufferGraph* g = recording(s)) g->keep(b->mem());
    return b;
  }
  Kernel kernel(const char* name) const {
    return s.device().kernel((std::string(name) + (f64 ? "_f64" : "_f32")).c_str());
  }
  void run(const char* name, std::int64_t items, const auto&... args) {
    const Kernel k = kernel(name);
    const auto [global, local] = grid_1d(s.device(), k, items);
    launch(s, k, global, local, args...);
  }
  void gather(Buf& to, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x) {
    run("fft_gather", lines * n, mem_of(*a.x.buffer), cl_long{a.x.offset}, to->mem(), cl_long{lines}, cl_long{n},
        cl_long{inner}, cl_int{kind}, cl_long{len_x});
  }
  void stage(Buf& from, Buf& to, std::int64_t lines, std::int64_t n, std::int64_t len, std::int64_t s_, int r,
             int sign) {
    run("fft_stage", lines * (len / r) * s_, from->mem(), to->mem(), cl_long{lines}, cl_long{n}, cl_long{len},
        cl_long{s_}, cl_int{r}, cl_int{sign});
  }
  void scatter(Buf& from, std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_out,
               double scale) {
    if (f64)
      run("fft_scatter", lines * len_out, from->mem(), mem_of(*a.out.buffer), cl_long{a.out.offset}, cl_long{lines},
          cl_long{n}, cl_long{inner}, cl_int{kind}, cl_long{len_out}, cl_double{scale});
    else
      run("fft_scatter", lines * len_out, from->mem(), mem_of(*a.out.buffer), cl_long{a.out.offset}, cl_long{lines},
          cl_long{n}, cl_long{inner}, cl_int{kind}, cl_long{len_out}, static_cast<cl_float>(scale));
  }
  void chirp(Buf& rows, Buf& p, std::int64_t lines, std::int64_t n, std::int64_t m, int sign, int mode) {
    run("fft_chirp", (mode == 1 ? 1 : lines) * (mode == 2 ? n : m), rows->mem(), p->mem(), cl_long{lines}, cl_long{n},
        cl_long{m}, cl_int{sign}, cl_int{mode});
  }
  void local(std::int64_t lines, std::int64_t n, std::int64_t inner, int kind, std::int64_t len_x, std::int64_t len_out,
             int radices, int sign, double scale) {
    const Kernel k = kernel("fft_local");
    // One work-group of kLocalItems per line, at most kMaxGroups groups (each then takes several lines).
    constexpr std::size_t kLocalItems = 128, kMaxGroups = 8192;
    const std::size_t groups = std::min<std::size_t>(static_cast<std::size_t>(lines), kMaxGroups);
    const NDRange global = range(groups * kLocalItems), local_size = range(kLocalItems);
    if (f64)
      launch(s, k, global, local_size, mem_of(*a.x.buffer), cl_long{a.x.offset}, mem_of(*a.out.buffer),
             cl_long{a.out.offset}, cl_long{lines}, cl_long{n}, cl_long{inner}, cl_int{kind}, cl_long{len_x},
             cl_long{len_out}, cl_int{radices}, cl_int{sign}, cl_double{scale});
    else
      launch(s, k, global, local_size, mem_of(*a.x.buffer), cl_long{a.x.offset}, mem_of(*a.out.buffer),
             cl_long{a.out.offset}, cl_long{lines}, cl_long{n}, cl_long{inner}, cl_int{kind}, cl_long{len_x},
             cl_long{len_out}, cl_int{radices}, cl_int{sign}, static_cast<cl_float>(scale));
  }
  void pointwise(Buf& p, Buf& b, std::int64_t lines, std::int64_t m) {
    run("fft_pointwise", lines * m, p->mem(), b->mem(), cl_long{lines}, cl_long{m});
  }
};

void fft(OpenClStream& s, const rt::FftArgs& a) {
  const bool f64 = a.out.dtype == DType::F64;
  Passes p{s, a, f64};
  gpu::run_fft_passes(p, a, f64 ? 8 : 4);
}

bool fft_fits(const rt::DeviceImpl& d, const rt::FftArgs& a) {
  return a.out.dtype != DType::F64 || d.capabilities().f64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Fft, entry<rt::OpKind::Fft, fft>>(rt::DTypes{DType::F32, DType::F64}, fft_fits,
                                                      "f64 where the device has doubles");
});

}  // namespace
}  // namespace torsh::opencl
