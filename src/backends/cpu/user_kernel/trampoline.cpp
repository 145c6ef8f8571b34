#include "kernel_abi.hpp"

namespace torsh::cpu::uk {

namespace {
// The entry's parameter types are deduced from the function pointer, so the
// source is never parsed here; static_asserts explain what cannot be passed.
constexpr const char* kTrampoline = R"TRAMPOLINE(
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>
namespace torsh_cpu_entry {
struct param { unsigned char pointer, writable, type, reserved; unsigned size; };
/* ParamType's values: Unknown 0, I8..U64 1..8, F16 9, F32 10, F64 11, Struct 12 */
template <class T> constexpr unsigned char type_code() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_enum_v<U>) return type_code<std::underlying_type_t<U>>();
  else if constexpr (std::is_same_v<U, float>) return 10;
  else if constexpr (std::is_same_v<U, double>) return 11;
  else if constexpr (std::is_integral_v<U>) {
    constexpr unsigned char s = std::is_signed_v<U> ? 0 : 1;
    return sizeof(U) == 1 ? 1 + s : sizeof(U) == 2 ? 3 + s : sizeof(U) == 4 ? 5 + s : sizeof(U) == 8 ? 7 + s : 12;
  } else return 12;
}
template <class T> constexpr param describe() {
  static_assert(!std::is_reference_v<T>, "torsh: a kernel parameter is a pointer (a tensor) or a value, not a reference");
  if constexpr (std::is_pointer_v<T>) {
    using E = std::remove_pointer_t<T>;
    constexpr unsigned char w = std::is_const_v<E> ? 0 : 1;
    if constexpr (std::is_void_v<E> || std::is_pointer_v<E> || std::is_function_v<E>) return param{1, w, 0, 0, 0};
    else return param{1, w, type_code<E>(), 0, static_cast<unsigned>(sizeof(E))};
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "torsh: a kernel's value parameters must be trivially copyable");
    return param{0, 0, type_code<T>(), 0, static_cast<unsigned>(sizeof(T))};
  }
}
template <class T> inline T arg(void* p) {
  if constexpr (std::is_pointer_v<T>) {
    return (T)p;
  } else {
    std::remove_cv_t<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
}
template <class F> struct signature;
template <class R, class... P> struct signature<R (*)(P...)> {
  static_assert(std::is_void_v<R>, "torsh: a kernel entry returns void");
  static constexpr std::size_t count = sizeof...(P);
  static constexpr param table[sizeof...(P) + 1] = {describe<P>()..., param{0, 0, 0, 0, 0}};
  template <std::size_t... I>
  static inline void call(R (*f)(P...), void** a, std::index_sequence<I...>) { f(arg<P>(a[I])...); }
  static inline void run(R (*f)(P...), void** a) { call(f, a, std::index_sequence_for<P...>{}); }
};
using entry_signature = signature<decltype(&TORSH_CPU_ENTRY)>;
}  // namespace torsh_cpu_entry

extern "C" __attribute__((visibility("default"))) unsigned torsh_cpu_abi_version() { return TORSH_CPU_ABI; }

extern "C" __attribute__((visibility("default"))) std::size_t torsh_cpu_signature(const torsh_cpu_entry::param** out) {
  *out = torsh_cpu_entry::entry_signature::table;
  return torsh_cpu_entry::entry_signature::count;
}

extern "C" __attribute__((visibility("default"))) void torsh_cpu_run_groups(void** args, torsh_cpu_item* it, long first, long last) {
  torsh_cpu_current = it;
  const long nx = it->num_groups[0], ny = it->num_groups[1];
  const long bx = it->local_size[0], by = it->local_size[1], bz = it->local_size[2];
  for (long g = first; g < last; ++g) {
    it->group_id[0] = g % nx;
    it->group_id[1] = (g / nx) % ny;
    it->group_id[2] = g / (nx * ny);
    for (long z = 0; z < bz; ++z)
      for (long y = 0; y < by; ++y)
        for (long x = 0; x < bx; ++x) {
          it->local_id[0] = x;
          it->local_id[1] = y;
          it->local_id[2] = z;
          torsh_cpu_entry::entry_signature::run(&TORSH_CPU_ENTRY, args);
        }
  }
}

extern "C" __attribute__((visibility("default"))) void torsh_cpu_run_item(void** args, torsh_cpu_item* it) {
  torsh_cpu_current = it;
  torsh_cpu_entry::entry_signature::run(&TORSH_CPU_ENTRY, args);
}
)TRAMPOLINE";
}  // namespace

std::string trampoline_source(const std::string& entry) {
  std::string s = "\n#line 1 \"<torsh cpu trampoline for '" + entry + "'>\"\n";
  s += "#define TORSH_CPU_ENTRY " + entry + "\n";
  s += "#define TORSH_CPU_ABI " + std::to_string(kAbiVersion) + "u\n";
  s += kTrampoline;
  return s;
}

}  // namespace torsh::cpu::uk
