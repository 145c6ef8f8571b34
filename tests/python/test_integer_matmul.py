"""int8 matrix products with ONNX MatMulInteger / QLinearMatMul semantics, against NumPy's
integer arithmetic and, where installed, onnxruntime itself."""

import numpy as np
import pytest

import torsh_backend as tb


def ref_sums(a, b, za, zb):
    za = np.asarray(za, np.int64)
    zb = np.asarray(zb, np.int64)
    if za.ndim == 1:
        za = za[:, None]
    s = (a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)
    return s.astype(np.int64).astype(np.uint64).astype(np.uint32).astype(np.int32)  # wraps as int32


@pytest.mark.parametrize("adt,bdt", [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)])
def test_matmul_integer_matches_numpy(rng, adt, bdt):
    m, k, n = 23, 45, 31
    a = rng.integers(np.iinfo(adt).min, np.iinfo(adt).max + 1, (m, k)).astype(adt)
    b = rng.integers(np.iinfo(bdt).min, np.iinfo(bdt).max + 1, (k, n)).astype(bdt)
    za = rng.integers(np.iinfo(adt).min, np.iinfo(adt).max + 1, m).astype(adt)  # per row
    zb = np.array(7, bdt)
    y = tb.matmul_integer(a, b, za, zb)
    assert y.dtype == tb.int32
    np.testing.assert_array_equal(y.numpy(), ref_sums(a, b, za, zb))


def test_matmul_integer_batches_and_int_zero_points(rng):
    a = rng.integers(0, 256, (3, 4, 9)).astype(np.uint8)
    b = rng.integers(-128, 128, (9, 5)).astype(np.int8)
    y = tb.matmul_integer(a, b, 128, -3)
    np.testing.assert_array_equal(y.numpy(), ref_sums(a, b, 128, -3))


def test_qlinear_matmul_requantizes(rng):
    a = rng.integers(0, 256, (16, 40)).astype(np.uint8)
    b = rng.integers(-128, 128, (40, 12)).astype(np.int8)
    sa, sb, sy = np.float32(0.02), rng.uniform(0.005, 0.02, 12).astype(np.float32), np.float32(0.3)
    s = ref_sums(a, b, 128, 0)
    y = tb.qlinear_matmul(a, sa, 128, b, sb, 0, sy, 100)
    assert y.dtype == tb.uint8
    want = np.clip(np.rint(s.astype(np.float32) * ((sa * sb) / sy)) + 100, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(y.numpy(), want)
    f = tb.qlinear_matmul(a, sa, 128, b, sb, 0)
    assert f.dtype == tb.float32
    np.testing.assert_array_equal(f.numpy(), s.astype(np.float32) * (sa * sb))
    i8 = tb.qlinear_matmul(a, sa, 128, b, sb, 0, sy, -4, dtype="int8")
    assert i8.dtype == tb.int8


def test_integer_weight_gives_the_plain_products(rng):
    a = rng.integers(0, 256, (2, 17, 45)).astype(np.uint8)
    b = rng.integers(-128, 128, (45, 30)).astype(np.int8)
    zb = rng.integers(-5, 5, 30).astype(np.int8)
    w = tb.IntegerWeight(b)
    assert "int8" in repr(w) or "i8" in repr(w)
    b[:] = 0  # the weight holds its own copy
    b0 = np.asarray(w.tensor.numpy())
    for _ in range(2):  # the first product packs it, the second reuses the panels
        np.testing.assert_array_equal(tb.matmul_integer(a, w, 128, zb).numpy(), ref_sums(a, b0, 128, zb))
    sa, sb, sy = np.float32(0.02), np.float32(0.01), np.float32(0.5)
    want = tb.qlinear_matmul(a, sa, 128, b0, sb, zb, sy, 100).numpy()
    np.testing.assert_array_equal(tb.qlinear_matmul(a, sa, 128, w, sb, zb, sy, 100).numpy(), want)


def test_integer_weight_refuses_what_is_not_an_int8_matrix():
    with pytest.raises(tb.TorshError, match="IntegerWeight"):
        tb.IntegerWeight(np.zeros((3, 4), np.float32))
    with pytest.raises(tb.TorshError, match="IntegerWeight"):
        tb.IntegerWeight(np.zeros((2, 3, 4), np.int8))


def test_qlinear_matmul_matches_onnxruntime(rng):
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    m, k, n = 33, 70, 19
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    inits = [numpy_helper.from_array(np.array(v, dt), name) for v, dt, name in
             [(0.02, np.float32, "sa"), (131, np.uint8, "za"), (0.015, np.float32, "sb"), (2, np.int8, "zb"),
              (0.4, np.float32, "sy"), (120, np.uint8, "zy")]]
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k]),
                                            helper.make_tensor_value_info("b", TensorProto.INT8, [k, n])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})[0]
    got = tb.qlinear_matmul(a, 0.02, 131, b, 0.015, 2, 0.4, 120).numpy()
    # onnxruntime rounds s * scale where torsh rounds s * ((a_scale * b_scale) / y_scale): a
    # product landing within an ulp of a half may round the other way.
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1
    assert (diff > 0).mean() < 0.01


