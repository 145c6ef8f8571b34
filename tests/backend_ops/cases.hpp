#pragma once
// The vocabulary of the cross-backend op harness (tests/test_backend_ops.cpp).
// An op case is declared once: its family, the op kind and dtype that
// Backend::supports() is asked about, its inputs (shape, dtype, values, and
// the views taken of them after upload), the call, and a tolerance. The
// runner builds the same inputs on the CPU backend and on every device of
// every other backend, runs the call on both and compares the outputs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torsh/torsh.hpp"

namespace backend_ops {

using torsh::Backend;
using torsh::DType;
using torsh::Shape;
using torsh::Tensor;

// One step of the view taken of an uploaded input.
struct View {
  enum Kind { Transpose, Permute, Slice, Expand, Unsqueeze, Reshape } kind;
  std::vector<std::int64_t> args;
};

// An input: host values of `shape` and `dtype`, uploaded contiguously, then viewed.
struct Input {
  Shape shape;
  DType dtype = DType::F32;
  double lo = -1.0, hi = 1.0;  // uniform values (integer dtypes: whole numbers in [lo, hi])
  std::vector<double> values;  // explicit values, repeated to fill the shape (replaces the range)
  std::vector<std::pair<std::int64_t, double>> sets;  // single elements (flat index) overwritten last
  std::vector<View> views;

  Input& range(double l, double h) {
    lo = l, hi = h;
    return *this;
  }
  Input& vals(std::vector<double> v) {
    values = std::move(v);
    return *this;
  }
  Input& set(std::int64_t index, double v) {
    sets.emplace_back(index, v);
    return *this;
  }
  // NaN, +inf, -inf and zero at the first four elements.
  Input& specials();
  Input& t(std::int64_t d0 = -2, std::int64_t d1 = -1) {
    views.push_back({View::Transpose, {d0, d1}});
    return *this;
  }
  Input& permute(std::vector<std::int64_t> order) {
    views.push_back({View::Permute, std::move(order)});
    return *this;
  }
  Input& slice(std::int64_t axis, std::int64_t start, std::int64_t stop, std::int64_t step = 1) {
    views.push_back({View::Slice, {axis, start, stop, step}});
    return *this;
  }
  Input& expand(std::vector<std::int64_t> dims) {
    views.push_back({View::Expand, std::move(dims)});
    return *this;
  }
  Input& unsqueeze(std::int64_t axis) {
    views.push_back({View::Unsqueeze, {axis}});
    return *this;
  }
  Input& reshape(std::vector<std::int64_t> dims) {
    views.push_back({View::Reshape, std::move(dims)});
    return *this;
  }

  Tensor view_of(const Tensor& uploaded) const;
  std::string describe() const;  // "f32[5, 9].T(-2,-1)"
};

inline Input in(Shape shape, DType dtype = DType::F32) {
  Input i;
  i.shape = std::move(shape);
  i.dtype = dtype;
  return i;
}

// The largest |got - want| / max(1, |want|) allowed for an output of dtype t:
// exact: 0, bit for bit (integer and bool outputs always are);
// otherwise one unit in the last place of a 16-bit float output (f16, bf16:
// the two sides may round f32 values that differ in their last bits to
// neighbours) plus (ulps + per_n * n) units of the arithmetic's rounding:
// 2^-52 for f64, 2^-23 for the rest, which compute or accumulate in f32.
// n is the reduction length (the k of a matmul, a norm's row, a window).
struct Tol {
  bool exact = true;
  double ulps = 0, per_n = 0;
  std::int64_t n = 0;

  static Tol bitwise() { return {}; }
  // Correctly rounded ops (add, mul, comparisons): exact in f32 and f64.
  static Tol rounded() { return {false, 0, 0, 0}; }
  static Tol ulp(double u) { return {false, u, 0, 0}; }
  static Tol reduction(std::int64_t n, double u = 4, double per_n = 1) { return {false, u, per_n, n}; }
  double for_dtype(DType t) const;
  std::string describe(DType t) const;
};

using Outputs = std::vector<Tensor>;
// The op under test, on either backend's inputs (already viewed). In-place
// ops return the tensors they update.
using Run = std::function<Outputs(Backend&, std::vector<Tensor>&)>;
// Logical (row-major) values of tensors, as doubles.
using Values = std::vector<std::vector<double>>;
// An independent f64 reference for output 0 from the inputs' values.
using Reference = std::function<std::vector<double>(const Values& inputs)>;
// A property of the device's outputs: what is wrong, or "" when it holds.
using Check = std::function<std::string(const Values& outputs)>;

struct Case {
  std::string family;  // the kind's family (op_kinds.hpp): one row of the per-device summary
  std::string name;    // the op and its parameters
  torsh::rt::OpKind kind = torsh::rt::OpKind::Copy;
  DType dtype = DType::F32;  // the dtype supports() is asked with
  std::vector<Input> inputs;
  Run run;
  Tol tol;
  // The op layer also launches a copy in `dtype` on contiguous inputs (gemm
  // copying c into the result, a reduction over axes that are not adjacent);
  // views that are not contiguous are counted without this.
  bool copies = false;
  // Kernels the case launches besides (kind, dtype) that must exist for it to
  // run natively: a cast's source dtype, the f64 division of integers.
  std::vector<std::pair<torsh::rt::OpKind, DType>> needs;
  Reference reference;  // optional
  // What a kernel of the device's own is held to against the reference, where
  // it is tighter than against the CPU (default: tol; a fallback always gets tol).
  std::optional<Tol> reference_tol;
  Check check;  // optional

  std::string describe() const;  // "binary add f32 (f32[5, 9], f32[9])"
};

class CaseList {
 public:
  Case& add(std::string name, torsh::rt::OpKind kind, DType dtype, std::vector<Input> inputs, Run run, Tol tol) {
    Case c;
    c.family = torsh::rt::op_kind_family(kind);
    c.name = std::move(name);
    c.kind = kind;
    c.dtype = dtype;
    c.inputs = std::move(inputs);
    c.run = std::move(run);
    c.tol = tol;
    cases_.push_back(std::move(c));
    return cases_.back();
  }
  std::vector<Case> take() { return std::move(cases_); }

 private:
  std::vector<Case> cases_;
};

// Every case, in the order of the families in cases.cpp.
std::vector<Case> all_cases();

}  // namespace backend_ops
