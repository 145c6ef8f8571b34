"""The shipped type stubs cover the extension module.

After changing the bindings, regenerate them with
``python -m nanobind.stubgen --include-private -m torsh_backend._core -o python/torsh_backend/_core.pyi``
(--include-private keeps the in-place methods copy_ and fill_).
"""

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
    missing = [n for n in dir(_core) if not n.startswith("_")
               and f"def {n}(" not in text and f"class {n}" not in text and f"{n}: " not in text]
    assert not missing, f"regenerate _core.pyi; missing: {missing}"


def test_every_tensor_method_has_a_stub():
    text = stub_text()
    missing = [n for n, _ in inspect.getmembers(tb.Tensor) if not n.startswith("_")
               and f"def {n}(" not in text]
    assert not missing, f"regenerate _core.pyi; missing Tensor members: {missing}"


def test_functions_have_docstrings():
    undocumented = [n for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n))
                    and not (getattr(_core, n).__doc__ or "").strip()]
    assert not undocumented, undocumented
