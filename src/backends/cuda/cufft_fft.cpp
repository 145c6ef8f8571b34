// DFTs through cuFFT (cufftPlanMany), loaded with dlopen so that cuFFT
// stays optional at run time. A pass over [outer, len, inner] is one
// batched plan when inner == 1 (batch outer, lines len apart), else one call
// per outer index (batch inner, values inner apart, lines 1 apart). cuFFT
// is unnormalised: the scale is a kernel of fft.kern.h afterwards. C2R
// overwrites its input, so it reads a copy. Plans (and their work areas)
// are cached per device and geometry, a few dozen at most.
#include "cufft_fft.hpp"

#if !defined(TORSH_HIP)

#include <cufft.h>

#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "cuda_error.hpp"
#include "dl_symbol.hpp"

namespace torsh::cuda {

// fft.cu: out[off .. off + count) *= scale on the stream.
void fft_scale(CudaStream& s, const rt::TensorArg& out, std::int64_t count, double scale);

namespace {

#define TORSH_CUFFT_STR2(x) #x
#define TORSH_CUFFT_STR(x) TORSH_CUFFT_STR2(x)

struct CufftApi {
  decltype(&cufftPlanMany) plan_many = nullptr;
  decltype(&cufftSetStream) set_stream = nullptr;
  decltype(&cufftExecC2C) c2c = nullptr;
  decltype(&cufftExecR2C) r2c = nullptr;
  decltype(&cufftExecC2R) c2r = nullptr;
  decltype(&cufftExecZ2Z) z2z = nullptr;
  decltype(&cufftExecD2Z) d2z = nullptr;
  decltype(&cufftExecZ2D) z2d = nullptr;
  decltype(&cufftDestroy) destroy = nullptr;
  bool loaded = false;
};

const CufftApi* cufft() {
  static const CufftApi api = [] {
    CufftApi a;
    void* lib = dlopen("libcufft.so." TORSH_CUFFT_STR(CUFFT_VER_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    bool ok = true;
    const auto bind = [&](auto& fn, const char* name) { ok = bind_symbol(lib, fn, name) && ok; };
    bind(a.plan_many, "cufftPlanMany");
    bind(a.set_stream, "cufftSetStream");
    bind(a.c2c, "cufftExecC2C");
    bind(a.r2c, "cufftExecR2C");
    bind(a.c2r, "cufftExecC2R");
    bind(a.z2z, "cufftExecZ2Z");
    bind(a.d2z, "cufftExecD2Z");
    bind(a.z2d, "cufftExecZ2D");
    bind(a.destroy, "cufftDestroy");
    a.loaded = ok;
    return a;
  }();
  return api.loaded ? &api : nullptr;
}

void check(cufftResult r, const char* call, const CudaStream& s) {
  if (r != CUFFT_SUCCESS)
    throw Error(ErrorCode::DeviceError, std::string(call) + " failed with cufftResult " + std::to_string(r),
                {.op = "fft", .device = s.device().label()});
}

// (device, kind, f64, n, batch, strided): the plan; all its uses hold g_mutex
// (a plan is bound to one stream at a time).
using Key = std::tuple<int, int, bool, std::int64_t, std::int64_t, bool>;
constexpr std::size_t kMaxPlans = 32;
std::mutex g_mutex;
std::map<Key, cufftHandle> g_plans;

cufftHandle plan_for(const CufftApi& api, const CudaStream& s, const rt::FftArgs& a, bool f64, std::int64_t batch,
                     bool strided) {
  const Key key{s.device().ordinal(), static_cast<int>(a.kind), f64, a.n, batch, strided};
  if (auto it = g_plans.find(key); it != g_plans.end()) return it->second;
  if (g_plans.size() >= kMaxPlans) {
    for (auto& [k, p] : g_plans) api.destroy(p);
    g_plans.clear();
  }
  const std::int64_t spectrum = a.n / 2 + 1;
  const std::int64_t len_x = a.kind == rt::FftKind::C2R ? spectrum : a.n;
  const std::int64_t len_out = a.kind == rt::FftKind::R2C ? spectrum : a.n;
  int n = static_cast<int>(a.n), in_embed = static_cast<int>(len_x), out_embed = static_cast<int>(len_out);
  const int stride = strided ? static_cast<int>(a.inner) : 1;
  const int idist = strided ? 1 : in_embed, odist = strided ? 1 : out_embed;
  cufftType type = CUFFT_C2C;
  switch (a.kind) {
    case rt::FftKind::C2C: type = f64 ? CUFFT_Z2Z : CUFFT_C2C; break;
    case rt::FftKind::R2C: type = f64 ? CUFFT_D2Z : CUFFT_R2C; break;
    case rt::FftKind::C2R: type = f64 ? CUFFT_Z2D : CUFFT_C2R; break;
  }
  cufftHandle plan = 0;
  check(api.plan_many(&plan, 1, &n, &in_embed, stride, idist, &out_embed, stride, odist, type, static_cast<int>(batch)),
        "cufftPlanMany", s);
  g_plans.emplace(key, plan);
  return plan;
}

}  // namespace

bool cufft_run(CudaStream& s, const rt::FftArgs& a) {
  const CufftApi* api = cufft();
  if (api == nullptr) return false;
  const bool f64 = a.out.dtype == DType::F64;
  const std::int64_t spectrum = a.n / 2 + 1;
  const std::int64_t len_x = a.kind == rt::FftKind::C2R ? spectrum : a.n;
  const std::int64_t len_out = a.kind == rt::FftKind::R2C ? spectrum : a.n;
  const bool strided = a.inner > 1;
  const std::int64_t batch = strided ? a.inner : a.outer, calls = strided ? a.outer : 1;
  // cuFFT sizes are int; complex operands must start on a whole complex value.
  if (a.n > INT_MAX || batch > INT_MAX || len_x * a.inner > INT_MAX || len_out * a.inner > INT_MAX) return false;
  if ((a.kind != rt::FftKind::R2C && a.x.offset % 2 != 0) || (a.kind != rt::FftKind::C2R && a.out.offset % 2 != 0))
    return false;
  const std::size_t elem = f64 ? 8 : 4;
  const std::size_t xv = a.kind == rt::FftKind::R2C ? 1 : 2, ov = a.kind == rt::FftKind::C2R ? 1 : 2;
  auto* x = static_cast<char*>(ptr_of(*a.x.buffer)) + a.x.offset * elem;
  auto* out = static_cast<char*>(ptr_of(*a.out.buffer)) + a.out.offset * elem;
  const std::size_t x_step = static_cast<std::size_t>(len_x * a.inner) * xv * elem;  // per outer index
  const std::size_t out_step = static_cast<std::size_t>(len_out * a.inner) * ov * elem;
  void* copy = nullptr;
  if (a.kind == rt::FftKind::C2R) {  // cuFFT's C2R overwrites its input
    const std::size_t bytes = x_step * static_cast<std::size_t>(a.outer);
    check_cuda(cudaMallocAsync(&copy, bytes, s.handle()), "cudaMallocAsync (fft input copy)", s.device().label());
    check_cuda(cudaMemcpyAsync(copy, x, bytes, cudaMemcpyDeviceToDevice, s.handle()), "cudaMemcpyAsync",
               s.device().label());
    x = static_cast<char*>(copy);
  }
  {
    std::lock_guard lock(g_mutex);
    const cufftHandle plan = plan_for(*api, s, a, f64, batch, strided);
    check(api->set_stream(plan, s.handle()), "cufftSetStream", s);
    const int dir = a.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
    for (std::int64_t c = 0; c < calls; ++c) {
      char* in = x + static_cast<std::size_t>(c) * x_step;
      char* o = out + static_cast<std::size_t>(c) * out_step;
      cufftResult r = CUFFT_SUCCESS;
      switch (a.kind) {
        case rt::FftKind::C2C:
          r = f64 ? api->z2z(plan, reinterpret_cast<cufftDoubleComplex*>(in), reinterpret_cast<cufftDoubleComplex*>(o),
                             dir)
                  : api->c2c(plan, reinterpret_cast<cufftComplex*>(in), reinterpret_cast<cufftComplex*>(o), dir);
          break;
        case rt::FftKind::R2C:
          r = f64 ? api->d2z(plan, reinterpret_cast<cufftDoubleReal*>(in), reinterpret_cast<cufftDoubleComplex*>(o))
                  : api->r2c(plan, reinterpret_cast<cufftReal*>(in), reinterpret_cast<cufftComplex*>(o));
          break;
        case rt::FftKind::C2R:
          r = f64 ? api->z2d(plan, reinterpret_cast<cufftDoubleComplex*>(in), reinterpret_cast<cufftDoubleReal*>(o))
                  : api->c2r(plan, reinterpret_cast<cufftComplex*>(in), reinterpret_cast<cufftReal*>(o));
          break;
      }
      check(r, "cufftExec", s);
    }
  }
  if (copy != nullptr) check_cuda(cudaFreeAsync(copy, s.handle()), "cudaFreeAsync", s.device().label());
  if (a.scale != 1.0) fft_scale(s, a.out, static_cast<std::int64_t>(out_step / elem) * a.outer, a.scale);
  return true;
}

}  // namespace torsh::cuda

#else

namespace torsh::cuda {
bool cufft_run(CudaStream&, const rt::FftArgs&) { return false; }
}  // namespace torsh::cuda

#endif
