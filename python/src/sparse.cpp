// Sparse matrices: CsrMatrix and CooMatrix, with SciPy's arrays crossing
// without a copy on the CPU (the index and value arrays become tensors over
// the arrays' memory through DLPack, and to_scipy() hands back views of them).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "common.hpp"

namespace torsh::py {
namespace {

using nb::arg;

std::pair<std::int64_t, std::int64_t> shape_pair(nb::handle shape) {
  const std::vector<std::int64_t> v = to_int_list(shape, "shape");
  if (v.size() != 2) raise_error(ErrorCode::InvalidArgument, "shape takes (rows, cols)", "sparse");
  return {v[0], v[1]};
}

nb::object scipy_sparse() { return nb::module_::import_("scipy.sparse"); }

// A copy of an index array. The kernels trust a matrix's structure, which
// was checked when it was made; an index array shared with NumPy could be
// written afterwards and send them outside the arrays, so the matrix keeps
// its own (values stay shared: writing them is safe and sometimes the point).
Tensor own(const Tensor& t) { return copy_of(t); }

// A read-only NumPy view of a matrix's index array (to_scipy).
nb::object read_only(const Tensor& t) {
  nb::object a = nb::cast(t).attr("numpy")();
  a.attr("setflags")(nb::arg("write") = false);
  return a;
}

}  // namespace

void bind_sparse(nb::module_& m) {
  nb::class_<CsrMatrix>(m, "CsrMatrix",
                        "A CSR matrix in SciPy's layout (indptr, indices, data) on one device: indices sorted within "
                        "each row, i32 or i64, values f32 or f64. Checked when made.")
      .def_static(
          "from_parts",
          [](const TensorLike& indptr, const TensorLike& indices, const TensorLike& data, nb::handle shape) {
            const auto [rows, cols] = shape_pair(shape);
            Tensor tp = as_tensor(indptr), tc = as_tensor(indices), tv = as_tensor(data);
            nb::gil_scoped_release r;
            return CsrMatrix::from_parts(own(tp), own(tc), tv, rows, cols);
          },
          arg("indptr"), arg("indices"), arg("data"), arg("shape"),
          "From the three arrays (any DLPack producer) and (rows, cols). The values are shared, not copied (a NumPy "
          "array's later writes show); indptr and indices are copied, so the checked structure cannot change.")
      .def_static(
          "from_scipy",
          [](nb::handle mat) {
            if (!nb::hasattr(mat, "tocsr"))
              raise_error(ErrorCode::InvalidArgument,
                          "from_scipy takes a scipy.sparse matrix or array; got " +
                              std::string(nb::str(nb::handle(mat.type()).attr("__name__")).c_str()),
                          "CsrMatrix.from_scipy", {"For a dense array use CsrMatrix.from_dense"});
            nb::object csr = mat.attr("tocsr")();
            return CsrMatrix::from_parts(own(as_tensor(TensorLike{nb::object(csr.attr("indptr"))})),
                                         own(as_tensor(TensorLike{nb::object(csr.attr("indices"))})),
                                         as_tensor(TensorLike{nb::object(csr.attr("data"))}),
                                         nb::cast<std::int64_t>(csr.attr("shape")[0]),
                                         nb::cast<std::int64_t>(csr.attr("shape")[1]));
          },
          arg("matrix"),
          "From a scipy.sparse matrix or array (converted with tocsr(); a canonical CSR one's data is shared, not "
          "copied, and its indptr and indices copied). "
          "Unsorted or duplicate indices are refused: call sum_duplicates() first.")
      .def_static(
          "from_dense",
          [](const TensorLike& d, const DTypeArg& index_dtype) {
            Tensor t = as_tensor(d);
            const DType it = to_dtype(index_dtype);  // reads Python objects: before the GIL is released
            nb::gil_scoped_release r;
            return CsrMatrix::from_dense(t, it);
          },
          arg("dense"), arg("index_dtype") = "int32", "The nonzeros of a 2-D float32 / float64 tensor.")
      .def_prop_ro("shape", [](const CsrMatrix& a) { return std::make_tuple(a.rows(), a.cols()); })
      .def_prop_ro("nnz", &CsrMatrix::nnz)
      .def_prop_ro(
          "indptr", [](const CsrMatrix& a) { return own(a.indptr()); }, "A copy (the structure is fixed).")
      .def_prop_ro(
          "indices", [](const CsrMatrix& a) { return own(a.indices()); }, "A copy (the structure is fixed).")
      .def_prop_ro("data", [](const CsrMatrix& a) { return a.values(); })
      .def("to_dense",
           [](const CsrMatrix& a) {
             nb::gil_scoped_release r;
             return a.to_dense();
           })
      .def(
          "transpose",
          [](const CsrMatrix& a) {
            nb::gil_scoped_release r;
            return a.transpose();
          },
          "The CSR matrix of the transpose.")
      .def("to_coo", &CsrMatrix::to_coo)
      .def(
          "to_scipy",
          [](const CsrMatrix& a) {
            nb::object np_p = read_only(a.indptr()), np_c = read_only(a.indices()),
                       np_v = nb::cast(a.values()).attr("numpy")();
            return scipy_sparse().attr("csr_matrix")(nb::make_tuple(np_v, np_c, np_p),
                                                     nb::arg("shape") = nb::make_tuple(a.rows(), a.cols()),
                                                     nb::arg("copy") = false);
          },
          "A scipy.sparse.csr_matrix over the same memory (CPU; indptr and indices read-only) or a host copy "
          "(other devices).")
      .def("__matmul__",
           [](const CsrMatrix&, const CsrMatrix&) -> Tensor {
             raise_error(ErrorCode::Unsupported, "a sparse @ sparse product is not provided", "spmm",
                         {"Convert one side with to_dense(), or use scipy for sparse x sparse"});
           })
      .def("__matmul__",
           [](const CsrMatrix& a, const TensorLike& x) {
             Tensor t = as_tensor(x, &a.values());
             nb::gil_scoped_release r;
             return ops::spmm(a, t);
           })
      .def("__repr__", [](const CsrMatrix& a) {
        return "CsrMatrix(shape=(" + std::to_string(a.rows()) + ", " + std::to_string(a.cols()) +
               "), nnz=" + std::to_string(a.nnz()) + ", dtype=" + std::string(dtype_name(a.dtype())) +
               ", device=" + a.values().device().to_string() + ")";
      });

  nb::class_<CooMatrix>(m, "CooMatrix", "A COO matrix: row, col, data in any order, duplicates summed by to_csr().")
      .def_static(
          "from_parts",
          [](const TensorLike& row, const TensorLike& col, const TensorLike& data, nb::handle shape) {
            const auto [rows, cols] = shape_pair(shape);
            Tensor tr = as_tensor(row), tc = as_tensor(col), tv = as_tensor(data);
            nb::gil_scoped_release r;
            return CooMatrix::from_parts(own(tr), own(tc), tv, rows, cols);
          },
          arg("row"), arg("col"), arg("data"), arg("shape"))
      .def_prop_ro("shape", [](const CooMatrix& a) { return std::make_tuple(a.rows(), a.cols()); })
      .def_prop_ro("nnz", &CooMatrix::nnz)
      .def_prop_ro(
          "row", [](const CooMatrix& a) { return own(a.row()); }, "A copy.")
      .def_prop_ro(
          "col", [](const CooMatrix& a) { return own(a.col()); }, "A copy.")
      .def_prop_ro("data", [](const CooMatrix& a) { return a.values(); })
      .def(
          "to_csr",
          [](const CooMatrix& a) {
            nb::gil_scoped_release r;
            return a.to_csr();
          },
          "Sorted by (row, column), duplicates summed in entry order.")
      .def("to_dense", [](const CooMatrix& a) {
        nb::gil_scoped_release r;
        return a.to_dense();
      });

  m.def(
      "spmm",
      [](const CsrMatrix& a, const TensorLike& x) {
        Tensor t = as_tensor(x, &a.values());
        nb::gil_scoped_release r;
        return ops::spmm(a, t);
      },
      arg("a"), arg("x"),
      "a @ x for a CsrMatrix a: x [cols] gives [rows] (SpMV), x [cols, n] gives [rows, n]; also a @ x.");
  m.def(
      "sparse_add_dense",
      [](const CsrMatrix& a, const TensorLike& d) {
        Tensor t = as_tensor(d, &a.values());
        nb::gil_scoped_release r;
        return ops::sparse_add_dense(a, t);
      },
      arg("a"), arg("d"), "a + d for a dense d of a's shape: a dense tensor.");
}

}  // namespace torsh::py
