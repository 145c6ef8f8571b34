#pragma once
// The x86 instruction-set levels the CPU backend's hand-written kernels are
// written for: one vocabulary for every kernel family, for TORSH_CPU_ISA and
// for what `torsh info` reports. Each level needs, on top of Generic:
//   Avx2        AVX2, FMA and F16C (Haswell to Zen 3)
//   AvxVnni     Avx2 and AVX-VNNI (VEX vpdpbusd, without AVX-512)
//   Avx512      AVX-512 F, BW and VL
//   Avx512Vnni  Avx512 and AVX512_VNNI
//   Avx512Bf16  Avx512 and AVX512_BF16
// The target_clones loops (simd.hpp) are picked by the loader from the CPU's
// features alone and are not levels here.
namespace torsh::cpu {

enum class Isa { Generic, Avx2, AvxVnni, Avx512, Avx512Vnni, Avx512Bf16 };

// "generic", "avx2", "avx_vnni", "avx512", "avx512_vnni", "avx512_bf16".
const char* isa_name(Isa isa);

// The cap TORSH_CPU_ISA sets (generic, avx2 or avx512; read once; unset:
// avx512, i.e. none): Generic, Avx2 or Avx512. It lets one machine measure
// the kernels an older CPU would run, as oneDNN's ONEDNN_MAX_CPU_ISA does. A
// value it does not know is reported once on stderr and ignored.
Isa isa_cap();

// Whether this CPU has `isa`'s instructions and the cap allows the level: an
// avx2 cap allows Generic and Avx2 only (AVX-VNNI is newer than AVX2, so
// TORSH_CPU_ISA=avx2 runs what AVX2 CPUs without it run); generic allows
// Generic only.
bool isa_usable(Isa isa);

// The widest vectors usable: Avx512, Avx2 or Generic.
Isa vector_isa();

}  // namespace torsh::cpu
