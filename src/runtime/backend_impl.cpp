#include "torsh/backend/backend_impl.hpp"

#include <cctype>
#include <string>

namespace torsh::rt {

const char* op_kind_name(OpKind k) {
  switch (k) {
#define TORSH_X(e, name, family, args, key) \
  case OpKind::e: return name;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return "?";
}

const char* op_kind_family(OpKind k) {
  switch (k) {
#define TORSH_X(e, name, family, args, key) \
  case OpKind::e: return family;
    TORSH_OP_KINDS(TORSH_X)
#undef TORSH_X
  }
  return "?";
}

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  const auto squash = [](std::string_view v) {
    std::string r;
    for (char c : v)
      if (c != '_') r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
  };
  const std::string want = squash(name);
  for (OpKind k : kAllOpKinds)
    if (squash(op_kind_name(k)) == want) return k;
  return std::nullopt;
}

std::string op_kind_names() {
  std::string r;
  for (OpKind k : kAllOpKinds) r += (r.empty() ? "" : ", ") + std::string(op_kind_name(k));
  return r;
}

std::string DTypes::to_string() const {
  std::string r;
  for (DType t : kAllDTypes)
    if (contains(t)) r += (r.empty() ? "" : ", ") + std::string(dtype_name(t));
  return r;
}

bool KernelTable::has(OpKind k, DType t) const {
  for (const Entry& e : slots_[static_cast<std::size_t>(k)])
    if (e.dtypes.contains(t)) return true;
  return false;
}

std::string KernelTable::describe(OpKind k) const {
  std::string r;
  for (const Entry& e : slots_[static_cast<std::size_t>(k)]) {
    if (!r.empty()) r += "; ";
    r += e.dtypes.to_string();
    if (*e.limits) r += std::string(" (") + e.limits + ")";
  }
  return r.empty() ? "nothing" : r;
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    case BinaryOp::Pow: return "pow";
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::GeluTanh: return "gelu_tanh";
    case UnaryOp::Silu: return "silu";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Argmax: return "argmax";
    case ReduceOp::Var: return "var";
  }
  return "?";
}

namespace {
const KernelTable& no_kernels() {
  static const KernelTable t;
  return t;
}
}  // namespace

DeviceImpl::DeviceImpl() : kernels_(&no_kernels()) {}

void DeviceImpl::unsupported(OpKind op, DType dtype) const {
  Device d{type(), info().index};
  throw Error(ErrorCode::Unsupported,
              std::string("op '") + op_kind_name(op) + "' is not implemented for " + std::string(dtype_name(dtype)) +
                  " with these arguments on this device; its " + op_kind_name(op) +
                  " kernels take: " + kernels_->describe(op),
              {.op = op_kind_name(op), .dtypes = {std::string(dtype_name(dtype))}, .device = d.to_string()});
}

void DeviceImpl::wrong_args(OpKind k) {
  throw Error(ErrorCode::Internal,
              std::string("arguments of the wrong type passed to a ") + op_kind_name(k) + " kernel",
              {.op = op_kind_name(k)});
}

}  // namespace torsh::rt

namespace torsh::rt {

namespace {
[[noreturn]] void no_user_kernels(const DeviceImpl& d, const UserKernelSpec& spec) {
  const Device dev{d.type(), d.info().index};
  throw Error(ErrorCode::Unsupported,
              "the " + std::string(backend_name(d.type())) + " backend builds no user kernels, so " + spec.label +
                  " cannot run on " + dev.to_string(),
              {.op = "compile_kernel", .device = dev.to_string()},
              {"Check Backend::capabilities().kernel_dialects before compiling"});
}
}  // namespace

KernelBinary DeviceImpl::build_kernel(const UserKernelSpec& spec) { no_user_kernels(*this, spec); }

std::unique_ptr<UserKernelImpl> DeviceImpl::load_kernel(const UserKernelSpec& spec, std::span<const std::uint8_t>) {
  no_user_kernels(*this, spec);
}

}  // namespace torsh::rt
