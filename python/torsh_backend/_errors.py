"""The exception raised for every error of the torsh runtime and op layer."""

from __future__ import annotations

from typing import Sequence


class TorshError(RuntimeError):
    """An error from torsh, with the context the C++ ``torsh::Error`` carries.

    ``str(err)`` is the full report (code, op, message, shapes, dtypes, device,
    suggestions); the parts are attributes:

    - ``code``: the error code name, e.g. ``"ShapeMismatch"``
    - ``message``: the message alone
    - ``op``: the operation that failed, e.g. ``"matmul"``
    - ``shapes``, ``dtypes``: the operands' shapes and dtypes, as strings
    - ``device``: the device, e.g. ``"opencl:0"``
    - ``suggestions``: what to do about it
    """

    def __init__(
        self,
        text: str,
        *,
        code: str = "Internal",
        message: str | None = None,
        op: str = "",
        shapes: Sequence[str] = (),
        dtypes: Sequence[str] = (),
        device: str = "",
        suggestions: Sequence[str] = (),
    ) -> None:
        if message is not None and text == message and op:
            # Raised in Python with its parts: the same full report the C++ errors give.
            text = _report(code, message, op, shapes, dtypes, device, suggestions)
        super().__init__(text)
        self.code = code
        self.message = text if message is None else message
        self.op = op
        self.shapes = list(shapes)
        self.dtypes = list(dtypes)
        self.device = device
        self.suggestions = list(suggestions)

    def __reduce__(self):  # keeps the attributes through pickling (multiprocessing)
        kw = dict(code=self.code, message=self.message, op=self.op, shapes=self.shapes,
                  dtypes=self.dtypes, device=self.device, suggestions=self.suggestions)
        return (_rebuild, (str(self), kw))


def _report(code: str, message: str, op: str, shapes: Sequence[str], dtypes: Sequence[str], device: str,
            suggestions: Sequence[str]) -> str:
    lines = [f"{code} in {op}: {message}"]
    if shapes:
        lines.append("  shapes: " + ", ".join(shapes))
    if dtypes:
        lines.append("  dtypes: " + ", ".join(dtypes))
    if device:
        lines.append("  device: " + device)
    lines += ["  suggestion: " + s for s in suggestions]
    return "\n".join(lines)


def _rebuild(text: str, kw: dict) -> TorshError:
    return TorshError(text, **kw)
