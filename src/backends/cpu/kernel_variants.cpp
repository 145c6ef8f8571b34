// Which variant of each hand-written kernel family this process runs: the
// same choices the families make themselves (each reads cpuid once, capped by
// TORSH_CPU_ISA), gathered for DeviceInfo::kernel_variants.
#include <string>

#include "fft/fft_vector.hpp"
#include "gemm/gemm.hpp"
#include "igemm/igemm.hpp"
#include "platform/cpu_info.hpp"
#include "platform/isa.hpp"
#include "platform/tuning.hpp"
#include "quant/qmatmul_kernels.hpp"
#include "simd/simd_avx2.hpp"
#include "simd/simd_avx512.hpp"
#include "simd/stream_store.hpp"
#include "spmv_gather.hpp"

namespace torsh::cpu {

namespace {

// The target_clones loops (simd.hpp) are picked by the loader from the CPU's
// features alone; TORSH_CPU_ISA does not reach them.
const char* clone_level() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
    return "x86-64-v4 loop";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
    return "x86-64-v3 loop";
#endif
  return "baseline loop";
}

// The FFT's powers of two run the hand-vectorised stages (under the cap);
// other lengths, and every length without AVX2, the cloned scalar stages.
std::string fft_levels() {
  const std::string v = fft::vector_level_name();
  if (v.empty()) return std::string("stockham ") + clone_level();
  return "stockham " + v + " stages (powers of two), " + clone_level() + " (other lengths)";
}

std::string level(bool avx512_body) {
  if (avx512_body && isa_usable(Isa::Avx512)) return "avx512";
  if (isa_usable(Isa::Avx2)) return "avx2";
  return clone_level();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> kernel_variants() {
  const std::string cap = isa_cap() == Isa::Avx512 ? ""
                          : isa_cap() == Isa::Avx2 ? " (TORSH_CPU_ISA=avx2)"
                                                   : " (TORSH_CPU_ISA=generic)";
  const gemm::Kernel& f32 = gemm::kernel_for(DType::F32);
  const gemm::Kernel& bf16 = gemm::kernel_for(DType::BF16);
  const std::string llc = std::to_string(stream_threshold_bytes() >> 20) + " MiB";
  return {
      {"gemm f32", f32.name + cap},
      {"gemm bf16", &bf16 == &f32 ? std::string(f32.name) + ", bf16 widened while packing" + cap : bf16.name + cap},
      {"gemm f16", std::string(f32.name) + ", f16 widened while packing" + cap},
      {"binary f32", level(true) + cap},
      {"gelu f32", level(true) + cap},
      {"other unary f32", level(false) + cap},
      {"softmax, norms", level(false) + cap},
      {"conv2d winograd", (isa_usable(Isa::Avx2) ? "avx2" : "portable") + cap},
      {"quantized dot", isa_name(quant::active_isa()) + cap},
      {"int8 gemm", igemm::active_kernel().name +
                        std::string(igemm::active_kernel().lane == igemm::Lane::S16x2
                                        ? " (avx2-maddubs-6x16 where the operands cannot saturate it)"
                                        : "") +
                        cap},
      {"fft", fft_levels() + cap},
      {"spmv",
       (spmv_gather_level() ? std::string(spmv_gather_level()) + " within a quarter of the LLC, scalar loop past it"
                            : std::string("scalar loop")) +
           cap},
      {"stores past " + llc, store_kind()},
  };
}

}  // namespace torsh::cpu
