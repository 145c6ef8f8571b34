#include "kernel_abi.hpp"

namespace torsh::cpu::uk {

namespace {
// The entry's parameter types are deduced from the function pointer, so the
// source is never parsed here; static_asserts explain what cannot be passed.
// Every name is prefixed: the user's macros are still defined here.
constexpr const char* kTrampoline = R"TRAMPOLINE(
namespace torsh_cpu_entry {
struct torsh_param { unsigned char pointer, writable, type, reserved; unsigned size; };
/* ParamType's values: Unknown 0, I8..U64 1..8, F16 9, F32 10, F64 11, Struct 12 */
template <class torsh_T> constexpr unsigned char torsh_type_code() {
  using torsh_U = std::remove_cv_t<torsh_T>;
  if constexpr (std::is_enum_v<torsh_U>) return torsh_type_code<std::underlying_type_t<torsh_U>>();
  else if constexpr (std::is_same_v<torsh_U, float>) return 10;
  else if constexpr (std::is_same_v<torsh_U, double>) return 11;
  else if constexpr (std::is_integral_v<torsh_U>) {
    constexpr unsigned char torsh_s = std::is_signed_v<torsh_U> ? 0 : 1;
    constexpr auto torsh_n = sizeof(torsh_U);
    return torsh_n == 1 ? 1 + torsh_s : torsh_n == 2 ? 3 + torsh_s : torsh_n == 4 ? 5 + torsh_s
         : torsh_n == 8 ? 7 + torsh_s : 12;
  } else return 12;
}
template <class torsh_T> constexpr torsh_param torsh_describe() {
  static_assert(!std::is_reference_v<torsh_T>,
                "torsh: a kernel parameter is a pointer (a tensor) or a value, not a reference");
  if constexpr (std::is_pointer_v<torsh_T>) {
    using torsh_E = std::remove_pointer_t<torsh_T>;
    constexpr unsigned char torsh_w = std::is_const_v<torsh_E> ? 0 : 1;
    if constexpr (std::is_void_v<torsh_E> || std::is_pointer_v<torsh_E> || std::is_function_v<torsh_E>)
      return torsh_param{1, torsh_w, 0, 0, 0};
    else return torsh_param{1, torsh_w, torsh_type_code<torsh_E>(), 0, static_cast<unsigned>(sizeof(torsh_E))};
  } else {
    static_assert(std::is_trivially_copyable_v<torsh_T>, "torsh: a kernel's value parameters must be trivially copyable");
    return torsh_param{0, 0, torsh_type_code<torsh_T>(), 0, static_cast<unsigned>(sizeof(torsh_T))};
  }
}
template <class torsh_T> inline torsh_T torsh_arg(void* torsh_p) {
  if constexpr (std::is_pointer_v<torsh_T>) {
    return (torsh_T)torsh_p;
  } else {
    std::remove_cv_t<torsh_T> torsh_v;
    std::memcpy(&torsh_v, torsh_p, sizeof torsh_v);
    return torsh_v;
  }
}
template <class torsh_F> struct torsh_signature;
template <class torsh_R, class... torsh_P> struct torsh_signature<torsh_R (*)(torsh_P...)> {
  static_assert(std::is_void_v<torsh_R>, "torsh: a kernel entry returns void");
  static constexpr std::size_t torsh_count = sizeof...(torsh_P);
  static constexpr torsh_param torsh_table[sizeof...(torsh_P) + 1] = {torsh_describe<torsh_P>()...,
                                                                      torsh_param{0, 0, 0, 0, 0}};
  template <std::size_t... torsh_I>
  static inline void torsh_call(torsh_R (*torsh_f)(torsh_P...), void** torsh_a, std::index_sequence<torsh_I...>) {
    torsh_f(torsh_arg<torsh_P>(torsh_a[torsh_I])...);
  }
  static inline void torsh_run(torsh_R (*torsh_f)(torsh_P...), void** torsh_a) {
    torsh_call(torsh_f, torsh_a, std::index_sequence_for<torsh_P...>{});
  }
  /* Work-groups [first, last), every item in turn. The arguments are
   * converted once, into parameters: the compiler sees that the kernel's
   * stores cannot change them, and the loop along x can vectorize. */
  static inline void torsh_groups_with(torsh_R (*torsh_f)(torsh_P...), const torsh_cpu_item* torsh_it,
                                       long torsh_first, long torsh_last, torsh_P... torsh_v) {
    torsh_cpu_ctx = *torsh_it;
    const long torsh_nx = torsh_it->num_groups[0], torsh_ny = torsh_it->num_groups[1];
    const long torsh_bx = torsh_it->local_size[0], torsh_by = torsh_it->local_size[1],
               torsh_bz = torsh_it->local_size[2];
    for (long torsh_g = torsh_first; torsh_g < torsh_last; ++torsh_g) {
      torsh_cpu_ctx.group_id[0] = torsh_g % torsh_nx;
      torsh_cpu_ctx.group_id[1] = (torsh_g / torsh_nx) % torsh_ny;
      torsh_cpu_ctx.group_id[2] = torsh_g / (torsh_nx * torsh_ny);
      for (long torsh_z = 0; torsh_z < torsh_bz; ++torsh_z)
        for (long torsh_y = 0; torsh_y < torsh_by; ++torsh_y) {
          torsh_cpu_ctx.local_id[1] = torsh_y;
          torsh_cpu_ctx.local_id[2] = torsh_z;
          for (long torsh_x = 0; torsh_x < torsh_bx; ++torsh_x) {
            torsh_cpu_ctx.local_id[0] = torsh_x;
            torsh_f(torsh_v...);
          }
        }
    }
  }
  template <std::size_t... torsh_I>
  static inline void torsh_groups(torsh_R (*torsh_f)(torsh_P...), void** torsh_a, const torsh_cpu_item* torsh_it,
                                  long torsh_first, long torsh_last, std::index_sequence<torsh_I...>) {
    torsh_groups_with(torsh_f, torsh_it, torsh_first, torsh_last, torsh_arg<torsh_P>(torsh_a[torsh_I])...);
  }
};
using torsh_entry_signature = torsh_signature<decltype(&TORSH_CPU_ENTRY)>;
}  // namespace torsh_cpu_entry

extern "C" __attribute__((visibility("default"))) unsigned torsh_cpu_abi_version() { return TORSH_CPU_ABI; }

extern "C" __attribute__((visibility("default"))) std::size_t torsh_cpu_signature(
    const torsh_cpu_entry::torsh_param** torsh_out) {
  *torsh_out = torsh_cpu_entry::torsh_entry_signature::torsh_table;
  return torsh_cpu_entry::torsh_entry_signature::torsh_count;
}

extern "C" __attribute__((visibility("default"))) void torsh_cpu_run_groups(void** torsh_args, torsh_cpu_item* torsh_it,
                                                                           long torsh_first, long torsh_last) {
  using torsh_sig = torsh_cpu_entry::torsh_entry_signature;
  torsh_sig::torsh_groups(&TORSH_CPU_ENTRY, torsh_args, torsh_it, torsh_first, torsh_last,
                          std::make_index_sequence<torsh_sig::torsh_count>{});
}

extern "C" __attribute__((visibility("default"))) void torsh_cpu_run_item(void** torsh_args, torsh_cpu_item* torsh_it) {
  torsh_cpu_ctx = *torsh_it;
  torsh_cpu_entry::torsh_entry_signature::torsh_run(&TORSH_CPU_ENTRY, torsh_args);
}
)TRAMPOLINE";
}  // namespace

std::string target_prefix() {
  // The trampoline's headers come first, out of reach of the user's macros.
  return "#define TORSH_DIALECT_CPU 1\n#include <cstddef>\n#include <cstring>\n#include <type_traits>\n"
         "#include <utility>\n";
}

std::string trampoline_source(const std::string& entry) {
  std::string s = "\n#line 1 \"<torsh cpu trampoline for '" + entry + "'>\"\n";
  s += "#define TORSH_CPU_ENTRY " + entry + "\n";
  s += "#define TORSH_CPU_ABI " + std::to_string(kAbiVersion) + "u\n";
  s += kTrampoline;
  return s;
}

}  // namespace torsh::cpu::uk
