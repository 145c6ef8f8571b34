#include "isa.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace torsh::cpu {
namespace {

Isa read_isa_cap() {
  const char* v = std::getenv("TORSH_CPU_ISA");
  if (!v || !*v || std::strcmp(v, "avx512") == 0) return Isa::Avx512;
  if (std::strcmp(v, "avx2") == 0) return Isa::Avx2;
  if (std::strcmp(v, "generic") == 0) return Isa::Generic;
  std::fprintf(stderr, "torsh: TORSH_CPU_ISA=%s is not one of generic, avx2, avx512; ignored\n", v);
  return Isa::Avx512;
}

// What the CPU has, cap aside.
bool cpu_has(Isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  switch (isa) {
    case Isa::Generic: return true;
    case Isa::Avx2: return avx2;
    case Isa::AvxVnni: return avx2 && __builtin_cpu_supports("avxvnni");
    case Isa::Avx512: return avx512;
    case Isa::Avx512Vnni: return avx512 && __builtin_cpu_supports("avx512vnni");
    case Isa::Avx512Bf16: return avx512 && __builtin_cpu_supports("avx512bf16");
  }
  return false;
#else
  return isa == Isa::Generic;
#endif
}

bool cap_allows(Isa isa) {
  switch (isa_cap()) {
    case Isa::Generic: return isa == Isa::Generic;
    case Isa::Avx2: return isa == Isa::Generic || isa == Isa::Avx2;
    default: return true;
  }
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Generic: return "generic";
    case Isa::Avx2: return "avx2";
    case Isa::AvxVnni: return "avx_vnni";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Vnni: return "avx512_vnni";
    case Isa::Avx512Bf16: return "avx512_bf16";
  }
  return "?";
}

Isa isa_cap() {
  static const Isa cap = read_isa_cap();
  return cap;
}

bool isa_usable(Isa isa) {
  static const auto usable = [] {
    constexpr int kLevels = static_cast<int>(Isa::Avx512Bf16) + 1;
    struct Table {
      bool ok[kLevels];
    } t{};
    for (int i = 0; i < kLevels; ++i) t.ok[i] = cap_allows(static_cast<Isa>(i)) && cpu_has(static_cast<Isa>(i));
    return t;
  }();
  return usable.ok[static_cast<int>(isa)];
}

Isa vector_isa() {
  static const Isa v = isa_usable(Isa::Avx512) ? Isa::Avx512 : isa_usable(Isa::Avx2) ? Isa::Avx2 : Isa::Generic;
  return v;
}

}  // namespace torsh::cpu
