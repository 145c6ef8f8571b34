"""Sparse matrices: SciPy's CSR arrays crossing without a copy, conversions, SpMV / SpMM
against SciPy, and malformed structures refused."""

import numpy as np
import pytest

import torsh_backend as tb

sp = pytest.importorskip("scipy.sparse")


def random_csr(rng, rows, cols, density, dtype=np.float32):
    return sp.random(rows, cols, density=density, format="csr", dtype=dtype, random_state=int(rng.integers(1 << 30)))


def test_scipy_arrays_are_shared_not_copied(rng):
    m = random_csr(rng, 50, 40, 0.1)
    a = tb.CsrMatrix.from_scipy(m)
    assert a.shape == (50, 40) and a.nnz == m.nnz
    # the tensors are views of SciPy's arrays: a write through NumPy shows in both
    data = a.data.numpy()
    assert np.shares_memory(data, m.data)
    back = a.to_scipy()
    assert np.shares_memory(back.data, m.data) and np.shares_memory(back.indices, m.indices)
    np.testing.assert_array_equal(back.toarray(), m.toarray())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7])
def test_spmv_spmm_match_scipy(rng, dtype, n):
    m = random_csr(rng, 300, 200, 0.02, dtype)
    a = tb.CsrMatrix.from_scipy(m)
    x = rng.standard_normal((200, n) if n > 1 else 200).astype(dtype)
    got = (a @ x).numpy()
    want = m @ x
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(tb.spmm(a, x).numpy(), want, rtol=tol, atol=tol)


def test_conversions_and_transpose(rng):
    m = random_csr(rng, 13, 17, 0.3, np.float64)
    a = tb.CsrMatrix.from_scipy(m)
    np.testing.assert_array_equal(a.to_dense().numpy(), m.toarray())
    np.testing.assert_array_equal(a.transpose().to_dense().numpy(), m.toarray().T)
    np.testing.assert_array_equal(a.to_coo().to_csr().to_dense().numpy(), m.toarray())
    d = tb.CsrMatrix.from_dense(m.toarray(), index_dtype="int64")
    assert d.indptr.dtype == tb.int64
    np.testing.assert_array_equal(d.to_dense().numpy(), m.toarray())
    c = tb.CooMatrix.from_parts(np.array([1, 0, 1], np.int32), np.array([2, 0, 2], np.int32),
                                np.array([1.0, 2.0, 3.0], np.float32), (2, 3))
    np.testing.assert_array_equal(c.to_dense().numpy(), [[2, 0, 0], [0, 0, 4]])
    s = tb.sparse_add_dense(a, np.ones((13, 17)))
    np.testing.assert_array_equal(s.numpy(), m.toarray() + 1)


def test_malformed_structures_are_refused():
    data = np.ones(3, np.float32)
    with pytest.raises(tb.TorshError, match="not increasing"):
        tb.CsrMatrix.from_parts(np.array([0, 3], np.int32), np.array([2, 1, 0], np.int32), data, (1, 3))
    with pytest.raises(tb.TorshError, match="outside"):
        tb.CsrMatrix.from_parts(np.array([0, 3], np.int32), np.array([0, 1, 9], np.int32), data, (1, 3))
    with pytest.raises(tb.TorshError, match="i32"):
        tb.CsrMatrix.from_parts(np.array([0, 3], np.int32), np.array([0, 1, 2], np.int64), data, (1, 3))
    unsorted = sp.csr_matrix((data, np.array([2, 1, 0], np.int32), np.array([0, 3], np.int32)), shape=(1, 3))
    with pytest.raises(tb.TorshError, match="sum_duplicates"):
        tb.CsrMatrix.from_scipy(unsorted)
    unsorted.sum_duplicates()
    assert tb.CsrMatrix.from_scipy(unsorted).nnz == 3
