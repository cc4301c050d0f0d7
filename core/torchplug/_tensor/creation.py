"""Tensor creation: ``tensor``, ``as_tensor``, ``from_numpy``, factories with PyTorch's signatures, random."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._base import flags as _flags
from torchplug._dispatch.aten import A
from torchplug._runtime.backends import backend_for
from torchplug._runtime.device import as_device, device, get_default_device
from torchplug._runtime.generator import Generator, default_generator
from torchplug._tensor.tensor import Tensor
from torchplug._tensor.construct import mark_inference

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
    "ones_like", "full_like", "empty_strided", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial", "scalar_tensor",
]


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    mark_inference(t)  # made without dispatch: inference_mode's fallback does not see it
    if requires_grad:
        t.requires_grad_(True)
    return t


def _dev(dev: Any) -> device:
    return get_default_device() if dev is None else as_device(dev)


def _size_args(size: tuple[Any, ...]) -> list[int]:
    if len(size) == 1 and not isinstance(size[0], (int, np.integer)) and not (isinstance(size[0], Tensor) and size[0].dim() == 0):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, bool) or isinstance(s, float):
            raise TypeError(f"size must be a tuple of ints, but got element of type {type(s).__name__}")
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return out


def _requested_size(name: str, sizes: tuple[Any, ...], size: Any) -> list[int]:
    """The shape a factory was asked for, given as ``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    if size is not None:
        if sizes:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        sizes = (size,)
    if not sizes:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _size_args(sizes)


# ---- host data -> tensors ---------------------------------------------------------------------------
def _infer_array(data: Any, dtype: D.dtype | None) -> np.ndarray:
    """NumPy array of ``data`` with PyTorch's dtype inference for Python numbers."""
    if isinstance(data, np.ndarray):
        arr = data
        if dtype is None:
            D.from_numpy_dtype(arr.dtype)  # raises TypeError for unsupported dtypes
    else:
        data = _unwrap(data)
        try:
            _check_ragged(data)
        except ValueError:
            shape = _first_shape(data)
            if 0 in shape:  # torch stores nothing, so it looks at no other sequence
                return np.zeros(shape, (dtype or D.get_default_dtype()).numpy_dtype)
            _store_order_check(data, shape, dtype)  # the error torch's element-by-element store meets first
            raise
        arr = np.array(data)
        try:
            _check_python_values(arr, dtype)
        except RuntimeError:
            if arr.dtype.kind != "f" or dtype is None or dtype not in _INTEGRAL:
                raise
            # ints among floats: torch converts each number by its own type (-4 wraps into uint8, -4.0 does not)
            shape = _first_shape(data)
            _store_order_check(data, shape, dtype)
            values: list[int] = []
            _flat_ints(data, values)
            return np.array(values, np.int64).astype(dtype.numpy_dtype).reshape(shape)
        numpy_typed = _numpy_inferred(data) if dtype is None else None
        if numpy_typed is not None:  # NumPy scalars/arrays inside keep their dtypes, as in torch
            arr = arr.astype(numpy_typed.numpy_dtype)
        elif dtype is None:
            kind = arr.dtype.kind
            if kind == "f":
                arr = arr.astype(D.get_default_dtype().numpy_dtype)
            elif kind == "c":
                arr = arr.astype(D.get_default_complex_dtype().numpy_dtype)
            elif kind in "iu":
                arr = arr.astype(np.int64)
            elif kind == "b":
                pass
            elif arr.size == 0 and kind in "O":
                arr = arr.astype(D.get_default_dtype().numpy_dtype)
            else:
                raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if dtype is not None:
        with np.errstate(over="ignore", invalid="ignore"):  # floats overflow to inf, as in PyTorch
            arr = arr.astype(dtype.numpy_dtype)
    return arr


