"""Backends and devices: discovery, creation, facts and the summary."""

import pytest

import torsh_backend as tb


def test_cpu_is_always_available():
    assert "cpu" in tb.available()


def test_create_cpu_and_its_facts():
    b = tb.create("cpu")
    assert b.type == "cpu"
    assert b.device == "cpu:0"
    info = b.info
    assert info.kind == "cpu"
    assert info.compute_units >= 1
    assert info.total_memory > 0
    assert isinstance(info.features, list)
    assert "cpu:0" in repr(b)
    assert b == tb.create("cpu") and hash(b) == hash(tb.create("cpu"))


def test_cpu_says_which_kernels_it_runs():
    info = tb.create("cpu").info
    assert isinstance(info.architecture, str)
    variants = dict(info.kernel_variants)
    for family in ("gemm f32", "gemm bf16", "binary f32", "softmax, norms", "quantized dot"):
        assert variants.get(family), (family, variants)


def test_auto_picks_an_available_backend():
    b = tb.create("auto")
    assert b.type in tb.available()
    chosen, reasons = tb.explain_selection()
    assert chosen == b.device
    assert reasons and all(isinstance(r, str) for r in reasons)


def test_device_spellings():
    assert tb.device(None).type == "cpu"
    assert tb.device("cpu:0").device == "cpu:0"
    assert tb.device(tb.create("cpu")).type == "cpu"


def test_statuses_explain_unavailable_backends():
    statuses = {s.type: s for s in tb.statuses()}
    assert statuses["cpu"].available and statuses["cpu"].source == "built-in"
    for s in statuses.values():
        if not s.available:
            assert s.reason, f"{s.type} is unavailable without a reason"


def test_missing_plugins_say_not_built_or_not_shipped():
    # The wheel ships every plugin its build made; one it left out says so and
    # names the option that builds it, never a bare "plugin not built".
    options = {"opencl": "TORSH_OPENCL", "cuda": "TORSH_CUDA", "rocm": "TORSH_ROCM"}
    for s in tb.statuses():
        if s.available or s.type not in options or "not found in" not in s.reason:
            continue
        assert "not shipped" not in s.reason, f"built but left out of the package: {s.reason}"
        assert f"{s.type if s.type != 'rocm' else 'ROCm'}".lower() in s.reason.lower()
        assert "plugin not built: this libtorsh's build left it out" in s.reason, s.reason
        assert f"-Ccmake.define.{options[s.type]}=ON" in s.reason, s.reason


def test_info_summary_is_a_string():
    text = tb.info()
    assert isinstance(text, str) and "CPU" in text


def test_unknown_backend_raises_torsh_error():
    with pytest.raises(tb.TorshError) as e:
        tb.create("nosuchbackend")
    assert e.value.code == "InvalidArgument"
    assert e.value.suggestions


def test_out_of_range_device_index():
    with pytest.raises(tb.TorshError) as e:
        tb.create("cpu", 7)
    assert e.value.code == "OutOfRange"


def test_supports_and_capabilities():
    b = tb.create("cpu")
    assert b.supports("matmul", "f32")
    assert b.capabilities.f64
    with pytest.raises(tb.TorshError) as e:
        b.supports("no_such_op")
    # The error lists every op family by its registered name, and each of them parses.
    names = [n.strip() for n in e.value.suggestions[0].split("Use one of ")[1].split(",")]
    assert "batch_norm" in names and "index_select" in names and len(names) == 25
    for n in names:
        assert b.supports(n, "f32")
    assert b.supports("BatchNorm") and b.supports("batchnorm")


def test_plugin_search_path_lists_the_library_folder():
    assert tb.plugin_search_path()


def test_memory_stats_follow_allocations():
    b = tb.create("cpu")
    t = tb.zeros((1024,), device=b)
    stats = b.memory_stats()
    assert stats.live_bytes >= t.nbytes
    assert stats.peak_bytes >= stats.live_bytes


def test_unavailable_backends_are_reported():
    missing = [f"{s.type}: {s.reason}" for s in tb.statuses() if not s.available]
    if missing:
        pytest.skip("unavailable here: " + " | ".join(missing))