def test_bad_input_is_refused():
    a = np.zeros((2, 3), np.uint8)
    b = np.zeros((3, 4), np.int8)
    with pytest.raises(tb.TorshError, match="matmul_integer"):
        tb.matmul_integer(np.zeros((2, 3), np.float32), b)
    with pytest.raises(tb.TorshError, match="zero point 300"):
        tb.matmul_integer(a, b, 300)
    with pytest.raises(tb.TorshError, match="inner dimensions"):
        tb.matmul_integer(a, np.zeros((4, 4), np.int8))
    with pytest.raises(tb.TorshError, match="scale"):
        tb.qlinear_matmul(a, 0.0, 0, b, 1.0, 0)
    # a scale written as a Python int is a number like 0.5; an int array is refused
    np.testing.assert_array_equal(tb.qlinear_matmul(a, 1, 0, b, 1, 0, 1, 0).numpy(), np.zeros((2, 4), np.uint8))
    with pytest.raises(tb.TorshError, match="scale"):
        tb.qlinear_matmul(a, np.array(1, np.int64), 0, b, 1.0, 0)
    # dtype= that contradicts y_zero_point's dtype is an error, not ignored
    with pytest.raises(tb.TorshError, match="dtype is i8 but y_zero_point is u8"):
        tb.qlinear_matmul(a, 0.5, np.uint8(0), b, 1.0, np.int8(0), 1.0, np.uint8(3), dtype="int8")


def test_conv_parameters_of_the_wrong_length_are_refused():
    x, w = np.ones((1, 1, 1, 1), np.uint8), np.zeros((2, 1, 1, 1), np.int8)
    with pytest.raises(tb.TorshError, match="w_zero_point"):
        tb.conv_integer(x, w, None, np.array([1, 2, 3], np.int8))
    with pytest.raises(tb.TorshError, match="x_scale"):
        tb.qlinear_conv(np.full((1, 1, 2, 2), 10, np.uint8), np.array([.1, .2, .3, .4], np.float32), 0,
                        np.ones((1, 1, 1, 1), np.int8), 1.0, 0, 1.0, 0)
    with pytest.raises(tb.TorshError, match="int32"):
        tb.qlinear_conv(np.zeros((1, 1, 1, 1), np.uint8), 1.0, 0, w, 1.0, 0, 1.0, 0,
                        np.array([2**32 + 5, -2**31 - 1], np.int64))
    # an int64 bias that fits is taken
    y = tb.qlinear_conv(np.zeros((1, 1, 1, 1), np.uint8), 1.0, 0, w, 1.0, 0, 1.0, 0, np.array([5, -3], np.int64),
                        dtype="int8")
    np.testing.assert_array_equal(y.numpy().ravel(), [5, -3])


def onnx_run(node, inputs, outputs, inits):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from onnx import helper

    graph = helper.make_graph([node], "g", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_conv_integer_matches_onnxruntime(rng):
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    x = rng.integers(0, 256, (2, 4, 9, 7)).astype(np.uint8)
    w = rng.integers(0, 256, (6, 2, 3, 3)).astype(np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1], group=2)
    inits = [numpy_helper.from_array(np.array(117, np.uint8), "zx"), numpy_helper.from_array(np.array(3, np.uint8), "zw")]
    s = onnx_run(node, [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape),
                        helper.make_tensor_value_info("w", TensorProto.UINT8, w.shape)],
                 [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)
    want = s.run(None, {"x": x, "w": w})[0]
    got = tb.conv_integer(x, w, 117, 3, padding=1, stride=(2, 1), groups=2).numpy()
    np.testing.assert_array_equal(got, want)


def test_qlinear_conv_matches_onnxruntime(rng):
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    x = rng.integers(0, 256, (1, 3, 8, 8)).astype(np.uint8)
    w = rng.integers(-128, 128, (5, 3, 3, 3)).astype(np.int8)
    ws = rng.uniform(0.005, 0.02, 5).astype(np.float32)
    bias = rng.integers(-3000, 3000, 5).astype(np.int32)
    node = helper.make_node("QLinearConv", ["x", "xs", "zx", "w", "ws", "zw", "ys", "zy", "b"], ["y"], pads=[1, 1, 1, 1])
    inits = [numpy_helper.from_array(v, n) for v, n in
             [(np.array(0.04, np.float32), "xs"), (np.array(128, np.uint8), "zx"), (ws, "ws"),
              (np.zeros(5, np.int8), "zw"), (np.array(0.5, np.float32), "ys"), (np.array(20, np.uint8), "zy"),
              (bias, "b")]]
    s = onnx_run(node, [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape),
                        helper.make_tensor_value_info("w", TensorProto.INT8, w.shape)],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    want = s.run(None, {"x": x, "w": w})[0]
    got = tb.qlinear_conv(x, 0.04, 128, w, ws, np.zeros(5, np.int8), 0.5, 20, bias, padding=1).numpy()
    diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert diff.max() <= 1  # rounding of s * scale near a half, as in test_qlinear_matmul_matches_onnxruntime
    assert (diff > 0).mean() < 0.01
