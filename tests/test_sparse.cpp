// Sparse matrices (CSR, COO) on the CPU backend: conversions both ways with
// dense and between the layouts, transpose, SpMV and SpMM against a dense
// double-precision product (empty rows, power-law row lengths, i32 and i64
// indices, f32 and f64), and a clear error for every malformed structure.
// The other backends are compared with the CPU by tests/backend_ops (sparse
// cases).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "torsh/torsh.hpp"

using namespace torsh;

namespace {

Backend& host() {
  static Backend b = Backend::create(BackendType::Cpu);
  return b;
}

// A rows x cols matrix with about `density` of its entries nonzero; row r of
// a power-law matrix holds about cols * density * (rows / (r + 1)) / H entries.
std::vector<double> random_matrix(std::int64_t rows, std::int64_t cols, double density, bool power_law,
                                  std::uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(0, 1), val(-2, 2);
  double h = 0;
  for (std::int64_t r = 0; r < rows; ++r) h += 1.0 / static_cast<double>(r + 1);
  std::vector<double> m(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double p =
        power_law ? std::min(1.0, density * static_cast<double>(rows) / (static_cast<double>(r + 1) * h)) : density;
    for (std::int64_t c = 0; c < cols; ++c)
      if (u(g) < p) m[static_cast<std::size_t>(r * cols + c)] = val(g);
  }
  return m;
}

Tensor dense(const std::vector<double>& m, std::int64_t rows, std::int64_t cols, DType t) {
  if (t == DType::F64) return host().from_host(m.data(), Shape{rows, cols}, t);
  std::vector<float> f(m.begin(), m.end());
  return host().from_host(f.data(), Shape{rows, cols}, t);
}

std::vector<double> values(const Tensor& t) {
  if (t.dtype() == DType::F64) return t.contiguous().to_host<double>();
  const auto f = t.contiguous().to_host<float>();
  return {f.begin(), f.end()};
}

Tensor i32(const std::vector<std::int32_t>& v) {
  return host().from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::I32);
}
Tensor f32(const std::vector<float>& v) {
  return host().from_host(v.data(), Shape{static_cast<std::int64_t>(v.size())}, DType::F32);
}

template <class F>
ErrorCode error_of(F&& f, const char* says) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::Internal;
}

}  // namespace

TEST(Sparse, DenseCsrCooRoundTrips) {
  for (DType t : {DType::F32, DType::F64})
    for (DType it : {DType::I32, DType::I64}) {
      const auto m = random_matrix(37, 53, 0.1, false, 1);
      const Tensor d = dense(m, 37, 53, t);
      const CsrMatrix a = CsrMatrix::from_dense(d, it);
      EXPECT_EQ(a.index_dtype(), it);
      std::int64_t nnz = 0;
      for (double x : m) nnz += x != 0.0;
      EXPECT_EQ(a.nnz(), nnz);
      EXPECT_EQ(values(a.to_dense()), values(d));
      EXPECT_EQ(values(a.to_coo().to_dense()), values(d));
      EXPECT_EQ(values(a.to_coo().to_csr().to_dense()), values(d));
      EXPECT_EQ(values(CooMatrix::from_dense(d, it).to_csr().to_dense()), values(d));
    }
}

TEST(Sparse, TransposeIsTheDenseTranspose) {
  const auto m = random_matrix(20, 31, 0.15, true, 2);
  const CsrMatrix a = CsrMatrix::from_dense(dense(m, 20, 31, DType::F64));
  const CsrMatrix at = a.transpose();
  EXPECT_EQ(at.rows(), 31);
  EXPECT_EQ(at.cols(), 20);
  const auto d = values(at.to_dense());
  for (std::int64_t r = 0; r < 20; ++r)
    for (std::int64_t c = 0; c < 31; ++c)
      ASSERT_EQ(d[static_cast<std::size_t>(c * 20 + r)], m[static_cast<std::size_t>(r * 31 + c)]);
  // and its structure is canonical (from_parts accepts it)
  EXPECT_NO_THROW(CsrMatrix::from_parts(at.indptr(), at.indices(), at.values(), 31, 20));
}

