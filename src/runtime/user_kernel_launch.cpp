// Kernel handles, launch arguments and Stream::launch: the checks a launch
// passes before it reaches the driver, and the profiler and graph capture
// hooks it shares with the op layer.
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <new>

#include "graph_internal.hpp"
#include "profiler_internal.hpp"
#include "registry_internal.hpp"
#include "user_kernel_state.hpp"

namespace torsh {

const std::string& Kernel::name() const { return s_->name; }
const std::string& Kernel::entry() const { return s_->entry; }
KernelDialect Kernel::dialect() const { return s_->dialect; }
Device Kernel::device() const { return s_->device; }
const std::vector<KernelParam>& Kernel::params() const { return s_->impl->params(); }
bool Kernel::params_known() const { return s_->impl->params_known(); }
KernelOrigin Kernel::origin() const { return s_->origin; }
double Kernel::build_ms() const { return s_->build_ms; }
const std::string& Kernel::build_log() const { return s_->log; }
const std::string& Kernel::cache_path() const { return s_->cache_path; }

KernelArg KernelArg::bytes(const void* data, std::size_t size) {
  if (size == 0 || size > 256)
    throw Error(ErrorCode::InvalidArgument,
                "a by-value kernel argument of " + std::to_string(size) + " bytes; it must hold 1 to 256 bytes",
                {.op = "KernelArg::bytes"}, {"Pass larger data in a tensor"});
  if (!data)
    throw Error(ErrorCode::InvalidArgument, "KernelArg::bytes with a null pointer", {.op = "KernelArg::bytes"});
  KernelArg a;
  a.kind_ = Kind::Bytes;
  a.type_ = ParamType::Struct;
  a.bytes_.assign(static_cast<const std::uint8_t*>(data), static_cast<const std::uint8_t*>(data) + size);
  return a;
}

std::string KernelArg::describe() const {
  switch (kind_) {
    case Kind::Tensor: return tensor_ && tensor_->defined() ? tensor_->describe() : "an undefined tensor";
    case Kind::Int: return std::string(param_type_name(type_)) + " " + std::to_string(i_);
    case Kind::UInt: return std::string(param_type_name(type_)) + " " + std::to_string(u_);
    case Kind::Float: {
      char b[48];
      std::snprintf(b, sizeof b, "%s %.17g", type_ == ParamType::F32 ? "f32" : "f64", f_);
      return b;
    }
    case Kind::Bytes: return std::to_string(bytes_.size()) + " bytes";
  }
  return "?";
}

namespace {

using detail::KernelState;

struct LaunchContext {
  const KernelState& k;
  const Device& device;
  std::string op() const { return k.name; }
  [[noreturn]] void fail(ErrorCode code, const std::string& msg, std::vector<std::string> hints = {}) const {
    throw Error(code, "kernel '" + k.name + "': " + msg, {.op = k.name, .device = device.to_string()},
                std::move(hints));
  }
};

std::string signature(const std::vector<KernelParam>& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : ", ") + p.to_string();
  return "(" + s + ")";
}

bool is_float(ParamType t) { return t == ParamType::F16 || t == ParamType::F32 || t == ParamType::F64; }
bool is_signed_int(ParamType t) {
  return t == ParamType::I8 || t == ParamType::I16 || t == ParamType::I32 || t == ParamType::I64;
}

// The range of an integer parameter type, as doubles and as exact bounds.
void int_range(ParamType t, std::int64_t& lo, std::uint64_t& hi) {
  const std::size_t bits = param_type_size(t) * 8;
  if (is_signed_int(t)) {
    lo = bits == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t(1) << (bits - 1));
    hi = bits == 64 ? std::uint64_t(std::numeric_limits<std::int64_t>::max()) : (std::uint64_t(1) << (bits - 1)) - 1;
  } else {
    lo = 0;
    hi = bits == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t(1) << bits) - 1;
  }
}

