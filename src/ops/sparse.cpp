// Sparse matrices (CSR, COO) and their products with dense tensors. The
// structure is checked once, on the host, when a matrix is made from parts;
// conversions (dense <-> CSR <-> COO, transpose) run on the host and upload
// the result to the matrix's device; spmm launches OpKind::SparseMatmul.
#include "torsh/ops/sparse.hpp"

#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "dispatch.hpp"

namespace torsh {
namespace {

bool is_index_dtype(DType t) { return t == DType::I32 || t == DType::I64; }
bool is_value_dtype(DType t) { return t == DType::F32 || t == DType::F64; }

// An index array's values, widened.
std::vector<std::int64_t> indices_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  if (t.dtype() == DType::I64) return c.to_host<std::int64_t>();
  const std::vector<std::int32_t> v = c.to_host<std::int32_t>();
  return {v.begin(), v.end()};
}

Tensor index_tensor(Backend& b, const std::vector<std::int64_t>& v, DType t) {
  const Shape s{static_cast<std::int64_t>(v.size())};
  if (t == DType::I64) return b.from_host(v.data(), s, t);
  std::vector<std::int32_t> n(v.begin(), v.end());
  return b.from_host(n.data(), s, t);
}

// Host values as doubles and back, in the matrix's dtype.
std::vector<double> values_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  if (t.dtype() == DType::F64) return c.to_host<double>();
  const std::vector<float> v = c.to_host<float>();
  return {v.begin(), v.end()};
}

Tensor value_tensor(Backend& b, const std::vector<double>& v, const Shape& s, DType t) {
  if (t == DType::F64) return b.from_host(v.data(), s, t);
  std::vector<float> f(v.begin(), v.end());
  return b.from_host(f.data(), s, t);
}

// i32 unless the count or a column index would not fit.
DType fitting_index(DType asked, std::int64_t nnz, std::int64_t extent) {
  if (asked != DType::I32 && asked != DType::I64)
    throw Error(ErrorCode::DTypeMismatch, "index dtype must be i32 or i64", {.op = "sparse"});
  return asked == DType::I32 && nnz <= INT32_MAX && extent <= INT32_MAX ? DType::I32 : DType::I64;
}