TEST(Sparse, CooDuplicatesAreSummedInOrder) {
  const CooMatrix c =
      CooMatrix::from_parts(i32({2, 0, 2, 1, 0}), i32({1, 3, 1, 0, 3}), f32({1.5f, 2, 0.25f, -1, 4}), 3, 4);
  const CsrMatrix a = c.to_csr();
  EXPECT_EQ(a.nnz(), 3);
  EXPECT_EQ(a.indptr().to_host<std::int32_t>(), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(a.indices().to_host<std::int32_t>(), (std::vector<std::int32_t>{3, 0, 1}));
  EXPECT_EQ(a.values().to_host<float>(), (std::vector<float>{6.0f, -1.0f, 1.75f}));
}

TEST(Sparse, SpmvAndSpmmMatchTheDenseProduct) {
  // Both index dtypes: SpMV's gather loops (spmv_gather.cpp) differ by them.
  for (DType index : {DType::I32, DType::I64})
    for (DType t : {DType::F32, DType::F64})
      for (bool power_law : {false, true})
        for (std::int64_t n : {1, 3, 8, 15, 16, 24, 31, 32, 33}) {  // SpMM's register blocks and tails
          const std::int64_t rows = 300, cols = 211;
          const auto m = random_matrix(rows, cols, 0.05, power_law, static_cast<std::uint32_t>(n));
          const CsrMatrix a = CsrMatrix::from_dense(dense(m, rows, cols, t), index);
          const auto xv = random_matrix(cols, n, 1.0, false, 99);
          const Tensor x = n == 1 ? dense(xv, cols, 1, t).reshape({cols}) : dense(xv, cols, n, t);
          const Tensor y = ops::spmm(a, x);
          ASSERT_EQ(y.shape(), n == 1 ? Shape{rows} : (Shape{rows, n}));
          const auto got = values(y);
          const double eps = t == DType::F32 ? 1.2e-7 : 2.3e-16;
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < n; ++c) {
              double want = 0, mag = 0;
              for (std::int64_t k = 0; k < cols; ++k) {
                const double p = m[static_cast<std::size_t>(r * cols + k)] * xv[static_cast<std::size_t>(k * n + c)];
                want += p;
                mag += std::fabs(p);
              }
              ASSERT_NEAR(got[static_cast<std::size_t>(r * n + c)], want, 4 * eps * (mag + 1) * std::sqrt(cols))
                  << "row " << r << " col " << c << " n " << n;
            }
        }
}

TEST(Sparse, EmptyAndDegenerateShapes) {
  const CsrMatrix z = CsrMatrix::from_parts(i32({0, 0, 0}), i32({}), f32({}), 2, 5);
  const auto y = ops::spmm(z, host().zeros(Shape{5}, DType::F32)).to_host<float>();
  EXPECT_EQ(y, (std::vector<float>{0, 0}));
  const CsrMatrix none = CsrMatrix::from_parts(i32({0}), i32({}), f32({}), 0, 3);
  EXPECT_EQ(ops::spmm(none, host().zeros(Shape{3, 2}, DType::F32)).shape(), (Shape{0, 2}));
  // sparse + dense
  const CsrMatrix a = CsrMatrix::from_parts(i32({0, 1, 2}), i32({2, 0}), f32({5, -1}), 2, 3);
  EXPECT_EQ(ops::sparse_add_dense(a, host().zeros(Shape{2, 3}, DType::F32)).to_host<float>(),
            (std::vector<float>{0, 0, 5, -1, 0, 0}));
}

