// Every op case of the cross-backend harness, one family per function.
// Values are drawn per case from a seed derived from its description, so a
// case sees the same inputs on every backend and in every run.
#include "cases.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

namespace backend_ops {

using namespace torsh;
using K = rt::OpKind;

namespace {

constexpr DType F32 = DType::F32, F64 = DType::F64, F16 = DType::F16, BF16 = DType::BF16;
constexpr DType I8 = DType::I8, U8 = DType::U8, I32 = DType::I32, I64 = DType::I64;
constexpr DType kFloats[] = {F32, F64, F16, BF16};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string dt(DType t) { return std::string(dtype_name(t)); }

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string list(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

template <class F>
Run call1(F f) {
  return [f](Backend&, std::vector<Tensor>& x) -> Outputs { return {f(x[0])}; };
}
template <class F>
Run call2(F f) {
  return [f](Backend&, std::vector<Tensor>& x) -> Outputs { return {f(x[0], x[1])}; };
}

// Softmax (or log-softmax) of row-major values of `shape` along `axis`, in double.
std::vector<double> ref_softmax(const std::vector<double>& x, const Shape& shape, std::int64_t axis, bool log) {
  const std::size_t ax = normalize_axis(axis, shape.ndim(), "ref_softmax");
  std::int64_t outer = 1, inner = 1;
  const std::int64_t n = shape[ax];
  for (std::size_t d = 0; d < ax; ++d) outer *= shape[d];
  for (std::size_t d = ax + 1; d < shape.ndim(); ++d) inner *= shape[d];
  std::vector<double> out(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + i); };
      double mx = -kInf, sum = 0;
      for (std::int64_t j = 0; j < n; ++j) mx = std::max(mx, x[at(j)]);
      for (std::int64_t j = 0; j < n; ++j) sum += std::exp(x[at(j)] - mx);
      for (std::int64_t j = 0; j < n; ++j)
        out[at(j)] = log ? x[at(j)] - mx - std::log(sum) : std::exp(x[at(j)] - mx) / sum;
    }
  return out;
}

// ---------------------------------------------------------------- copy

void copy_cases(CaseList& L) {
  const Run contig = call1([](const Tensor& x) { return ops::contiguous(x); });
  for (DType t : kAllDTypes) {
    const double lim = t == U8 ? 255 : t == I8 ? 127 : 1e6;  // integers: whole numbers over their range
    L.add("contiguous", K::Copy, t, {in({6, 10, 3}, t).range(-lim, lim).permute({2, 0, 1})}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({5, 8}, t).range(-lim, lim).t()}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({7, 9}, t).range(-lim, lim).slice(0, 1, 6).slice(1, 2, 9, 3)}, contig,
          Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({1, 5}, t).range(-lim, lim).expand({4, 5})}, contig, Tol::bitwise());
  }
  for (DType t : {F32, I32, F16}) {
    L.add("contiguous", K::Copy, t, {in({3, 1, 4}, t).range(-9, 9).expand({3, 6, 4})}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({5}, t).range(-9, 9).unsqueeze(0).expand({3, 5})}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({0, 3}, t).t()}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({1}, t)}, contig, Tol::bitwise());
    L.add("contiguous", K::Copy, t, {in({2, 3, 4, 5}, t).range(-9, 9).permute({3, 1, 0, 2})}, contig, Tol::bitwise());
  }
  // NaN, infinities and the extremes are moved as bits.
  L.add("contiguous", K::Copy, F32, {in({8, 8}).range(-3.4e38, 3.4e38).specials().set(4, 1e-45).set(5, -0.0).t()},
        contig, Tol::bitwise());
  L.add("contiguous", K::Copy, F32, {in({256, 300}).range(-1e3, 1e3).t()}, contig, Tol::bitwise());
  // A dense copy into an offset row of a zeroed matrix.
  for (DType t : {F32, I32, F64}) {
    L.add(
        "copy_into row 2", K::Copy, t, {in({1, 8}, t).vals({1, 2, 3, 4, 5, 6, 7, 8}), in({4, 8}, t).vals({0})},
        [](Backend&, std::vector<Tensor>& x) -> Outputs {
          Tensor row = x[1].slice(0, 2, 3);
          ops::copy_into(x[0], row);
          return {x[1]};
        },
        Tol::bitwise());
  }
  // Into a transposed destination, and strided into strided.
  L.add(
      "copy_into transposed", K::Copy, F32, {in({6, 4}), in({4, 6}).vals({0})},
      [](Backend&, std::vector<Tensor>& x) -> Outputs {
        Tensor dst = x[1].transpose(0, 1);
        ops::copy_into(x[0], dst);
        return {x[1]};
      },
      Tol::bitwise());
  L.add(
      "copy_into strided", K::Copy, I32,
      {in({10, 10}, I32).range(-99, 99).slice(1, 0, 10, 2), in({5, 10}, I32).vals({7})},
      [](Backend&, std::vector<Tensor>& x) -> Outputs {
        Tensor dst = x[1].transpose(0, 1);
        ops::copy_into(x[0], dst);
        return {x[1]};
      },
      Tol::bitwise());
}

// ---------------------------------------------------------------- index_select

// x's row-major values of `shape` taken at ids along `axis`, written out element by element.
std::vector<double> ref_index_select(const std::vector<double>& x, const Shape& shape, std::int64_t axis,
                                     const std::vector<double>& ids) {
  const std::size_t ax = normalize_axis(axis, shape.ndim(), "ref_index_select");
  std::vector<std::int64_t> out_dims = shape.dims();
  out_dims[ax] = static_cast<std::int64_t>(ids.size());
  const Shape out_shape(out_dims);
  const Strides xs = contiguous_strides(shape);
  std::vector<double> out(static_cast<std::size_t>(out_shape.numel()));
  std::vector<std::int64_t> idx(out_dims.size(), 0);
  for (std::size_t e = 0; e < out.size(); ++e) {
    std::int64_t rem = static_cast<std::int64_t>(e), src = 0;
    for (std::size_t d = out_dims.size(); d-- > 0;) {
      idx[d] = rem % out_dims[d];
      rem /= out_dims[d];
    }
    for (std::size_t d = 0; d < idx.size(); ++d)
      src += (d == ax ? static_cast<std::int64_t>(ids[static_cast<std::size_t>(idx[d])]) : idx[d]) * xs[d];
    out[e] = x[static_cast<std::size_t>(src)];
  }
  return out;
}

void index_select_cases(CaseList& L) {
  const auto add = [&L](const std::string& name, DType t, Input x, Input ids, std::int64_t axis) {
    const Shape shape = x.views.empty() ? x.shape : Shape{};
    Case& c = L.add(
        name + " axis " + std::to_string(axis), K::IndexSelect, t, {std::move(x), std::move(ids)},
        [axis](Backend&, std::vector<Tensor>& v) -> Outputs { return {ops::index_select(v[0], axis, v[1])}; },
        Tol::bitwise());
    if (shape.ndim() > 0)
      c.reference = [shape, axis](const Values& v) { return ref_index_select(v[0], shape, axis, v[1]); };
  };
  for (DType t : kAllDTypes) {
    const double lim = t == U8 ? 255 : t == I8 ? 127 : 1e6;
    add("index_select", t, in({7, 5}, t).range(-lim, lim), in({4}, I64).vals({3, 0, 6, 3}), 0);
    add("index_select", t, in({3, 6, 5}, t).range(-lim, lim), in({5}, I32).vals({5, 1, 1, 0, 4}), 1);
    add("index_select", t, in({4, 3, 9}, t).range(-lim, lim), in({2, 3}, I64).range(0, 8), -1);
    add("index_select empty ids", t, in({5, 3}, t).range(-lim, lim), in({0}, I32), 1);
    L.add(
         "embedding", K::IndexSelect, t, {in({11, 7}, t).range(-lim, lim), in({2, 3}, I32).range(0, 10)},
         [](Backend&, std::vector<Tensor>& v) -> Outputs { return {ops::embedding(v[0], v[1])}; }, Tol::bitwise())
        .reference = [](const Values& v) {
      return ref_index_select(v[0], Shape{11, 7}, 0, v[1]);
    };
  }
  // Enough rows for the CPU's thread pool; a transposed x (made contiguous first).
  add("index_select", F32, in({300, 257}).range(-1e3, 1e3), in({513}, I32).range(0, 299), 0);
  add("index_select", F64, in({301, 33}, F64).range(-1e3, 1e3), in({700}, I64).range(0, 32), 1);
  add("index_select transposed", F16, in({6, 5}, F16).t(), in({3}, I32).vals({4, 0, 2}), 0);
}

// ---------------------------------------------------------------- cast

void cast_cases(CaseList& L) {
  int n = 0;
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      if (from == to) continue;
      Input x = in({7, 13}, from).range(-300, 300);
      // Out-of-range values saturate, NaN becomes 0 in integers, halves overflow to inf.
      if (is_floating(from)) x.specials().set(4, 0.5).set(5, -0.5).set(6, 1e10).set(7, -1e10).set(8, 70000).set(9, 2.5);
      if (n++ % 2) x.t();
      L.add("cast to " + dt(to), K::Cast, to, {x}, call1([to](const Tensor& v) { return ops::cast(v, to); }),
            Tol::bitwise())
          .needs = {{K::Cast, from}};  // a cast kernel must read `from` too
    }
  L.add("cast to f16", K::Cast, F16, {in({1, 13}).range(-1e5, 1e5).expand({7, 13})},
        call1([](const Tensor& v) { return ops::cast(v, DType::F16); }), Tol::bitwise());
  L.add("cast to f64", K::Cast, F64, {in({1000}).range(-1e30, 1e30)},
        call1([](const Tensor& v) { return ops::cast(v, DType::F64); }), Tol::bitwise());
  L.add("cast to f64", K::Cast, F64, {in({2}).vals({1.5, -2})},
        call1([](const Tensor& v) { return ops::cast(v, DType::F64); }), Tol::bitwise())
      .reference = [](const Values&) {
    return std::vector<double>{1.5, -2.0};
  };
  L.add("cast to bf16", K::Cast, BF16, {in({0, 4})}, call1([](const Tensor& v) { return ops::cast(v, DType::BF16); }),
        Tol::bitwise());
  // i64 past what f32 holds (ties to even, 2^40 + 1 rounds away) and past i32 (saturation).
  const std::vector<double> big = {
      16777217.0,   16777219.0,    -16777217.0,           1099511627777.0,        -1099511627777.0,
      2147483648.0, -2147483649.0, 4611686018427387904.0, -9223372036854775808.0, 9007199254740993.0 - 1,
      255.0,        -129.0};
  for (DType to : {F32, F16, BF16, I32, I8, U8, DType::Bool})
    L.add("cast large i64 to " + dt(to), K::Cast, to, {in({12}, I64).vals(big)},
          call1([to](const Tensor& v) { return ops::cast(v, to); }), Tol::bitwise())
        .needs = {{K::Cast, I64}};
  // Floats past i64's range saturate; in range they truncate.
  for (DType from : {F32, F16, BF16})
    L.add("cast large " + dt(from) + " to i64", K::Cast, I64,
          {in({8}, from).vals({1e10, -1e10, 1e19, -1e19, 65504, -3.75, 9.2e18, 0.99})},
          call1([](const Tensor& v) { return ops::cast(v, DType::I64); }), Tol::bitwise())
        .needs = {{K::Cast, from}};
}

// ---------------------------------------------------------------- binary

constexpr rt::BinaryOp kBinaryOps[] = {rt::BinaryOp::Add, rt::BinaryOp::Sub,     rt::BinaryOp::Mul,
                                       rt::BinaryOp::Div, rt::BinaryOp::Maximum, rt::BinaryOp::Minimum,
                                       rt::BinaryOp::Pow};

Tol binary_tol(rt::BinaryOp op) {
  if (op == rt::BinaryOp::Div) return Tol::ulp(8);
  if (op == rt::BinaryOp::Pow) return Tol::ulp(64);
  return Tol::rounded();
}

Run binary_call(rt::BinaryOp op) {
  return call2([op](const Tensor& a, const Tensor& b) { return ops::binary(op, a, b); });
}