void store_int(std::uint8_t* out, std::size_t size, std::uint64_t bits) {
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

// The bytes of argument `a` for value parameter `p`; `out` holds 256 bytes.
std::size_t convert_value(const LaunchContext& c, std::size_t i, const KernelArg& a, const KernelParam& p,
                          std::uint8_t* out) {
  // Built only when a check fails: a launch that passes formats nothing.
  const auto where = [&] {
    return "argument " + std::to_string(i) + " (" + a.describe() + ") for parameter '" + p.to_string() + "'";
  };
  if (a.kind() == KernelArg::Kind::Bytes) {
    if (p.size && a.raw().size() != p.size)
      c.fail(ErrorCode::InvalidArgument,
             where() + ": " + std::to_string(a.raw().size()) + " bytes given, the parameter takes " +
                 std::to_string(p.size),
             {"Pass a struct of the parameter's exact layout and size"});
    std::memcpy(out, a.raw().data(), a.raw().size());
    return a.raw().size();
  }
  const ParamType t = p.type;
  if (t == ParamType::Unknown || t == ParamType::Struct) {
    if (p.size == 0 || p.size == param_type_size(a.type())) {
      // A type the parser could not name: the argument's own bytes, as C++ made them.
      const std::size_t n = param_type_size(a.type());
      if (a.kind() == KernelArg::Kind::Float && a.type() == ParamType::F32) {
        const float f = static_cast<float>(a.as_float());
        std::memcpy(out, &f, 4);
      } else if (a.kind() == KernelArg::Kind::Float) {
        const double d = a.as_float();
        std::memcpy(out, &d, 8);
      } else {
        store_int(out, n, a.kind() == KernelArg::Kind::Int ? std::uint64_t(a.as_int()) : a.as_uint());
      }
      return n;
    }
    c.fail(ErrorCode::InvalidArgument, where() + ": the parameter takes " + std::to_string(p.size) + " bytes",
           {"Pass it with KernelArg::pod(struct) or KernelArg::bytes"});
  }
  if (is_float(t)) {
    double v = 0;
    if (a.kind() == KernelArg::Kind::Float)
      v = a.as_float();
    else if (a.kind() == KernelArg::Kind::Int)
      v = static_cast<double>(a.as_int());
    else
      v = static_cast<double>(a.as_uint());
    if (t == ParamType::F64) {
      std::memcpy(out, &v, 8);
      return 8;
    }
    if (t == ParamType::F32) {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      return 4;
    }
    c.fail(ErrorCode::InvalidArgument, where() + ": half-precision values are not converted implicitly",
           {"Pass the 16 bits as std::uint16_t (KernelArg(uint16_t(bits)))"});
  }
  std::int64_t lo;
  std::uint64_t hi;
  int_range(t, lo, hi);
  std::uint64_t bits = 0;
  bool fits = false;
  if (a.kind() == KernelArg::Kind::Int) {
    const std::int64_t v = a.as_int();
    fits = v >= lo && (v < 0 || std::uint64_t(v) <= hi);
    bits = std::uint64_t(v);
  } else if (a.kind() == KernelArg::Kind::UInt) {
    fits = a.as_uint() <= hi;
    bits = a.as_uint();
  } else {
    const double v = a.as_float();
    // Only whole numbers in range: a fraction or an overflow would change the value silently.
    if (std::isfinite(v) && v == std::trunc(v) && v >= static_cast<double>(lo) && v < 18446744073709551616.0 &&
        (v < 0 || static_cast<std::uint64_t>(v) <= hi)) {
      fits = true;
      bits = v < 0 ? std::uint64_t(static_cast<std::int64_t>(v)) : static_cast<std::uint64_t>(v);
    }
  }
  if (!fits)
    c.fail(ErrorCode::InvalidArgument,
           where() + ": the value does not fit " + std::string(param_type_name(t)) +
               (a.kind() == KernelArg::Kind::Float ? " (or is not a whole number)" : ""),
           {"Pass a value of the parameter's type"});
  store_int(out, param_type_size(t), bits);
  return param_type_size(t);
}

// Whether a tensor of dtype d may bind to a buffer of elements of type t.
bool binds(DType d, ParamType t) {
  switch (t) {
    case ParamType::Unknown:
    case ParamType::Struct:
    case ParamType::I8:
    case ParamType::U8: return true;  // untyped or byte access
    case ParamType::F32: return d == DType::F32;
    case ParamType::F64: return d == DType::F64;
    case ParamType::F16: return d == DType::F16;
    default: return dtype_size(d) == param_type_size(t);  // integer views of same-size elements
  }
}

struct ValueSlot {
  alignas(16) std::uint8_t b[256];
};

// The launch's kernel-facing tensors: constructed only for the arguments that
// are tensors, inline for the first few.
class TensorSlots {
 public:
  explicit TensorSlots(std::size_t n) {
    if (n > kInline) heap_.resize(n);
  }
  ~TensorSlots() {
    for (std::size_t i = 0; i < kInline; ++i)
      if (made_[i]) std::launder(reinterpret_cast<rt::TensorArg*>(raw_ + i * sizeof(rt::TensorArg)))->~TensorArg();
  }
  TensorSlots(const TensorSlots&) = delete;
  TensorSlots& operator=(const TensorSlots&) = delete;
  const rt::TensorArg& set(std::size_t i, rt::TensorArg&& t) {
    if (!heap_.empty()) return heap_[i] = std::move(t);
    made_[i] = true;
    return *new (raw_ + i * sizeof(rt::TensorArg)) rt::TensorArg(std::move(t));
  }

 private:
  static constexpr std::size_t kInline = 12;
  alignas(rt::TensorArg) unsigned char raw_[kInline * sizeof(rt::TensorArg)];
  bool made_[kInline] = {};
  std::vector<rt::TensorArg> heap_;
};

// Bytes of the value arguments (each at most 256): inline for the first few
// arguments, on the heap beyond them.
class ValueArena {
 public:
  std::uint8_t* slot(std::size_t i) {
    if (i < kInline) return inline_[i].b;
    heap_.emplace_back();
    return heap_.back().b;
  }

 private:
  static constexpr std::size_t kInline = 12;
  struct Slot {
    alignas(16) std::uint8_t b[256];
  };
  Slot inline_[kInline];
  std::deque<Slot> heap_;
};

}  // namespace