TEST(Sparse, MalformedStructureIsRefusedClearly) {
  const auto parts = [](std::vector<std::int32_t> p, std::vector<std::int32_t> c, std::int64_t rows,
                        std::int64_t cols) {
    std::vector<float> v(c.size(), 1.0f);
    return CsrMatrix::from_parts(i32(p), i32(c), f32(v), rows, cols);
  };
  EXPECT_EQ(error_of([&] { parts({0, 2, 3}, {1, 0, 2}, 2, 3); }, "not increasing"), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { parts({0, 2, 3}, {0, 0, 2}, 2, 3); }, "not increasing"), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { parts({0, 1, 2}, {0, 3}, 2, 3); }, "outside [0, 3)"), ErrorCode::OutOfRange);
  EXPECT_EQ(error_of([&] { parts({0, 1, 2}, {0, -1}, 2, 3); }, "outside"), ErrorCode::OutOfRange);
  EXPECT_EQ(error_of([&] { parts({1, 1, 2}, {0}, 2, 3); }, "indptr runs from 1"), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { parts({0, 2, 1}, {0}, 2, 3); }, "is past nnz = 1"), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { parts({0, 2, 1, 2}, {0, 1}, 3, 3); }, "decreases at row 1"), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of([&] { parts({0, 1}, {0}, 2, 3); }, "needs rows + 1"), ErrorCode::ShapeMismatch);
  // rows + 1 would overflow here: still the length error.
  EXPECT_EQ(error_of([&] { parts({0}, {}, INT64_MAX, 1); }, "needs rows + 1"), ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of(
                [&] {
                  CsrMatrix::from_parts(i32({0, 1}), i32({0}), f32({1, 2}), 1, 3);
                },
                "indices but"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of(
                [&] {
                  CsrMatrix::from_parts(i32({0, 1}), host().zeros(Shape{1}, DType::I64), f32({1}), 1, 3);
                },
                "i32"),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of(
                [&] {
                  CsrMatrix::from_parts(i32({0, 1}), i32({0}), host().zeros(Shape{1}, DType::F16), 1, 3);
                },
                "f32 or f64"),
            ErrorCode::DTypeMismatch);
  EXPECT_EQ(error_of(
                [&] {
                  CooMatrix::from_parts(i32({0, 5}), i32({0, 0}), f32({1, 1}), 3, 3);
                },
                "outside"),
            ErrorCode::OutOfRange);
  const CsrMatrix a = parts({0, 1}, {2}, 1, 3);
  EXPECT_EQ(error_of([&] { ops::spmm(a, host().zeros(Shape{4}, DType::F32)); }, "x must be [3]"),
            ErrorCode::ShapeMismatch);
  EXPECT_EQ(error_of([&] { ops::spmm(a, host().zeros(Shape{3}, DType::F64)); }, "x is f64"), ErrorCode::DTypeMismatch);
}

TEST(Sparse, StridedPartsAreReadByTheirStrides) {
  // Every second entry of each array: [[1, 0], [0, 2]]; the kernels read
  // dense runs, so a strided part is copied when the matrix is made.
  const Tensor idx = i32({0, 9, 1, 9}).slice(0, 0, 4, 2), val = f32({1, 9, 2, 9}).slice(0, 0, 4, 2);
  const Tensor ptr = i32({0, 5, 1, 5, 2}).slice(0, 0, 5, 2);
  const CsrMatrix a = CsrMatrix::from_parts(ptr, idx, val, 2, 2);
  EXPECT_EQ(ops::spmm(a, f32({10, 100})).to_host<float>(), (std::vector<float>{10, 200}));
  EXPECT_EQ(a.to_dense().to_host<float>(), (std::vector<float>{1, 0, 0, 2}));
  const CooMatrix c = CooMatrix::from_parts(i32({1, 9, 0, 9}).slice(0, 0, 4, 2), idx, val, 2, 2);
  EXPECT_EQ(c.to_dense().to_host<float>(), (std::vector<float>{0, 2, 1, 0}));
}