void binary_cases(CaseList& L) {
  using rt::BinaryOp;
  for (int n : {1, 7, 33, 1023, 70001, 1 << 22})
    L.add("add", K::Binary, F32, {in({n}), in({n})}, binary_call(BinaryOp::Add), Tol::rounded());
  // Every op in every dtype; floats with NaN, inf and a zero divisor.
  for (DType t : {F32, F64, F16, BF16, I32, I64, I8, U8})
    for (BinaryOp op : kBinaryOps) {
      const bool pow = op == BinaryOp::Pow;
      Input a = in({8, 8}, t), b = in({8, 8}, t);
      if (is_floating(t)) {
        a.range(pow ? 0 : -3, 3).set(0, kNaN).set(2, kInf);
        b.range(0.5, 3).set(1, kNaN).set(3, 0);
      } else if (pow) {
        a.range(t == U8 ? 0 : -5, 5);
        b.range(0, 3);
      } else {
        const double lim = t == U8 ? 15 : t == I8 ? 10 : 100;
        a.range(t == U8 ? 0 : -lim, lim);
        b.range(1, t == U8 || t == I8 ? 10 : 20);
      }
      Case& c = L.add(rt::binary_op_name(op), K::Binary, t, {a, b}, binary_call(op), binary_tol(op));
      // Integers divide into f64 (true division): casts to f64 and an f64 division.
      if (op == BinaryOp::Div && !is_floating(t)) c.needs = {{K::Cast, F64}, {K::Binary, F64}};
    }
  // i64 past 32 bits: carries between words, products that wrap, signed order across words.
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Maximum, BinaryOp::Minimum})
    L.add(std::string(rt::binary_op_name(op)) + " large", K::Binary, I64,
          {in({8}, I64).vals({4294967295.0, -4294967296.0, 3e9, -3e9, 1e12, -7.0, 9e18, -1.0}),
           in({8}, I64).vals({1.0, -1.0, 5e9, 3e9, 1e9, 4294967296.0, 2.0, 4294967297.0})},
          binary_call(op), Tol::bitwise());
  // Real powers of negative numbers are NaN on both sides.
  L.add("pow", K::Binary, F32, {in({9, 7}).range(-3, 3), in({9, 7}).range(-2.5, 2.5)}, binary_call(BinaryOp::Pow),
        binary_tol(BinaryOp::Pow));
  // Broadcasting, views, offsets and in-place outputs.
  L.add("add", K::Binary, F32, {in({3, 1}).vals({1, 2, 3}), in({1, 4}).vals({10, 20, 30, 40})},
        binary_call(BinaryOp::Add), Tol::rounded())
      .reference = [](const Values&) { return std::vector<double>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}; };
  for (DType t : {F32, F64, F16, I32}) {
    L.add("mul", K::Binary, t, {in({5, 9}, t).range(-9, 9), in({9}, t).range(-9, 9)}, binary_call(BinaryOp::Mul),
          Tol::rounded());
    L.add("sub", K::Binary, t, {in({5, 9}, t).range(-9, 9).t(), in({9, 5}, t).range(-9, 9)}, binary_call(BinaryOp::Sub),
          Tol::rounded());
    L.add("add self", K::Binary, t, {in({5, 9}, t).range(-9, 9).slice(0, 2, 5).slice(1, 1, 8, 2)},
          call1([](const Tensor& a) { return ops::add(a, a); }), Tol::rounded());
    L.add("mul self", K::Binary, t, {in({5, 9}, t).range(-9, 9).slice(0, 2, 5)},
          call1([](const Tensor& a) { return ops::mul(a, a); }), Tol::rounded());
    L.add(
        "add in place", K::Binary, t, {in({5, 9}, t).range(-9, 9)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs {
          ops::binary_out(rt::BinaryOp::Add, x[0], x[0], x[0]);
          return {x[0]};
        },
        Tol::rounded());
    L.add(
        "sub_ broadcast", K::Binary, t, {in({4, 6}, t).range(-9, 9), in({6}, t).range(-9, 9)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs {
          ops::binary_(rt::BinaryOp::Sub, x[0], x[1]);
          return {x[0]};
        },
        Tol::rounded());
    L.add("add", K::Binary, t, {in({2, 1, 5}, t).range(-9, 9), in({3, 1}, t).range(-9, 9)}, binary_call(BinaryOp::Add),
          Tol::rounded());
    L.add("mul", K::Binary, t, {in({1}, t).range(-9, 9), in({4, 4}, t).range(-9, 9)}, binary_call(BinaryOp::Mul),
          Tol::rounded());
    L.add("add", K::Binary, t, {in({1, 3}, t).range(-9, 9).expand({4, 3}), in({4, 3}, t).range(-9, 9)},
          binary_call(BinaryOp::Add), Tol::rounded());
    L.add("maximum", K::Binary, t,
          {in({2, 3, 4}, t).range(-9, 9).permute({2, 0, 1}), in({4, 3, 2}, t).range(-9, 9).permute({0, 2, 1})},
          binary_call(BinaryOp::Maximum), Tol::rounded());
    L.add("add", K::Binary, t, {in({0, 3}, t), in({0, 3}, t)}, binary_call(BinaryOp::Add), Tol::rounded());
    L.add("add", K::Binary, t, {in({0, 1}, t), in({1, 5}, t)}, binary_call(BinaryOp::Add), Tol::rounded());
    L.add("mul", K::Binary, t, {in({2, 0}, t), in({0}, t)}, binary_call(BinaryOp::Mul), Tol::rounded());
  }
  // Large values: overflow to infinity the same way.
  L.add("mul", K::Binary, F32, {in({64}).range(1e37, 3.4e38), in({64}).range(-10, 10)}, binary_call(BinaryOp::Mul),
        Tol::rounded());
  L.add("sub", K::Binary, F32, {in({64}).range(-3.4e38, 3.4e38), in({64}).range(-3.4e38, 3.4e38)},
        binary_call(BinaryOp::Sub), Tol::rounded());
  L.add("div", K::Binary, F32, {in({64}).range(-3e38, 3e38), in({64}).range(1e-30, 1e-20)}, binary_call(BinaryOp::Div),
        binary_tol(BinaryOp::Div));
  L.add("add", K::Binary, F16, {in({64}, F16).range(3e4, 6.5e4), in({64}, F16).range(3e4, 6.5e4)},
        binary_call(BinaryOp::Add), Tol::rounded());
  L.add("mul", K::Binary, BF16, {in({64}, BF16).range(1e30, 3e38), in({64}, BF16).range(-10, 10)},
        binary_call(BinaryOp::Mul), Tol::rounded());
  L.add("add", K::Binary, F64, {in({64}, F64).range(-1e308, 1e308), in({64}, F64).range(-1e308, 1e308)},
        binary_call(BinaryOp::Add), Tol::rounded());
}

// ---------------------------------------------------------------- unary

struct UnaryCase {
  rt::UnaryOp op;
  double lo, hi;
};
constexpr UnaryCase kUnary[] = {
    {rt::UnaryOp::Neg, -6, 6},     {rt::UnaryOp::Abs, -6, 6},       {rt::UnaryOp::Exp, -10, 10},
    {rt::UnaryOp::Log, 0.01, 100}, {rt::UnaryOp::Sqrt, 0, 100},     {rt::UnaryOp::Rsqrt, 0.01, 100},
    {rt::UnaryOp::Tanh, -6, 6},    {rt::UnaryOp::Sigmoid, -12, 12}, {rt::UnaryOp::Relu, -6, 6},
    {rt::UnaryOp::Gelu, -6, 6},    {rt::UnaryOp::GeluTanh, -6, 6},  {rt::UnaryOp::Silu, -12, 12}};

bool exact_unary(rt::UnaryOp op) { return op == rt::UnaryOp::Neg || op == rt::UnaryOp::Abs || op == rt::UnaryOp::Relu; }
Tol unary_tol(rt::UnaryOp op) { return exact_unary(op) ? Tol::bitwise() : Tol::ulp(64); }
Run unary_call(rt::UnaryOp op) {
  return call1([op](const Tensor& x) { return ops::unary(op, x); });
}

void unary_cases(CaseList& L) {
  using rt::UnaryOp;
  for (DType t : kFloats)
    for (const auto& u : kUnary)
      L.add(rt::unary_op_name(u.op), K::Unary, t, {in({17, 33}, t).range(u.lo, u.hi)}, unary_call(u.op),
            unary_tol(u.op));
  for (const auto& u : kUnary) {
    // NaN, +-inf and zero; transposed inputs; a long vector.
    L.add(rt::unary_op_name(u.op), K::Unary, F32, {in({8, 8}).range(u.lo, u.hi).specials()}, unary_call(u.op),
          unary_tol(u.op));
    L.add(rt::unary_op_name(u.op), K::Unary, F32, {in({33, 17}).range(u.lo, u.hi).t()}, unary_call(u.op),
          unary_tol(u.op));
    L.add(rt::unary_op_name(u.op), K::Unary, F32, {in({70001}).range(u.lo, u.hi)}, unary_call(u.op), unary_tol(u.op));
  }
  for (DType t : {I32, I64, I8})
    for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu})
      L.add(rt::unary_op_name(op), K::Unary, t, {in({17, 33}, t).range(-100, 100)}, unary_call(op), Tol::bitwise());
  L.add(
      "tanh in place", K::Unary, F32, {in({9, 10}).range(-4, 4)},
      [](Backend&, std::vector<Tensor>& x) -> Outputs {
        ops::unary_out(rt::UnaryOp::Tanh, x[0], x[0]);
        return {x[0]};
      },
      unary_tol(UnaryOp::Tanh));
  L.add(
      "neg in place", K::Unary, I32, {in({9, 10}, I32).range(-1000, 1000)},
      [](Backend&, std::vector<Tensor>& x) -> Outputs {
        ops::unary_out(rt::UnaryOp::Neg, x[0], x[0]);
        return {x[0]};
      },
      Tol::bitwise());
  L.add("exp", K::Unary, F32, {in({0, 4})}, unary_call(UnaryOp::Exp), unary_tol(UnaryOp::Exp));
  // Large values: exp overflows to inf, the saturating functions saturate.
  L.add("exp", K::Unary, F32, {in({64}).range(80, 100)}, unary_call(UnaryOp::Exp), unary_tol(UnaryOp::Exp));
  L.add("exp", K::Unary, F16, {in({64}, F16).range(9, 12)}, unary_call(UnaryOp::Exp), unary_tol(UnaryOp::Exp));
  L.add("log", K::Unary, F32, {in({64}).range(1e30, 3e38)}, unary_call(UnaryOp::Log), unary_tol(UnaryOp::Log));
  for (UnaryOp op : {UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Gelu, UnaryOp::GeluTanh, UnaryOp::Silu})
    L.add(rt::unary_op_name(op), K::Unary, F32, {in({256}).range(-1e4, 1e4)}, unary_call(op), unary_tol(op));
  // f64: NaN, infinities and zero, transposed, and saturating ranges.
  for (const auto& u : kUnary) {
    L.add(rt::unary_op_name(u.op), K::Unary, F64, {in({8, 8}, F64).range(u.lo, u.hi).specials()}, unary_call(u.op),
          unary_tol(u.op));
    L.add(rt::unary_op_name(u.op), K::Unary, F64, {in({33, 17}, F64).range(u.lo, u.hi).t()}, unary_call(u.op),
          unary_tol(u.op));
  }
  for (UnaryOp op : {UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Gelu, UnaryOp::GeluTanh, UnaryOp::Silu})
    L.add(rt::unary_op_name(op), K::Unary, F64, {in({256}, F64).range(-1e4, 1e4)}, unary_call(op), unary_tol(op));
  // Integers: u8 (never negative), and the most negative value, whose negation wraps to itself.
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu}) {
    L.add(rt::unary_op_name(op), K::Unary, U8, {in({17, 33}, U8).range(0, 255)}, unary_call(op), Tol::bitwise());
    L.add(rt::unary_op_name(op), K::Unary, I8, {in({64}, I8).range(-100, 100).set(0, -128).set(1, 127)}, unary_call(op),
          Tol::bitwise());
    L.add(rt::unary_op_name(op), K::Unary, I32,
          {in({64}, I32).range(-100, 100).set(0, -2147483648.0).set(1, 2147483647.0)}, unary_call(op), Tol::bitwise());
    L.add(rt::unary_op_name(op), K::Unary, I64, {in({8, 8}, I64).range(-100, 100).set(0, -9223372036854775808.0).t()},
          unary_call(op), Tol::bitwise());
  }
}

// ---------------------------------------------------------------- reductions

enum class Red { Sum, Mean, Max, Min, Var, Var0, Argmax };

const char* red_name(Red r) {
  switch (r) {
    case Red::Sum: return "sum";
    case Red::Mean: return "mean";
    case Red::Max: return "max";
    case Red::Min: return "min";
    case Red::Var: return "var";
    case Red::Var0: return "var correction=0";
    case Red::Argmax: return "argmax";
  }
  return "?";
}

Run reduce_call(Red r, std::vector<std::int64_t> axes, bool keepdim) {
  return call1([r, axes, keepdim](const Tensor& x) {
    switch (r) {
      case Red::Sum: return ops::sum(x, axes, keepdim);
      case Red::Mean: return ops::mean(x, axes, keepdim);
      case Red::Max: return ops::max(x, axes, keepdim);
      case Red::Min: return ops::min(x, axes, keepdim);
      case Red::Var: return ops::var(x, axes, 1, keepdim);
      case Red::Var0: return ops::var(x, axes, 0, keepdim);
      case Red::Argmax: return ops::argmax(x, axes.at(0), keepdim);
    }
    return Tensor();
  });
}

// Adds one reduction of `x` (whose logical shape is `shape`) over `axes`.
void add_reduce(CaseList& L, Red r, const Input& x, const Shape& shape, std::vector<std::int64_t> axes,
                bool keepdim = false) {
  std::int64_t n = 1;
  if (axes.empty()) n = shape.numel();
  for (auto a : axes) n *= shape[normalize_axis(a, shape.ndim(), "reduce")];
  Tol tol = Tol::bitwise();
  if (r == Red::Sum || r == Red::Mean) tol = Tol::reduction(n);
  if (r == Red::Var || r == Red::Var0) tol = Tol::reduction(n, 8, 2);
  // Axes that are not one block are permuted last and copied.
  std::int64_t first = static_cast<std::int64_t>(shape.ndim()), last = -1;
  for (auto a : axes) {
    const auto ax = static_cast<std::int64_t>(normalize_axis(a, shape.ndim(), "reduce"));
    first = std::min(first, ax), last = std::max(last, ax);
  }
  const bool block = axes.empty() || last - first + 1 == static_cast<std::int64_t>(axes.size());
  std::string name = std::string(red_name(r)) + " axes {" + list(axes) + "}" + (keepdim ? " keepdim" : "");
  L.add(name, K::Reduce, x.dtype, {x}, reduce_call(r, std::move(axes), keepdim), tol).copies = !block;
}