void Stream::launch(const Kernel& k, Dim3 grid, Dim3 block, std::initializer_list<KernelArg> args) {
  launch(k, grid, block, std::span<const KernelArg>(args.begin(), args.size()));
}

void Stream::launch(const Kernel& k, Dim3 grid, Dim3 block, std::span<const KernelArg> args) {
  if (!s_) throw Error(ErrorCode::InvalidState, "launch on an empty stream handle", {.op = "launch"});
  if (!k.s_)
    throw Error(ErrorCode::InvalidArgument, "launch of an empty Kernel handle", {.op = "launch"},
                {"Get kernels from Backend::compile_kernel"});
  const KernelState& ks = *k.s_;
  const LaunchContext c{ks, s_->device};
  if (ks.device != s_->device)
    c.fail(ErrorCode::DeviceMismatch,
           "compiled for " + ks.device.to_string() + ", launched on a stream of " + s_->device.to_string(),
           {"Compile the kernel on the stream's backend"});
  // Per dimension: the product of three 32-bit sizes can wrap to 0 in 64 bits.
  // How many work-items a launch may have in all is each backend's own limit.
  if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
    c.fail(ErrorCode::InvalidArgument,
           "grid " + grid.to_string() + " and block " + block.to_string() + " must be at least 1 in every dimension");
  rt::DeviceImpl& dev = *s_->dev;
  rt::StreamImpl& stream = *s_->impl;

  const auto& params = ks.impl->params();
  const bool known = ks.impl->params_known();
  if (known && params.size() != args.size())
    c.fail(ErrorCode::InvalidArgument, "takes " + std::to_string(params.size()) + " argument" +
                                           (params.size() == 1 ? "" : "s") + " " + signature(params) + ", " +
                                           std::to_string(args.size()) + " given");

  // Launches rarely pass more than kInline arguments: those need no heap.
  constexpr std::size_t kInline = 12;
  std::array<rt::LaunchArg, kInline> la_inline;
  std::vector<rt::LaunchArg> la_heap;
  std::span<rt::LaunchArg> la(la_inline.data(), args.size());
  if (args.size() > kInline) {
    la_heap.resize(args.size());
    la = la_heap;
  }
  TensorSlots tensors(args.size());
  ValueArena values;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = args[i];
    const KernelParam* p = known ? &params[i] : nullptr;
    if (a.kind() == KernelArg::Kind::Tensor) {
      const Tensor& t = *a.tensor();
      if (p && p->kind != KernelParam::Kind::Buffer)
        c.fail(ErrorCode::InvalidArgument, "argument " + std::to_string(i) + " is a tensor (" + a.describe() +
                                               ") but parameter '" + p->to_string() + "' takes a value");
      if (!t.defined())
        c.fail(ErrorCode::InvalidState, "argument " + std::to_string(i) + " is an undefined or freed tensor");
      if (t.device() != s_->device)
        c.fail(ErrorCode::DeviceMismatch,
               "argument " + std::to_string(i) + " (" + t.describe() + ") is not on the stream's device " +
                   s_->device.to_string(),
               {"Move it with tensor.to(backend) first"});
      if (p && !binds(t.dtype(), p->type))
        c.fail(ErrorCode::DTypeMismatch,
               "argument " + std::to_string(i) + " (" + t.describe() + ") cannot bind to parameter '" + p->to_string() +
                   "'",
               {"Cast the tensor (tensor.cast(dtype)), or declare the parameter with the tensor's element type"});
      const bool writable = p ? p->writable : true;
      if (writable)
        for (std::size_t d = 0; d < t.ndim(); ++d)
          if (t.strides()[d] == 0 && t.shape()[d] > 1)
            c.fail(ErrorCode::InvalidArgument,
                   "argument " + std::to_string(i) + " (" + t.describe() +
                       ") is a broadcast view, read-only, but parameter '" + (p ? p->to_string() : std::string("?")) +
                       "' may write it",
                   {"Pass a contiguous copy, or declare the parameter const"});
      la[i].tensor = &tensors.set(i, t.arg());
      la[i].writable = writable;
    } else {
      if (p && p->kind != KernelParam::Kind::Value)
        c.fail(ErrorCode::InvalidArgument, "argument " + std::to_string(i) + " is a value (" + a.describe() +
                                               ") but parameter '" + p->to_string() + "' takes a tensor");
      KernelParam own;
      if (!p) {
        own.kind = KernelParam::Kind::Value;
        own.type = a.kind() == KernelArg::Kind::Bytes ? ParamType::Struct : a.type();
        p = &own;
      }
      std::uint8_t* slot = values.slot(i);
      la[i].data = slot;
      la[i].size = convert_value(c, i, a, *p, slot);
    }
  }

  using torsh::detail::capturing;
  using torsh::detail::capturing_any;
  detail::GraphState* any = capturing_any();
  if (any && any->device != &dev)
    c.fail(ErrorCode::InvalidState,
           "launched on " + s_->device.to_string() + " while a graph captures " + any->backend.device().to_string(),
           {"Launch only on the captured backend, or end the capture first"});
  if (any && &stream != &dev.default_stream())
    c.fail(ErrorCode::InvalidState,
           "launched on a side stream while a graph captures " + s_->device.to_string() +
               "; a capture records the default stream",
           {"Launch on backend.default_stream() during the capture"});

  profiler::detail::OpTimer timer(dev, stream);
  {
    detail::NativeRecording recording(any);
    ks.impl->launch(stream, grid, block, la);
  }
  ks.launches->fetch_add(1, std::memory_order_relaxed);
  if (&stream != &dev.default_stream())
    for (const KernelArg& a : args)
      if (a.kind() == KernelArg::Kind::Tensor) a.tensor()->buffer().record_stream(*this);

  if (any) {
    detail::GraphNode node;
    node.name = ks.name;
    for (const KernelArg& a : args)
      if (a.kind() == KernelArg::Kind::Tensor) node.keep.push_back(a.tensor()->buffer());
    // The node owns copies of the converted arguments; LaunchArgs are rebuilt to point at them.
    auto owned_tensors = std::make_shared<std::vector<rt::TensorArg>>(args.size());
    auto owned_values = std::make_shared<std::vector<ValueSlot>>(args.size());
    std::vector<rt::LaunchArg> replay_args(la.begin(), la.end());
    for (std::size_t i = 0; i < replay_args.size(); ++i) {
      if (replay_args[i].tensor) {
        (*owned_tensors)[i] = *replay_args[i].tensor;
        replay_args[i].tensor = &(*owned_tensors)[i];
      } else {
        std::memcpy((*owned_values)[i].b, replay_args[i].data, replay_args[i].size);
        replay_args[i].data = (*owned_values)[i].b;
      }
    }
    node.run = [impl = ks.impl, d = &dev, grid, block, owned_tensors, owned_values, replay_args] {
      impl->launch(d->default_stream(), grid, block, replay_args);
    };
    any->nodes.push_back(std::move(node));
  }
  timer.finish([&] {
    std::string shapes = "grid ";  // appended piece by piece: GCC 12 warns falsely on "..." + std::string&&
    shapes += grid.to_string();
    shapes += " block ";
    shapes += block.to_string();
    shapes += ":";
    for (const KernelArg& a : args) {
      shapes += ' ';
      shapes += a.describe();
    }
    return std::tuple(ks.name, s_->device.to_string(), std::move(shapes));
  });
}

}  // namespace torsh
