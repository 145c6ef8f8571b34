#pragma once
// The single launch idiom every op uses: validated tensors in, a closure that
// turns the kernel-facing operands into the op kind's argument struct
// (rt::ArgsOf<kind>). The device's kernel table is asked for exactly those
// arguments; when no kernel takes them, inputs and outputs are copied to the
// CPU, the arguments are rebuilt there and run, and the outputs are copied
// back; each copy is counted in fallback_stats().
//
// The closure is passed by reference and never copied on the eager path, so a
// launch allocates nothing; only graph capture, when active, pays for an
// owning copy.
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "torsh/backend/backend_impl.hpp"
#include "torsh/ops/ops.hpp"

namespace torsh::ops::detail {

// The most tensors one launch takes (QLinearConv: x, w, six quantization
// parameters, the bias; the output list holds fewer).
inline constexpr std::size_t kMaxOperands = 12;

// A short list of tensors named by the caller: `{a, b}` or a std::vector.
class TensorRefs {
 public:
  TensorRefs(std::initializer_list<std::reference_wrapper<const Tensor>> ts) {  // NOLINT: braces at call sites
    for (const Tensor& t : ts) push(&t);
  }
  TensorRefs(const std::vector<Tensor>& ts) {  // NOLINT
    for (const Tensor& t : ts) push(&t);
  }
  std::size_t size() const { return n_; }
  const Tensor& operator[](std::size_t i) const { return *p_[i]; }
  const Tensor* const* begin() const { return p_.data(); }
  const Tensor* const* end() const { return p_.data() + n_; }

 private:
  void push(const Tensor* t) {
    if (n_ == p_.size()) too_many();
    p_[n_++] = t;
  }
  [[noreturn]] void too_many() const;
  std::array<const Tensor*, kMaxOperands> p_;  // only the first n_ are set (no zeroing on every launch)
  std::size_t n_ = 0;
};

// The kernel-facing view of a TensorRefs. Slots are constructed on push so an
// empty list costs nothing (a TensorArg holds two inline shapes).
class ArgList {
 public:
  ArgList() = default;
  ArgList(const ArgList& o) : n_(o.n_) { std::memcpy(raw_, o.raw_, n_ * sizeof(rt::TensorArg)); }
  ArgList& operator=(const ArgList& o) {
    n_ = o.n_;
    std::memcpy(raw_, o.raw_, n_ * sizeof(rt::TensorArg));
    return *this;
  }
  std::size_t size() const { return n_; }
  const rt::TensorArg& operator[](std::size_t i) const {
    return *std::launder(reinterpret_cast<const rt::TensorArg*>(raw_ + i * sizeof(rt::TensorArg)));
  }
  // TensorRefs (at most kMaxOperands) is the only source, so this cannot overflow.
  void push(const rt::TensorArg& a) { new (raw_ + n_++ * sizeof(rt::TensorArg)) rt::TensorArg(a); }
  // t's argument built in its slot (no copy of the two shapes it holds).
  void push(const Tensor& t) {
    new (raw_ + n_ * sizeof(rt::TensorArg)) rt::TensorArg(t.arg());
    ++n_;
  }