void reduce_cases(CaseList& L) {
  const Shape s{4, 7, 33};
  const std::vector<std::vector<std::int64_t>> axis_sets = {{}, {-1}, {0}, {0, 2}};
  for (DType t : kFloats) {
    for (Red r : {Red::Sum, Red::Mean, Red::Max, Red::Min, Red::Var}) {
      for (const auto& axes : axis_sets) add_reduce(L, r, in(s, t).range(-2, 2), s, axes);
      add_reduce(L, r, in(s, t).range(-2, 2), s, {1}, true);
    }
    for (std::int64_t axis : {-1, 0, 1}) add_reduce(L, Red::Argmax, in(s, t).range(-2, 2), s, {axis});
    add_reduce(L, Red::Var0, in(s, t).range(-2, 2), s, {-1});
  }
  for (DType t : {I32, I64}) {
    for (const auto& axes : axis_sets) add_reduce(L, Red::Sum, in(s, t).range(-1000, 1000), s, axes);
    for (Red r : {Red::Max, Red::Min, Red::Argmax})
      for (std::int64_t axis : {-1, 0}) add_reduce(L, r, in(s, t).range(-1000, 1000), s, {axis});
  }
  for (DType t : {I8, U8})
    for (Red r : {Red::Max, Red::Min, Red::Argmax}) add_reduce(L, r, in(s, t).range(-128, 255), s, {-1});
  // Views: a transposed matrix, a permuted 3-d tensor.
  add_reduce(L, Red::Sum, in({33, 7}).t(), Shape{7, 33}, {0});
  add_reduce(L, Red::Max, in({33, 7}).t(), Shape{7, 33}, {1});
  add_reduce(L, Red::Mean, in({33, 7}).t(), Shape{7, 33}, {});
  add_reduce(L, Red::Var, in({4, 7, 33}).permute({2, 0, 1}), Shape{33, 4, 7}, {1});
  // NaN and infinities.
  for (Red r : {Red::Sum, Red::Max, Red::Min, Red::Argmax})
    add_reduce(L, r, in({8, 8}).range(-5, 5).specials(), Shape{8, 8}, {-1});
  // Empty: a reduced axis of length 0 (sum 0, mean NaN) and an empty output.
  add_reduce(L, Red::Sum, in({3, 0}), Shape{3, 0}, {1});
  add_reduce(L, Red::Mean, in({3, 0}), Shape{3, 0}, {1});
  add_reduce(L, Red::Sum, in({0, 5}), Shape{0, 5}, {1});
  // Long reductions, and a variance far from zero (cancellation).
  add_reduce(L, Red::Sum, in({513, 1025}), Shape{513, 1025}, {});
  add_reduce(L, Red::Mean, in({513, 1025}), Shape{513, 1025}, {1});
  add_reduce(L, Red::Max, in({513, 1025}), Shape{513, 1025}, {0});
  add_reduce(L, Red::Var, in({16, 1000}).range(1e4, 1e4 + 1), Shape{16, 1000}, {-1});
  add_reduce(L, Red::Var, in({16, 1000}, F64).range(1e8, 1e8 + 1), Shape{16, 1000}, {-1});
  add_reduce(L, Red::Sum, in({64, 64}).range(1e36, 3e36), Shape{64, 64}, {});
  // A reduced axis of one element (var divides 0 by 0); a few columns after
  // it (inner 3), a very wide inner, and one long column.
  for (Red r : {Red::Mean, Red::Var, Red::Argmax}) add_reduce(L, r, in({5, 1, 3}), Shape{5, 1, 3}, {1});
  for (Red r : {Red::Sum, Red::Var, Red::Argmax, Red::Min})
    add_reduce(L, r, in({5, 300, 3}).range(-2, 2), Shape{5, 300, 3}, {1});
  for (Red r : {Red::Sum, Red::Max}) add_reduce(L, r, in({2, 3, 70001}), Shape{2, 3, 70001}, {1});
  add_reduce(L, Red::Argmax, in({100000}), Shape{100000}, {0});
  // Ties (argmax takes the first), down the rows and across columns, and NaN down columns.
  add_reduce(L, Red::Argmax, in({3000}, F16).range(-2, 2), Shape{3000}, {0});
  for (std::int64_t axis : {0, 1}) {
    add_reduce(L, Red::Argmax, in({40, 37}, I32).range(-3, 3), Shape{40, 37}, {axis});
    add_reduce(L, Red::Min, in({40, 37}, I8).range(-3, 3), Shape{40, 37}, {axis});
  }
  for (Red r : {Red::Max, Red::Min, Red::Argmax})
    add_reduce(L, r, in({8, 8}).range(-5, 5).specials(), Shape{8, 8}, {0});
}

// ---------------------------------------------------------------- matmul

Run gemm_call(float alpha, float beta, bool with_c, bool ta, bool tb) {
  return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
    return {ops::gemm(x[0], x[1], alpha, beta, with_c ? std::optional<Tensor>(x[2]) : std::nullopt, ta, tb)};
  };
}

std::string gemm_name(float alpha, float beta, bool ta, bool tb) {
  std::ostringstream os;
  os << "gemm alpha=" << alpha << " beta=" << beta << " ta=" << ta << " tb=" << tb;
  return os.str();
}

void matmul_cases(CaseList& L) {
  const Run mm = call2([](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); });
  const std::vector<std::array<std::int64_t, 3>> sizes = {{1, 1, 1},    {7, 13, 5},  {64, 64, 64}, {33, 17, 65},
                                                          {17, 33, 65}, {1, 300, 1}, {17, 1, 40},  {257, 129, 131}};
  for (DType t : kFloats) {
    for (auto [m, k, n] : sizes) L.add("matmul", K::Matmul, t, {in({m, k}, t), in({k, n}, t)}, mm, Tol::reduction(k));
    // Batched, a broadcast batch operand, and 4-d batches broadcast both ways.
    L.add("matmul", K::Matmul, t, {in({3, 19, 21}, t), in({3, 21, 23}, t)}, mm, Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({3, 19, 21}, t), in({21, 23}, t)}, mm, Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({3, 1, 19, 21}, t), in({3, 21, 23}, t).unsqueeze(0)}, mm, Tol::reduction(21));
    // 1-d operands (NumPy rules).
    L.add("matmul", K::Matmul, t, {in({21}, t), in({21, 23}, t)}, mm, Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({19, 21}, t), in({21}, t)}, mm, Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({300}, t), in({300}, t)}, mm, Tol::reduction(300));
    // gemm: transposes, alpha and beta with c.
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const Shape sa = ta ? Shape{21, 19} : Shape{19, 21}, sb = tb ? Shape{23, 21} : Shape{21, 23};
        L.add(gemm_name(1.5f, 0.25f, ta, tb), K::Matmul, t, {in(sa, t), in(sb, t), in({19, 23}, t)},
              gemm_call(1.5f, 0.25f, true, ta, tb), Tol::reduction(22))
            .copies = true;
      }
    // Batched transposed gemm; transposes as strides in matmul; an offset view.
    L.add(gemm_name(1, 0, true, false), K::Matmul, t, {in({3, 21, 19}, t), in({3, 21, 23}, t)},
          gemm_call(1, 0, false, true, false), Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({21, 19}, t).t(), in({23, 21}, t).t()}, mm, Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({3, 19, 21}, t).slice(0, 1, 3).slice(1, 2, 12), in({21, 23}, t)}, mm,
          Tol::reduction(21));
    // k == 0 gives zeros; m == 0 an empty result.
    L.add("matmul", K::Matmul, t, {in({2, 0}, t), in({0, 3}, t)}, mm, Tol::reduction(0));
    L.add("matmul", K::Matmul, t, {in({0, 5}, t), in({5, 3}, t)}, mm, Tol::reduction(5));
    // k == 0 with beta: beta * c exactly.
    L.add(gemm_name(1.5f, 0.5f, false, false) + " k=0", K::Matmul, t, {in({19, 0}, t), in({0, 23}, t), in({19, 23}, t)},
          gemm_call(1.5f, 0.5f, true, false, false), Tol::reduction(1))
        .copies = true;
    // Non-unit column strides in both operands (the kernels' general loads), and
    // outputs past the edges of the 64 x 64 and 128 x 64 tiles.
    L.add("matmul", K::Matmul, t, {in({19, 42}, t).slice(1, 0, 42, 2), in({21, 46}, t).slice(1, 0, 46, 2)}, mm,
          Tol::reduction(21));
    L.add("matmul", K::Matmul, t, {in({130, 70}, t), in({70, 200}, t)}, mm, Tol::reduction(70));
    L.add("matmul", K::Matmul, t, {in({520, 24}, t), in({24, 530}, t)}, mm, Tol::reduction(24));
    // A few rows or columns (the 8 x 128 and 128 x 8 tiles), past their edges.
    L.add("matmul", K::Matmul, t, {in({3, 200}, t), in({200, 300}, t)}, mm, Tol::reduction(200));
    L.add("matmul", K::Matmul, t, {in({300, 200}, t), in({200, 5}, t)}, mm, Tol::reduction(200));
  }
  // Large enough for the vendor GEMMs (CLBlast, cuBLAS): beta == 0 must not read a NaN c
  // there either; a transposed batch.
  L.add(gemm_name(1, 0, false, false) + " c=NaN", K::Matmul, F32,
        {in({70, 80}), in({80, 90}), in({70, 90}).vals({kNaN})}, gemm_call(1, 0, true, false, false),
        Tol::reduction(80))
      .check = [](const Values& out) -> std::string {
    for (double v : out[0])
      if (std::isnan(v)) return "NaN in the result: c was read although beta == 0";
    return "";
  };
  L.add(gemm_name(1, 0, true, true), K::Matmul, F32, {in({2, 80, 70}), in({2, 90, 80})},
        gemm_call(1, 0, false, true, true), Tol::reduction(80));
  // c broadcast over rows; alpha alone; batched gemm with a 3-d c.
  L.add(gemm_name(1, 1, false, false), K::Matmul, F32, {in({19, 21}), in({21, 23}), in({23})},
        gemm_call(1, 1, true, false, false), Tol::reduction(22))
      .copies = true;
  L.add(gemm_name(-2, 0, false, true), K::Matmul, F32, {in({19, 21}), in({23, 21})},
        gemm_call(-2, 0, false, false, true), Tol::reduction(21));
  L.add(gemm_name(0.5f, -1, false, false), K::Matmul, F32, {in({2, 9, 11}), in({2, 11, 5}), in({2, 9, 5})},
        gemm_call(0.5f, -1, true, false, false), Tol::reduction(12))
      .copies = true;
  // beta == 0 never reads c: NaN there must not leak through.
  L.add(gemm_name(1, 0, false, false) + " c=NaN", K::Matmul, F32,
        {in({19, 21}), in({21, 23}), in({19, 23}).vals({kNaN})}, gemm_call(1, 0, true, false, false),
        Tol::reduction(21))
      .check = [](const Values& out) -> std::string {
    for (double v : out[0])
      if (std::isnan(v)) return "NaN in the result: c was read although beta == 0";
    return "";
  };
  // The LLM helpers: w [n, k] @ x [k], and weights [m] . matrix [m, n].
  L.add("matmul_vec", K::Matmul, F32, {in({129, 65}), in({65})},
        call2([](const Tensor& w, const Tensor& x) { return ops::matmul_vec(w, x); }), Tol::reduction(65));
  L.add("weighted_sum_rows", K::Matmul, F32, {in({65}), in({65, 129})},
        call2([](const Tensor& w, const Tensor& m) { return ops::weighted_sum_rows(w, m); }), Tol::reduction(65));
  // More batches than a CUDA grid's z dimension (65535).
  L.add("matmul", K::Matmul, F32, {in({70000, 2, 3}), in({70000, 3, 2})}, mm, Tol::reduction(3));
  // Large values, all positive: a rounding bound relative to the result holds
  // for any summation order only without cancellation (kernels may block k
  // differently from the CPU, or fuse multiply-adds).
  L.add("matmul", K::Matmul, F32, {in({16, 32}).range(1e2, 1e3), in({32, 24}).range(1e2, 1e3)}, mm, Tol::reduction(32));
  L.add("matmul", K::Matmul, F64, {in({16, 32}, F64).range(-1e100, 1e100), in({32, 24}, F64).range(-1e100, 1e100)}, mm,
        Tol::reduction(32));
}

// ---------------------------------------------------------------- softmax

Run softmax_call(std::int64_t axis, bool log) {
  return call1([axis, log](const Tensor& x) { return log ? ops::log_softmax(x, axis) : ops::softmax(x, axis); });
}

std::string softmax_name(std::int64_t axis, bool log) {
  return std::string(log ? "log_softmax" : "softmax") + " axis " + std::to_string(axis);
}

void add_softmax(CaseList& L, const Input& x, const Shape& shape, std::int64_t axis, bool log,
                 const std::string& note = "") {
  L.add(softmax_name(axis, log) + note, K::Softmax, x.dtype, {x}, softmax_call(axis, log), Tol::ulp(64)).reference =
      [shape, axis, log](const Values& v) { return ref_softmax(v[0], shape, axis, log); };
}

