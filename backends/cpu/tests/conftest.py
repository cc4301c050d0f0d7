"""Helpers for comparing cpu kernels with real PyTorch: paired inputs, result and error comparison.

Tests get them through the ``tc`` fixture (``tc.pair``, ``tc.compare``...), so no test module
imports another.
"""

from __future__ import annotations

import types
import warnings
import zlib
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import torchplug

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
NP_DTYPES = {name: (ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)) for name in DTYPES}
# (rtol, atol) per result dtype; integers and bool compare exactly.
TOLERANCES = {
    "float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1e-5, 1e-6), "float64": (1e-7, 1e-9),
    "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-9),
}


class Pair:
    """The same data as a torchplug tensor (``.tp``) and a torch tensor (``.th``)."""

    def __init__(self, tp: Any, th: Any) -> None:
        self.tp = tp
        self.th = th

    def __repr__(self) -> str:
        return f"Pair({self.tp!r})"


def _torch():
    return pytest.importorskip("torch")


def data(dtype: str, shape: tuple[int, ...], *, seed: int = 0, low: int = -4, high: int = 4,
         nonzero: bool = False, special: bool = False) -> np.ndarray:
    """Deterministic test values of ``dtype`` (as NumPy), optionally without zeros or with nan/inf."""
    rng = np.random.default_rng(seed + zlib.crc32(f"{dtype}{shape}".encode()))
    if dtype == "bool":
        arr = np.asarray(rng.integers(0, 2, shape)).astype(bool)
        if nonzero:
            arr[...] = True
        return arr
    if dtype.startswith(("int", "uint")):
        lo = 0 if dtype == "uint8" else low
        arr = np.asarray(rng.integers(lo, high + 1, shape))
        if nonzero:
            arr[arr == 0] = 1
        return np.asarray(arr).astype(dtype)
    values = np.asarray(np.round(rng.uniform(low, high, shape), 1))
    if dtype.startswith("complex"):
        values = np.asarray(values + 1j * np.round(rng.uniform(low, high, shape), 1))
    if nonzero:
        values[values == 0] = 0.5
    if special and values.size >= 4:
        flat = values.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return np.asarray(values).astype(NP_DTYPES[dtype])


def pair_from_numpy(arr: np.ndarray) -> Pair:
    torch = _torch()
    if arr.dtype == ml_dtypes.bfloat16:
        th = torch.from_numpy(np.array(arr.astype(np.float32))).to(torch.bfloat16)
        if arr.ndim == 2 and not arr.flags.c_contiguous:
            th = torch.from_numpy(np.array(arr.T.astype(np.float32))).to(torch.bfloat16).t()
    else:
        th = torch.from_numpy(arr.copy(order="K") if arr.flags.c_contiguous else arr)
    return Pair(torchplug.from_numpy(arr.copy(order="K") if arr.flags.c_contiguous else arr), th)


def pair(dtype: str, shape: tuple[int, ...] = (3, 4), *, layout: str = "contiguous", **kw: Any) -> Pair:
    """Paired inputs; ``layout='transposed'`` gives non-contiguous 2-D tensors (a transposed array)."""
    if layout == "transposed":
        arr = data(dtype, tuple(reversed(shape)), **kw).T
        return pair_from_numpy(arr)
    return pair_from_numpy(data(dtype, shape, **kw))


def _name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def to_numpy(t: Any) -> np.ndarray:
    if isinstance(t, torchplug.Tensor):
        arr = np.asarray(t.numpy())
        return arr.astype(np.float32) if arr.dtype == ml_dtypes.bfloat16 else arr
    return np.asarray((t.float() if _name(t.dtype) == "bfloat16" else t).numpy())


def assert_same(actual: Any, expected: Any) -> None:
    """Same kind, dtype, shape and values (with a tolerance for floating dtypes)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    if not hasattr(expected, "dtype"):
        assert actual == expected
        return
    assert isinstance(actual, torchplug.Tensor), type(actual)
    dt = _name(expected.dtype)
    assert _name(actual.dtype) == dt, f"dtype {actual.dtype} != {expected.dtype}"
    assert tuple(actual.shape) == tuple(expected.shape), f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    a, e = to_numpy(actual), to_numpy(expected)
    if dt in TOLERANCES:
        rtol, atol = TOLERANCES[dt]
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, e)


def _side(args: tuple[Any, ...], which: str) -> list[Any]:
    out = []
    for a in args:
        if isinstance(a, Pair):
            out.append(getattr(a, which))
        elif isinstance(a, (tuple, list)) and any(isinstance(x, Pair) for x in a):
            out.append(type(a)(getattr(x, which) if isinstance(x, Pair) else x for x in a))
        else:
            out.append(a)
    return out


def compare(fn: Any, *args: Any, message: bool = True, skip_torch_typeerror: bool = True) -> Any:
    """Run ``fn(module, *args)`` with torch and torchplug; same result, or the same error.

    ``args`` may hold Pairs (each side gets its own tensor) and plain values (shared).  If torch
    rejects the call's Python types (TypeError), torchplug may accept a superset: the check is skipped.
    With ``message``, the first line of the error messages must match too.
    """
    torch = _torch()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(torch, *_side(args, "th"))
    except TypeError:
        if skip_torch_typeerror:
            return None
        raise
    except Exception as exc:  # noqa: BLE001 - any torch error must be reproduced
        with pytest.raises(type(exc)) as info:
            fn(torchplug, *_side(args, "tp"))
        if message:
            assert str(info.value).splitlines()[0] == str(exc).splitlines()[0]
        return exc
    actual = fn(torchplug, *_side(args, "tp"))
    assert_same(actual, expected)
    return actual


@pytest.fixture
def tc() -> types.SimpleNamespace:
    return types.SimpleNamespace(pair=pair, pair_from_numpy=pair_from_numpy, data=data, compare=compare,
                                 assert_same=assert_same, to_numpy=to_numpy, Pair=Pair, DTYPES=DTYPES)