TEST(Sparse, HostConversionsCheckTheStructureAgain) {
  // A matrix over memory its caller keeps writing (C++ from_parts keeps the
  // tensors; Python copies the index arrays): the host conversions check
  // the structure again and refuse a changed one instead of writing outside
  // their arrays.
  auto ptr = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{0, 1, 2});
  auto col = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{0, 1});
  auto val = std::make_shared<std::vector<float>>(std::vector<float>{1, 2});
  const CsrMatrix a = CsrMatrix::from_parts(Tensor::wrap_host(ptr->data(), DType::I32, Shape{3}, ptr),
                                            Tensor::wrap_host(col->data(), DType::I32, Shape{2}, col),
                                            Tensor::wrap_host(val->data(), DType::F32, Shape{2}, val), 2, 2);
  EXPECT_EQ(ops::spmm(a, f32({10, 100})).to_host<float>(), (std::vector<float>{10, 200}));
  (*val)[1] = 3;  // values may change: they are data, not structure
  EXPECT_EQ(a.to_dense().to_host<float>(), (std::vector<float>{1, 0, 0, 3}));
  (*col)[1] = 1 << 30;  // past the columns
  EXPECT_EQ(error_of([&] { a.to_dense(); }, "changed after it was made"), ErrorCode::InvalidState);
  EXPECT_EQ(error_of([&] { a.transpose(); }, "changed after it was made"), ErrorCode::InvalidState);
  EXPECT_EQ(error_of([&] { a.to_coo(); }, "changed after it was made"), ErrorCode::InvalidState);
  (*col)[1] = 1, (*ptr)[2] = 1 << 30;
  EXPECT_EQ(error_of([&] { a.to_dense(); }, "changed after it was made"), ErrorCode::InvalidState);

  auto crow = std::make_shared<std::vector<std::int32_t>>(std::vector<std::int32_t>{0, 1});
  const CooMatrix c = CooMatrix::from_parts(Tensor::wrap_host(crow->data(), DType::I32, Shape{2}, crow),
                                            Tensor::wrap_host(col->data(), DType::I32, Shape{2}, col),
                                            Tensor::wrap_host(val->data(), DType::F32, Shape{2}, val), 2, 2);
  (*crow)[1] = 1 << 30;
  EXPECT_EQ(error_of([&] { c.to_csr(); }, "changed after it was made"), ErrorCode::InvalidState);
}

TEST(Sparse, HugeShapesAreRefusedBeforeAnyAllocation) {
  const CsrMatrix a = CsrMatrix::from_parts(
      host().from_host(std::vector<std::int64_t>{0, 1, 1, 1, 1}.data(), Shape{5}, DType::I64),
      host().from_host(std::vector<std::int64_t>{5}.data(), Shape{1}, DType::I64), f32({1}), 4, std::int64_t{1} << 62);
  EXPECT_EQ(error_of([&] { a.to_dense(); }, "more than 2^63 - 1"), ErrorCode::InvalidArgument);  // 4 x 2^62
  EXPECT_EQ(error_of([&] { a.transpose(); }, "more than half of this machine's memory"), ErrorCode::OutOfMemory);
  const CsrMatrix wide = CsrMatrix::from_parts(i32({0, 1}), i32({3}), f32({1}), 1, std::int64_t{1} << 40);
  EXPECT_EQ(error_of([&] { wide.to_dense(); }, "more than half of this machine's memory"), ErrorCode::OutOfMemory);
  const CooMatrix tall = CooMatrix::from_parts(i32({}), i32({}), f32({}), INT64_MAX, 1);
  EXPECT_EQ(error_of([&] { tall.to_csr(); }, "CooMatrix::to_csr"), ErrorCode::OutOfMemory);
}

TEST(Sparse, SparseAddDenseNamesItselfInItsErrors) {
  const CsrMatrix a = CsrMatrix::from_parts(i32({0, 1}), i32({0}), f32({1}), 1, 2);
  EXPECT_EQ(error_of(
                [&] {
                  ops::sparse_add_dense(a, host().zeros(Shape{1, 2}, DType::F64));
                },
                "sparse_add_dense"),
            ErrorCode::DTypeMismatch);
}
