"""Tensor printing in PyTorch's exact format (``repr(t)`` and ``str(t)``).

The rules are PyTorch's (torch/_tensor_str.py): one formatter per tensor (one for the real and
one for the imaginary part of complex tensors) picks a common width; floats print with
``precision`` decimals, as ``1.`` when every value is integral, or in scientific notation when
the values span too wide a range; tensors with more than ``threshold`` elements are summarized
with ``...`` keeping ``edgeitems`` at each edge; rows wrap at ``linewidth``.  Suffixes
(``device=``, ``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=``) follow the contents.

Values are read once through the backend's ``to_host`` as a NumPy array; the printer never
dispatches an op, so it works for any backend that has data and prints ``...`` for the rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._runtime.backends import backend_for
from torchplug._tensor.tensor import _resolved

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions", "PRINT_OPTS"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing (as ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which tensors are summarized (default 1000).
        edgeitems: items kept at each edge of a summarized dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``'default'``, ``'short'`` or ``'full'``; the other arguments override it.
        sci_mode: True/False forces scientific notation on/off; None (the default, and what
            every call that omits it restores) lets the formatter choose.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}; expected one of {sorted(_PROFILES)}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode  # as in PyTorch: always set, so omitting it resets it


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (same arguments as :func:`set_printoptions`)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---- formatting values --------------------------------------------------------------------------
class _Formatter:
    """Formats the values of one (real) tensor to a common width.

    ``values`` is the (summarized) data as a NumPy array: float64 for floating tensors (exact
    for every float dtype), the native integer/bool type otherwise.
    """

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if values.size == 0:
            return
        if not floating:
            lo, hi = values.min().item(), values.max().item()
            self.max_width = max(1, len(f"{lo}"), len(f"{hi}"))
            return
        flat = values.reshape(-1)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        magnitudes = np.abs(vals)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)
        # The widest string comes from a value of extreme magnitude on either side of zero.
        candidates = []
        for side in (vals[vals > 0], vals[vals < 0]):
            if side.size:
                candidates += [float(side.min()), float(side.max())]
        p = PRINT_OPTS.precision
        if self.sci_mode:
            widths = [len(f"{v:.{p}e}") for v in candidates]
        elif self.int_mode:
            widths = [len(f"{v:.0f}") + 1 for v in candidates]  # + 1 for the trailing '.'
        else:
            widths = [len(f"{v:.{p}f}") for v in candidates]
        self.max_width = max([self.max_width, *widths])

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


class _ValueFormat:
    """One formatter for real tensors, a real and an imaginary one for complex tensors."""

    def __init__(self, real: _Formatter, imag: _Formatter | None = None) -> None:
        self.real = real
        self.imag = imag
        self.element_length = real.width() + 2  # ", " between elements
        if imag is not None:
            self.element_length += imag.width() + 1  # the 'j'

    def format(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _python_values(arr: np.ndarray) -> list[Any]:
    """Python numbers for a NumPy array: floats/complex widened exactly, ints and bools as-is."""
    kind = arr.dtype.kind
    if kind == "c":
        arr = arr.astype(np.complex128)
    elif kind not in "biu":
        arr = arr.astype(np.float64)  # float16, bfloat16 (ml_dtypes), float32: exact
    return arr.tolist()


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The values a summarized print shows: ``edgeitems`` from each edge of every dimension."""
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if not e:
        # PyTorch keeps a 1-d tensor whole here (self[-0:] is everything) and drops the rest.
        return arr if arr.ndim == 1 else arr[(slice(0, 0),) * arr.ndim]
    for axis, n in enumerate(arr.shape):
        if n > 2 * e:
            arr = np.concatenate(
                [np.take(arr, range(e), axis=axis), np.take(arr, range(n - e, n), axis=axis)], axis=axis
            )
    return arr


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _ValueFormat) -> str:
    e = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / fmt.element_length))
    n = arr.shape[0]
    if summarize and not e:
        data = ["..."]
    elif summarize and n > 2 * e:
        data = (
            [fmt.format(v) for v in _python_values(arr[:e])]
            + [" ..."]
            + [fmt.format(v) for v in _python_values(arr[n - e :])]
        )
    else:
        data = [fmt.format(v) for v in _python_values(arr)]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _ValueFormat) -> str:
    if arr.ndim == 0:
        return fmt.format(_python_values(arr))
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * e:
        rows = [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(e)]
        rows += ["..."]
        rows += [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(n - e, n)]
    else:
        rows = [_nested_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _contents_str(arr: np.ndarray, dtype: D.dtype, indent: int) -> str:
    """The bracketed values of a non-empty tensor whose host data is ``arr``."""
    summarize = arr.size > PRINT_OPTS.threshold
    shown = _summarized(arr) if summarize else arr
    if dtype.is_complex:
        fmt = _ValueFormat(
            _Formatter(shown.real.astype(np.float64), True), _Formatter(shown.imag.astype(np.float64), True)
        )
    elif dtype.is_floating_point:
        fmt = _ValueFormat(_Formatter(shown.astype(np.float64), True))
    else:
        fmt = _ValueFormat(_Formatter(shown, False))
    return _nested_str(arr, indent, summarize, fmt)


# ---- the whole repr -----------------------------------------------------------------------------
def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # PyTorch's arithmetic, kept exactly
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(t: Any) -> str | None:
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        return "Invalid"
    if grad_fn is None:
        return None
    name = getattr(grad_fn, "name", None)
    text = name() if callable(name) else type(grad_fn).__name__
    return text.rsplit("::", 1)[-1]


def _is_plain(t: Any) -> bool:
    from torchplug._tensor.tensor import Tensor

    return type(t) is Tensor or type(t).__name__ == "Parameter"


def tensor_repr(t: Any, *, tensor_contents: str | None = None) -> str:
    """``repr(t)`` exactly as PyTorch prints it (with ``torchplug.`` dtype names)."""
    plain = _is_plain(t)
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes: list[str] = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")

    dtype = t.dtype
    default = D.get_default_dtype()
    default_complex = D.complex128 if default is D.float64 else D.complex64
    shape = tuple(int(s) for s in t.shape)
    backend = backend_for(dev.type)
    if not backend.has_data:
        suffixes.append(f"size={shape}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype}")
        body = "..."
    elif math.prod(shape) == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if dtype is not default:  # no values to tell an int64 tensor from a float one
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if dtype not in (default, default_complex, D.int64, D.bool_):
            suffixes.append(f"dtype={dtype}")
        body = "" if tensor_contents is not None else _contents_str(np.asarray(backend.to_host(_resolved(t))), dtype, indent)
    if tensor_contents is not None:
        body = tensor_contents

    grad_fn = _grad_fn_name(t)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    text = _add_suffixes(prefix + body, suffixes, indent)
    if not plain and any(c.__name__ == "Parameter" for c in type(t).__mro__):
        text = f"Parameter({text})"
    return text
