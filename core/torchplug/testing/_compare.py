"""Comparison helpers: ``assert_close`` (torch.testing's API) and result-vs-reference checks for the conformance suite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug.testing.opinfo import DEFAULT_TOLERANCES

__all__ = ["assert_close", "dtype_name", "to_numpy", "describe", "compare_results", "shares_storage"]


def dtype_name(dtype: Any) -> str:
    """'float32' for ``torch.float32``, ``torchplug.float32`` or a NumPy dtype."""
    return str(dtype).rsplit(".", 1)[-1]


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "stride")


def to_numpy(t: Any) -> np.ndarray:
    """The values of a torch or torchplug tensor (bfloat16 widened to float32)."""
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    if hasattr(t, "resolve_conj"):  # torch, and torchplug since it has lazy conjugate/negative views
        t = t.detach().cpu().resolve_conj().resolve_neg()
    elif str(t.device) != "cpu":
        t = t.cpu()
    return np.asarray(t.numpy())


def describe(t: Any) -> tuple[Any, ...]:
    """(shape, dtype name, strides, storage offset): what a meta comparison checks."""
    return tuple(t.shape), dtype_name(t.dtype), tuple(t.stride()), t.storage_offset()


def shares_storage(a: Any, b: Any) -> bool:
    """True if two tensors of one library share a storage."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if hasattr(sa, "data_ptr"):  # torch
        return sa.data_ptr() == sb.data_ptr() and sa.data_ptr() != 0
    return sa is sb


def _fail(msg: str, prefix: str) -> None:
    raise AssertionError(f"{prefix}{msg}" if prefix else msg)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False, msg: str | None = None) -> None:
    """Assert two tensors (or nested sequences / numbers) are close: ``torch.testing.assert_close``.

    Shapes must match; dtypes (``check_dtype``), devices (``check_device``) and strides
    (``check_stride``) too when asked.  Values compare with ``|a - e| <= atol + rtol * |e|``;
    the default tolerances depend on the dtype (exact for integers and bool).  Tensors may come
    from torchplug or torch (mixed is fine: only metadata and NumPy values are read).
    """
    _assert_close(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                  "" if msg is None else f"{msg}: ", "")


def _assert_close(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
                  check_device: bool, check_dtype: bool, check_stride: bool, prefix: str, where: str) -> None:
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            _fail(f"The mappings differ in their keys{where}.", prefix)
        for k in expected:
            _assert_close(actual[k], expected[k], rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                          prefix, f"{where}[{k!r}]")
        return
    if isinstance(expected, (list, tuple)) and not _is_tensor(expected):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            _fail(f"The sequences differ in length{where}: {len(actual) if isinstance(actual, (list, tuple)) else actual!r} "
                  f"!= {len(expected)}.", prefix)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_close(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride, prefix, f"{where}[{i}]")
        return
    if not _is_tensor(expected):
        if _is_tensor(actual):
            _fail(f"Expected a {type(expected).__name__}{where}, got a tensor.", prefix)
        e, a = np.asarray(expected), np.asarray(actual)
        if a.shape != e.shape or not np.allclose(a, e, rtol=rtol or 0, atol=atol or 0, equal_nan=equal_nan):
            _fail(f"Scalars are not close{where}: {actual!r} != {expected!r}.", prefix)
        return
    if not _is_tensor(actual):
        _fail(f"Expected a tensor{where}, got {type(actual).__name__}.", prefix)
    if tuple(actual.shape) != tuple(expected.shape):
        _fail(f"The values for attribute 'shape' do not match{where}: {tuple(actual.shape)} != {tuple(expected.shape)}.",
              prefix)
    dt_a, dt_e = dtype_name(actual.dtype), dtype_name(expected.dtype)
    if check_dtype and dt_a != dt_e:
        _fail(f"The values for attribute 'dtype' do not match{where}: {dt_a} != {dt_e}.", prefix)
    if check_device and str(actual.device) != str(expected.device):
        _fail(f"The values for attribute 'device' do not match{where}: {actual.device} != {expected.device}.", prefix)
    if check_stride and tuple(actual.stride()) != tuple(expected.stride()) and actual.numel() > 1:
        _fail(f"The values for attribute 'stride()' do not match{where}: {tuple(actual.stride())} != "
              f"{tuple(expected.stride())}.", prefix)
    if str(actual.device) == "meta" or str(expected.device) == "meta":
        return
    tol = DEFAULT_TOLERANCES.get(dt_e, (0.0, 0.0))
    r = tol[0] if rtol is None else rtol
    t = tol[1] if atol is None else atol
    _assert_values(to_numpy(actual), to_numpy(expected), r, t, equal_nan, prefix, where)


def _assert_values(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool, prefix: str,
                   where: str) -> None:
    if a.dtype == np.bool_ or e.dtype == np.bool_ or (a.dtype.kind in "iu" and e.dtype.kind in "iu"):
        bad = a != e
    else:
        a64 = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64)
        e64 = e.astype(a64.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(a64 - e64) <= atol + rtol * np.abs(e64)
            close |= a64 == e64  # infinities of the same sign
            if equal_nan:
                close |= np.isnan(a64) & np.isnan(e64)
        bad = ~close
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        n = int(np.count_nonzero(bad))
        _fail(f"Tensor-likes are not close{where}!\n\nMismatched elements: {n} / {bad.size}\n"
              f"First mismatch at index {idx}: {a[idx]!r} != {e[idx]!r} (rtol={rtol}, atol={atol})", prefix)


def compare_results(actual: Any, expected: Any, *, values: bool, strides: bool,
                    tolerance: Sequence[float] | None = None, tol_for: Any = None) -> None:
    """Conformance check of one result against the reference: same structure, shapes and dtypes,
    plus values (data backends) and/or strides and storage offsets (meta).  NaNs compare equal.

    ``tol_for(dtype_name) -> (rtol, atol)`` picks tolerances per result dtype.
    """
    if isinstance(expected, (list, tuple)) and not _is_tensor(expected):
        assert isinstance(actual, (list, tuple)), f"expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{len(actual)} results != {len(expected)}"
        for a, e in zip(actual, expected):
            compare_results(a, e, values=values, strides=strides, tolerance=tolerance, tol_for=tol_for)
        return
    if not _is_tensor(expected):
        assert not _is_tensor(actual), f"expected {expected!r}, got a tensor"
        assert actual == expected or (actual != actual and expected != expected), f"{actual!r} != {expected!r}"
        return
    assert _is_tensor(actual), f"expected a tensor, got {type(actual).__name__}"
    assert tuple(actual.shape) == tuple(expected.shape), f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    dt = dtype_name(expected.dtype)
    assert dtype_name(actual.dtype) == dt, f"dtype {dtype_name(actual.dtype)} != {dt}"
    if strides and (str(expected.device) == "meta" or expected.numel() > 0):
        assert tuple(actual.stride()) == tuple(expected.stride()), (
            f"strides {tuple(actual.stride())} != {tuple(expected.stride())} (shape {tuple(expected.shape)})")
        assert actual.storage_offset() == expected.storage_offset(), (
            f"storage_offset {actual.storage_offset()} != {expected.storage_offset()}")
    if values:
        rtol, atol = tol_for(dt) if tol_for is not None else (tolerance or DEFAULT_TOLERANCES.get(dt, (0.0, 0.0)))
        _assert_values(to_numpy(actual), to_numpy(expected), rtol, atol, True, "", "")
