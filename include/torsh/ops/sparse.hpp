#pragma once
// Sparse matrices in SciPy's layouts, on any device, and their products with
// dense tensors.
//
// CsrMatrix: indptr [rows + 1], indices [nnz] (column of each value, i32 or
// i64, the same dtype as indptr), values [nnz] (f32 or f64): row r's values
// are values[indptr[r] .. indptr[r + 1]) at columns indices[...], strictly
// increasing within the row (SciPy's canonical form: sorted, no duplicates).
// CooMatrix: row, col, values [nnz], any order, duplicates allowed (summed
// when converted).
//
// from_parts checks everything a kernel would otherwise trust (reading the
// index arrays back once): dtypes, lengths, indptr starting at 0, never
// decreasing and ending at nnz, every column in [0, cols) and sorted within
// its row. A violation is an error naming the first offending entry; nothing
// is built from it. The matrix keeps the tensors it is given (strided ones
// as contiguous copies): the kernels trust the checked structure, so the
// index arrays must not be written afterwards (the Python bindings copy
// them; the host conversions check them again and refuse a changed one).
#include <cstdint>
#include <optional>

#include "torsh/runtime/tensor.hpp"

namespace torsh {

class CooMatrix;

class CsrMatrix {
 public:
  static CsrMatrix from_parts(Tensor indptr, Tensor indices, Tensor values, std::int64_t rows, std::int64_t cols);
  // The nonzeros of a 2-D f32 / f64 tensor, in row order; index dtype i32
  // (i64 when nnz or the column count needs it, or when asked).
  static CsrMatrix from_dense(const Tensor& dense, DType index_dtype = DType::I32);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t nnz() const { return values_.numel(); }
  DType dtype() const { return values_.dtype(); }
  DType index_dtype() const { return indptr_.dtype(); }
  const Tensor& indptr() const { return indptr_; }
  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }

  Tensor to_dense() const;
  CsrMatrix transpose() const;  // the CSR of the transpose (SciPy's tocsr() of .T)
  CooMatrix to_coo() const;
  CsrMatrix to(Backend& target) const;

 private:
  CsrMatrix(Tensor indptr, Tensor indices, Tensor values, std::int64_t rows, std::int64_t cols)
      : indptr_(std::move(indptr)),
        indices_(std::move(indices)),
        values_(std::move(values)),
        rows_(rows),
        cols_(cols) {}
  Tensor indptr_, indices_, values_;
  std::int64_t rows_ = 0, cols_ = 0;
  friend class CooMatrix;
};

class CooMatrix {
 public:
  static CooMatrix from_parts(Tensor row, Tensor col, Tensor values, std::int64_t rows, std::int64_t cols);
  static CooMatrix from_dense(const Tensor& dense, DType index_dtype = DType::I32);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t nnz() const { return values_.numel(); }
  const Tensor& row() const { return row_; }
  const Tensor& col() const { return col_; }
  const Tensor& values() const { return values_; }

  // Sorted by (row, column), duplicates summed (in entry order, as SciPy).
  CsrMatrix to_csr() const;
  Tensor to_dense() const;

 private:
  CooMatrix(Tensor row, Tensor col, Tensor values, std::int64_t rows, std::int64_t cols)
      : row_(std::move(row)), col_(std::move(col)), values_(std::move(values)), rows_(rows), cols_(cols) {}
  Tensor row_, col_, values_;
  std::int64_t rows_ = 0, cols_ = 0;
  friend class CsrMatrix;
};

namespace ops {
// a [rows, cols] @ x: x [cols] gives [rows] (SpMV), x [cols, n] gives [rows, n]
// (SpMM); x has a's value dtype and device. Runs natively where the backend has
// a sparse kernel (op kind SparseMatmul), else on the CPU.
Tensor spmm(const CsrMatrix& a, const Tensor& x);
// a + d for a dense d [rows, cols] of a's dtype: a dense result.
Tensor sparse_add_dense(const CsrMatrix& a, const Tensor& d);
}  // namespace ops

}  // namespace torsh
