"""``torchplug.testing.make_tensor`` (random test tensors, PyTorch's algorithm and defaults, so a seeded call gives
torch's values on the cpu) and the deprecated ``assert_allclose``."""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

__all__ = ["make_tensor", "assert_allclose"]


def _torch() -> Any:
    import torchplug

    return torchplug


def _low_high(dtype: Any, low: Any, high: Any, lowest: float, highest: float, default_low: float,
              default_high: float, integral: bool) -> tuple[Any, Any]:
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if integral:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Any:
    """A tensor of ``shape`` filled with random values in ``[low, high)`` (defaults: [-9, 10) for integers,
    [-9, 9] for floating and complex parts, {False, True} for bool); ``noncontiguous`` gives a strided view,
    ``exclude_zero`` replaces zeros by 1 (integers) or the dtype's smallest normal number."""
    T = _torch()
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype == T.bool:
        low, high = _low_high(dtype, low, high, 0, 2, 0, 2, True)
        result = T.randint(low, high, shape, device=device, dtype=dtype)
    elif not floating:
        info = T.iinfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max + (1 if dtype != T.int64 else 0), -9, 10, True)
        result = T.randint(low, high, shape, device=device, dtype=dtype)
    else:
        info = T.finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9, False)
        result = T.empty(shape, device=device, dtype=dtype)
        target = T.view_as_real(result) if dtype.is_complex else result
        if high - low >= info.max:  # uniform_ needs to - from to fit the dtype: scale around the draw
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]  # offset by one to catch offset handling too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = T.finfo(dtype).tiny if floating else 1
    if floating:
        result.requires_grad = requires_grad
    return result


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated since PyTorch 1.12: :func:`assert_close` with the old defaults (no dtype or stride check)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from torchplug.testing._compare import assert_close

    T = _torch()
    if not isinstance(actual, T.Tensor):
        actual = T.tensor(actual)
    if not isinstance(expected, T.Tensor):
        expected = T.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {T.float16: (1e-3, 1e-3), T.float32: (1e-4, 1e-5), T.float64: (1e-5, 1e-8)}
        rtol = max(table.get(actual.dtype, (0.0, 0.0))[0], table.get(expected.dtype, (0.0, 0.0))[0])
        atol = max(table.get(actual.dtype, (0.0, 0.0))[1], table.get(expected.dtype, (0.0, 0.0))[1])
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