void softmax_cases(CaseList& L) {
  const std::int64_t r = 37, c = 301;
  // A huge value in row 0 and a whole row of large negative values.
  Input x = in({r, c}).range(-5, 5).set(3, 1e4);
  for (std::int64_t j = 0; j < c; ++j) x.set(5 * c + j, -1e4 + static_cast<double>(j));
  for (std::int64_t axis : {0, 1, -1})
    for (bool log : {false, true}) add_softmax(L, x, Shape{r, c}, axis, log);
  // Rows sum to one.
  L.add("softmax axis -1 rows sum to 1", K::Softmax, F32, {x}, softmax_call(-1, false), Tol::ulp(64)).check =
      [r, c](const Values& out) -> std::string {
    for (std::int64_t i = 0; i < r; ++i) {
      double sum = 0;
      for (std::int64_t j = 0; j < c; ++j) sum += out[0][i * c + j];
      if (std::abs(sum - 1.0) > 1e-4) return "row " + std::to_string(i) + " sums to " + std::to_string(sum);
    }
    return "";
  };
  // Masked entries (-inf, as attention masks): probability 0, log-probability -inf.
  Input masked = x;
  masked.set(9 * c + 1, -kInf);
  for (bool log : {false, true}) {
    add_softmax(L, masked, Shape{r, c}, 0, log, " masked");
    add_softmax(L, masked, Shape{r, c}, -1, log, " masked");
    L.add(softmax_name(-1, log) + " masked entry", K::Softmax, F32, {masked}, softmax_call(-1, log), Tol::ulp(64))
        .check = [log, at = 9 * c + 1](const Values& out) -> std::string {
      const double want = log ? -kInf : 0.0;
      if (out[0][at] == want) return "";
      return "the masked entry is " + std::to_string(out[0][at]) + ", not " + std::to_string(want);
    };
  }
  // 3-d, middle axis (outer and inner > 1), rows shorter and longer than a work-group.
  for (std::int64_t n : {1, 5, 128, 129, 1000}) add_softmax(L, in({3, n, 4}).range(-20, 20), Shape{3, n, 4}, 1, false);
  // Views at an element offset: unaligned and aligned starts.
  for (std::int64_t start : {3, 32, 64}) {
    const Input v = in({64 * 32}).range(-3, 3).slice(0, start, start + 40 * 32).reshape({40, 32});
    add_softmax(L, v, Shape{40, 32}, -1, true);
    add_softmax(L, v, Shape{40, 32}, 0, false);
  }
  add_softmax(L, in({c, r}).range(-5, 5).t(), Shape{r, c}, -1, false);
  add_softmax(L, in({4, 5000}).range(-30, 30), Shape{4, 5000}, -1, false);
  add_softmax(L, in({4, 5000}).range(-30, 30), Shape{4, 5000}, -1, true);
  L.add("softmax axis -1", K::Softmax, F32, {in({0, 5})}, softmax_call(-1, false), Tol::ulp(64));
  for (DType t : {F64, F16, BF16})
    for (std::int64_t axis : {0, -1})
      for (bool log : {false, true}) {
        Input xt = x;
        xt.dtype = t;
        add_softmax(L, xt, Shape{r, c}, axis, log);
      }
  // Columns that leave part of a column tile idle (inner 3), a wide inner, in 16 and 64 bits.
  for (DType t : {F16, BF16, F64}) {
    add_softmax(L, in({5, 300, 3}, t).range(-8, 8), Shape{5, 300, 3}, 1, false);
    add_softmax(L, in({5, 300, 3}, t).range(-8, 8), Shape{5, 300, 3}, 1, true);
  }
  add_softmax(L, in({2, 3, 70001}).range(-8, 8), Shape{2, 3, 70001}, 1, false);
}

// ---------------------------------------------------------------- layer_norm, rms_norm

void norm_cases(CaseList& L) {
  const auto ln = [](bool affine, float eps) -> Run {
    return [affine, eps](Backend&, std::vector<Tensor>& x) -> Outputs {
      if (affine) return {ops::layer_norm(x[0], x[1], x[2], eps)};
      return {ops::layer_norm(x[0], std::nullopt, std::nullopt, eps)};
    };
  };
  const auto rms = [](bool weighted, float eps) -> Run {
    return [weighted, eps](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::rms_norm(x[0], weighted ? std::optional<Tensor>(x[1]) : std::nullopt, eps)};
    };
  };
  const auto tol = [](std::int64_t n) { return Tol::reduction(n, 16, 2); };
  for (DType t : kFloats)
    for (const Shape& s : {Shape{4, 7, 33}, Shape{1, 1}, Shape{3, 1000}, Shape{2, 4096}}) {
      const std::int64_t n = s[s.ndim() - 1];
      L.add("layer_norm", K::Norm, t, {in(s, t).range(-3, 3)}, ln(false, 1e-5f), tol(n));
      L.add("layer_norm weight bias", K::Norm, t,
            {in(s, t).range(-3, 3), in({n}, t).range(0.5, 1.5), in({n}, t).range(-1, 1)}, ln(true, 1e-5f), tol(n));
      L.add("rms_norm", K::Norm, t, {in(s, t).range(-3, 3)}, rms(false, 1e-6f), tol(n));
      L.add("rms_norm weight", K::Norm, t, {in(s, t).range(-3, 3), in({n}, t).range(0.5, 1.5)}, rms(true, 1e-6f),
            tol(n));
    }
  L.add("layer_norm weight bias", K::Norm, F32, {in({33, 12}).t(), in({33}), in({33})}, ln(true, 1e-5f), tol(33));
  L.add("rms_norm weight", K::Norm, F32, {in({33, 12}).t(), in({33})}, rms(true, 1e-6f), tol(33));
  L.add("layer_norm eps=0.1", K::Norm, F32, {in({5, 64}).range(-0.1, 0.1)}, ln(false, 0.1f), tol(64));
  // Far from zero: the mean must not swamp the variance. x - mean itself rounds
  // at |x| (about 2^-14 here) while the row's deviation is about 0.29, so two
  // correct f32 two-pass kernels differ by up to ~2^-14 / 0.29 relative (a few
  // thousand ulps) wherever their means round to neighbouring floats; both are
  // held to that against each other and to an f64 reference (a one-pass
  // E[x^2] - E[x]^2 would be off by far more).
  L.add("layer_norm", K::Norm, F32, {in({8, 256}).range(1e3, 1e3 + 1)}, ln(false, 1e-5f), Tol::ulp(4096)).reference =
      [](const Values& v) {
        std::vector<double> out(v[0].size());
        for (std::size_t r = 0; r < 8; ++r) {
          double mean = 0, var = 0;
          for (std::size_t i = 0; i < 256; ++i) mean += v[0][r * 256 + i];
          mean /= 256;
          for (std::size_t i = 0; i < 256; ++i) var += (v[0][r * 256 + i] - mean) * (v[0][r * 256 + i] - mean);
          const double inv = 1.0 / std::sqrt(var / 256 + 1e-5);
          for (std::size_t i = 0; i < 256; ++i) out[r * 256 + i] = (v[0][r * 256 + i] - mean) * inv;
        }
        return out;
      };
  // The same in f64 at 1e8: x - mean rounds at 2^-26 / 0.29 relative (about
  // 2^28 units of 2^-52), what a device's kernel is held to against an exact
  // reference (deviations from the row's first element, exact in f64). The
  // CPU's f64 path sums the row's raw values, whose rounding at 2.56e10 moves
  // its mean by about 2^-22 relative in the output here (3e-7 seen): the CPU
  // and a device are held to 2^-21 against each other.
  Case& far64 = L.add("layer_norm", K::Norm, F64, {in({8, 256}, F64).range(1e8, 1e8 + 1)}, ln(false, 1e-5f),
                      Tol::ulp(std::ldexp(1.0, 31)));
  far64.reference_tol = Tol::ulp(std::ldexp(1.0, 29));
  far64.reference = [](const Values& v) {
    std::vector<double> out(v[0].size());
    for (std::size_t r = 0; r < 8; ++r) {
      const double* x = &v[0][r * 256];
      double s = 0, var = 0;
      for (std::size_t i = 0; i < 256; ++i) s += x[i] - x[0];
      const double m = s / 256;
      for (std::size_t i = 0; i < 256; ++i) var += (x[i] - x[0] - m) * (x[i] - x[0] - m);
      const double inv = 1.0 / std::sqrt(var / 256 + static_cast<double>(1e-5f));
      for (std::size_t i = 0; i < 256; ++i) out[r * 256 + i] = (x[i] - x[0] - m) * inv;
    }
    return out;
  };
  L.add("rms_norm", K::Norm, F32, {in({8, 256}).range(-1e18, 1e18)}, rms(false, 1e-6f), tol(256));
  L.add("layer_norm", K::Norm, F32, {in({0, 8})}, ln(false, 1e-5f), tol(8));
  L.add("rms_norm weight", K::Norm, F32, {in({5, 129}).range(-3, 3), in({129}).range(0.5, 1.5)}, rms(true, 1e-5f),
        tol(129));
  L.add("layer_norm weight bias", K::Norm, F32,
        {in({3, 127}).range(-3, 3), in({127}).range(0.5, 1.5), in({127}).range(-1, 1)}, ln(true, 1e-5f), tol(127));
}

// ---------------------------------------------------------------- batch_norm

void batch_norm_cases(CaseList& L) {
  // Inputs: x, running_mean, running_var, weight, bias.
  const auto bn = [](bool training, bool running, bool affine) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      const std::optional<Tensor> rm = running ? std::optional<Tensor>(x[1]) : std::nullopt;
      const std::optional<Tensor> rv = running ? std::optional<Tensor>(x[2]) : std::nullopt;
      const std::optional<Tensor> w = affine ? std::optional<Tensor>(x[3]) : std::nullopt;
      const std::optional<Tensor> b = affine ? std::optional<Tensor>(x[4]) : std::nullopt;
      Tensor out = ops::batch_norm(x[0], rm, rv, w, b, training, 0.3f, 1e-5f);
      if (training && running) return {out, x[1], x[2]};  // the running statistics are updated in place
      return {out};
    };
  };
  for (DType t : kFloats)
    for (const Shape& s : {Shape{4, 3, 5, 5}, Shape{16, 8}, Shape{8, 3, 1, 1}, Shape{2, 5, 3, 17}}) {
      const std::int64_t c = s[1], n = s.numel() / c;
      const std::vector<Input> ins = {in(s, t).range(-2, 3), in({c}, t).range(-0.5, 0.5), in({c}, t).range(0.5, 2),
                                      in({c}, t).range(0.5, 1.5), in({c}, t).range(-1, 1)};
      const Tol tol = Tol::reduction(n, 16, 2);
      L.add("batch_norm inference", K::BatchNorm, t, ins, bn(false, true, true), tol);
      L.add("batch_norm inference no affine", K::BatchNorm, t, ins, bn(false, true, false), tol);
      L.add("batch_norm training", K::BatchNorm, t, ins, bn(true, true, true), tol);
      L.add("batch_norm training no running stats", K::BatchNorm, t, ins, bn(true, false, true), tol);
    }
  L.add("batch_norm training", K::BatchNorm, F32,
        {in({4, 5, 3, 3}).permute({0, 3, 1, 2}), in({3}), in({3}).range(0.5, 2), in({3}), in({3})},
        bn(true, true, true), Tol::reduction(60, 16, 2));
  L.add("batch_norm training", K::BatchNorm, F32,
        {in({8, 4, 16}).range(1e3, 1e3 + 1), in({4}), in({4}).range(0.5, 2), in({4}), in({4})}, bn(true, true, true),
        Tol::reduction(128, 16, 2));
  // More elements per channel than a GPU work-group has items, and the fewest
  // the op takes (two: the unbiased variance divides by one).
  for (DType t : kFloats) {
    L.add("batch_norm training long channels", K::BatchNorm, t,
          {in({3, 2, 21, 23}, t).range(-2, 3), in({2}, t), in({2}, t).range(0.5, 2), in({2}, t), in({2}, t)},
          bn(true, true, true), Tol::reduction(3 * 21 * 23, 16, 2));
    L.add("batch_norm training two elements per channel", K::BatchNorm, t,
          {in({2, 5}, t), in({5}, t), in({5}, t).range(0.5, 2), in({5}, t), in({5}, t)}, bn(true, true, true),
          Tol::reduction(2, 16, 2));
  }
}

// ---------------------------------------------------------------- rope

void rope_cases(CaseList& L) {
  const auto rope = [](ops::RopeStyle style, std::int64_t max_pos, std::int64_t pos0, std::int64_t rot) -> Run {
    return [=](Backend& b, std::vector<Tensor>& x) -> Outputs {
      const std::int64_t rd = rot ? rot : x[0].shape()[3];
      auto [cs, sn] = ops::rope_cache(b, max_pos, rd);
      return {ops::rope(x[0], cs, sn, style, pos0, rot)};
    };
  };
  for (DType t : kFloats)
    for (auto style : {ops::RopeStyle::NeoX, ops::RopeStyle::GptJ}) {
      const std::string name = style == ops::RopeStyle::NeoX ? "rope neox" : "rope gptj";
      L.add(name + " rot=6 pos0=3", K::Rope, t, {in({2, 5, 3, 8}, t)}, rope(style, 16, 3, 6), Tol::ulp(8));
      L.add(name, K::Rope, t, {in({1, 7, 2, 16}, t)}, rope(style, 7, 0, 0), Tol::ulp(8));
      L.add(name + " pos0=4000", K::Rope, t, {in({1, 9, 3, 32}, t)}, rope(style, 4096, 4000, 0), Tol::ulp(8));
    }
  L.add("rope neox", K::Rope, F32, {in({2, 3, 5, 8}).permute({0, 2, 1, 3})}, rope(ops::RopeStyle::NeoX, 5, 0, 0),
        Tol::ulp(8));
  L.add("rope neox rot=64", K::Rope, F32, {in({1, 300, 1, 128}).range(-1e3, 1e3)},
        rope(ops::RopeStyle::NeoX, 300, 0, 64), Tol::ulp(8));
  L.add("rope gptj", K::Rope, F32, {in({0, 3, 2, 8})}, rope(ops::RopeStyle::GptJ, 4, 0, 0), Tol::ulp(8));
}

// ---------------------------------------------------------------- attention

struct AttnShape {
  std::int64_t b, hq, hkv, sq, skv, d, dv;
};

