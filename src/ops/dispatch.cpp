#include "dispatch.hpp"

#include <atomic>
#include <exception>

#include "../runtime/graph_internal.hpp"
#include "../runtime/profiler_internal.hpp"
#include "../runtime/registry_internal.hpp"

namespace torsh::ops {
namespace {
std::atomic<std::uint64_t> g_ops{0}, g_copies{0}, g_bytes{0};
}

FallbackStats fallback_stats() { return {g_ops.load(), g_copies.load(), g_bytes.load()}; }
void reset_fallback_stats() {
  g_ops = 0;
  g_copies = 0;
  g_bytes = 0;
}

namespace detail {

using torsh::detail::Access;
using torsh::detail::capturing_any;
using torsh::detail::GraphNode;
using torsh::detail::GraphState;
using torsh::detail::NativeRecording;

void TensorRefs::too_many() const {
  throw Error(ErrorCode::Internal, "an op passed more than " + std::to_string(p_.size()) + " operands to one launch");
}

ErrorContext context(const char* op, const TensorRefs& ts) {
  ErrorContext c{.op = op};
  for (const Tensor* t : ts) {
    c.shapes.push_back(t->shape().to_string());
    c.dtypes.push_back(std::string(dtype_name(t->dtype())));
  }
  if (ts.size() && ts[0].defined()) c.device = ts[0].device().to_string();
  return c;
}

void check_same_device(const char* op, const TensorRefs& ts) {
  // The buffers' states are read here directly: every op runs this, and the
  // Buffer accessors are a call each. Buffers of one backend state share its
  // device; two states (two handles opened on one device) compare devices.
  const torsh::detail::BackendState* home = nullptr;
  bool same = true;
  for (const Tensor* t : ts) {
    const auto& st = Access::state(t->buffer());
    if (!st || st->freed)
      throw Error(ErrorCode::InvalidState, "an operand's buffer is freed or the tensor is undefined", {.op = op});
    const torsh::detail::BackendState* b = st->backend.get();
    if (!home)
      home = b;
    else if (b != home)
      same = same && b->device == home->device;
  }
  if (same) return;
  for (const Tensor* t : ts)
    if (t->device() != ts[0].device()) {
      std::string devs;
      for (const Tensor* u : ts) devs += (devs.empty() ? "" : ", ") + u->device().to_string();
      throw Error(ErrorCode::DeviceMismatch, "operands live on different devices (" + devs + ")", context(op, ts));
    }
}

Tensor empty_like(const Tensor& like, const Shape& shape, DType dtype) {
  const auto& st = Access::state(like.buffer());
  if (!st) throw Error(ErrorCode::InvalidState, "an operand is an undefined tensor", {.op = "empty_like"});
  return torsh::detail::empty_on(st->backend, shape, dtype);
}

void check_same_dtype(const char* op, const TensorRefs& ts) {
  for (const Tensor* t : ts)
    if (t->dtype() != ts[0].dtype())
      throw Error(ErrorCode::DTypeMismatch, "operands have different dtypes", context(op, ts));
}

namespace {

ArgList args_of(const TensorRefs& ts) {
  ArgList a;
  for (const Tensor* t : ts) a.push(*t);
  return a;
}

std::string shapes_of(const TensorRefs& in, const TensorRefs& out) {
  std::string s;
  for (const Tensor* t : in) {
    if (!s.empty()) s += ' ';
    s += t->shape().to_string();
  }
  s += " ->";
  for (const Tensor* t : out) {
    s += ' ';
    s += t->shape().to_string();
  }
  return s;
}

std::pair<std::int64_t, std::int64_t> span_of(const Tensor& t) {
  return element_span(t.shape(), t.strides(), t.offset());
}

// A view moved as raw bytes: the storage from its lowest to its highest
// element is copied to `target` and the same view laid over the copy. No op
// runs, so a fallback never needs the op it falls back from (a strided or
// broadcast view of a dtype the device cannot copy would otherwise recurse).
Tensor stage(const Tensor& t, Backend& target) {
  if (t.numel() == 0) return target.empty(t.shape(), t.dtype());
  const auto [lo, hi] = span_of(t);
  const std::size_t es = dtype_size(t.dtype());
  Buffer b = target.allocate(static_cast<std::size_t>(hi - lo + 1) * es);
  b.copy_from(t.buffer(), b.size(), static_cast<std::size_t>(lo) * es, 0);
  return Tensor(std::move(b), t.dtype(), t.shape(), t.strides(), t.offset() - lo);
}

// Writes a staged output back into the view it was staged from. A view that
// covers its span exactly goes back as raw bytes. Otherwise the span may hold
// elements of other views (an interleaved output, say) that this op has just
// written: the span is read again, the view's elements patched into it on the
// CPU, and the whole span written back.
void unstage(const Tensor& staged, const Tensor& dst, Backend& cpu) {
  if (dst.numel() == 0) return;
  const std::int64_t lo = span_of(dst).first;
  const std::size_t es = dtype_size(dst.dtype());
  Tensor back = staged;
  if (staged.buffer().size() != static_cast<std::size_t>(dst.numel()) * es) {
    back = stage(dst, cpu);
    copy_into(staged, back);
  }
  const_cast<Buffer&>(dst.buffer())
      .copy_from(back.buffer(), back.buffer().size(), 0, static_cast<std::size_t>(lo) * es);
}

// Runs the op on the CPU with staged copies of every operand.
void run_on_cpu(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, const OwnedKernel& fn) {
  Backend cpu = Backend::create(BackendType::Cpu);
  g_ops++;
  std::vector<Tensor> cin, cout;
  for (const auto& t : inputs) {
    cin.push_back(stage(t, cpu));
    g_copies++;
    g_bytes += cin.back().buffer().size();
  }
  // Outputs are copied too: ops such as gemm with beta != 0 read them.
  for (const auto& t : outputs) {
    cout.push_back(stage(t, cpu));
    g_copies++;
    g_bytes += cout.back().buffer().size();
  }
  rt::DeviceImpl& cdev = cpu.impl();
  fn(cdev, cdev.default_stream(), args_of(cin), args_of(cout), true);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    unstage(cout[i], outputs[i], cpu);
    g_copies++;
    g_bytes += cout[i].buffer().size();
  }
}

std::vector<Tensor> owned(const TensorRefs& ts) {
  std::vector<Tensor> v;
  for (const Tensor* t : ts) v.push_back(*t);
  return v;
}

void record(GraphState& g, const char* name, rt::DeviceImpl& dev, bool native, rt::OpKind kind,
            const TensorRefs& inputs, const TensorRefs& outputs, const KernelRef& fn) {
  GraphNode node;
  node.name = name;
  for (const Tensor* t : inputs) node.keep.push_back(t->buffer());
  for (const Tensor* t : outputs) node.keep.push_back(t->buffer());
  if (native) {
    // Operands and kernel are resolved now, so replay is the kernel call alone.
    node.run = fn.resolve(fn.obj, dev, args_of(inputs), args_of(outputs));
  } else {
    node.run = [in = owned(inputs), out = owned(outputs), k = fn.own(fn.obj)] { run_on_cpu(in, out, k); };
    // Its host copies and CPU work are no device commands a backend could record.
    g.invalidate_native(std::string(name) + " falls back to the CPU (" + dev.info().name + " has no " +
                        rt::op_kind_name(kind) +
                        " kernel for these arguments; it takes: " + dev.kernels().describe(kind) + ")");
  }
  g.nodes.push_back(std::move(node));
}

}  // namespace

namespace {
// A broadcast view (stride 0 over a dimension longer than 1) names one
// element many times: writing through it races and keeps an arbitrary value.
// Such views are read-only, as in NumPy and PyTorch.
[[noreturn]] void broadcast_output(const char* name, const Tensor& t, std::size_t d) {
  throw Error(ErrorCode::InvalidArgument,
              std::string(name) + " would write into a broadcast view (stride 0 on dimension " + std::to_string(d) +
                  " of " + t.shape().to_string() + "); broadcast views are read-only",
              context(name, {t}),
              {"Write into a contiguous copy (.contiguous()) or into the tensor it was broadcast from"});
}
void check_writable(const char* name, const TensorRefs& outputs) {
  for (const Tensor* t : outputs)
    for (std::size_t d = 0; d < t->ndim(); ++d)
      if (t->strides()[d] == 0 && t->shape()[d] > 1) broadcast_output(name, *t, d);
}
}  // namespace

void launch_impl(const char* name, rt::OpKind kind, const TensorRefs& inputs, const TensorRefs& outputs,
                 const KernelRef& fn) {
  check_writable(name, outputs);
  const Buffer& home_buf = outputs[0].buffer();
  rt::DeviceImpl& dev = *Access::state(home_buf)->backend->dev;
  GraphState* any = capturing_any();
  if (any && any->device != &dev)
    throw Error(ErrorCode::InvalidState,
                std::string(name) + " issued on " + outputs[0].device().to_string() + " while a graph captures " +
                    any->backend.device().to_string(),
                context(name, inputs), {"Issue only ops on the captured backend, or end the capture first"});
  profiler::detail::OpTimer timer(dev, dev.default_stream());
  bool native;
  {
    NativeRecording recording(any);
    native = fn.run(fn.obj, dev, dev.default_stream(), args_of(inputs), args_of(outputs), false);
  }
  if (!native && dev.type() == BackendType::Cpu) {
    // The CPU is the last resort: with no kernel there the op is Unsupported, saying what it takes.
    fn.run(fn.obj, dev, dev.default_stream(), args_of(inputs), args_of(outputs), true);
  }
  if (!native) {
    timer.drop_device_timing();
    run_on_cpu(owned(inputs), owned(outputs), fn.own(fn.obj));
  }
  if (any) record(*any, name, dev, native, kind, inputs, outputs, fn);
  timer.finish(
      [&] { return std::tuple(std::string(name), outputs[0].device().to_string(), shapes_of(inputs, outputs)); });
}

void check_vector(const char* name, const char* what, const std::optional<Tensor>& t, const Tensor& x, std::int64_t n) {
  if (!t) return;
  if (t->ndim() != 1 || t->shape()[0] != n)
    throw Error(ErrorCode::ShapeMismatch,
                std::string(what) + " must have shape [" + std::to_string(n) + "], got " + t->shape().to_string(),
                detail::context(name, {x, *t}));
  if (t->dtype() != x.dtype())
    throw Error(ErrorCode::DTypeMismatch, std::string(what) + " dtype differs from the input's",
                detail::context(name, {x, *t}));
  if (t->device() != x.device())
    throw Error(ErrorCode::DeviceMismatch, std::string(what) + " is on another device", detail::context(name, {x, *t}));
}

std::vector<Tensor> present(std::initializer_list<const std::optional<Tensor>*> ts) {
  std::vector<Tensor> out;
  for (auto* t : ts)
    if (*t) out.push_back(t->value().contiguous());
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> first_id_outside(const Tensor& ids, std::int64_t bound) {
  const std::vector<unsigned char> bytes = ids.to_host_bytes();
  const std::size_t size = dtype_size(ids.dtype());
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    const std::int64_t id = load_as_int64(bytes.data() + static_cast<std::size_t>(i) * size, ids.dtype());
    if (id < 0 || id >= bound) return std::pair{i, id};
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace torsh::ops
