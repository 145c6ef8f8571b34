"""The shipped type stubs cover the extension module.

After changing the bindings, regenerate them with
``python -m nanobind.stubgen --include-private -m torsh_backend._core -o python/torsh_backend/_core.pyi``
(--include-private keeps the in-place methods copy_ and fill_).
"""

import importlib
import inspect
import pathlib

import torsh_backend as tb
from torsh_backend import _core


def stub_text():
    return (pathlib.Path(tb.__file__).parent / "_core.pyi").read_text()


def test_package_is_typed():
    assert (pathlib.Path(tb.__file__).parent / "py.typed").exists()


def test_every_public_name_has_a_stub():
    text = stub_text()
    missing = [n for n in dir(_core) if not n.startswith("_") and not inspect.ismodule(getattr(_core, n))
               and f"def {n}(" not in text and f"class {n}" not in text and f"{n}: " not in text]
    assert not missing, f"regenerate _core.pyi; missing: {missing}"


def test_submodules_are_typed_by_their_wrappers():
    """A C++ submodule (_core.fft) shows in the stub as an import; what users call is the
    annotated Python module of the same name (torsh_backend.fft), which wraps all of it."""
    text = stub_text()
    for n in dir(_core):
        sub = getattr(_core, n)
        if n.startswith("_") or not inspect.ismodule(sub):
            continue
        assert f"import {n} as {n}" in text, f"regenerate _core.pyi; missing submodule {n}"
        wrapper = importlib.import_module(f"torsh_backend.{n}")
        for f in (f for f in dir(sub) if not f.startswith("_")):
            assert (getattr(sub, f).__doc__ or "").strip(), f"_core.{n}.{f} has no docstring"
            fn = getattr(wrapper, f, None)
            assert fn is not None and "return" in inspect.get_annotations(fn), f"{n}.{f} lacks an annotated wrapper"


def test_every_tensor_method_has_a_stub():
    text = stub_text()
    missing = [n for n, _ in inspect.getmembers(tb.Tensor) if not n.startswith("_")
               and f"def {n}(" not in text]
    assert not missing, f"regenerate _core.pyi; missing Tensor members: {missing}"


def test_functions_have_docstrings():
    undocumented = [n for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n))
                    and not (getattr(_core, n).__doc__ or "").strip()]
    assert not undocumented, undocumented