void attention_cases(CaseList& L) {
  const auto attn = [](bool causal, std::optional<float> scale) -> Run {
    return
        [=](Backend&, std::vector<Tensor>& x) -> Outputs { return {ops::attention(x[0], x[1], x[2], causal, scale)}; };
  };
  const std::vector<AttnShape> shapes = {
      {1, 1, 1, 1, 1, 8, 8},      // one query, one key
      {2, 4, 4, 7, 7, 16, 16},    // multi-head
      {2, 4, 2, 7, 9, 16, 16},    // grouped-query
      {1, 8, 1, 5, 33, 17, 17},   // multi-query, odd head size
      {1, 2, 2, 1, 300, 64, 64},  // decoding against a long cache
      {2, 4, 2, 9, 9, 8, 12},     // value size != key size
  };
  for (DType t : {F32, F16, BF16})
    for (const auto& s : shapes)
      for (bool causal : {false, true}) {
        std::ostringstream name;
        name << "attention Hq=" << s.hq << " Hkv=" << s.hkv << (causal ? " causal" : "");
        L.add(name.str(), K::Attention, t,
              {in({s.b, s.hq, s.sq, s.d}, t), in({s.b, s.hkv, s.skv, s.d}, t), in({s.b, s.hkv, s.skv, s.dv}, t)},
              attn(causal, std::nullopt), Tol::reduction(s.skv + s.d, 64, 2));
      }
  L.add("attention scale=0.3 causal", K::Attention, F32, {in({1, 2, 6, 8}), in({1, 2, 6, 8}), in({1, 2, 6, 8})},
        attn(true, 0.3f), Tol::reduction(14, 64, 2));
  // q as a view of [B, S, H, D]; large scores that saturate the softmax.
  L.add("attention Hq=4 Hkv=2 causal", K::Attention, F32,
        {in({2, 7, 4, 16}).permute({0, 2, 1, 3}), in({2, 2, 7, 16}), in({2, 2, 7, 16})}, attn(true, std::nullopt),
        Tol::reduction(23, 64, 2));
  L.add("attention Hq=2 Hkv=1", K::Attention, F32,
        {in({1, 2, 5, 32}).range(-10, 10), in({1, 1, 40, 32}).range(-10, 10), in({1, 1, 40, 32})},
        attn(false, std::nullopt), Tol::reduction(72, 64, 2));
  L.add("attention Hq=2 Hkv=2", K::Attention, F32, {in({1, 2, 0, 8}), in({1, 2, 4, 8}), in({1, 2, 4, 8})},
        attn(false, std::nullopt), Tol::reduction(12, 64, 2));
  // A KV cache's prefix: k and v are slices of a longer cache (batch and head
  // strides of the whole cache, packed rows), queries bottom-right aligned.
  const auto attn_br = [](bool causal) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::attention(x[0], x[1], x[2], causal, std::nullopt, ops::CausalAlign::BottomRight)};
    };
  };
  for (DType t : {F32, F16, BF16}) {
    L.add("attention kv-cache prefix Hq=4 Hkv=2 causal bottom-right", K::Attention, t,
          {in({2, 4, 3, 24}, t), in({2, 2, 16, 24}, t).slice(2, 0, 11), in({2, 2, 16, 24}, t).slice(2, 0, 11)},
          attn_br(true), Tol::reduction(35, 64, 2));
    L.add("attention decode kv-cache prefix Hq=8 Hkv=2 causal bottom-right", K::Attention, t,
          {in({1, 8, 1, 64}, t), in({1, 2, 40, 64}, t).slice(2, 0, 17), in({1, 2, 40, 64}, t).slice(2, 0, 17)},
          attn_br(true), Tol::reduction(81, 64, 2));
  }
  // Decoding against deep caches (the CPU's split-K path: the keys of each
  // key/value head split across threads, partial softmaxes combined), up to
  // 4096 keys; a few query rows per head group; head sizes that are not a
  // multiple of 16 take the portable loops; one non-causal.
  const std::vector<AttnShape> decode = {
      {1, 9, 3, 1, 512, 64, 64},    {1, 9, 3, 1, 2048, 64, 64}, {1, 8, 2, 1, 4096, 64, 64},
      {2, 8, 2, 3, 1000, 128, 128}, {1, 4, 4, 1, 777, 40, 24},  {1, 6, 1, 2, 1500, 96, 80},
  };
  for (DType t : {F32, F16, BF16})
    for (const auto& s : decode) {
      std::ostringstream name;
      name << "attention decode depth=" << s.skv << " Hq=" << s.hq << " Hkv=" << s.hkv << " Sq=" << s.sq << " D=" << s.d
           << " causal bottom-right";
      L.add(name.str(), K::Attention, t,
            {in({s.b, s.hq, s.sq, s.d}, t), in({s.b, s.hkv, s.skv + 5, s.d}, t).slice(2, 0, s.skv),
             in({s.b, s.hkv, s.skv + 5, s.dv}, t).slice(2, 0, s.skv)},
            attn_br(true), Tol::reduction(s.skv + s.d, 64, 2));
    }
  L.add("attention decode depth=3000 Hq=9 Hkv=3", K::Attention, F32,
        {in({1, 9, 1, 64}), in({1, 3, 3000, 64}), in({1, 3, 3000, 64})}, attn(false, std::nullopt),
        Tol::reduction(3064, 64, 2));
  // Sq > Skv bottom-right: the first Sq - Skv queries see no key (zeros).
  L.add("attention Sq>Skv causal bottom-right", K::Attention, F32,
        {in({1, 2, 9, 8}), in({1, 2, 5, 8}), in({1, 2, 5, 8})}, attn_br(true), Tol::reduction(13, 64, 2));
  L.add("attention Hq=6 Hkv=3 Sq>Skv causal bottom-right", K::Attention, F32,
        {in({2, 6, 7, 5}), in({2, 3, 4, 5}), in({2, 3, 4, 3})}, attn_br(true), Tol::reduction(9, 64, 2));
  // Odd head sizes, several key tiles, both alignments; a non-causal prefix view.
  L.add("attention odd sizes causal", K::Attention, F32, {in({1, 3, 70, 33}), in({1, 3, 130, 33}), in({1, 3, 130, 7})},
        attn(true, std::nullopt), Tol::reduction(163, 64, 2));
  L.add("attention odd sizes causal bottom-right", K::Attention, F32,
        {in({1, 3, 70, 33}), in({1, 3, 130, 33}), in({1, 3, 130, 7})}, attn_br(true), Tol::reduction(163, 64, 2));
  L.add("attention kv-cache prefix Hq=3 Hkv=1", K::Attention, F32,
        {in({1, 3, 5, 40}), in({1, 1, 90, 40}).slice(2, 0, 67), in({1, 1, 90, 40}).slice(2, 0, 67)}, attn_br(false),
        Tol::reduction(107, 64, 2));
  // Sliding windows and logit soft-caps (Mistral's and Gemma's local layers,
  // Gemma 2): prompts with the window starting inside a key tile, decoding
  // with the window cutting a deep cache (split-K), scores large enough for
  // the cap to bend.
  const auto attn_mask = [](std::int64_t window, float softcap, ops::CausalAlign align) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::attention(x[0], x[1], x[2], true, std::nullopt, align, window, softcap)};
    };
  };
  const auto TL = ops::CausalAlign::TopLeft, BR = ops::CausalAlign::BottomRight;
  for (DType t : {F32, F16}) {
    L.add("attention window=5 causal", K::Attention, t,
          {in({1, 2, 70, 16}, t), in({1, 2, 70, 16}, t), in({1, 2, 70, 16}, t)}, attn_mask(5, 0.0f, TL),
          Tol::reduction(21, 64, 2));
    L.add("attention window=100 Hq=4 Hkv=2 causal bottom-right", K::Attention, t,
          {in({1, 4, 130, 64}, t), in({1, 2, 300, 64}, t), in({1, 2, 300, 64}, t)}, attn_mask(100, 0.0f, BR),
          Tol::reduction(164, 64, 2));
    L.add("attention softcap=2.5 causal", K::Attention, t,
          {in({1, 4, 40, 16}, t).range(-4, 4), in({1, 4, 40, 16}, t), in({1, 4, 40, 16}, t)}, attn_mask(0, 2.5f, TL),
          Tol::reduction(56, 64, 2));
    L.add("attention window=30 softcap=1 Hq=4 Hkv=2 causal bottom-right", K::Attention, t,
          {in({1, 4, 70, 64}, t).range(-4, 4), in({1, 2, 90, 64}, t), in({1, 2, 90, 64}, t)}, attn_mask(30, 1.0f, BR),
          Tol::reduction(94, 64, 2));
    L.add("attention decode window=512 depth=2000 Hq=9 Hkv=3 causal bottom-right", K::Attention, t,
          {in({1, 9, 1, 64}, t), in({1, 3, 2005, 64}, t).slice(2, 0, 2000), in({1, 3, 2005, 64}, t).slice(2, 0, 2000)},
          attn_mask(512, 0.0f, BR), Tol::reduction(576, 64, 2));
    L.add("attention decode window=300 softcap=50 depth=1000 Hq=8 Hkv=2 Sq=3 causal bottom-right", K::Attention, t,
          {in({2, 8, 3, 64}, t), in({2, 2, 1000, 64}, t), in({2, 2, 1000, 64}, t)}, attn_mask(300, 50.0f, BR),
          Tol::reduction(364, 64, 2));
  }
}

// ---------------------------------------------------------------- conv2d, pooling

struct ConvShape {
  std::int64_t n, c, h, w, k, r, s;
  ops::Conv2dParams p;
  bool bias;
};

ops::Conv2dParams conv_params(std::int64_t sh, std::int64_t sw, std::int64_t ph, std::int64_t pw, std::int64_t dil,
                              std::int64_t groups, ops::ConvAlgo algo = ops::ConvAlgo::Auto) {
  ops::Conv2dParams p;
  p.stride_h = sh, p.stride_w = sw, p.pad_h = ph, p.pad_w = pw, p.dil_h = dil, p.dil_w = dil, p.groups = groups;
  p.algo = algo;
  return p;
}

std::string conv_name(const ConvShape& s) {
  std::ostringstream os;
  os << "conv2d stride " << s.p.stride_h << "x" << s.p.stride_w << " pad " << s.p.pad_h << "x" << s.p.pad_w << " dil "
     << s.p.dil_h << " groups " << s.p.groups << (s.bias ? " bias" : "")
     << (s.p.algo == ops::ConvAlgo::Winograd ? " winograd"
         : s.p.algo == ops::ConvAlgo::Gemm   ? " gemm"
                                             : "");
  return os.str();
}

Run conv_call(const ops::Conv2dParams& p, bool bias) {
  return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
    return {ops::conv2d(x[0], x[1], bias ? std::optional<Tensor>(x[2]) : std::nullopt, p)};
  };
}

void add_conv(CaseList& L, DType t, const ConvShape& s, Input x) {
  std::vector<Input> ins = {std::move(x), in({s.k, s.c / s.p.groups, s.r, s.s}, t)};
  if (s.bias) ins.push_back(in({s.k}, t));
  const std::int64_t n = s.c / s.p.groups * s.r * s.s;
  const Tol tol = s.p.algo == ops::ConvAlgo::Winograd ? Tol::reduction(n, 64, 8) : Tol::reduction(n, 8, 1);
  L.add(conv_name(s), K::Conv2d, t, std::move(ins), conv_call(s.p, s.bias), tol);
}

