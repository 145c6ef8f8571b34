// Batched GEMM in f32, f16, bf16 (f32 accumulation) and f64 (devices with
// cl_khr_fp64): matmul.kern.h's register-blocked kernels, one work-group per
// output tile and batch. Transposes and broadcast batches are strides in
// MatmulMeta, so no operand is copied. Which variant runs is the built-in
// default for the shape, or with auto-tuning on the measured fastest for the
// device and size class (tuning.hpp). Where CLBlast is built in
// (clblast_gemm.hpp) it is one more tuning candidate, and without tuning it
// runs the f32 GEMMs of at least 2^18 multiply-adds whose layout it takes,
// where it was measured faster than these kernels on PoCL (BENCHMARKS.md).
#include <algorithm>

#include "backends/gpu/matmul_variants.hpp"
#include "clblast_gemm.hpp"
#include "launch.hpp"
#include "torsh/runtime/autotune.hpp"

namespace torsh::opencl {
namespace {

constexpr int kVariants = static_cast<int>(gpu::kMatmulVariants.size());

// Whether the device runs variant v's kernel for this dtype with its work-group size.
bool fits(OpenClDevice& dev, const gpu::MatmulVariant& v, DType t) {
  const Kernel k = dev.kernel(t == DType::F32 ? v.f32 : v.h16);
  std::size_t wg = 0;
  check_cl(clGetKernelWorkGroupInfo(k.handle, dev.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr),
           "clGetKernelWorkGroupInfo", dev.label());
  return static_cast<std::size_t>(v.threads()) <= wg;
}

void run_variant(OpenClStream& s, const rt::MatmulArgs& a, const gpu::MatmulVariant& v, const char* kernel) {
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2];
  const auto groups = [](std::int64_t extent, int tile) {
    return static_cast<std::size_t>((extent + tile - 1) / tile);
  };
  const std::size_t tx = static_cast<std::size_t>(v.threads_x()), ty = static_cast<std::size_t>(v.threads_y());
  launch(s, s.device().kernel(kernel),
         range(groups(n, v.bn) * tx, groups(m, v.bm) * ty, static_cast<std::size_t>(batch)), range(tx, ty, 1),
         mem_of(*a.a.buffer), mem_of(*a.b.buffer), mem_of(*a.out.buffer), gpu::matmul_meta(a));
}

// choice: an index into gpu::kMatmulVariants, or kClblastChoice.
constexpr int kClblastChoice = kVariants;
// CLBlast refusing a call (it then stays out for the device and dtype) leaves
// the call to the t32x32_r4x4 variant, which every device takes (64 work-items).
void run_choice(OpenClStream& s, const rt::MatmulArgs& a, int choice) {
  if (choice == kClblastChoice && clblast_gemm(s, a)) return;
  const auto& v = gpu::kMatmulVariants[choice == kClblastChoice ? 1 : static_cast<std::size_t>(choice)];
  run_variant(s, a, v, a.out.dtype == DType::F32 ? v.f32 : v.h16);
}

// Below this many multiply-adds a GEMM is over before the choice matters: not tuned.
constexpr std::int64_t kTunedFrom = std::int64_t{1} << 18;

int choose(OpenClStream& s, const rt::MatmulArgs& a) {
  OpenClDevice& dev = s.device();
  const std::int64_t batch = a.out.shape[0], m = a.out.shape[1], n = a.out.shape[2], k = a.a.shape[2];
  const bool blas = clblast_fits(s, a);
  if (autotune::enabled() && batch * m * n * std::max<std::int64_t>(k, 1) >= kTunedFrom) {
    MatmulTuning& tuning = dev.matmul_tuning();
    const auto cls = gpu::matmul_size_class(m, n, k);
    int c = tuning.known(a.out.dtype, cls);
    if (c < 0) {
      std::vector<MatmulTuning::Candidate> candidates;
      for (int i = 0; i < kVariants; ++i)
        if (fits(dev, gpu::kMatmulVariants[static_cast<std::size_t>(i)], a.out.dtype))
          candidates.push_back({i, gpu::kMatmulVariants[static_cast<std::size_t>(i)].name});
      // CLBlast competes on the class's dense representative; layouts it cannot take never reach it.
      if (clblast_available(dev, a.out.dtype)) candidates.push_back({kClblastChoice, "clblast"});
      if (!candidates.empty()) c = tuning.choose(dev, a.out.dtype, cls, candidates, run_choice);
    }
    if (c >= 0 && (c != kClblastChoice || blas)) return c;
    // CLBlast won the class but cannot take this layout: the built-in choice below.
  }
  if (blas && clblast_preferred(a)) return kClblastChoice;
  const gpu::MatmulVariant& d = gpu::default_matmul_variant(batch, m, n);
  const int di = static_cast<int>(&d - gpu::kMatmulVariants.data());
  // A device whose compiler cannot give the default 256 work-items gets the 64 of t32x32_r4x4.
  return fits(dev, d, a.out.dtype) ? di : 1;
}

void matmul(OpenClStream& s, const rt::MatmulArgs& a) {
  if (a.out.numel() == 0) return;
  if (a.out.dtype == DType::F64) {
    run_variant(s, a, gpu::kMatmulF64, gpu::kMatmulF64.f32);
    return;
  }
  run_choice(s, a, choose(s, a));
}

// f64 needs doubles on the device; every kernel needs work-groups of 64
// (f32, f16, bf16) or 256 (f64) work-items. Large f32 GEMMs may run on
// CLBlast instead (see the top of this file).
bool matmul_fits(const rt::DeviceImpl& d, const rt::MatmulArgs& a) {
  if (a.out.dtype == DType::F64)
    return d.capabilities().f64 &&
           d.capabilities().max_work_group >= static_cast<std::uint64_t>(gpu::kMatmulF64.threads());
  return d.capabilities().max_work_group >= 64;
}

const rt::KernelRegistration registered(kernel_table(), [](rt::KernelTable& t) {
  t.add<rt::OpKind::Matmul, entry<rt::OpKind::Matmul, matmul>>(
      gpu::kMatmulDTypes, matmul_fits, "f64 needs cl_khr_fp64; work-groups of 64 (256 for f64) work-items");
});

}  // namespace
}  // namespace torsh::opencl
