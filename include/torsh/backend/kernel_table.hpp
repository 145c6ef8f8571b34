#pragma once
// What a backend can run, as data: for each op kind, a list of kernels, each
// with the dtypes it takes, an optional predicate over the whole argument set
// (shapes, strides, every operand's dtype, parameters) and the function that
// runs it. DeviceImpl::supports() and DeviceImpl::run() both look the
// arguments up here, so a device can never say yes and then refuse: the
// dispatcher asks once and runs the kernel it found.
//
// Each backend has one table (its devices share it; a predicate sees the
// device for per-device limits), filled by its op files when the library or
// plugin loads:
//
//   const rt::KernelRegistration reg(kernel_table(), [](rt::KernelTable& t) {
//     t.add<rt::OpKind::Softmax, run_softmax>(rt::DTypes{DType::F32}, fits_grid, "rows < 2^31");
//   });
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "torsh/backend/op_args.hpp"

namespace torsh::rt {

class DeviceImpl;
class StreamImpl;

// A set of dtypes.
class DTypes {
 public:
  constexpr DTypes() = default;
  constexpr DTypes(std::initializer_list<DType> ts) {
    for (DType t : ts) bits_ |= bit(t);
  }
  static constexpr DTypes all() {
    DTypes d;
    for (DType t : kAllDTypes) d.bits_ |= bit(t);
    return d;
  }
  static constexpr DTypes floating() { return {DType::F32, DType::F64, DType::F16, DType::BF16}; }
  constexpr DTypes without(DTypes o) const {
    DTypes d;
    d.bits_ = bits_ & ~o.bits_;
    return d;
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  std::string to_string() const;  // "f32, i32"

 private:
  static constexpr std::uint32_t bit(DType t) { return 1u << static_cast<unsigned>(t); }
  std::uint32_t bits_ = 0;
};

class KernelTable {
 public:
  template <OpKind K>
  using Run = void (*)(DeviceImpl&, StreamImpl&, const ArgsOf<K>&);
  template <OpKind K>
  using Accepts = bool (*)(const DeviceImpl&, const ArgsOf<K>&);

  // Registers a kernel for kind K. `limits` says in words what `accepts`
  // requires beyond the dtypes; it is quoted when no kernel takes a call.
  // Kernels are tried in the order they were added. Returns true (for use
  // in a static initialiser).
  template <OpKind K>
  bool add(DTypes dtypes, Run<K> run, Accepts<K> accepts = nullptr, const char* limits = "") {
    return add_entry<K>(dtypes, run, accepts, limits, [](Erased f, DeviceImpl& d, StreamImpl& s, const void* a) {
      reinterpret_cast<Run<K>>(f)(d, s, *static_cast<const ArgsOf<K>*>(a));
    });
  }
  // The same with the kernel known at compile time: the table calls it
  // directly from its thunk, one indirect call per op instead of two.
  template <OpKind K, Run<K> Fn>
  bool add(DTypes dtypes, Accepts<K> accepts = nullptr, const char* limits = "") {
    return add_entry<K>(dtypes, Fn, accepts, limits, [](Erased, DeviceImpl& d, StreamImpl& s, const void* a) {
      Fn(d, s, *static_cast<const ArgsOf<K>*>(a));
    });
  }

 private:
  template <OpKind K>
  bool add_entry(DTypes dtypes, Run<K> run, Accepts<K> accepts, const char* limits,
                 void (*call)(void (*)(), DeviceImpl&, StreamImpl&, const void*)) {
    Entry e;
    e.dtypes = dtypes;
    e.run = reinterpret_cast<Erased>(run);
    e.accepts = reinterpret_cast<Erased>(accepts);
    e.call = call;
    e.check = [](Erased f, const DeviceImpl& d, const void* a) {
      return reinterpret_cast<Accepts<K>>(f)(d, *static_cast<const ArgsOf<K>*>(a));
    };
    e.limits = limits;
    slots_[static_cast<std::size_t>(K)].push_back(e);
    return true;
  }

 public:
  class Entry;
  // The kernel that runs `args` (of kind k's type, key dtype `key`) on `dev`, or null.
  const Entry* find(const DeviceImpl& dev, OpKind k, DType key, const void* args) const {
    for (const Entry& e : slots_[static_cast<std::size_t>(k)])
      if (e.dtypes.contains(key) && (!e.accepts || e.check(e.accepts, dev, args))) return &e;
    return nullptr;
  }
  // Whether some kernel of kind k takes dtype t (for some arguments).
  bool has(OpKind k, DType t) const;
  // What the kernels of kind k take, in words: "f32 (rows < 2^31); f16" or "nothing".
  std::string describe(OpKind k) const;

  class Entry {
   public:
    void operator()(DeviceImpl& d, StreamImpl& s, const void* args) const { call(run, d, s, args); }

   private:
    friend class KernelTable;
    using Erased = void (*)();
    DTypes dtypes;
    Erased run = nullptr, accepts = nullptr;
    void (*call)(Erased, DeviceImpl&, StreamImpl&, const void*) = nullptr;
    bool (*check)(Erased, const DeviceImpl&, const void*) = nullptr;
    const char* limits = "";
  };

 private:
  using Erased = Entry::Erased;
  std::array<std::vector<Entry>, kOpKindCount> slots_;
};

// Runs `fill` on `table` when constructed: a namespace-scope registration in
// an op file adds that file's kernels as the library or plugin loads.
struct KernelRegistration {
  template <class F>
  KernelRegistration(KernelTable& table, F fill) {
    fill(table);
  }
};

}  // namespace torsh::rt