void conv_cases(CaseList& L) {
  const std::vector<ConvShape> shapes = {
      {1, 1, 5, 5, 1, 3, 3, conv_params(1, 1, 0, 0, 1, 1), false},
      {2, 3, 9, 11, 4, 3, 3, conv_params(1, 1, 1, 1, 1, 1), true},
      {2, 4, 10, 10, 6, 3, 3, conv_params(2, 2, 1, 1, 1, 2), true},    // grouped, strided
      {1, 8, 12, 12, 8, 3, 3, conv_params(1, 1, 2, 2, 2, 8), false},   // depthwise, dilated
      {2, 5, 7, 7, 3, 1, 1, conv_params(1, 1, 0, 0, 1, 1), true},      // pointwise
      {1, 3, 8, 13, 2, 5, 2, conv_params(2, 1, 2, 0, 1, 1), true},     // non-square
      {1, 16, 10, 10, 16, 3, 3, conv_params(1, 1, 1, 1, 1, 1), true},  // Winograd-eligible
      {1, 3, 1, 1, 5, 1, 1, conv_params(1, 1, 0, 0, 1, 1), false},     // 1x1 image
      // More output channels and pixels (across images) than one GPU tile holds,
      // and a reduction that is not a whole number of GPU steps.
      {2, 8, 11, 9, 70, 3, 3, conv_params(1, 1, 1, 1, 1, 1), true},
      {1, 6, 7, 7, 134, 3, 1, conv_params(1, 2, 1, 0, 1, 2), true},  // grouped, 67 channels per group
      // Just past the GPU's direct path for few channels per group: the tiled
      // GEMM with groups, and with dilation, stride and a non-square filter.
      {1, 4, 6, 6, 18, 3, 3, conv_params(1, 1, 1, 1, 1, 2), false},
      {2, 5, 13, 11, 20, 3, 2, conv_params(2, 1, 2, 1, 2, 1), true},
  };
  for (DType t : kFloats)
    for (const auto& s : shapes) add_conv(L, t, s, in({s.n, s.c, s.h, s.w}, t));
  for (ops::ConvAlgo algo : {ops::ConvAlgo::Winograd, ops::ConvAlgo::Gemm}) {
    ConvShape s{2, 16, 9, 12, 24, 3, 3, conv_params(1, 1, 1, 1, 1, 1, algo), true};
    add_conv(L, F32, s, in({s.n, s.c, s.h, s.w}));
  }
  ConvShape nhwc{2, 3, 9, 11, 4, 3, 3, conv_params(1, 1, 1, 1, 1, 1), true};
  add_conv(L, F32, nhwc, in({2, 9, 11, 3}).permute({0, 3, 1, 2}));
  // Large values, inputs and weights positive: a rounding bound relative to the
  // result holds for any summation order only without cancellation.
  ConvShape big{1, 4, 8, 8, 4, 3, 3, conv_params(1, 1, 1, 1, 1, 1), false};
  L.add(conv_name(big), K::Conv2d, F32, {in({1, 4, 8, 8}).range(1e2, 1e3), in({4, 4, 3, 3}).range(0.1, 1)},
        conv_call(big.p, false), Tol::reduction(36, 8, 1));

  const auto pool = [](bool max, ops::Pool2dParams p) -> Run {
    return call1([=](const Tensor& x) { return max ? ops::max_pool2d(x, p) : ops::avg_pool2d(x, p); });
  };
  const auto pp = [](std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t ph,
                     std::int64_t pw, bool include_pad) {
    ops::Pool2dParams p;
    p.kernel_h = kh, p.kernel_w = kw, p.pad_h = ph, p.pad_w = pw;
    if (sh) p.stride_h = sh;  // 0: left unset, the kernel size
    if (sw) p.stride_w = sw;
    p.count_include_pad = include_pad;
    return p;
  };
  const std::vector<ops::Pool2dParams> pools = {pp(2, 2, 0, 0, 0, 0, true), pp(3, 3, 2, 2, 1, 1, true),
                                                pp(3, 3, 2, 2, 1, 1, false), pp(3, 2, 1, 2, 0, 1, false)};
  for (DType t : kFloats)
    for (bool max : {true, false})
      for (const auto& p : pools) {
        std::ostringstream name;
        name << (max ? "max_pool2d " : "avg_pool2d ") << p.kernel_h << "x" << p.kernel_w << " stride "
             << p.stride_h.value_or(p.kernel_h) << "x" << p.stride_w.value_or(p.kernel_w) << " pad " << p.pad_h << "x"
             << p.pad_w << (p.count_include_pad ? "" : " exclude pad");
        L.add(name.str(), K::Pool2d, t, {in({2, 3, 9, 9}, t).range(-3, 3)}, pool(max, p),
              max ? Tol::bitwise() : Tol::reduction(p.kernel_h * p.kernel_w));
      }
  L.add("max_pool2d 2x2", K::Pool2d, F32, {in({1, 2, 6, 6}).specials()}, pool(true, pools[0]), Tol::bitwise());
  L.add("avg_pool2d 3x3 stride 2x2 pad 1x1", K::Pool2d, F32, {in({2, 9, 9, 3}).permute({0, 3, 1, 2})},
        pool(false, pools[1]), Tol::reduction(9));
  L.add("max_pool2d 3x3 stride 2x2 pad 1x1", K::Pool2d, F32, {in({1, 1, 1, 1})}, pool(true, pools[1]), Tol::bitwise());
}

// ---------------------------------------------------------------- adam

// The loss scaler's overflow check: any_non_finite's Bool flag over a list.
void non_finite_cases(CaseList& L) {
  const Run any = [](Backend&, std::vector<Tensor>& x) -> Outputs { return {ops::any_non_finite(x)}; };
  for (DType t : kFloats) {
    L.add("finite", K::NonFinite, t, {in({37, 5}, t).range(-1e4, 1e4)}, any, Tol::bitwise());
    L.add("NaN, inf, -inf", K::NonFinite, t, {in({4, 4}, t).specials()}, any, Tol::bitwise());
    L.add("one NaN", K::NonFinite, t, {in({3, 7}, t).set(11, kNaN)}, any, Tol::bitwise());
    // The last element of a long tensor: the grid-stride loop's tail.
    L.add("inf last", K::NonFinite, t, {in({70001}, t).set(70000, -kInf)}, any, Tol::bitwise());
  }
  // The largest finite values and subnormals are finite.
  L.add("extremes", K::NonFinite, F32, {in({4}).vals({3.4028234663852886e38, -3.4028234663852886e38, 1e-45, -0.0})},
        any, Tol::bitwise());
  L.add("extremes", K::NonFinite, F16, {in({3}, F16).vals({65504, -65504, 6e-8})}, any, Tol::bitwise());
  // Several tensors into one flag: only the third overflows; a strided one is made contiguous first.
  L.add("three tensors", K::NonFinite, F16, {in({5, 3}, F16), in({4, 6}, F16).t(), in({2, 9}, F16).set(17, kInf)}, any,
        Tol::bitwise());
  L.add("three finite tensors", K::NonFinite, BF16,
        {in({5, 3}, BF16), in({0, 6}, BF16), in({8, 2}, BF16).slice(0, 1, 7)}, any, Tol::bitwise());
}

void adam_cases(CaseList& L) {
  // Inputs per parameter: param, grad, exp_avg, exp_avg_sq; outputs: the three updated tensors.
  const auto adam = [](ops::AdamConfig cfg, std::int64_t step, float grad_scale, std::size_t nparams) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      std::vector<Tensor> p, g, m, v;
      for (std::size_t i = 0; i < nparams; ++i) {
        p.push_back(x[4 * i]);
        g.push_back(x[4 * i + 1]);
        m.push_back(x[4 * i + 2]);
        v.push_back(x[4 * i + 3]);
      }
      ops::adam_step(p, g, m, v, cfg, step, grad_scale);
      Outputs out;
      for (std::size_t i = 0; i < nparams; ++i) out.insert(out.end(), {p[i], m[i], v[i]});
      return out;
    };
  };
  const auto group = [](const Shape& s, DType t, double grad) {
    return std::vector<Input>{in(s, t), in(s, t).range(-grad, grad), in(s).range(-0.01, 0.01), in(s).range(0, 1e-4)};
  };
  ops::AdamConfig plain;
  ops::AdamConfig adamw;
  adamw.adamw = true, adamw.lr = 1e-2f, adamw.weight_decay = 0.01f;
  ops::AdamConfig decay;
  decay.weight_decay = 0.1f, decay.beta1 = 0.8f, decay.beta2 = 0.99f, decay.eps = 1e-6f;
  for (DType t : {F32, F16, BF16}) {
    L.add("adam step 1", K::Adam, t, group({37, 5}, t, 0.1), adam(plain, 1, 1.0f, 1), Tol::ulp(16));
    L.add("adamw step 10", K::Adam, t, group({37, 5}, t, 0.1), adam(adamw, 10, 1.0f, 1), Tol::ulp(16));
    L.add("adam weight_decay step 3", K::Adam, t, group({70001}, t, 0.1), adam(decay, 3, 1.0f, 1), Tol::ulp(16));
    L.add("adam grad_scale=1/1024", K::Adam, t, group({1}, t, 100), adam(plain, 2, 1.0f / 1024, 1), Tol::ulp(16));
  }
  std::vector<Input> two = group({7}, F32, 0.1);
  for (auto& i : group({3, 4}, F32, 0.1)) two.push_back(i);
  L.add("adam two parameters", K::Adam, F32, two, adam(plain, 1, 1.0f, 2), Tol::ulp(16));
  L.add("adam empty", K::Adam, F32, group({0, 3}, F32, 0.1), adam(plain, 1, 1.0f, 1), Tol::ulp(16));
  // Contiguous row ranges of larger tensors: each operand starts at its own element offset.
  for (DType t : {F32, BF16}) {
    const std::vector<Input> rows{in({6, 9}, t).slice(0, 1, 4), in({5, 9}, t).range(-0.1, 0.1).slice(0, 2, 5),
                                  in({4, 9}).range(-0.01, 0.01).slice(0, 0, 3),
                                  in({7, 9}).range(0, 1e-4).slice(0, 4, 7)};
    L.add("adamw at element offsets", K::Adam, t, rows, adam(adamw, 4, 1.0f, 1), Tol::ulp(16));
  }
  // An overflowed gradient (NaN, +-inf) spreads NaN and inf as on the CPU.
  std::vector<Input> overflow = group({4, 4}, F16, 0.1);
  overflow[1].specials();
  L.add("adam non-finite grad", K::Adam, F16, overflow, adam(plain, 1, 1.0f / 65536, 1), Tol::ulp(16));
  non_finite_cases(L);
}

// ---------------------------------------------------------------- quantized weights

// The weights are uploaded as f32 and quantized on the device's backend (the
// host reference quantizer; only the blocks land on the device), so both sides
// hold the same blocks.
//
// qmatmul: the CPU's integer kernels round each activation to a 16-bit level of
// its block's largest |x| first, off by at most amax_b / 65534; a GPU kernel
// takes f32 activations as they are (quant.kern.h). So the two differ by at most
// sum_b amax_b / 65534 * sum_{i in b} |w_i|: for |x| <= xmax, |w| <= wmax and k
// inputs, k * xmax * wmax / 65534 of max(1, |want|). A native kernel is held to
// f32 rounding against the f64 reference (the same blocks, dequantized on the host).
Tol qmatmul_tol(std::int64_t k, double scale) { return Tol::ulp(static_cast<double>(k) * scale / 65534.0 * 8388608.0); }
Tol qmatmul_reference_tol(std::int64_t k, double scale) { return Tol::reduction(k, 4, scale); }

std::vector<double> qmatmul_reference(QuantFormat f, std::int64_t k, const Values& v) {
  const std::vector<double>&x = v[0], &w = v[1];
  const std::int64_t m = static_cast<std::int64_t>(x.size()) / k, n = static_cast<std::int64_t>(w.size()) / k;
  std::vector<float> row(static_cast<std::size_t>(k)), deq(w.size());
  std::vector<unsigned char> blocks(quant_row_bytes(f, k));
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < k; ++i) row[static_cast<std::size_t>(i)] = static_cast<float>(w[j * k + i]);
    quantize_row(f, row.data(), blocks.data(), k);
    dequantize_row(f, blocks.data(), deq.data() + j * k, k);
  }
  std::vector<double> out(static_cast<std::size_t>(m * n));
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t i = 0; i < k; ++i) acc += x[r * k + i] * deq[j * k + i];
      out[r * n + j] = acc;
    }
  return out;
}

void quant_cases(CaseList& L) {
  for (QuantFormat f : kAllQuantFormats) {
    const std::string fmt(quant_format_name(f));
    // scale: the largest |x| times the largest |w|.
    const auto qmm = [&L, f, fmt](Input x, Input w, double scale = 1.0) {
      const std::int64_t k = w.shape[1];
      Case& c = L.add(
          "qmatmul " + fmt, K::QMatmul, F32, {std::move(x), std::move(w)},
          [f](Backend&, std::vector<Tensor>& t) -> Outputs { return {ops::qmatmul(t[0], QTensor::quantize(t[1], f))}; },
          qmatmul_tol(k, scale));
      c.reference = [f, k](const Values& v) { return qmatmul_reference(f, k, v); };
      c.reference_tol = qmatmul_reference_tol(k, scale);
    };
    // Row lengths in blocks: 32 elements, or 256 for the K formats.
    const std::int64_t B = quant_block_elems(f);
    if (quant_super_blocks(f)) {
      qmm(in({3, 256}), in({37, 256}));
      qmm(in({256, 5}).t(), in({64, 256}));
      qmm(in({2, 1, 512}), in({130, 512}).range(-1e3, 1e3), 1e3);
      qmm(in({1, 256}), in({1, 256}));                                          // one super-block, one output
      qmm(in({1, 1280}), in({67, 1280}));                                       // decode: m = 1, 5 super-blocks
      qmm(in({5, 768}), in({33, 768}));                                         // m past QM_ROWS
      qmm(in({9, 1536}), in({19, 1536}));                                       // more sub-blocks than work-items
      qmm(in({4, 256}).range(-1e3, 1e3), in({21, 256}).range(-1e3, 1e3), 1e6);  // large values on both sides
    } else {
      qmm(in({3, 96}), in({37, 96}));
      qmm(in({96, 5}).t(), in({64, 96}));
      qmm(in({2, 1, 64}), in({130, 64}).range(-1e3, 1e3), 1e3);
      qmm(in({1, 32}), in({1, 32}));                                          // one block, one output
      qmm(in({1, 160}), in({67, 160}));                                       // decode: m = 1, 5 blocks
      qmm(in({5, 224}), in({33, 224}));                                       // 7 blocks; m past QM_ROWS
      qmm(in({9, 576}), in({19, 576}));                                       // more quarter blocks than work-items
      qmm(in({4, 64}).range(-1e3, 1e3), in({21, 64}).range(-1e3, 1e3), 1e6);  // large values on both sides
    }
    for (DType t : {F32, F16, BF16}) {
      for (const Shape& s : {Shape{9, 2 * B}, Shape{1, B}, Shape{5, 3 * B}})
        L.add(
            "dequantize " + fmt + " to " + dt(t), K::Dequantize, t, {in(s)},
            [f, t](Backend&, std::vector<Tensor>& x) -> Outputs {
              return {ops::dequantize(QTensor::quantize(x[0], f), t)};
            },
            Tol::bitwise());
      L.add(
          "embedding " + fmt + " to " + dt(t), K::Dequantize, t, {in({11, B}), in({2, 3}, I64).range(0, 10)},
          [f, t](Backend&, std::vector<Tensor>& x) -> Outputs {
            return {ops::embedding(QTensor::quantize(x[0], f), x[1], t)};
          },
          Tol::bitwise());
    }
    L.add(
        "embedding " + fmt, K::Dequantize, F32, {in({11, B}), in({2, 3}, I32).range(0, 10)},
        [f](Backend&, std::vector<Tensor>& x) -> Outputs { return {ops::embedding(QTensor::quantize(x[0], f), x[1])}; },
        Tol::bitwise());
    L.add(
        "embedding " + fmt + " large values", K::Dequantize, F32,
        {in({7, 3 * B}).range(-6e4, 6e4), in({4}, I32).range(0, 6)},
        [f](Backend&, std::vector<Tensor>& x) -> Outputs { return {ops::embedding(QTensor::quantize(x[0], f), x[1])}; },
        Tol::bitwise());
  }
}