def _numpy_inferred(data: Any) -> D.dtype | None:
    """torch's ``infer_scalar_type`` where ``data`` (unwrapped) holds NumPy scalars or arrays: each
    one counts with its own dtype (``np.float64(3)`` is double), Python numbers with theirs (a float
    is the default dtype), promoted over the sequence.  None when there is no NumPy value at all, so
    plain Python data keeps the fast path above."""
    found = False

    def walk(x: Any) -> D.dtype | None:
        nonlocal found
        if isinstance(x, (np.ndarray, np.generic)):
            found = True
            return D.from_numpy_dtype(x.dtype)
        if isinstance(x, bool):
            return D.bool_
        if isinstance(x, int):
            return D.int64
        if isinstance(x, float):
            return D.get_default_dtype()
        if isinstance(x, complex):
            return D.get_default_complex_dtype()
        if isinstance(x, list):
            result = None
            for item in x:
                dt = walk(item)
                if dt is not None:
                    result = dt if result is None else D.promote_types(result, dt)
            return result
        return None

    dt = walk(data)
    return dt if found else None


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _check_python_values(arr: np.ndarray, dtype: D.dtype | None) -> None:
    """torch.tensor's conversion of Python numbers: ints beyond int64, and numbers an integer
    ``dtype`` cannot hold (NaN, inf, out of range), raise as in PyTorch instead of wrapping."""
    kind = arr.dtype.kind
    if arr.size == 0 or kind == "b" or dtype is D.bool_:
        return
    if kind == "O" or (kind == "u" and arr.dtype.itemsize == 8):
        # NumPy's types for Python ints beyond int64 (uint64, or object when mixed); smaller unsigned
        # arrays come from NumPy scalars (np.uint8(3)) and are checked as ints below
        if dtype is not None and (dtype.is_floating_point or dtype.is_complex):
            return  # unpacked as doubles
        values = list(arr.flat)
        if dtype is None and any(isinstance(v, float) for v in values):
            return  # inferred as floating point
        if any(not _INT64_MIN <= int(v) <= _INT64_MAX for v in values if isinstance(v, (int, np.integer))):
            raise ValueError("Overflow when unpacking long long")
        return
    if dtype is None or dtype.is_floating_point or dtype.is_complex:
        if kind == "c" and dtype is not None and not dtype.is_complex:
            raise TypeError("must be real number, not complex")
        return
    if kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    info = np.iinfo(dtype.numpy_dtype)
    if kind == "f":  # c10::checked_convert<int>(double): the value itself must lie in range
        bad = not np.isfinite(arr).all() or (arr > float(info.max)).any() or (arr < float(info.min)).any()
    else:  # from an integer: uint8 also takes -255..-1 (wrapping), like c10::overflows
        lo = -int(info.max) if dtype is D.uint8 else int(info.min)
        bad = bool((arr > int(info.max)).any() or (arr < lo).any())
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _unwrap(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    if isinstance(data, numbers.Number) or isinstance(data, np.generic):
        return data
    if hasattr(data, "__array__"):
        return np.asarray(data)
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if hasattr(data, "__len__") and hasattr(data, "__getitem__"):
        return [_unwrap(d) for d in data]
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _check_ragged(data: Any, dim: int = 0) -> tuple[int, ...]:
    """Shape of nested lists; raises PyTorch's ValueError for ragged input."""
    if not isinstance(data, list):
        return np.shape(data) if isinstance(data, np.ndarray) else ()
    shapes = [_check_ragged(d, dim + 1) for d in data]
    if shapes and any(s != shapes[0] for s in shapes):
        bad = next(s for s in shapes if s != shapes[0])
        first_len = shapes[0][0] if shapes[0] else 0
        got = bad[0] if bad else 0
        raise ValueError(f"expected sequence of length {first_len} at dim {dim + 1} (got {got})")
    return (len(data), *(shapes[0] if shapes else ()))


_INTEGRAL = frozenset((D.uint8, D.int8, D.int16, D.int32, D.int64))


def _first_shape(data: Any) -> tuple[int, ...]:
    """torch's compute_sizes: the lengths along the first element at each level."""
    shape: list[int] = []
    while isinstance(data, list):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    return (*shape, *np.shape(data)) if isinstance(data, np.ndarray) else tuple(shape)


def _store_order_check(data: Any, shape: tuple[int, ...], dtype: D.dtype | None, dim: int = 0,
                       real: bool | None = None) -> None:
    """Raise the first error torch's recursive_store meets, element by element in storage order: a
    sequence of another length, a number where a sequence belongs, a number ``dtype`` cannot hold."""
    if real is None:  # the result's kind: a list where a number belongs is refused in its words
        first = data
        while isinstance(first, list) and first:
            first = first[0]
        real = dtype.is_floating_point if dtype is not None else isinstance(first, float)
    if dim == len(shape):
        if isinstance(data, list):  # a sequence where the first element had a number
            raise TypeError("must be real number, not list" if real else "'list' object cannot be interpreted as an "
                            "integer")
        if dtype is not None and not isinstance(data, np.ndarray):
            _check_number(data, dtype)
        return
    if not isinstance(data, (list, np.ndarray)):
        raise TypeError("not a sequence")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _store_order_check(item, shape, dtype, dim + 1, real)


def _check_number(value: Any, dtype: D.dtype) -> None:
    if dtype is D.bool_ or isinstance(value, bool):
        return
    if isinstance(value, complex) and not dtype.is_complex:
        if dtype.is_floating_point:
            raise TypeError("must be real number, not complex")
        raise TypeError("'complex' object cannot be interpreted as an integer")
    if dtype in _INTEGRAL and isinstance(value, (int, float)):
        _check_python_values(np.array([value]), dtype)


def _flat_ints(data: Any, out: list[int]) -> None:
    """The numbers of (checked) nested lists as ints, in order: a float truncated, as C++ converts it."""
    if isinstance(data, list):
        for item in data:
            _flat_ints(item, out)
    else:
        out.append(int(data))


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences, NumPy arrays, numbers, tensors)."""
    dtype = _opt_dtype(dtype)
    if isinstance(data, Tensor):
        out = A._to_copy(data.detach() if data.requires_grad else data, dtype=dtype or data.dtype,
                         device=_dev(device) if device is not None else data.device)
        return _finish(out, requires_grad)
    arr = _infer_array(data, dtype)
    dev = _dev(device)
    return _finish(backend_for(dev.type).from_host(np.array(arr, copy=True), dev), requires_grad)


_LOW_PRECISION_MAX = {D.float16: 65504.0, D.bfloat16: float(D.finfo(D.bfloat16).max)}


def unchecked_low_precision(value: Any, dtype: D.dtype) -> Any:
    """``value`` rounded to float16/bfloat16 when it lies beyond their range (+-inf, or the largest
    finite value it rounds to), as PyTorch converts a Python number into a 0-dim tensor of those types
    without the overflow check ``fill_`` makes; any other value or dtype is returned unchanged."""
    limit = _LOW_PRECISION_MAX.get(dtype)
    if limit is None or value.__class__ is not float or not abs(value) > limit:
        return value
    with np.errstate(over="ignore"):
        return float(np.array(value).astype(dtype.numpy_dtype))


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-dim tensor (default float dtype unless given), with PyTorch's checked conversion of ``s``."""
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    return full([], unchecked_low_precision(s, dt), dtype=dt, device=device, requires_grad=requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, but shares memory with ``data`` when dtype and device allow."""
    dtype = _opt_dtype(dtype)
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    dev = _dev(device)
    backend = backend_for(dev.type)
    if isinstance(data, np.ndarray) and backend.is_host and (dtype is None or data.dtype == dtype.numpy_dtype):
        return from_numpy(data) if dev == get_default_device() or backend.is_host else tensor(data, dtype=dtype, device=dev)
    return mark_inference(backend.from_host(_infer_array(data, dtype), dev))


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """``as_tensor`` with an explicit copy policy (``copy=True`` always copies)."""
    if copy:
        return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)
    return _finish(as_tensor(obj, dtype=dtype, device=device), requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A host tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    D.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array with array.copy().)"
        )
    host = _host_backend()
    return mark_inference(host.from_host(ndarray, as_device(host.device_type), copy=False))


def _host_backend() -> Any:
    from torchplug._runtime.backends import registered_backends

    get_default_device()  # loads plugins if needed
    for b in registered_backends().values():
        if b.is_host:
            return b
    raise RuntimeError("from_numpy() needs a host backend (install torchplug-cpu).")


def _opt_dtype(dtype: Any) -> D.dtype | None:
    if dtype is None or isinstance(dtype, D.dtype):
        return dtype
    return {bool: D.bool_, int: D.int64, float: D.float64, complex: D.complex128}.get(dtype) or D.from_numpy_dtype(dtype)


# ---- factories ------------------------------------------------------------------------------------
def _factory(op: Any, size: list[int], out: Any, dtype: Any, device: Any, requires_grad: bool, *extra: Any) -> Tensor:
    if out is not None:
        result = op(size, *extra, dtype=_opt_dtype(dtype) or out.dtype, device=device or out.device)
        from torchplug._tensor.empty import resize_output

        resize_output(out, result.shape)
        return A.copy_(out, result)
    return _finish(op(size, *extra, dtype=_opt_dtype(dtype), device=device), requires_grad)


def empty(*sizes: Any, size: Any = None, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """An uninitialized tensor (filled with NaN / the largest value under deterministic algorithms)."""
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    result = _factory(A.empty, _requested_size("empty", sizes, size), out, dt, device, requires_grad)
    return _fill_uninitialized(result) if _flags._deterministic else result


def zeros(*sizes: Any, size: Any = None, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor filled with 0."""
    return _factory(A.zeros, _requested_size("zeros", sizes, size), out, dtype, device, requires_grad)


def ones(*sizes: Any, size: Any = None, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor filled with 1."""
    return _factory(A.ones, _requested_size("ones", sizes, size), out, dtype, device, requires_grad)


def full(size: Sequence[int], fill_value: Any, *, out: Any = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype is inferred from the value when not given)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _opt_dtype(dtype)
    shape = _size_args((size,))
    if dt is not None and math.prod(shape) == 1:  # (torch fills one element unchecked; more with fill_'s check)
        fill_value = unchecked_low_precision(fill_value, dt)
    return _factory(A.full, shape, out, dtype, device, requires_grad, fill_value)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor with the given strides."""
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    result = A.empty_strided(list(size), list(stride), dtype=dt, device=device)
    if _flags._deterministic:
        _fill_uninitialized(result)
    return _finish(result, requires_grad)


def _fill_uninitialized(t: Tensor) -> Tensor:
    from torchplug._tensor.empty import fill_if_deterministic

    with _no_grad_fill():
        return fill_if_deterministic(t)


def _no_grad_fill() -> Any:
    from torchplug._tensor.tensor import _no_grad

    return _no_grad()


def _like(fn: Any, fill: Any) -> Any:
    def like(input: Tensor, *args: Any, dtype: Any = None, layout: Any = None, device: Any = None,
             requires_grad: bool = False, memory_format: Any = None, **kwargs: Any) -> Tensor:
        dt = _opt_dtype(dtype) or input.dtype
        dev = device if device is not None else input.device
        if memory_format in (None, "preserve_format") and not input.is_contiguous():
            # preserve_format (the default) keeps a permuted input's dim order, as ATen's empty_like
            from torchplug._tensor.empty import _empty_like

            return _finish(fill(_empty_like(input, dt, dev, None)), requires_grad)
        return fn(*((list(input.shape),) + args), dtype=dt, device=dev, requires_grad=requires_grad, **kwargs)

    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"Like :func:`{fn.__name__}` with the shape, dtype, device and dim order of ``input``."
    return like


def _fill_empty(t: Tensor) -> Tensor:
    return _fill_uninitialized(t) if _flags._deterministic else t


empty_like = _like(empty, _fill_empty)
zeros_like = _like(zeros, A.zero_)
ones_like = _like(ones, lambda t: A["fill_.Scalar"](t, 1))


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor shaped like ``input`` filled with ``fill_value``."""
    # (PyTorch's full_like fills with fill_'s checked conversion, where full rounds half/bfloat16.)
    dt = _opt_dtype(dtype) or input.dtype
    dev = device if device is not None else input.device
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if memory_format in (None, "preserve_format") and not input.is_contiguous():
        from torchplug._tensor.empty import _empty_like

        return _finish(A["fill_.Scalar"](_empty_like(input, dt, dev, None), fill_value), requires_grad)
    return _finish(A.full(list(input.shape), fill_value, dtype=dt, device=dev), requires_grad)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Any = None, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) in steps of ``step``."""
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = values
    dt = _opt_dtype(dtype)
    if dt is None:
        dt = D.get_default_dtype() if any(isinstance(v, float) for v in values) else D.int64
    if dt in _ARANGE_DTYPES:  # (for another dtype the backend's kernel refuses it first, as torch's dispatch does)
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if (end - start) * step < 0:
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return _factory_direct(A.arange, out, requires_grad, start, end, step, dtype=dt, device=device)


# the dtypes torch's arange kernels compute (AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16))
_ARANGE_DTYPES = frozenset((D.uint8, D.int8, D.int16, D.int32, D.int64, D.float16, D.bfloat16, D.float32, D.float64))


def _factory_direct(op: Any, out: Any, requires_grad: bool, *args: Any, **kwargs: Any) -> Tensor:
    result = op(*args, **kwargs)
    if out is not None:
        from torchplug._tensor.empty import resize_output

        resize_output(out, result.shape)
        return A.copy_(out, result)
    return _finish(result, requires_grad)


def linspace(start: Any, end: Any, steps: int, *, out: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    _complex_bounds_check("linspace", start, end, dt)
    return _factory_direct(A.linspace, out, requires_grad, start, end, steps, dtype=dt, device=device)


def _complex_bounds_check(name: str, start: Any, end: Any, dt: D.dtype) -> None:
    """torch refuses complex bounds for a real result dtype (rather than dropping the imaginary part)."""
    if dt.is_complex or not any(isinstance(v, complex) or (isinstance(v, Tensor) and v.dtype.is_complex)
                                for v in (start, end)):
        return
    inferred = "c10::complex<double>" if D.get_default_dtype() is D.float64 else "c10::complex<float>"
    raise RuntimeError(f"torchplug.{name}(): inferred dtype {inferred} can't be safely cast to passed dtype "
                       f"{D._torch_scalar_name(dt)}")


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Any = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    _complex_bounds_check("logspace", start, end, dt)
    return _factory_direct(A.logspace, out, requires_grad, start, end, steps, float(base), dtype=dt, device=device)


def eye(n: int, m: int | None = None, *, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = _opt_dtype(dtype) or D.get_default_dtype()
    return _factory_direct(A.eye, out, requires_grad, n, m, dtype=dt, device=device)


# ---- random -----------------------------------------------------------------------------------------
def rand(*sizes: Any, size: Any = None, generator: Generator | None = None, out: Any = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    t = empty(_requested_size("rand", sizes, size), out=out, dtype=dtype, device=device)
    A.uniform_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


def randn(*sizes: Any, size: Any = None, generator: Generator | None = None, out: Any = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Standard normal samples."""
    t = empty(_requested_size("randn", sizes, size), out=out, dtype=dtype, device=device)
    A.normal_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


def randint(*args: Any, size: Any = None, generator: Generator | None = None, out: Any = None, dtype: Any = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Integers uniformly drawn from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``."""
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = empty(_size_args((size,)), out=out, dtype=_opt_dtype(dtype) or D.int64, device=device)
    A["random_.from"](t, int(low), int(high), generator=generator)
    return _finish(t, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, out: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0..n-1``."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    result = A.randperm(n, generator=generator, dtype=_opt_dtype(dtype) or D.int64, device=device)
    return _factory_direct(lambda: result, out, requires_grad)


def _empty_preserving(input: Tensor, dtype: Any, device: Any) -> Tensor:
    """``empty_like(input)`` with ``preserve_format``: the input's strides when it is non-overlapping
    and dense, else contiguous, so a random fill visits elements in torch's order."""
    shape, strides = list(input.shape), list(input.stride())
    dense, expected = True, 1
    for d in sorted(range(len(shape)), key=lambda d: strides[d]):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            dense = False
            break
        expected *= shape[d]
    dt = _opt_dtype(dtype) or input.dtype
    dev = device or input.device
    if dense and input.numel() > 1:
        return A.empty_strided(shape, strides, dtype=dt, device=dev)
    return A.empty(shape, dtype=dt, device=dev)


def _random_like(op: str, input: Tensor, generator: Any, dtype: Any, device: Any, memory_format: Any) -> Tensor:
    # aten::rand_like / rand_like.generator (ATen's overloads): the op a dispatch mode or the profiler sees
    dt = _opt_dtype(dtype)
    if generator is None:
        return A[op](input, dtype=dt, device=device, memory_format=memory_format)
    return A[op + ".generator"](input, generator=generator, dtype=dt, device=device, memory_format=memory_format)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None, **_: Any) -> Tensor:
    """Uniform samples on [0, 1) shaped (and laid out) like ``input``."""
    return _finish(_random_like("rand_like", input, generator, dtype, device, memory_format), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None, **_: Any) -> Tensor:
    """Standard normal samples shaped (and laid out) like ``input``."""
    return _finish(_random_like("randn_like", input, generator, dtype, device, memory_format), requires_grad)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None,
                 dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    """Integers from ``[low, high)`` shaped (and laid out) like ``input``."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = _empty_preserving(input, dtype, device)
    A["random_.from"](t, int(low), int(high), generator=generator)
    return _finish(t, requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None, out: Any = None,
           dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Normal samples with the given mean(s) and standard deviation(s)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        # As ATen's normal_out_impl: a tensor mean with a float std draws normal_(0, std) and adds
        # the mean; a tensor std draws normal_(0, 1), multiplies by std and adds the mean.
        ref = mean if isinstance(mean, Tensor) else std
        if not isinstance(std, Tensor):
            if not std >= 0:
                raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
            noise = A.normal_(A.empty(list(ref.shape), dtype=ref.dtype, device=ref.device), 0.0, float(std),
                              generator=generator)
            result = A.add(noise, mean)
        else:
            if std.numel() and bool((std < 0).any()):
                raise RuntimeError("normal expects all elements of std >= 0.0")
            shape = list(A.add(A.mul(mean, 0), A.mul(std, 0)).shape) if isinstance(mean, Tensor) else list(std.shape)
            noise = A.normal_(A.empty(shape, dtype=ref.dtype, device=ref.device), 0.0, 1.0, generator=generator)
            result = A.add(A.mul(noise, std), mean)
        if out is not None:
            from torchplug._tensor.empty import resize_output

            resize_output(out, result.shape)
            return A.copy_(out, result)
        return result
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    t = empty(_size_args((size,)), out=out, dtype=dtype, device=device)
    A.normal_(t, float(mean), float(std), generator=generator)
    return _finish(t, requires_grad)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None, out: Any = None) -> Tensor:
    """Draw 0/1 with probability ``input`` (or ``p``) for each element."""
    if p is not None:
        result = A["bernoulli_.float"](A.empty(list(input.shape), dtype=input.dtype, device=input.device), float(p), generator=generator)
    else:
        result = A.bernoulli(input, generator=generator)
    return _factory_direct(lambda: result, out, False)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None,
                out: Any = None) -> Tensor:
    """Sample indices from the categorical distributions in the rows of ``input``."""
    return _factory_direct(A.multinomial, out, False, input, num_samples, replacement, generator=generator)


# ---- legacy constructor and pickling ------------------------------------------------------------------
def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*sizes)`` / ``Tensor()``: default float dtype.  For a subclass,
    ``MyTensor(*sizes)`` / ``MyTensor(data)`` is an instance of it (Python then runs its ``__init__``)."""
    if kwargs.get("device") is not None:
        kwargs["device"] = as_device(kwargs["device"])
    if not args:
        return _of_class(empty(0, **kwargs), cls)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return _of_class(empty(*args, **kwargs), cls)
    if len(args) == 1 and isinstance(args[0], tuple) and type(args[0]).__name__ == "Size":
        return _of_class(empty(*args[0], **kwargs), cls)
    return _of_class(tensor(args[0], dtype=D.get_default_dtype(), **kwargs), cls)


_STATE_SLOTS = tuple(s for s in Tensor.__slots__ if s not in ("__dict__", "__weakref__"))


def _of_class(t: Tensor, cls: type) -> Tensor:
    # a new tensor made by the legacy constructor, given the subclass it was called on
    if cls is Tensor or not (isinstance(cls, type) and issubclass(cls, Tensor)):
        return t
    out = object.__new__(cls)
    for slot in _STATE_SLOTS:
        setattr(out, slot, getattr(t, slot))
    if t.__dict__:
        out.__dict__.update(t.__dict__)
    return out


def rebuild_tensor(values: Any, dtype_name: str, device_str: str, shape: tuple[int, ...], requires_grad: bool) -> Tensor:
    """Inverse of ``Tensor.__reduce_ex__``."""
    dt = D.from_name(dtype_name) if hasattr(D, "from_name") else getattr(D, dtype_name if dtype_name != "bool" else "bool_")
    if values is None:
        t = empty(*shape, dtype=dt, device=device_str)
    else:
        t = tensor(values, dtype=dt, device=device_str)
    return _finish(t, requires_grad)


_ = (math, default_generator)