void check_dense_2d(const char* op, const Tensor& d) {
  if (!d.defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  if (d.ndim() != 2)
    throw Error(ErrorCode::ShapeMismatch, std::string(op) + " takes a 2-D tensor", ops::detail::context(op, {d}));
  if (!is_value_dtype(d.dtype()))
    throw Error(ErrorCode::DTypeMismatch, std::string(op) + " takes f32 or f64 values", ops::detail::context(op, {d}),
                {"Cast with .cast(DType::F32)"});
}

void check_extent(const char* op, std::int64_t rows, std::int64_t cols) {
  if (rows < 0 || cols < 0)
    throw Error(ErrorCode::InvalidArgument,
                "shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ") has a negative extent", {.op = op});
}

// The conversions build their result on the host: a request past half of
// the machine's memory (or past what a size can count) is refused with the
// op and the shape named, instead of std::bad_alloc or an overflowed size.
void check_host_bytes(const char* op, std::int64_t count, std::int64_t each, std::int64_t rows, std::int64_t cols) {
  const double bytes = static_cast<double>(count) * static_cast<double>(each);
  const double have = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (count < 0 || (have > 0 && bytes > have / 2))
    throw Error(ErrorCode::OutOfMemory,
                "the " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix needs about " +
                    std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                    " MiB on the host here, more than half of this machine's memory",
                {.op = op}, {"Keep the matrix sparse (spmm, sparse_add_dense on slices) or split it"});
}

// rows * cols elements of a dense result, checked: a product past 2^63 - 1
// and then one past the memory are refused.
std::int64_t dense_elements(const char* op, std::int64_t rows, std::int64_t cols, std::int64_t each) {
  std::int64_t n = 0;
  if (__builtin_mul_overflow(rows, cols, &n))
    throw Error(ErrorCode::InvalidArgument,
                "a dense " + std::to_string(rows) + " x " + std::to_string(cols) +
                    " matrix has more than 2^63 - 1 "
                    "elements",
                {.op = op}, {"Keep the matrix sparse (spmm, sparse_add_dense) or split it"});
  check_host_bytes(op, n, each, rows, cols);
  return n;
}

// The CSR structure rules (the header's list) on host copies of indptr and
// indices: from_parts' check, and again in every host conversion, since a
// matrix keeps the tensors it was made from and their owner may write them.
// `changed` words the error for a matrix that passed from_parts once.
void check_structure(const std::vector<std::int64_t>& p, const std::vector<std::int64_t>& c, std::int64_t rows,
                     std::int64_t cols, const ErrorContext& ctx, bool changed) {
  const std::string pre = changed ? "the matrix's index arrays were changed after it was made: " : "";
  const std::vector<std::string> fix =
      changed ? std::vector<std::string>{"Leave the arrays a matrix shares alone, or make it from copies"}
              : std::vector<std::string>{};
  const auto nnz = static_cast<std::int64_t>(c.size());
  if (p[0] != 0 || p[static_cast<std::size_t>(rows)] != nnz)
    throw Error(changed ? ErrorCode::InvalidState : ErrorCode::InvalidArgument,
                pre + "indptr runs from " + std::to_string(p[0]) + " to " +
                    std::to_string(p[static_cast<std::size_t>(rows)]) +
                    "; it must run from 0 to nnz = " + std::to_string(nnz),
                ctx, fix);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t b = p[static_cast<std::size_t>(r)], e = p[static_cast<std::size_t>(r + 1)];
    if (e < b)
      throw Error(changed ? ErrorCode::InvalidState : ErrorCode::InvalidArgument,
                  pre + "indptr decreases at row " + std::to_string(r) + " (" + std::to_string(b) + " then " +
                      std::to_string(e) + ")",
                  ctx, fix);
    if (e > nnz)
      throw Error(changed ? ErrorCode::InvalidState : ErrorCode::InvalidArgument,
                  pre + "indptr[" + std::to_string(r + 1) + "] = " + std::to_string(e) +
                      " is past nnz = " + std::to_string(nnz),
                  ctx, fix);
    for (std::int64_t j = b; j < e; ++j) {
      const std::int64_t col = c[static_cast<std::size_t>(j)];
      if (col < 0 || col >= cols)
        throw Error(changed ? ErrorCode::InvalidState : ErrorCode::OutOfRange,
                    pre + "indices[" + std::to_string(j) + "] = " + std::to_string(col) + " (row " + std::to_string(r) +
                        ") is outside [0, " + std::to_string(cols) + ")",
                    ctx, fix);
      if (j > b && col <= c[static_cast<std::size_t>(j - 1)])
        throw Error(changed ? ErrorCode::InvalidState : ErrorCode::InvalidArgument,
                    pre + "row " + std::to_string(r) + "'s columns are not increasing at indices[" + std::to_string(j) +
                        "] = " + std::to_string(col),
                    ctx,
                    changed ? fix
                            : std::vector<std::string>{"Sort each row's columns and sum duplicates (scipy: "
                                                       "m.sum_duplicates(); or build through CooMatrix::to_csr)"});
    }
  }
}

// A COO matrix's entries all inside rows x cols (CooMatrix::from_parts, and
// again in to_csr, as check_structure).
void check_entries(const std::vector<std::int64_t>& r, const std::vector<std::int64_t>& c, std::int64_t rows,
                   std::int64_t cols, const ErrorContext& ctx, bool changed) {
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] < 0 || r[i] >= rows || c[i] < 0 || c[i] >= cols)
      throw Error(changed ? ErrorCode::InvalidState : ErrorCode::OutOfRange,
                  std::string(changed ? "the matrix's index arrays were changed after it was made: " : "") + "entry " +
                      std::to_string(i) + " at (" + std::to_string(r[i]) + ", " + std::to_string(c[i]) +
                      ") is outside the " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix",
                  ctx,
                  changed ? std::vector<std::string>{"Leave the arrays a matrix shares alone, or make it from copies"}
                          : std::vector<std::string>{});
}

}  // namespace

// ---------------------------------------------------------------- CSR