// ---------------------------------------------------------------- int8 quantization (ONNX)

void linear_quant_cases(CaseList& L) {
  const auto quant = [](int axis, bool zp) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::quantize_linear(x[0], x[1], zp ? std::optional<Tensor>(x[2]) : std::nullopt, axis)};
    };
  };
  const auto dequant = [](int axis, DType out) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::dequantize_linear(x[0], x[1], std::optional<Tensor>(x[2]), axis, out)};
    };
  };
  for (DType t : {F32, F16, BF16, F64}) {
    L.add("quantize per tensor u8", K::QuantizeLinear, t,
          {in({37, 5}, t).range(-10, 10), in({1}).vals({0.07}), in({1}, U8).vals({128})}, quant(1, true),
          Tol::bitwise());
    L.add("quantize per channel i8 axis 1", K::QuantizeLinear, t,
          {in({4, 6, 5}, t).range(-3, 3), in({6}).range(0.005, 0.05), in({6}, I8).range(-20, 20)}, quant(1, true),
          Tol::bitwise());
  }
  // Halves round to even, +-inf saturate and NaN gives the zero point.
  L.add("quantize halves and specials", K::QuantizeLinear, F32,
        {in({12})
             .vals({0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 1e30, -1e30, 63.75, -64.25, 0, 0})
             .set(10, kNaN)
             .set(11, kInf),
         in({1}).vals({0.5}), in({1}, I8).vals({0})},
        quant(1, true), Tol::bitwise());
  L.add("quantize per tensor, no zero point, strided x", K::QuantizeLinear, F32,
        {in({9, 7}).range(0, 30).t(), in({1}).vals({0.125})}, quant(1, false), Tol::bitwise());
  L.add("quantize per channel axis -1", K::QuantizeLinear, F32,
        {in({3, 2, 7}).range(-1, 1), in({7}).range(0.002, 0.01), in({7}, U8).range(100, 150)}, quant(-1, true),
        Tol::bitwise());
  L.add("quantize per channel axis 0, many elements", K::QuantizeLinear, F32,
        {in({3, 70001}).range(-5, 5), in({3}).range(0.01, 0.05), in({3}, U8).range(0, 255)}, quant(0, true),
        Tol::bitwise());
  for (DType t : {F32, F16, BF16}) {
    L.add("dequantize u8 per channel axis 0 to " + dt(t), K::DequantizeLinear, t,
          {in({5, 9}, U8).range(0, 255), in({5}).range(0.01, 2), in({5}, U8).range(0, 255)}, dequant(0, t),
          Tol::bitwise());
    L.add("dequantize i8 per tensor to " + dt(t), K::DequantizeLinear, t,
          {in({33, 3}, I8).range(-128, 127).t(), in({1}).vals({0.031}), in({1}, I8).vals({-7})}, dequant(1, t),
          Tol::bitwise());
  }
}

// ---------------------------------------------------------------- integer matmul

void integer_matmul_cases(CaseList& L) {
  const auto opt = [](const Tensor& t) { return std::optional<Tensor>(t); };
  const auto mmi = [=](bool zps) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {zps ? ops::matmul_integer(x[0], x[1], opt(x[2]), opt(x[3])) : ops::matmul_integer(x[0], x[1])};
    };
  };
  const auto qlin = [=](bool quantized_out) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      if (!quantized_out) return {ops::qlinear_matmul(x[0], x[1], x[2], x[3], x[4], x[5])};
      return {ops::qlinear_matmul(x[0], x[1], x[2], x[3], x[4], x[5], opt(x[6]), opt(x[7]))};
    };
  };
  const auto full = [](DType t) {
    return t == U8 ? std::pair<double, double>{0, 255} : std::pair<double, double>{-128, 127};
  };
  for (auto [at, bt] : {std::pair{U8, I8}, std::pair{I8, I8}, std::pair{U8, U8}, std::pair{I8, U8}}) {
    const auto [alo, ahi] = full(at);
    const auto [blo, bhi] = full(bt);
    const std::string pair = dt(at) + " x " + dt(bt);
    L.add("matmul_integer " + pair + ", zero points per tensor", K::IntegerMatmul, I32,
          {in({13, 37}, at).range(alo, ahi), in({37, 21}, bt).range(blo, bhi), in({1}, at).range(alo, ahi),
           in({1}, bt).range(blo, bhi)},
          mmi(true), Tol::bitwise());
    L.add("matmul_integer " + pair + ", zero points per row / column", K::IntegerMatmul, I32,
          {in({6, 70}, at).range(alo, ahi), in({70, 33}, bt).range(blo, bhi), in({6}, at).range(alo, ahi),
           in({33}, bt).range(blo, bhi)},
          mmi(true), Tol::bitwise());
  }
  L.add("matmul_integer, no zero points, batched b", K::IntegerMatmul, I32,
        {in({3, 5, 9}, U8).range(0, 255), in({3, 9, 7}, I8).range(-128, 127)}, mmi(false), Tol::bitwise());
  L.add("matmul_integer, batched a, shared transposed b", K::IntegerMatmul, I32,
        {in({2, 4, 11}, U8).range(0, 255), in({6, 11}, I8).range(-128, 127).t(), in({1}, U8).vals({128}),
         in({1}, I8).vals({3})},
        mmi(true), Tol::bitwise());
  L.add("matmul_integer, k = 1", K::IntegerMatmul, I32, {in({5, 1}, U8).range(0, 255), in({1, 3}, I8).range(-128, 127)},
        mmi(false), Tol::bitwise());
  L.add("matmul_integer, larger", K::IntegerMatmul, I32,
        {in({67, 301}, U8).range(0, 255), in({301, 45}, I8).range(-128, 127), in({1}, U8).vals({120}),
         in({1}, I8).vals({-2})},
        mmi(true), Tol::bitwise());
  // Shapes for each of the CUDA plugin's tensor-core routes (integer_matmul.cu):
  // s8 x s8 as stored, s8 rows used in place (k a multiple of 16), copies of
  // odd sizes, per-batch b with zero points, and several tiles.
  L.add("matmul_integer i8 x i8, no zero points", K::IntegerMatmul, I32,
        {in({64, 48}, I8).range(-128, 127), in({48, 80}, I8).range(-128, 127)}, mmi(false), Tol::bitwise());
  L.add("matmul_integer i8 x i8, no zero points, odd sizes", K::IntegerMatmul, I32,
        {in({33, 29}, I8).range(-128, 127), in({29, 37}, I8).range(-128, 127)}, mmi(false), Tol::bitwise());
  L.add("matmul_integer i8 x i8, k = 64, zero point per column", K::IntegerMatmul, I32,
        {in({24, 64}, I8).range(-128, 127), in({64, 40}, I8).range(-128, 127), in({1}, I8).vals({0}),
         in({40}, I8).range(-128, 127)},
        mmi(true), Tol::bitwise());
  L.add("matmul_integer u8 x i8, batched b, zero points per row / column", K::IntegerMatmul, I32,
        {in({3, 20, 32}, U8).range(0, 255), in({3, 32, 24}, I8).range(-128, 127), in({20}, U8).range(0, 255),
         in({24}, I8).range(-128, 127)},
        mmi(true), Tol::bitwise());
  L.add("matmul_integer u8 x i8, zero points 128 and 0 (nothing to correct)", K::IntegerMatmul, I32,
        {in({40, 64}, U8).range(0, 255), in({64, 36}, I8).range(-128, 127), in({1}, U8).vals({128}),
         in({1}, I8).vals({0})},
        mmi(true), Tol::bitwise());
  // A prepared weight: its first product (which may build the backend's form of it) and a second (which reuses it).
  const Run prepared = [](Backend&, std::vector<Tensor>& x) -> Outputs {
    const ops::IntegerWeight w(x[1]);
    return {ops::matmul_integer(x[0], w, x[2], x[3]), ops::matmul_integer(x[0], w, x[2], x[3])};
  };
  L.add("matmul_integer u8 x i8, prepared weight, zero points per row / column", K::IntegerMatmul, I32,
        {in({2, 19, 48}, U8).range(0, 255), in({48, 28}, I8).range(-128, 127), in({19}, U8).range(0, 255),
         in({28}, I8).range(-128, 127)},
        prepared, Tol::bitwise());
  L.add("matmul_integer i8 x u8, prepared weight, odd sizes", K::IntegerMatmul, I32,
        {in({23, 37}, I8).range(-128, 127), in({37, 45}, U8).range(0, 255), in({1}, I8).vals({-7}),
         in({1}, U8).vals({128})},
        prepared, Tol::bitwise());
  L.add("matmul_integer u8 x u8, several tiles", K::IntegerMatmul, I32,
        {in({200, 320}, U8).range(0, 255), in({320, 136}, U8).range(0, 255), in({200}, U8).range(0, 255),
         in({136}, U8).range(0, 255)},
        mmi(true), Tol::bitwise());
  for (DType yt : {U8, I8}) {
    const auto [ylo, yhi] = full(yt);
    L.add("qlinear_matmul u8 x i8 to " + dt(yt), K::IntegerMatmul, yt,
          {in({9, 40}, U8).range(0, 255), in({1}).vals({0.02}), in({1}, U8).vals({128}),
           in({40, 17}, I8).range(-128, 127), in({1}).vals({0.01}), in({1}, I8).vals({0}), in({1}).vals({0.03}),
           in({1}, yt).range(ylo, yhi)},
          qlin(true), Tol::bitwise());
    L.add("qlinear_matmul i8 x u8 per row / column to " + dt(yt), K::IntegerMatmul, yt,
          {in({7, 29}, I8).range(-128, 127), in({7}).range(0.005, 0.05), in({7}, I8).range(-10, 10),
           in({29, 12}, U8).range(0, 255), in({12}).range(0.005, 0.05), in({12}, U8).range(100, 150),
           in({1}).vals({0.7}), in({1}, yt).range(ylo, yhi)},
          qlin(true), Tol::bitwise());
  }
  // Convolutions through the same product (columns copied on the device).
  const auto conv = [=](ops::Conv2dParams p, bool requantize) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      if (!requantize) return {ops::conv_integer(x[0], x[1], opt(x[2]), opt(x[3]), p)};
      return {ops::qlinear_conv(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], opt(x[8]), p)};
    };
  };
  ops::Conv2dParams p1;
  p1.pad_h = p1.pad_w = 1;
  L.add("conv_integer 3x3 pad 1", K::IntegerMatmul, I32,
        {in({2, 3, 7, 6}, U8).range(0, 255), in({4, 3, 3, 3}, I8).range(-128, 127), in({1}, U8).vals({128}),
         in({4}, I8).range(-5, 5)},
        conv(p1, false), Tol::bitwise());
  ops::Conv2dParams p2;
  p2.stride_h = p2.stride_w = 2;
  p2.groups = 2;
  p2.dil_h = 2;
  L.add("conv_integer groups 2 stride 2 dilation 2x1", K::IntegerMatmul, I32,
        {in({1, 4, 9, 8}, I8).range(-128, 127), in({6, 2, 3, 2}, U8).range(0, 255), in({1}, I8).vals({-3}),
         in({1}, U8).vals({120})},
        conv(p2, false), Tol::bitwise());
  L.add("qlinear_conv with bias", K::IntegerMatmul, U8,
        {in({1, 4, 6, 6}, U8).range(0, 255), in({1}).vals({0.05}), in({1}, U8).vals({100}),
         in({5, 4, 3, 3}, I8).range(-128, 127), in({5}).range(0.005, 0.02), in({5}, I8).vals({0, 0, 0, 0, 0}),
         in({1}).vals({0.8}), in({1}, U8).vals({7}), in({5}, I32).range(-2000, 2000)},
        conv(p1, true), Tol::bitwise());
  L.add("qlinear_matmul to f32", K::IntegerMatmul, F32,
        {in({8, 50}, U8).range(0, 255), in({8}).range(0.01, 0.1), in({1}, U8).vals({128}),
         in({50, 10}, I8).range(-128, 127), in({10}).range(0.01, 0.1), in({1}, I8).vals({0})},
        qlin(false), Tol::bitwise());
}

// ---------------------------------------------------------------- sparse

void sparse_cases(CaseList& L) {
  const auto product = [](std::int64_t rows, std::int64_t cols) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      return {ops::spmm(CsrMatrix::from_parts(x[0], x[1], x[2], rows, cols), x[3])};
    };
  };
  // A power-law structure: row r holds about 40 / (r + 1) columns, spread out.
  std::vector<double> indptr{0}, indices;
  const std::int64_t rows = 97, cols = 61;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t count = std::min<std::int64_t>(cols, 40 / (r + 1) + (r % 3));
    for (std::int64_t j = 0; j < count; ++j) indices.push_back(static_cast<double>((j * cols) / count));
    indptr.push_back(static_cast<double>(indices.size()));
  }
  const auto nnz = static_cast<std::int64_t>(indices.size());
  for (DType it : {I32, I64})
    for (DType t : {F32, F64})
      for (std::int64_t n : {1, 5}) {
        const Shape xs = n == 1 ? Shape{cols} : Shape{cols, n};
        L.add("spmm power-law rows " + dt(it) + " indices n=" + std::to_string(n), K::SparseMatmul, t,
              {in({rows + 1}, it).vals(indptr), in({nnz}, it).vals(indices), in({nnz}, t).range(-2, 2),
               in(xs, t).range(-1, 1)},
              product(rows, cols), Tol::reduction(40));
      }
  // Empty rows, an empty matrix row range, and a strided x.
  L.add(
      "spmm empty rows", K::SparseMatmul, F32,
      {in({5}, I32).vals({0, 0, 2, 2, 3}), in({3}, I32).vals({1, 4, 0}), in({3}).range(-2, 2), in({5, 3}).range(-1, 1)},
      product(4, 5), Tol::reduction(2));
  L.add("spmm strided x", K::SparseMatmul, F32,
        {in({4}, I32).vals({0, 2, 3, 5}), in({5}, I32).vals({0, 3, 2, 1, 3}), in({5}).range(-2, 2),
         in({6, 4}).range(-1, 1).t()},
        product(3, 4), Tol::reduction(2));
}

