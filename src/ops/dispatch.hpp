#pragma once
// The single launch idiom every op uses: validated tensors in, a closure that
// calls one DeviceImpl method. When the device lacks the op (its supports()
// says no), inputs and outputs are copied to the CPU, the op runs there and
// the outputs are copied back; each copy is counted in fallback_stats().
//
// The closure is passed by reference and never copied on the eager path, so a
// launch allocates nothing; only graph capture and the profiler, when active,
// pay for owning copies.
#include <array>
#include <cstring>
#include <new>
#include <type_traits>
#include <functional>
#include <initializer_list>
#include <vector>

#include "torsh/ops/ops.hpp"

namespace torsh::ops::detail {

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
  std::array<const Tensor*, 8> p_{};
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
  void push(const rt::TensorArg& a) { new (raw_ + n_++ * sizeof(rt::TensorArg)) rt::TensorArg(a); }

 private:
  static_assert(std::is_trivially_copyable_v<rt::TensorArg> && std::is_trivially_destructible_v<rt::TensorArg>);
  alignas(rt::TensorArg) unsigned char raw_[8 * sizeof(rt::TensorArg)];
  std::size_t n_ = 0;
};

using OwnedKernel = std::function<void(rt::DeviceImpl&, rt::StreamImpl&, const ArgList&, const ArgList&)>;

// A borrowed closure plus the means to copy it when a graph records it.
struct KernelRef {
  const void* obj;
  void (*call)(const void*, rt::DeviceImpl&, rt::StreamImpl&, const ArgList&, const ArgList&);
  OwnedKernel (*own)(const void*);
};

void launch_impl(const char* name, rt::OpKind kind, DType dtype, TensorRefs inputs, TensorRefs outputs,
                 const KernelRef& fn);

// fn(DeviceImpl&, StreamImpl&, const ArgList& in, const ArgList& out). It must
// capture by value: a captured graph replays it after the caller has returned.
template <class F>
void launch(const char* name, rt::OpKind kind, DType dtype, TensorRefs inputs, TensorRefs outputs, const F& fn) {
  const KernelRef ref{
      &fn,
      [](const void* f, rt::DeviceImpl& d, rt::StreamImpl& s, const ArgList& in, const ArgList& out) {
        (*static_cast<const F*>(f))(d, s, in, out);
      },
      [](const void* f) { return OwnedKernel(*static_cast<const F*>(f)); }};
  launch_impl(name, kind, dtype, inputs, outputs, ref);
}

// An uninitialised contiguous tensor on the backend `like` lives on: what
// like.backend().empty() gives, without making a Backend handle (an atomic
// increment and decrement on every op).
Tensor empty_like(const Tensor& like, const Shape& shape, DType dtype);

// Every input on one device, else DeviceMismatch naming all of them.
void check_same_device(const char* op, TensorRefs ts);
void check_same_dtype(const char* op, TensorRefs ts);
ErrorContext context(const char* op, TensorRefs ts);

}  // namespace torsh::ops::detail
