// Math ops with NumPy names and keywords: elementwise unary and binary ops,
// matmul/gemm, softmax, reductions and casts. Operands may be Tensors, DLPack
// producers, array-likes or scalars; the GIL is released while an op runs.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "common.hpp"

namespace torsh::py {
namespace {

using nb::arg;

// axis=None reduces every axis; an int or a sequence of ints names them.
std::vector<std::int64_t> axes_arg(const AxisArg& axis) {
  if (axis.obj.is_none()) return {};
  return to_int_list(axis.obj, "axis");
}

void bind_binary(nb::module_& m) {
  using B = rt::BinaryOp;
  struct Entry {
    const char* name;
    const char* alias;
    B op;
    const char* doc;
  };
  const Entry table[] = {
      {"add", nullptr, B::Add, "a + b with NumPy broadcasting; both operands share a dtype."},
      {"subtract", "sub", B::Sub, "a - b with NumPy broadcasting."},
      {"multiply", "mul", B::Mul, "a * b with NumPy broadcasting."},
      {"divide", "div", B::Div, "a / b with NumPy broadcasting."},
      {"maximum", nullptr, B::Maximum, "Elementwise maximum with NumPy broadcasting."},
      {"minimum", nullptr, B::Minimum, "Elementwise minimum with NumPy broadcasting."},
      {"power", "pow", B::Pow, "a ** b with NumPy broadcasting."},
  };
  for (const auto& e : table) {
    auto fn = [op = e.op](const TensorLike& a, const TensorLike& b) {
      auto [x, y] = as_tensor_pair(a, b);
      nb::gil_scoped_release r;
      return ops::binary(op, x, y);
    };
    m.def(e.name, fn, arg("a"), arg("b"), e.doc);
    if (e.alias) m.def(e.alias, fn, arg("a"), arg("b"), e.doc);
  }
}

void bind_unary(nb::module_& m) {
  using U = rt::UnaryOp;
  struct Entry {
    const char* name;
    U op;
    const char* doc;
  };
  const Entry table[] = {
      {"negative", U::Neg, "-x."},
      {"neg", U::Neg, "-x."},
      {"abs", U::Abs, "|x|."},
      {"exp", U::Exp, "e ** x."},
      {"log", U::Log, "Natural logarithm."},
      {"sqrt", U::Sqrt, "Square root."},
      {"rsqrt", U::Rsqrt, "1 / sqrt(x)."},
      {"tanh", U::Tanh, "Hyperbolic tangent."},
      {"sigmoid", U::Sigmoid, "1 / (1 + exp(-x))."},
      {"relu", U::Relu, "max(x, 0)."},
      {"silu", U::Silu, "x * sigmoid(x)."},
  };
  for (const auto& e : table) {
    m.def(
        e.name,
        [op = e.op](const TensorLike& x) {
          Tensor t = as_tensor(x);
          nb::gil_scoped_release r;
          return ops::unary(op, t);
        },
        arg("x"), e.doc);
  }
  m.def(
      "gelu",
      [](const TensorLike& x, const std::string& approximate) {
        if (approximate != "none" && approximate != "tanh")
          raise_error(ErrorCode::InvalidArgument, "approximate='" + approximate + "'", "gelu",
                      {"Use approximate='none' (erf) or 'tanh'"});
        Tensor t = as_tensor(x);
        nb::gil_scoped_release r;
        return ops::gelu(t, approximate == "tanh");
      },
      arg("x"), arg("approximate") = "none",
      "GELU: x * Phi(x) with the erf, or the tanh approximation (approximate='tanh'), as in PyTorch.");
}

void bind_linear(nb::module_& m) {
  m.def(
      "matmul",
      [](const TensorLike& a, const TensorLike& b) {
        auto [x, y] = as_tensor_pair(a, b);
        nb::gil_scoped_release r;
        return ops::matmul(x, y);
      },
      arg("a"), arg("b"),
      "a @ b as in NumPy: [..., m, k] @ [..., k, n] with batch broadcasting; 1-D operands are promoted and the "
      "added axis removed.");
  m.def(
      "gemm",
      [](const TensorLike& a, const TensorLike& b, double alpha, double beta, std::optional<TensorLike> c, bool trans_a,
         bool trans_b) {
        auto [x, y] = as_tensor_pair(a, b);
        std::optional<Tensor> ct;
        if (c) ct = as_tensor(*c, &x);
        nb::gil_scoped_release r;
        return ops::gemm(x, y, alpha, beta, ct, trans_a, trans_b);
      },
      arg("a"), arg("b"), nb::kw_only(), arg("alpha") = 1.0, arg("beta") = 0.0, arg("c").none() = nb::none(),
      arg("trans_a") = false, arg("trans_b") = false,
      "alpha * op(a) @ op(b) + beta * c for 2-D or batched 3-D operands (op transposes when trans_a / trans_b); "
      "c may be omitted when beta == 0.");
  m.def(
      "matmul_vec",
      [](const TensorLike& w, const TensorLike& x) {
        auto [a, b] = as_tensor_pair(w, x);
        nb::gil_scoped_release r;
        return ops::matmul_vec(a, b);
      },
      arg("w"), arg("x"), "w [n, k] @ x [k] -> [n] (the matrix-vector product of LLM decoding).");
  m.def(
      "weighted_sum_rows",
      [](const TensorLike& weights, const TensorLike& matrix) {
        auto [a, b] = as_tensor_pair(weights, matrix);
        nb::gil_scoped_release r;
        return ops::weighted_sum_rows(a, b);
      },
      arg("weights"), arg("matrix"), "weights [m] . matrix [m, n] -> [n].");
}

void bind_softmax(nb::module_& m) {
  m.def(
      "softmax",
      [](const TensorLike& x, std::int64_t axis) {
        Tensor t = as_tensor(x);
        nb::gil_scoped_release r;
        return ops::softmax(t, axis);
      },
      arg("x"), arg("axis") = -1, "exp(x) / sum(exp(x)) along an axis, computed stably.");
  m.def(
      "log_softmax",
      [](const TensorLike& x, std::int64_t axis) {
        Tensor t = as_tensor(x);
        nb::gil_scoped_release r;
        return ops::log_softmax(t, axis);
      },
      arg("x"), arg("axis") = -1, "log(softmax(x)) along an axis, computed stably.");
}

void bind_reductions(nb::module_& m) {
  using Fn = Tensor (*)(const Tensor&, const std::vector<std::int64_t>&, bool);
  struct Entry {
    const char* name;
    Fn fn;
    const char* doc;
  };
  const Entry table[] = {
      {"sum", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::sum(x, a, k); },
       "Sum over axis (None: every axis)."},
      {"mean", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::mean(x, a, k); },
       "Mean over axis (None: every axis)."},
      {"max", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::max(x, a, k); },
       "Maximum over axis (None: every axis)."},
      {"min", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::min(x, a, k); },
       "Minimum over axis (None: every axis)."},
      {"amax", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::max(x, a, k); },
       "Same as max."},
      {"amin", [](const Tensor& x, const std::vector<std::int64_t>& a, bool k) { return ops::min(x, a, k); },
       "Same as min."},
  };
  for (const auto& e : table) {
    m.def(
        e.name,
        [fn = e.fn](const TensorLike& x, const AxisArg& axis, bool keepdims) {
          Tensor t = as_tensor(x);
          auto axes = axes_arg(axis);
          nb::gil_scoped_release r;
          return fn(t, axes, keepdims);
        },
        arg("x"), arg("axis").none() = nb::none(), arg("keepdims") = false, e.doc);
  }
  m.def(
      "var",
      [](const TensorLike& x, const AxisArg& axis, std::int64_t ddof, bool keepdims) {
        Tensor t = as_tensor(x);
        auto axes = axes_arg(axis);
        nb::gil_scoped_release r;
        return ops::var(t, axes, ddof, keepdims);
      },
      arg("x"), arg("axis").none() = nb::none(), arg("ddof") = 0, arg("keepdims") = false,
      "Variance over axis, dividing by n - ddof (NumPy's default ddof=0; PyTorch's unbiased var is ddof=1).");
  m.def(
      "argmax",
      [](const TensorLike& x, std::optional<std::int64_t> axis, bool keepdims) {
        Tensor t = as_tensor(x);
        nb::gil_scoped_release r;
        if (axis) return ops::argmax(t, *axis, keepdims);
        // NumPy's axis=None: the index into the flattened tensor.
        Tensor flat = t.contiguous().reshape({-1});
        Tensor i = ops::argmax(flat, 0, false);
        if (!keepdims) return i;
        return i.reshape(std::vector<std::int64_t>(t.ndim(), 1));
      },
      arg("x"), arg("axis").none() = nb::none(), arg("keepdims") = false,
      "Index of the maximum along axis (None: into the flattened tensor), as int64.");
}

void bind_casts(nb::module_& m) {
  m.def(
      "cast",
      [](const TensorLike& x, const DTypeArg& dtype) {
        Tensor t = as_tensor(x);
        DType d = to_dtype(dtype);
        nb::gil_scoped_release r;
        return ops::cast(t, d);
      },
      arg("x"), arg("dtype"), "A copy converted to dtype (f32, f16, bf16, i8, ...) on the same device.");
  m.def(
      "contiguous",
      [](const TensorLike& x) {
        Tensor t = as_tensor(x);
        nb::gil_scoped_release r;
        return ops::contiguous(t);
      },
      arg("x"), "A row-major copy, or x itself when already row-major.");
}

}  // namespace

void bind_ops_math(nb::module_& m) {
  bind_binary(m);
  bind_unary(m);
  bind_linear(m);
  bind_softmax(m);
  bind_reductions(m);
  bind_casts(m);
}

}  // namespace torsh::py