// ---------------------------------------------------------------- fft

// Every GPU path: radix stages (2, 3, 4, 5, 7, 8), Bluestein (17, 1031),
// real transforms of even and odd length both ways, an inner axis (strided
// lines), the 2-D form, hfft / ihfft and the normalisations.
void fft_cases(CaseList& L) {
  namespace tf = ops::fft;
  for (DType t : {F32, F64}) {
    for (std::int64_t n : {1, 8, 12, 17, 64, 105, 1031}) {
      L.add(
          "fft c2c n=" + std::to_string(n), K::Fft, t, {in({3, n, 2}, t).range(-1, 1)},
          [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::fft(x[0])}; }, Tol::reduction(n));
      L.add(
          "ifft ortho n=" + std::to_string(n), K::Fft, t, {in({2, n, 2}, t).range(-1, 1)},
          [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::ifft(x[0], {}, -1, tf::Norm::Ortho)}; },
          Tol::reduction(n));
    }
    for (std::int64_t n : {15, 16, 37, 100}) {
      L.add(
          "rfft n=" + std::to_string(n), K::Fft, t, {in({3, n}, t).range(-1, 1)},
          [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::rfft(x[0])}; }, Tol::reduction(n));
      L.add(
          "irfft n=" + std::to_string(n), K::Fft, t, {in({2, n / 2 + 1, 2}, t).range(-1, 1)},
          [n](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::irfft(x[0], n)}; }, Tol::reduction(n));
    }
    L.add(
        "fft axis 0, padded", K::Fft, t, {in({6, 5, 2}, t).range(-1, 1)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::fft(x[0], 9, 0, tf::Norm::Forward)}; },
        Tol::reduction(9));
    // out=: straight into a contiguous out, and through a temporary into every other row of a larger one.
    L.add(
        "fft_out, contiguous and strided", K::Fft, t, {in({3, 12, 2}, t).range(-1, 1)},
        [t](Backend& b, std::vector<Tensor>& x) -> Outputs {
          Tensor o = b.empty(Shape{3, 12, 2}, t), wide = b.zeros(Shape{6, 12, 2}, t);
          Tensor rows = wide.slice(0, 0, 6, 2);
          tf::fft_out(x[0], o);
          tf::fft_out(x[0], rows);
          return {o, wide};
        },
        Tol::reduction(12));
    // hfft / ihfft: a real pass and the conjugating multiply, ihfft's into a strided out.
    L.add(
        "hfft n=15 ortho", K::Fft, t, {in({2, 8, 2}, t).range(-1, 1)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::hfft(x[0], 15, -1, tf::Norm::Ortho)}; },
        Tol::reduction(15));
    L.add(
        "ihfft_out n=16, strided", K::Fft, t, {in({3, 16}, t).range(-1, 1)},
        [t](Backend& b, std::vector<Tensor>& x) -> Outputs {
          Tensor wide = b.zeros(Shape{6, 9, 2}, t);
          Tensor rows = wide.slice(0, 0, 6, 2);
          tf::ihfft_out(x[0], rows);
          return {tf::ihfft(x[0]), wide};
        },
        Tol::reduction(16));
    L.add(
        "fft2 8x12", K::Fft, t, {in({8, 12, 2}, t).range(-1, 1)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::fft2(x[0])}; }, Tol::reduction(96));
    L.add(
        "irfft2 of rfft2 6x10", K::Fft, t, {in({6, 10}, t).range(-1, 1)},
        [](Backend&, std::vector<Tensor>& x) -> Outputs { return {tf::irfft2(tf::rfft2(x[0]))}; }, Tol::reduction(60));
  }
}

// ---------------------------------------------------------------- rnn

// Layers composed of GEMMs, gate slices, sigmoid / tanh and elementwise ops:
// every step runs on the device (the kind asked about is the GEMM's).
void rnn_cases(CaseList& L) {
  const auto layer = [](bool lstm, std::int64_t layers, bool bidir) -> Run {
    return [=](Backend&, std::vector<Tensor>& x) -> Outputs {
      const std::vector<Tensor> w(x.begin() + 1, x.end());
      ops::RnnOptions o{layers, bidir, false};
      const ops::RnnResult r =
          lstm ? ops::lstm(x[0], w, std::nullopt, std::nullopt, o) : ops::gru(x[0], w, std::nullopt, o);
      return lstm ? Outputs{r.output, r.h_n, r.c_n} : Outputs{r.output, r.h_n};
    };
  };
  for (bool lstm : {true, false}) {
    const std::int64_t g = lstm ? 4 : 3, h = 5;
    std::vector<Input> ins{in({6, 3, 4}).range(-1, 1)};
    for (std::int64_t l = 0; l < 2; ++l)
      for (int d = 0; d < 2; ++d) {
        const std::int64_t inp = l == 0 ? 4 : 2 * h;
        ins.push_back(in({g * h, inp}).range(-0.5, 0.5));
        ins.push_back(in({g * h, h}).range(-0.5, 0.5));
        ins.push_back(in({g * h}).range(-0.5, 0.5));
        ins.push_back(in({g * h}).range(-0.5, 0.5));
      }
    L.add(std::string(lstm ? "lstm" : "gru") + " 2 layers bidirectional", K::Matmul, F32, ins, layer(lstm, 2, true),
          Tol::reduction(64));
    // One sequence: the matrix-vector route.
    std::vector<Input> one{in({7, 1, 4}).range(-1, 1), in({g * h, 4}).range(-0.5, 0.5),
                           in({g * h, h}).range(-0.5, 0.5)};
    L.add(std::string(lstm ? "lstm" : "gru") + " batch 1, no biases", K::Matmul, F32, one, layer(lstm, 1, false),
          Tol::reduction(64));
    // Backpropagation through time over the 2-layer bidirectional forward, with
    // an output gradient as the last input: the input's, h0's and every weight's gradients.
    std::vector<Input> bw = ins;
    bw.push_back(in({6, 3, 10}).range(-1, 1));
    const Run backward = [lstm](Backend&, std::vector<Tensor>& x) -> Outputs {
      const std::vector<Tensor> w(x.begin() + 1, x.end() - 1);
      ops::RnnOptions o{2, true, false, true};
      const ops::RnnResult r =
          lstm ? ops::lstm(x[0], w, std::nullopt, std::nullopt, o) : ops::gru(x[0], w, std::nullopt, o);
      const ops::RnnGrads g = ops::rnn_backward(*r.tape, x.back());
      Outputs out{g.input, g.h0};
      if (lstm) out.push_back(g.c0);
      out.insert(out.end(), g.weights.begin(), g.weights.end());
      return out;
    };
    L.add(std::string(lstm ? "lstm" : "gru") + " backward, 2 layers bidirectional", K::Matmul, F32, bw, backward,
          Tol::reduction(256));
  }
}

// ---------------------------------------------------------------- random

void random_cases(CaseList& L) {
  // Philox is keyed by (seed, offset + i / 4): every device must produce the CPU's numbers.
  for (DType t : kFloats)
    for (const Shape& s : {Shape{1}, Shape{5}, Shape{1027}, Shape{33, 17}}) {
      L.add(
          "rand seed=42", K::Random, t, {},
          [s, t](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::rand(b, s, 42, t)}; }, Tol::bitwise());
      L.add(
          "rand seed=7 [-5, 3) offset=3", K::Random, t, {},
          [s, t](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::rand(b, s, 7, t, -5.0f, 3.0f, 3)}; },
          Tol::bitwise());
      // Box-Muller through philox.kern.h's own log, sqrt, sin and cos: the same bits too.
      L.add(
          "randn seed=9 mean=1 std=2 offset=1000", K::Random, t, {},
          [s, t](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::randn(b, s, 9, t, 1.0f, 2.0f, 1000)}; },
          Tol::bitwise());
      L.add(
          "bernoulli p=0.3 seed=5", K::Random, t, {},
          [s, t](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::bernoulli(b, s, 0.3f, 5, t)}; },
          Tol::bitwise());
    }
  L.add(
      "rand seed=1", K::Random, F32, {},
      [](Backend& b, std::vector<Tensor>&) -> Outputs {
        return {ops::rand(b, Shape{3, 0}, 1)};
      },
      Tol::bitwise());
  L.add(
      "randn seed=1", K::Random, F32, {},
      [](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::randn(b, Shape{1 << 16}, 1)}; }, Tol::bitwise());
  // A counter past 2^32 (the block's high word) and a seed using all 64 bits.
  L.add(
      "randn seed=2^63+5 offset=2^32-3", K::Random, F32, {},
      [](Backend& b, std::vector<Tensor>&) -> Outputs {
        return {ops::randn(b, Shape{4099}, (1ull << 63) + 5, F32, -2.0f, 0.5f, (1ull << 32) - 3)};
      },
      Tol::bitwise());
  L.add(
      "rand seed=2^63+5 offset=2^32-3", K::Random, BF16, {},
      [](Backend& b, std::vector<Tensor>&) -> Outputs {
        return {ops::rand(b, Shape{4099}, (1ull << 63) + 5, BF16, -1.0f, 1.0f, (1ull << 32) - 3)};
      },
      Tol::bitwise());
  // Odd lengths end inside a Philox block; the last work-item writes fewer than four.
  for (std::int64_t n : {2, 3, 6, 7})
    L.add(
        "randn seed=3 n=" + std::to_string(n), K::Random, F16, {},
        [n](Backend& b, std::vector<Tensor>&) -> Outputs { return {ops::randn(b, Shape{n}, 3, F16)}; }, Tol::bitwise());
}

}  // namespace

// ---------------------------------------------------------------- vocabulary

Input& Input::specials() { return set(0, kNaN).set(1, kInf).set(2, -kInf).set(3, 0.0); }

Tensor Input::view_of(const Tensor& uploaded) const {
  Tensor t = uploaded;
  for (const View& v : views) {
    switch (v.kind) {
      case View::Transpose: t = t.transpose(v.args[0], v.args[1]); break;
      case View::Permute: t = t.permute(v.args); break;
      case View::Slice: t = t.slice(v.args[0], v.args[1], v.args[2], v.args[3]); break;
      case View::Expand: t = t.broadcast_to(Shape(v.args)); break;
      case View::Unsqueeze: t = t.unsqueeze(v.args[0]); break;
      case View::Reshape: t = t.reshape(v.args); break;
    }
  }
  return t;
}

std::string Input::describe() const {
  std::ostringstream os;
  os << dtype_name(dtype) << shape.to_string();
  for (const View& v : views) {
    const auto& a = v.args;
    switch (v.kind) {
      case View::Transpose: os << ".T(" << list(a) << ")"; break;
      case View::Permute: os << ".permute(" << list(a) << ")"; break;
      case View::Slice:
        os << ".slice(" << a[0] << ", " << a[1] << ":" << a[2];
        if (a[3] != 1) os << ":" << a[3];
        os << ")";
        break;
      case View::Expand: os << ".expand" << Shape(a).to_string(); break;
      case View::Unsqueeze: os << ".unsqueeze(" << list(a) << ")"; break;
      case View::Reshape: os << ".reshape" << Shape(a).to_string(); break;
    }
  }
  return os.str();
}

double Tol::for_dtype(DType t) const {
  if (exact || !is_floating(t)) return 0.0;
  const double eps = t == DType::F64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
  const double half = t == DType::F16 ? std::ldexp(1.0, -10) : t == DType::BF16 ? std::ldexp(1.0, -7) : 0.0;
  return half + (ulps + per_n * static_cast<double>(n)) * eps;
}

std::string Tol::describe(DType t) const {
  std::ostringstream os;
  os.precision(3);
  os << for_dtype(t) << " (";
  if (exact || !is_floating(t)) return os.str() + "bit for bit)";
  const std::string eps = t == DType::F64 ? " x 2^-52" : " x 2^-23";
  std::string parts;
  if (t == DType::F16 || t == DType::BF16) parts = "1 ulp of " + std::string(dtype_name(t));
  if (ulps) parts += (parts.empty() ? "" : " + ") + num(ulps) + eps;
  if (per_n) parts += (parts.empty() ? "" : " + ") + num(per_n) + " x n=" + std::to_string(n) + eps;
  return os.str() + (parts.empty() ? "correctly rounded: exact" : parts) + ")";
}

std::string Case::describe() const {
  std::string s = family + ": " + name + " " + dt(dtype) + " (";
  for (std::size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i].describe();
  return s + ")";
}

std::vector<Case> all_cases() {
  CaseList L;
  copy_cases(L);
  cast_cases(L);
  binary_cases(L);
  unary_cases(L);
  reduce_cases(L);
  matmul_cases(L);
  softmax_cases(L);
  norm_cases(L);
  batch_norm_cases(L);
  rope_cases(L);
  attention_cases(L);
  conv_cases(L);
  adam_cases(L);
  random_cases(L);
  quant_cases(L);
  linear_quant_cases(L);
  integer_matmul_cases(L);
  sparse_cases(L);
  fft_cases(L);
  rnn_cases(L);
  index_select_cases(L);
  return L.take();
}

}  // namespace backend_ops