CsrMatrix CsrMatrix::from_parts(Tensor indptr, Tensor indices, Tensor values, std::int64_t rows, std::int64_t cols) {
  const char* op = "CsrMatrix::from_parts";
  for (const Tensor* t : {&indptr, &indices, &values})
    if (!t->defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  ops::detail::check_same_device(op, {indptr, indices, values});
  const auto ctx = [&] { return ops::detail::context(op, {indptr, indices, values}); };
  check_extent(op, rows, cols);
  if (!is_index_dtype(indptr.dtype()) || indices.dtype() != indptr.dtype())
    throw Error(ErrorCode::DTypeMismatch, "indptr and indices must both be i32 or both i64", ctx(),
                {"Cast the index arrays to one integer dtype"});
  if (!is_value_dtype(values.dtype()))
    throw Error(ErrorCode::DTypeMismatch, "values must be f32 or f64", ctx(), {"Cast the values to f32"});
  if (indptr.ndim() != 1 || indices.ndim() != 1 || values.ndim() != 1)
    throw Error(ErrorCode::ShapeMismatch, "indptr, indices and values must be 1-D", ctx());
  if (indptr.numel() - 1 != rows)  // not rows + 1, which overflows at INT64_MAX
    throw Error(ErrorCode::ShapeMismatch,
                "indptr has " + std::to_string(indptr.numel()) + " entries; a matrix of " + std::to_string(rows) +
                    " rows needs rows + 1",
                ctx());
  if (indices.numel() != values.numel())
    throw Error(ErrorCode::ShapeMismatch,
                std::to_string(indices.numel()) + " indices but " + std::to_string(values.numel()) + " values", ctx());
  check_structure(indices_of(indptr), indices_of(indices), rows, cols, ctx(), false);
  // The kernels read the arrays as dense runs: strided views (a NumPy
  // slice with a step) are copied; contiguous ones stay shared.
  indptr = indptr.contiguous(), indices = indices.contiguous(), values = values.contiguous();
  return CsrMatrix(std::move(indptr), std::move(indices), std::move(values), rows, cols);
}

namespace {
// A matrix's indptr and indices on the host, checked again (check_structure).
void structure_of(const char* op, const CsrMatrix& a, std::vector<std::int64_t>& p, std::vector<std::int64_t>& c) {
  p = indices_of(a.indptr()), c = indices_of(a.indices());
  check_structure(p, c, a.rows(), a.cols(), ops::detail::context(op, {a.indptr(), a.indices(), a.values()}), true);
}
}  // namespace

CsrMatrix CsrMatrix::from_dense(const Tensor& dense, DType index_dtype_asked) {
  check_dense_2d("CsrMatrix::from_dense", dense);
  const std::int64_t rows = dense.shape()[0], cols = dense.shape()[1];
  const std::vector<double> v = values_of(dense);
  std::vector<std::int64_t> p(static_cast<std::size_t>(rows + 1), 0), c;
  std::vector<double> vals;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const double x = v[static_cast<std::size_t>(r * cols + j)];
      if (x != 0.0) {
        c.push_back(j);
        vals.push_back(x);
      }
    }
    p[static_cast<std::size_t>(r + 1)] = static_cast<std::int64_t>(c.size());
  }
  Backend b = dense.backend();
  const DType it = fitting_index(index_dtype_asked, static_cast<std::int64_t>(c.size()), cols);
  return CsrMatrix(index_tensor(b, p, it), index_tensor(b, c, it),
                   value_tensor(b, vals, Shape{static_cast<std::int64_t>(vals.size())}, dense.dtype()), rows, cols);
}

Tensor CsrMatrix::to_dense() const {
  const std::int64_t elements =
      dense_elements("CsrMatrix::to_dense", rows_, cols_, 8 + static_cast<std::int64_t>(dtype_size(dtype())));
  std::vector<std::int64_t> p, c;
  structure_of("CsrMatrix::to_dense", *this, p, c);
  const std::vector<double> v = values_of(values_);
  std::vector<double> d(static_cast<std::size_t>(elements), 0.0);
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t j = p[static_cast<std::size_t>(r)]; j < p[static_cast<std::size_t>(r + 1)]; ++j)
      d[static_cast<std::size_t>(r * cols_ + c[static_cast<std::size_t>(j)])] = v[static_cast<std::size_t>(j)];
  Backend b = values_.backend();
  return value_tensor(b, d, Shape{rows_, cols_}, dtype());
}

