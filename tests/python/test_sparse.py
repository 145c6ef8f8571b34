"""Sparse matrices: SciPy's CSR arrays crossing without a copy, conversions, SpMV / SpMM
against SciPy, and malformed structures refused."""

import numpy as np
import pytest

import torsh_backend as tb

sp = pytest.importorskip("scipy.sparse")


def random_csr(rng, rows, cols, density, dtype=np.float32):
    return sp.random(rows, cols, density=density, format="csr", dtype=dtype, random_state=int(rng.integers(1 << 30)))


def test_scipy_values_are_shared_and_the_structure_is_owned(rng):
    m = random_csr(rng, 50, 40, 0.1)
    a = tb.CsrMatrix.from_scipy(m)
    assert a.shape == (50, 40) and a.nnz == m.nnz
    # the values are a view of SciPy's array: a write through NumPy shows in both
    data = a.data.numpy()
    assert np.shares_memory(data, m.data)
    back = a.to_scipy()
    assert np.shares_memory(back.data, m.data)
    np.testing.assert_array_equal(back.toarray(), m.toarray())
    # the structure the kernels trust is the matrix's own: checked once, never written
    assert not np.shares_memory(back.indices, m.indices)
    assert not back.indices.flags.writeable and not back.indptr.flags.writeable
    x = rng.standard_normal(40).astype(np.float32)
    want = m @ x
    m.indices[:] = 10**9
    m.indptr[-1] = 10**9
    np.testing.assert_allclose((a @ x).numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a.to_dense().numpy() @ x, want, rtol=1e-5, atol=1e-5)
    # the index properties are copies too
    idx = a.indices
    idx[0] = 10**6
    np.testing.assert_allclose((a @ x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_parts_shared_with_numpy_cannot_change_the_structure():
    ptr, idx = np.array([0, 1, 2], np.int32), np.array([0, 1], np.int32)
    a = tb.CsrMatrix.from_parts(ptr, idx, np.array([1, 2], np.float32), (2, 2))
    idx[1] = 1 << 30
    ptr[2] = 1 << 30
    np.testing.assert_array_equal(tb.spmm(a, np.array([10, 100], np.float32)).numpy(), [10, 200])
    row = np.array([0, 1], np.int32)
    c = tb.CooMatrix.from_parts(row, np.array([0, 1], np.int32), np.array([1, 2], np.float32), (2, 2))
    row[1] = 1 << 30
    np.testing.assert_array_equal(c.to_dense().numpy(), [[1, 0], [0, 2]])


def test_strided_parts_are_read_by_their_strides():
    idx = np.array([0, 9, 1, 9], np.int32)[::2]
    val = np.array([1, 9, 2, 9], np.float32)[::2]
    a = tb.CsrMatrix.from_parts(np.array([0, 1, 2], np.int32), idx, val, (2, 2))
    np.testing.assert_array_equal(tb.spmm(a, np.array([10, 100], np.float32)).numpy(), [10, 200])
    rev = tb.CsrMatrix.from_parts(np.array([2, 1, 0], np.int32)[::-1], np.array([1, 0], np.int32)[::-1],
                                  np.array([2, 1], np.float32)[::-1], (2, 2))
    np.testing.assert_array_equal(tb.spmm(rev, np.array([10, 100], np.float32)).numpy(), [10, 200])


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, "int64", tb.int32])
def test_from_dense_takes_any_dtype_spelling(index_dtype):
    a = tb.CsrMatrix.from_dense(np.eye(3), index_dtype=index_dtype)
    np.testing.assert_array_equal(a.to_dense().numpy(), np.eye(3))
    with pytest.raises(tb.TorshError, match="i32 or i64"):
        tb.CsrMatrix.from_dense(np.eye(3), index_dtype=np.float32)


def test_misuse_gets_errors_that_name_the_op():
    a = tb.CsrMatrix.from_dense(np.eye(3, dtype=np.float32))
    with pytest.raises(tb.TorshError, match="sparse @ sparse"):
        a @ a
    with pytest.raises(tb.TorshError, match="from_scipy"):
        tb.CsrMatrix.from_scipy(np.eye(3))
    with pytest.raises(tb.TorshError, match="sparse_add_dense"):
        tb.sparse_add_dense(a, np.ones((3, 3), np.float64))
    huge = tb.CsrMatrix.from_parts(np.array([0, 1], np.int64), np.array([5], np.int64), np.ones(1, np.float32),
                                   (1, 2**40))
    with pytest.raises(tb.TorshError, match="to_dense"):
        huge.to_dense()
    with pytest.raises(tb.TorshError, match="transpose"):
        huge.transpose()
    with pytest.raises(tb.TorshError, match="rows \\+ 1"):
        tb.CsrMatrix.from_parts(np.array([0], np.int64), np.array([], np.int64), np.ones(0, np.float32),
                                (2**63 - 1, 1))


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
