#include "dispatch.hpp"

#include <atomic>

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

ErrorContext context(const char* op, const std::vector<Tensor>& ts) {
  ErrorContext c{.op = op};
  for (const auto& t : ts) {
    c.shapes.push_back(t.shape().to_string());
    c.dtypes.push_back(std::string(dtype_name(t.dtype())));
  }
  if (!ts.empty()) c.device = ts.front().device().to_string();
  return c;
}

void check_same_device(const char* op, const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (!t.defined())
      throw Error(ErrorCode::InvalidState, "an operand's buffer is freed or the tensor is undefined", {.op = op});
  for (const auto& t : ts)
    if (t.device() != ts.front().device()) {
      std::string devs;
      for (const auto& u : ts) devs += (devs.empty() ? "" : ", ") + u.device().to_string();
      throw Error(ErrorCode::DeviceMismatch, "operands live on different devices (" + devs + ")", context(op, ts));
    }
}

void check_same_dtype(const char* op, const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (t.dtype() != ts.front().dtype())
      throw Error(ErrorCode::DTypeMismatch, "operands have different dtypes", context(op, ts));
}

void launch(rt::OpKind kind, DType dtype, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
            const Launch& fn) {
  Backend home = outputs.front().backend();
  rt::DeviceImpl& dev = home.impl();
  auto args = [](const std::vector<Tensor>& ts) {
    std::vector<rt::TensorArg> a;
    a.reserve(ts.size());
    for (const auto& t : ts) a.push_back(t.arg());
    return a;
  };
  if (dev.supports(kind, dtype)) {
    fn(dev, dev.default_stream(), args(inputs), args(outputs));
    return;
  }
  Backend cpu = Backend::create(BackendType::Cpu);
  if (&cpu.impl() == &dev)
    throw Error(ErrorCode::Unsupported, std::string(rt::op_kind_name(kind)) + " has no CPU implementation for " +
                std::string(dtype_name(dtype)), context(rt::op_kind_name(kind), inputs));
  g_ops++;
  std::vector<Tensor> cin, cout;
  for (const auto& t : inputs) {
    cin.push_back(t.to(cpu));
    g_copies++;
    g_bytes += t.nbytes();
  }
  // Outputs are copied too: ops such as gemm with beta != 0 read them.
  for (const auto& t : outputs) {
    cout.push_back(t.to(cpu));
    g_copies++;
    g_bytes += t.nbytes();
  }
  rt::DeviceImpl& cdev = cpu.impl();
  fn(cdev, cdev.default_stream(), args(cin), args(cout));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Tensor dst = outputs[i];
    if (dst.is_contiguous()) {
      dst.copy_from_host(cout[i].buffer().impl().host_ptr(), dst.nbytes());
    } else {
      Tensor staged = cout[i].to(home);
      copy_into(staged, dst);
    }
    g_copies++;
    g_bytes += dst.nbytes();
  }
}

}  // namespace detail
}  // namespace torsh::ops