CsrMatrix CsrMatrix::transpose() const {
  check_host_bytes("CsrMatrix::transpose", cols_, 16, rows_, cols_);
  std::vector<std::int64_t> p, c;
  structure_of("CsrMatrix::transpose", *this, p, c);
  const std::vector<double> v = values_of(values_);
  // Counting sort by column: rows come out increasing within each new row.
  std::vector<std::int64_t> tp(static_cast<std::size_t>(cols_ + 1), 0), tc(c.size());
  std::vector<double> tv(v.size());
  for (std::int64_t col : c) ++tp[static_cast<std::size_t>(col + 1)];
  std::partial_sum(tp.begin(), tp.end(), tp.begin());
  std::vector<std::int64_t> next(tp.begin(), tp.end() - 1);
  for (std::int64_t r = 0; r < rows_; ++r)
    for (std::int64_t j = p[static_cast<std::size_t>(r)]; j < p[static_cast<std::size_t>(r + 1)]; ++j) {
      const std::int64_t at = next[static_cast<std::size_t>(c[static_cast<std::size_t>(j)])]++;
      tc[static_cast<std::size_t>(at)] = r;
      tv[static_cast<std::size_t>(at)] = v[static_cast<std::size_t>(j)];
    }
  Backend b = values_.backend();
  const DType it = fitting_index(index_dtype(), nnz(), rows_);
  return CsrMatrix(index_tensor(b, tp, it), index_tensor(b, tc, it), value_tensor(b, tv, Shape{nnz()}, dtype()), cols_,
                   rows_);
}

CooMatrix CsrMatrix::to_coo() const {
  std::vector<std::int64_t> p, c;
  structure_of("CsrMatrix::to_coo", *this, p, c);
  std::vector<std::int64_t> rows_of(static_cast<std::size_t>(nnz()));
  for (std::int64_t r = 0; r < rows_; ++r)
    std::fill(rows_of.begin() + p[static_cast<std::size_t>(r)], rows_of.begin() + p[static_cast<std::size_t>(r + 1)],
              r);
  Backend b = values_.backend();
  return CooMatrix(index_tensor(b, rows_of, index_dtype()), indices_, values_, rows_, cols_);
}

CsrMatrix CsrMatrix::to(Backend& target) const {
  return CsrMatrix(indptr_.to(target), indices_.to(target), values_.to(target), rows_, cols_);
}

// ---------------------------------------------------------------- COO

CooMatrix CooMatrix::from_parts(Tensor row, Tensor col, Tensor values, std::int64_t rows, std::int64_t cols) {
  const char* op = "CooMatrix::from_parts";
  for (const Tensor* t : {&row, &col, &values})
    if (!t->defined()) throw Error(ErrorCode::InvalidState, "an operand is undefined", {.op = op});
  ops::detail::check_same_device(op, {row, col, values});
  const auto ctx = [&] { return ops::detail::context(op, {row, col, values}); };
  check_extent(op, rows, cols);
  if (!is_index_dtype(row.dtype()) || col.dtype() != row.dtype())
    throw Error(ErrorCode::DTypeMismatch, "row and col must both be i32 or both i64", ctx());
  if (!is_value_dtype(values.dtype())) throw Error(ErrorCode::DTypeMismatch, "values must be f32 or f64", ctx());
  if (row.ndim() != 1 || col.ndim() != 1 || values.ndim() != 1 || row.numel() != values.numel() ||
      col.numel() != values.numel())
    throw Error(ErrorCode::ShapeMismatch, "row, col and values must be 1-D of one length", ctx());
  check_entries(indices_of(row), indices_of(col), rows, cols, ctx(), false);
  row = row.contiguous(), col = col.contiguous(), values = values.contiguous();
  return CooMatrix(std::move(row), std::move(col), std::move(values), rows, cols);
}

CooMatrix CooMatrix::from_dense(const Tensor& dense, DType index_dtype_asked) {
  return CsrMatrix::from_dense(dense, index_dtype_asked).to_coo();
}