 private:
  static_assert(std::is_trivially_copyable_v<rt::TensorArg> && std::is_trivially_destructible_v<rt::TensorArg>);
  alignas(rt::TensorArg) unsigned char raw_[kMaxOperands * sizeof(rt::TensorArg)];
  std::size_t n_ = 0;
};

// Builds the arguments from the operand lists and runs them on the device.
// With require == false it returns false, running nothing, when the device
// has no kernel for them; with require == true that is an Unsupported error.
using OwnedKernel = std::function<bool(rt::DeviceImpl&, rt::StreamImpl&, const ArgList&, const ArgList&, bool require)>;

// A recorded op resolved for replay: its arguments built and its kernel found
// once, so replay is the kernel call alone.
using ResolvedKernel = std::function<void()>;

// A borrowed closure plus the means to copy it when a graph records it.
struct KernelRef {
  const void* obj;
  bool (*run)(const void*, rt::DeviceImpl&, rt::StreamImpl&, const ArgList&, const ArgList&, bool require);
  OwnedKernel (*own)(const void*);
  ResolvedKernel (*resolve)(const void*, rt::DeviceImpl&, const ArgList&, const ArgList&);
};

// The kind is a template argument, so the argument type is checked at compile
// time and the table slot and key dtype are constants.
template <rt::OpKind K>
bool run_args(rt::DeviceImpl& dev, rt::StreamImpl& s, const rt::ArgsOf<K>& a, bool require) {
  const rt::KernelTable::Entry* e = dev.kernels().find(dev, K, rt::key_dtype<K>(a), &a);
  if (!e) {
    if (!require) return false;
    dev.unsupported(K, rt::key_dtype<K>(a));
  }
  (*e)(dev, s, &a);
  return true;
}

template <rt::OpKind K>
ResolvedKernel resolve_args(rt::DeviceImpl& dev, const rt::ArgsOf<K>& a) {
  const rt::KernelTable::Entry* e = dev.kernels().find(dev, K, rt::key_dtype<K>(a), &a);
  if (!e) dev.unsupported(K, rt::key_dtype<K>(a));
  return [e, &dev, a] { (*e)(dev, dev.default_stream(), &a); };
}

void launch_impl(const char* name, rt::OpKind kind, const TensorRefs& inputs, const TensorRefs& outputs,
                 const KernelRef& fn);

// build(const ArgList& in, const ArgList& out) returns rt::ArgsOf<K>. It must
// capture by value: a captured graph replays it after the caller has returned.
template <rt::OpKind K, class F>
void launch(const char* name, const TensorRefs& inputs, const TensorRefs& outputs, const F& build) {
  using Built = std::decay_t<std::invoke_result_t<const F&, const ArgList&, const ArgList&>>;
  static_assert(std::is_same_v<Built, rt::ArgsOf<K>>, "the closure must build the op kind's argument struct");
  const KernelRef ref{
      &build,
      [](const void* f, rt::DeviceImpl& d, rt::StreamImpl& s, const ArgList& in, const ArgList& out, bool require) {
        return run_args<K>(d, s, (*static_cast<const F*>(f))(in, out), require);
      },
      [](const void* f) {
        return OwnedKernel([fn = *static_cast<const F*>(f)](rt::DeviceImpl& d, rt::StreamImpl& s, const ArgList& in,
                                                            const ArgList& out, bool require) {
          return run_args<K>(d, s, fn(in, out), require);
        });
      },
      [](const void* f, rt::DeviceImpl& d, const ArgList& in, const ArgList& out) {
        return resolve_args<K>(d, (*static_cast<const F*>(f))(in, out));
      }};
  launch_impl(name, K, inputs, outputs, ref);
}

// The element range [lo, hi] a non-empty view of `shape` and `strides`
// starting at element `offset` reaches in its storage.
inline std::pair<std::int64_t, std::int64_t> element_span(const Shape& shape, const Strides& strides,
                                                          std::int64_t offset) {
  std::int64_t lo = offset, hi = offset;
  for (std::size_t d = 0; d < shape.ndim(); ++d) {
    const std::int64_t reach = (shape[d] - 1) * strides[d];
    const std::int64_t down = reach < 0 ? reach : 0;  // by value: see the Tensor constructor
    lo += down, hi += reach - down;
  }
  return {lo, hi};
}

// An uninitialised contiguous tensor on the backend `like` lives on: what
// like.backend().empty() gives, without making a Backend handle (an atomic
// increment and decrement on every op).
Tensor empty_like(const Tensor& like, const Shape& shape, DType dtype);

// Every input on one device, else DeviceMismatch naming all of them.
void check_same_device(const char* op, const TensorRefs& ts);
void check_same_dtype(const char* op, const TensorRefs& ts);
ErrorContext context(const char* op, const TensorRefs& ts);

// Output length of a sliding window (convolution, pooling), or 0 when the
// dilated window does not fit the padded input (C++ division truncates toward
// zero, so the sign is checked first).
inline std::int64_t window_out_size(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                                    std::int64_t dil) {
  const std::int64_t span = in + 2 * pad - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// The first id of `ids` (i32 or i64, any shape) outside [0, bound), as
// (position, id), read on the host: ids are a handful of indices, and a
// kernel could only report a bad one after reading out of bounds.
std::optional<std::pair<std::int64_t, std::int64_t>> first_id_outside(const Tensor& ids, std::int64_t bound);

// An optional per-feature tensor (weight, bias, running statistics): absent,
// or of shape [n] with x's dtype and device; the error names `what`.
void check_vector(const char* name, const char* what, const std::optional<Tensor>& t, const Tensor& x, std::int64_t n);
// The tensors of `ts` that are present, each contiguous.
std::vector<Tensor> present(std::initializer_list<const std::optional<Tensor>*> ts);

}  // namespace torsh::ops::detail
