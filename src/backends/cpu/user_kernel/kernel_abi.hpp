#pragma once
// What the CPU backend and a user kernel's shared object agree on. The .so
// side is the TORSH_DIALECT_CPU branch of include/torsh/kernel_dialect.h plus
// the entry trampoline (trampoline.cpp) appended to the user's source; a
// change here bumps kAbiVersion so shared objects from an older build (the
// disk cache) are refused and rebuilt.
#include <cstddef>
#include <cstdint>
#include <string>

namespace torsh::cpu::uk {

inline constexpr unsigned kAbiVersion = 2;

// The running work-item, as the dialect's `struct torsh_cpu_item` (the
// shared object copies it into its per-thread context).
struct Item {
  long local_id[3];
  long group_id[3];
  long local_size[3];
  long num_groups[3];
  void (*barrier)(Item*);
};

// One parameter of the entry, as the trampoline describes it from the entry's
// C++ type: `type` is a ParamType's value, `size` the value's or the
// element's bytes (0 for void*).
struct ParamInfo {
  unsigned char pointer;
  unsigned char writable;
  unsigned char type;
  unsigned char reserved;
  unsigned size;
};

// The shared object's exports (names in trampoline.cpp).
using AbiVersionFn = unsigned (*)();
using SignatureFn = std::size_t (*)(const ParamInfo**);
// Runs work-groups [first, last) (linear, x fastest), every item in turn.
using RunGroupsFn = void (*)(void** args, Item* item, long first, long last);
// Runs the one item `item` names (a fiber of a work-group with barriers).
using RunItemFn = void (*)(void** args, Item* item);

inline constexpr const char* kAbiVersionSymbol = "torsh_cpu_abi_version";
inline constexpr const char* kSignatureSymbol = "torsh_cpu_signature";
inline constexpr const char* kRunGroupsSymbol = "torsh_cpu_run_groups";
inline constexpr const char* kRunItemSymbol = "torsh_cpu_run_item";

// What goes before the dialect header: the target macro and the standard
// headers the trampoline uses.
std::string target_prefix();
// The C++ appended to the translation unit: it calls `entry` with each of
// args[i] converted to the entry's i-th parameter type (pointer params get
// the pointer itself, value params a pointer to the value's bytes) and
// exports the symbols above.
std::string trampoline_source(const std::string& entry);

}  // namespace torsh::cpu::uk