CsrMatrix CooMatrix::to_csr() const {
  check_host_bytes("CooMatrix::to_csr", rows_, 8, rows_, cols_);
  const std::vector<std::int64_t> r = indices_of(row_), c = indices_of(col_);
  // Checked again: the arrays of a matrix made from NumPy arrays stay shared with them.
  check_entries(r, c, rows_, cols_, ops::detail::context("CooMatrix::to_csr", {row_, col_, values_}), true);
  const std::vector<double> v = values_of(values_);
  std::vector<std::size_t> order(r.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return r[a] != r[b] ? r[a] < r[b] : c[a] < c[b]; });
  std::vector<std::int64_t> p(static_cast<std::size_t>(rows_ + 1), 0), cc;
  std::vector<double> vv;
  std::int64_t last_r = -1, last_c = -1;
  for (std::size_t i : order) {
    if (r[i] == last_r && c[i] == last_c) {
      vv.back() += v[i];  // duplicates summed in entry order (stable sort)
      continue;
    }
    cc.push_back(c[i]);
    vv.push_back(v[i]);
    ++p[static_cast<std::size_t>(r[i] + 1)];
    last_r = r[i];
    last_c = c[i];
  }
  std::partial_sum(p.begin(), p.end(), p.begin());
  Backend b = values_.backend();
  const DType it = row_.dtype();
  return CsrMatrix(index_tensor(b, p, it), index_tensor(b, cc, it),
                   value_tensor(b, vv, Shape{static_cast<std::int64_t>(vv.size())}, values_.dtype()), rows_, cols_);
}

Tensor CooMatrix::to_dense() const { return to_csr().to_dense(); }

// ---------------------------------------------------------------- products

namespace ops {

Tensor spmm(const CsrMatrix& a, const Tensor& x_in) {
  const char* op = "spmm";
  if (!x_in.defined()) throw Error(ErrorCode::InvalidState, "x is undefined", {.op = op});
  detail::check_same_device(op, {a.values(), x_in});
  const auto ctx = [&] { return detail::context(op, {a.values(), x_in}); };
  if (x_in.dtype() != a.dtype())
    throw Error(ErrorCode::DTypeMismatch,
                "x is " + std::string(dtype_name(x_in.dtype())) + " but the matrix's values are " +
                    std::string(dtype_name(a.dtype())),
                ctx(), {"Cast x to the matrix's dtype"});
  const bool vec = x_in.ndim() == 1;
  if ((x_in.ndim() != 1 && x_in.ndim() != 2) || x_in.shape()[0] != a.cols())
    throw Error(ErrorCode::ShapeMismatch,
                "a is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " but x is " +
                    x_in.shape().to_string() + ": x must be [" + std::to_string(a.cols()) + "] or [" +
                    std::to_string(a.cols()) + ", n]",
                ctx());
  const std::int64_t n = vec ? 1 : x_in.shape()[1];
  Tensor out = detail::empty_like(x_in, vec ? Shape{a.rows()} : Shape{a.rows(), n}, a.dtype());
  if (out.numel() == 0) return out;
  const Tensor x = x_in.contiguous();
  const std::int64_t rows = a.rows(), cols = a.cols();
  detail::launch<rt::OpKind::SparseMatmul>(op, {a.indptr(), a.indices(), a.values(), x}, {out}, [=](auto& in, auto& o) {
    rt::SparseMatmulArgs s;
    s.indptr = in[0];
    s.indices = in[1];
    s.values = in[2];
    s.x = in[3];
    s.out = o[0];
    s.rows = rows, s.cols = cols, s.n = n;
    return s;
  });
  return out;
}

Tensor sparse_add_dense(const CsrMatrix& a, const Tensor& d) {
  const char* op = "sparse_add_dense";
  if (!d.defined()) throw Error(ErrorCode::InvalidState, "d is undefined", {.op = op});
  detail::check_same_device(op, {a.values(), d});
  if (d.dtype() != a.dtype())
    throw Error(ErrorCode::DTypeMismatch,
                "d is " + std::string(dtype_name(d.dtype())) + " but the matrix's values are " +
                    std::string(dtype_name(a.dtype())),
                detail::context(op, {a.values(), d}), {"Cast d to the matrix's dtype"});
  if (d.ndim() != 2 || d.shape()[0] != a.rows() || d.shape()[1] != a.cols())
    throw Error(
        ErrorCode::ShapeMismatch,
        "a is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " but d is " + d.shape().to_string(),
        detail::context("sparse_add_dense", {d}));
  return add(a.to_dense(), d);
}

}  // namespace ops
}  // namespace torsh
