"""Top-level names and Tensor methods real scripts use beyond the op table's generated bindings.

The in-place ``torchplug.abs_``-style functions, ``isin``, ``bilinear``, ``rsub``, window functions,
``frombuffer``, ``range``, ``row_stack``, predicates, split variants, ``histogram``/``histogramdd``,
``cumulative_trapezoid``/``trapezoid``, ``mvlgamma``/``isreal`` and the thread/warning/anomaly switches
are compositions of existing ops (every backend has them, autograd differentiates them);
``i0``/``polygamma``/``frexp`` are primitives of ``_schemas/names.py`` bound here where their Python
signature differs from the schema.  Linear algebra is in ``surface_linalg``, storages and legacy
Tensor methods in ``surface_tensor``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._runtime.allocator import OutOfMemoryError
from torchplug._runtime.storage import SharedStorage
from torchplug._dispatch.aten import A
from torchplug._ops.surface import return_types
from torchplug._tensor.construct import unlink_view
from torchplug._tensor.tensor import Tensor, autograd_hooks
from torchplug._ops.torch_namespace import TORCH

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

# polygamma's Python signature puts n first and the method takes only n; frexp returns a named tuple;
# special_i1 exists only as i0's derivative (torch has no torch.special_i1)
HANDWRITTEN = {"polygamma", "frexp", "special_i1"}

for _name, _fields in (("frexp", "mantissa exponent"), ("histogram", "hist bin_edges"),
                       ("histogramdd", "hist bin_edges")):
    if not hasattr(return_types, _name):
        setattr(return_types, _name, namedtuple(_name, _fields.split()))


def _torch() -> Any:
    return TORCH


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


# ---- special functions ---------------------------------------------------------------------------------
def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th derivative of the digamma function (``n >= 0``)."""
    if out is not None:
        return A["polygamma.out"](n, input, out=out)
    return A.polygamma(n, input)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return A.polygamma(n, self)


def _polygamma_(self: Tensor, n: int) -> Tensor:
    from torchplug._ops.composites import check_castable

    result = A.polygamma(n, self)
    check_castable(result.dtype, self.dtype)  # an integer self cannot hold the float result
    return self.copy_(result)


def frexp(input: Tensor, *, out: Any = None) -> Any:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and ``0.5 <= |mantissa| < 1``."""
    mantissa, exponent = A["frexp.Tensor"](input)
    if out is not None:
        out[0].resize_(mantissa.shape).copy_(mantissa)
        out[1].resize_(exponent.shape).copy_(exponent)
        mantissa, exponent = out
    return return_types.frexp(mantissa, exponent)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """Multivariate log-gamma of dimension ``p``: ``sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    torch = _torch()
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    # as ATen: arange(-p/2 + 1/2, 1/2, 1/2) + x, lgamma, summed over the new last dim
    args = torch.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device) + x.unsqueeze(-1)
    result = args.lgamma().sum(-1) + p * (p - 1) * math.log(math.pi) / 4
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result


def _mvlgamma_(self: Tensor, p: int) -> Tensor:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        from torchplug._ops.composites import scalar_type_name

        # PyTorch's wording, which names the two types the other way round
        raise RuntimeError(f"mvlgamma: result type {scalar_type_name(self.dtype)} can't be cast to the desired output "
                           f"type {scalar_type_name(D.get_default_dtype())}")
    return self.copy_(mvlgamma(self, p))


def isreal(input: Tensor) -> Tensor:
    """True where the element is real (a complex element with zero imaginary part; every real-dtype element)."""
    torch = _torch()
    if input.is_complex():
        return torch.imag(input) == 0
    return torch.ones_like(input, dtype=D.bool_)


# ---- set membership, bilinear, rsub ---------------------------------------------------------------------------
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a scalar)."""
    torch = _torch()
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (Number, Number): at least one "
                        "of elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    el = elements if isinstance(elements, Tensor) else torch.tensor(elements, device=like.device)
    te = test_elements if isinstance(test_elements, Tensor) else torch.tensor(test_elements, device=like.device)
    common = torch.promote_types(el.dtype, te.dtype)
    el, te = el.to(common), te.to(common)
    if te.numel() == 0:
        found = torch.zeros(el.shape, dtype=D.bool_, device=el.device)
    else:
        ordered = torch.sort(te.reshape(-1)).values
        pos = torch.searchsorted(ordered, el.reshape(-1)).clamp(max=ordered.numel() - 1)
        found = (ordered[pos] == el.reshape(-1)).reshape(el.shape)
    return ~found if invert else found


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` over the last dims (``torch.bilinear``, as ``nn.functional.bilinear``)."""
    torch = _torch()
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {tuple(input1.shape[:-1])} and "
                           f"{tuple(input2.shape[:-1])}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight input must have 3 dimensions, got {weight.dim()}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    y = torch.einsum("...i,kij,...j->...k", input1, weight, input2)
    return y if bias is None else y + bias


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    torch = _torch()
    if not isinstance(other, Tensor):
        # a 0-dim tensor of the promoted dtype: sub then promotes exactly as torch's Scalar overload does
        other = torch.scalar_tensor(other, device=input.device, dtype=torch.result_type(input, other))
    return torch.sub(other, input, alpha=alpha)


# ---- window functions ------------------------------------------------------------------------------------
def _window(name: str, length: int, periodic: bool, dtype: Any, layout: Any, device: Any,
            requires_grad: bool, fn: Callable[[Tensor, int], Tensor]) -> Tensor:
    torch = _torch()
    dtype = D.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        from torchplug._ops.composites import scalar_type_name

        raise RuntimeError(f"{name} expects floating point dtypes, got: {scalar_type_name(dtype)}")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    if length == 0:
        result = torch.empty(0, dtype=dtype, device=device)
    elif length == 1:
        result = torch.ones(1, dtype=dtype, device=device)
    else:
        n = length + 1 if periodic else length
        result = fn(torch.arange(n, dtype=D.float64, device=device), n).to(dtype)
        if periodic:
            result = result[:-1].contiguous()
    return result.requires_grad_(requires_grad) if requires_grad else result


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (``periodic``: length N+1 with the last point dropped)."""
    return hamming_window(window_length, periodic, alpha=0.5, beta=0.5, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad, _name="hann_window")


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
                   _name: str = "hamming_window") -> Tensor:
    """The generalized Hamming window ``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window(_name, window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n, size: alpha - beta * (n * (2 * math.pi / (size - 1))).cos())


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    def fn(n: Tensor, size: int) -> Tensor:
        step = n * (2 * math.pi / (size - 1))
        return 0.42 - 0.5 * step.cos() + 0.08 * (2 * step).cos()

    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad, fn)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangular Bartlett window ``1 - |2n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda n, size: 1 - (n * (2 / (size - 1)) - 1).abs())


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` with ``a = (N - 1) / 2``."""
    def fn(n: Tensor, size: int) -> Tensor:
        a = (size - 1) / 2
        arg = (1 - ((n - a) / a).pow(2)).clamp(min=0).sqrt() * beta
        return A.i0(arg) / A.i0(arg.new_full((), beta))

    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad, fn)


# ---- construction ----------------------------------------------------------------------------------------
def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D cpu tensor sharing the memory of an object implementing the buffer protocol (no copy)."""
    import numpy as np

    torch = _torch()
    view = memoryview(buffer)
    length = view.nbytes
    if not (length > 0 and count != 0):
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not (0 <= offset < length):
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    itemsize = dtype.itemsize
    if count < 0 and (length - offset) % itemsize != 0:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({itemsize})")
    if count > 0 and count * itemsize > length - offset:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    array = np.frombuffer(buffer, dtype=np.uint8, count=length - offset if count < 0 else count * itemsize,
                          offset=offset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the readonly warning above is torch's; from_numpy's would repeat it
        result = torch.from_numpy(array).view(dtype)
    return result.requires_grad_(requires_grad) if requires_grad else result


def range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None, dtype: Any = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:  # noqa: A001
    """Deprecated: values ``start, start + step, ..., end`` (end included), default dtype float."""
    torch = _torch()
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dtype = D.get_default_dtype() if dtype is None else dtype
    n = int(math.floor((end - start) / step)) + 1
    values = torch.arange(n, dtype=D.float64, device=device) * step + start
    result = values.to(dtype)
    if out is not None:
        return out.resize_(result.shape).copy_(result)
    return result.requires_grad_(requires_grad) if requires_grad else result


# ---- predicates and small helpers ------------------------------------------------------------------------------
def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor (RuntimeError for none or several elements)."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def is_signed(input: Tensor) -> bool:
    """Whether the tensor's dtype is signed."""
    return input.is_signed()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether two tensors have the same shape."""
    return input.shape == other.shape


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` is an inference tensor (made under ``inference_mode``, or a view of one)."""
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """The device index of ``input`` (-1 on the cpu)."""
    return input.get_device()


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``input`` split along ``dim`` into pieces of the given sizes (which must add up to its size)."""
    return tuple(A.split_with_sizes(input, list(split_sizes), dim))


def _split_with_sizes_method(self: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return split_with_sizes(self, split_sizes, dim)


def _untracked(pieces: Any, op: str) -> tuple[Tensor, ...]:
    """The pieces as torch's unsafe variants return them: not registered as views of one base, so an in-place
    write to one is allowed (no multi-output-view error) and is recorded on that piece alone; each piece has a
    version counter of its own (the memory stays shared), and their node is named after ``op``
    (UnsafeSplitBackward0)."""
    for piece in pieces:
        unlink_view(piece)
        piece._storage = SharedStorage(piece._storage)
        if piece.__dict__:
            piece.__dict__.pop("_multi_view", None)
    node = pieces[0]._grad_fn if pieces else None
    if node is not None:
        autograd_hooks.tensor_api.rename_node(node, op)
    return tuple(pieces)


def _split_size(args: tuple[Any, ...], kwargs: dict[str, Any], position: int) -> tuple[int, int]:
    """``unsafe_split``'s ``(split_size, dim)`` from its arguments after ``input``: one int (a one-element integer
    tensor counts), never a list of sizes (``split`` takes those; ``unsafe_split_with_sizes`` is the unsafe
    variant), refused with the message of PyTorch's argument parser (which names the position only of a
    positional argument)."""
    if len(args) > 2 or set(kwargs) - {"split_size", "dim"} or (args and "split_size" in kwargs):
        raise TypeError("unsafe_split() received an invalid combination of arguments - expected "
                        "(Tensor input, int split_size, int dim = 0)")
    if args:
        split_size, where = args[0], f" (position {position})"
    elif "split_size" in kwargs:
        split_size, where = kwargs["split_size"], ""
    else:
        raise TypeError("unsafe_split() missing required argument 'split_size'")
    dim = args[1] if len(args) == 2 else kwargs.get("dim", 0)
    if isinstance(split_size, Tensor):
        dt = split_size.dtype
        if split_size.numel() == 1 and not (dt.is_floating_point or dt.is_complex or dt is D.bool_):
            return int(split_size.item()), dim
    elif isinstance(split_size, (int, np.integer)) and not isinstance(split_size, (bool, np.bool_)):
        return int(split_size), dim
    raise TypeError(f"unsafe_split(): argument 'split_size'{where} must be int, not {type(split_size).__name__}")


def unsafe_split(input: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
    """``unsafe_split(input, split_size, dim=0)``: ``split`` whose outputs are not tracked as views of ``input``
    (see :func:`_untracked`)."""
    split_size, dim = _split_size(args, kwargs, 2)
    return _untracked(input.split(split_size, dim), "aten::unsafe_split.Tensor")


def _unsafe_split_method(self: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
    """``Tensor.unsafe_split(split_size, dim=0)``: :func:`unsafe_split` (``split_size`` is its first argument)."""
    split_size, dim = _split_size(args, kwargs, 1)
    return _untracked(self.split(split_size, dim), "aten::unsafe_split.Tensor")


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes`` whose outputs are not tracked as views (see :func:`_untracked`)."""
    return _untracked(split_with_sizes(input, split_sizes, dim), "aten::unsafe_split_with_sizes")


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` whose outputs are not tracked as views (see :func:`_untracked`); ATen's unsafe_chunk is an
    unsafe_split, so its node is UnsafeSplitBackward0."""
    return _untracked(input.chunk(chunks, dim), "aten::unsafe_split.Tensor")


def row_stack(tensors: Any, *, out: Tensor | None = None) -> Tensor:
    """Alias of ``vstack``."""
    torch = _torch()
    return torch.vstack(tensors) if out is None else torch.vstack(tensors, out=out)


def ravel(input: Tensor) -> Tensor:
    """A 1-D view of ``input`` when possible, else a contiguous flattened copy."""
    return input.reshape(-1)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero(input)`` truncated or padded with ``fill_value`` rows to exactly ``size`` rows."""
    torch = _torch()
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size}")
    found = torch.nonzero(input)
    if found.shape[0] >= size:
        return found[:size].clone()
    pad = torch.full((size - found.shape[0], found.shape[1]), fill_value, dtype=found.dtype, device=found.device)
    return torch.cat([found, pad])


def as_strided_scatter(input: Tensor, src: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` with ``src`` written into its ``as_strided(size, stride, storage_offset)`` view."""
    out = input.clone(memory_format=_torch().contiguous_format)
    offset = input.storage_offset() if storage_offset is None else storage_offset
    out.as_strided(size, stride, offset).copy_(src)
    return out


def _as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    from torchplug._ops.pyfuncs.more import _adopt, _bump_inplace_view, _grad_recording

    recording = _grad_recording(self)
    if recording and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    _adopt(self, A.as_strided(self, list(size), list(stride), storage_offset))
    if recording and self._grad_fn is not None:  # PyTorch names as_strided_'s node AsStridedBackward1
        autograd_hooks.tensor_api.rename_node(self._grad_fn, "aten::as_strided_")
    _bump_inplace_view(self)
    return self


# ---- more small functions scripts call -----------------------------------------------------------------------
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator: Any = None) -> Tensor:
    """Randomized leaky ReLU (``nn.functional.rrelu``; ``generator`` drives the training-mode slopes)."""
    return _rrelu(input, lower, upper, training, generator, inplace=False)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator: Any = None) -> Tensor:
    """In-place :func:`rrelu`."""
    return _rrelu(input, lower, upper, training, generator, inplace=True)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, generator: Any, inplace: bool) -> Tensor:
    from torchplug._ops import nn_functional as F

    if generator is None or not training:
        return F.rrelu(input, lower, upper, training, inplace)
    torch = _torch()
    # as the functional form: one double U(lower, upper) draw per element <= 0, in row-major order
    with torch.no_grad():
        neg = input <= 0
        draws = torch.empty(int(neg.sum()), dtype=D.float64, device=input.device).uniform_(lower, upper,
                                                                                            generator=generator)
        noise = torch.ones(list(input.shape), dtype=input.dtype, device=input.device)
        noise[neg] = draws.to(input.dtype)
    return input.mul_(noise) if inplace else input * noise


def typename(obj: Any) -> str:
    """PyTorch's type name of ``obj``: ``'torch.FloatTensor'`` for a tensor, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
        return qualname if module in ("", "builtins") else f"{module}.{qualname}"
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def is_distributed(input: Tensor) -> bool:
    """Whether ``input`` is a distributed tensor: never in torchplug (as for every dense torch tensor)."""
    return False


def is_vulkan_available() -> bool:
    """Whether the Vulkan backend is available: torchplug has none."""
    return False


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (the functional ``fill_``)."""
    return input.clone().fill_(value)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of each flat index (one tensor per dim)."""
    torch = _torch()
    if not isinstance(indices, Tensor):
        indices = torch.tensor(indices)
    if indices.is_complex() or indices.is_floating_point() or indices.dtype == D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs, acc = [], 1
    for d in reversed(shape):
        coefs.append(acc)
        acc *= d
    coefs.reverse()
    coef_t = torch.tensor(coefs, dtype=D.int64, device=indices.device)
    shape_t = torch.tensor(shape, dtype=D.int64, device=indices.device)
    coords = indices.unsqueeze(-1).floor_divide(coef_t) % shape_t
    return tuple(coords.unbind(-1))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N-1) ... x ** 0`` (reversed if ``increasing``)."""
    torch = _torch()
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = torch.promote_types(x.dtype, D.int64)
    ones = torch.ones(x.shape[0], min(n, 1), dtype=dtype, device=x.device)
    if n > 1:
        powers = x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1)
        result = torch.cat([ones, powers], 1)
    else:
        result = ones
    return result if increasing else result.flip(1)


# ---- histograms --------------------------------------------------------------------------------------------
def _check_histogram_input(name: str, input: Tensor) -> None:
    from torchplug._runtime.backends import backend_for

    if not input.dtype.is_floating_point:
        from torchplug._ops.composites import scalar_type_name

        raise NotImplementedError(f'"histogramdd" not implemented for \'{scalar_type_name(input.dtype)}\'')
    if not backend_for(input.device.type).has_data:  # NotImplementedError, as torch's missing Meta kernel
        raise NotImplementedError(f"torch.{name}: the bin counts depend on the values, which a "
                                  f"{input.device.type} tensor does not have; compute it on a device with data")


def _edges(input: Tensor, bins: int, rng: Any) -> Tensor:
    torch = _torch()
    if bins <= 0:
        raise RuntimeError(f"torch.histogramdd(): expected bins to be positive, got {bins}")
    if rng is not None:
        lo, hi = float(rng[0]), float(rng[1])
    elif input.numel():
        lo, hi = float(input.min()), float(input.max())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd(): min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:  # as numpy and ATen: a one-value range is widened by one half each side
        lo, hi = lo - 0.5, hi + 0.5
    return torch.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)


def _bucket(x: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """Bin index of each value (the last edge belongs to the last bin) and whether it is inside."""
    torch = _torch()
    nbins = edges.numel() - 1
    idx = torch.searchsorted(edges, x.contiguous(), right=True) - 1
    idx = torch.where(x == edges[-1], torch.full_like(idx, nbins - 1), idx)
    inside = (x >= edges[0]) & (x <= edges[-1])
    return idx.clamp(0, max(nbins - 1, 0)), inside


def histogramdd(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,  # noqa: A002
                density: bool = False) -> Any:
    """Histogram of the points ``input[..., :D]`` in D dimensions: ``(hist, bin_edges)``."""
    torch = _torch()
    _check_histogram_input("histogramdd", input)
    if input.dim() < 1:
        raise RuntimeError("torch.histogramdd(): input tensor should have at least 1 dimension, but got 0")
    ndim = input.shape[-1]
    points = input.reshape(-1, ndim)
    if isinstance(bins, int):
        bins = [bins] * ndim
    if len(bins) != ndim:
        raise RuntimeError(f"torch.histogramdd(): expected {ndim} sequences of bin edges for each of the {ndim} "
                           f"dimensions of the input, but got {len(bins)}")
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dtype != input.dtype:
                raise RuntimeError("torch.histogramdd(): input tensor and bins tensors should have the same dtype, "
                                   f"but got input {input.dtype} and bins {b.dtype}")
            edges.append(b)
        else:
            rng = None if range is None else (range[2 * d], range[2 * d + 1])
            edges.append(_edges(points[:, d], int(b), rng))
    counts = [e.numel() - 1 for e in edges]
    flat = torch.zeros(points.shape[0], dtype=D.int64, device=input.device)
    keep = torch.ones(points.shape[0], dtype=D.bool_, device=input.device)
    for d, e in enumerate(edges):
        idx, inside = _bucket(points[:, d], e)
        flat = flat * counts[d] + idx
        keep = keep & inside
    w = torch.ones(points.shape[0], dtype=input.dtype, device=input.device) if weight is None else \
        weight.reshape(-1).to(input.dtype)
    total = 1
    for c in counts:
        total *= c
    hist = torch.zeros(total, dtype=input.dtype, device=input.device).index_add(0, flat[keep], w[keep])
    hist = hist.reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * ndim
            shape[d] = counts[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return return_types.histogramdd(hist, list(edges))


def histogram(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,  # noqa: A002
              density: bool = False, out: Any = None) -> Any:
    """Histogram of ``input``'s values: ``bins`` equal-width bins over ``range`` (default min..max) or the given
    edges; ``(hist, bin_edges)``, both of ``input``'s dtype."""
    _check_histogram_input("histogram", input)
    hist, edges = histogramdd(input.reshape(-1, 1), [bins] if isinstance(bins, Tensor) else bins, range=range,
                              weight=None if weight is None else weight.reshape(-1), density=density)
    hist, edges = hist.reshape(-1), edges[0]
    if out is not None:
        out[0].resize_(hist.shape).copy_(hist)
        out[1].resize_(edges.shape).copy_(edges)
        hist, edges = out
    return return_types.histogram(hist, edges)


# ---- integration --------------------------------------------------------------------------------------------
def _spacing(y: Tensor, x: Tensor | None, dx: Any, dim: int) -> Any:
    if x is None:
        return 1 if dx is None else dx
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0] - 1
        return x.diff().reshape(shape)
    return x.diff(dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Cumulative trapezoidal integral of ``y`` along ``dim`` (spacing ``x`` or ``dx``); one element shorter."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - x and dx")
    dim = dim % max(y.dim(), 1)
    n = y.shape[dim]
    if n == 0:
        return y.narrow(dim, 0, 0)
    avg = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    return (avg * _spacing(y, x, dx, dim)).cumsum(dim)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Trapezoidal integral of ``y`` along ``dim`` (spacing ``x`` or ``dx``)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - x and dx")
    dim = dim % max(y.dim(), 1)
    n = y.shape[dim]
    if n == 0:
        return y.sum(dim)
    avg = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    return (avg * _spacing(y, x, dx, dim)).sum(dim)


def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- global switches ------------------------------------------------------------------------------------------
_interop_threads = [os.cpu_count() or 1]
_warn_always = [False]


def get_num_interop_threads() -> int:
    """The number of threads for inter-op parallelism (torchplug runs ops one at a time: a setting only)."""
    return _interop_threads[0]


def set_num_interop_threads(num: int) -> None:
    """Set the inter-op thread count (positive); kept for ``get_num_interop_threads``."""
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _interop_threads[0] = num


def set_warn_always(b: bool) -> None:
    """When on, warnings PyTorch issues once per process are issued every time."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on."""
    return _warn_always[0]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd's anomaly detection on or off (the autograd plugin's ``set_detect_anomaly``)."""
    _torch().autograd.set_detect_anomaly(enabled, check_nan)


def is_anomaly_enabled() -> bool:
    """Whether autograd's anomaly detection is on."""
    return _torch().autograd.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward results for NaN."""
    return _torch().autograd.is_anomaly_check_nan_enabled()


def set_default_tensor_type(t: Any) -> None:
    """Deprecated: set the default dtype (and device, for a device's type) from a legacy tensor type."""
    from torchplug._tensor.legacy_types import _parse_type_string, tensortype

    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    torch = _torch()
    if isinstance(t, str):
        device_type, dtype = _parse_type_string(t)
    elif isinstance(t, tensortype):
        device_type, dtype = t._device_type, t.dtype
    else:
        raise TypeError(f"invalid type object: only floating-point types are supported as the default type")
    if not dtype.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type")
    torch.set_default_dtype(dtype)
    if device_type is not None and device_type != "cpu":
        torch.set_default_device(device_type)
    elif device_type == "cpu" and torch.get_default_device().type != "cpu":
        torch.set_default_device("cpu")


# ---- the in-place functions torch publishes at top level (torch.abs_(t) is t.abs_()) -----------------------------
_INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_",
    "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)


def _inplace_function(name: str) -> Callable[..., Any]:
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``, in place."
    return function


FUNCTIONS: dict[str, Any] = {
    "polygamma": polygamma, "frexp": frexp, "mvlgamma": mvlgamma, "isreal": isreal, "isin": isin,
    "bilinear": bilinear, "rsub": rsub, "hann_window": hann_window, "hamming_window": hamming_window,
    "blackman_window": blackman_window, "bartlett_window": bartlett_window, "kaiser_window": kaiser_window,
    "frombuffer": frombuffer, "range": range, "is_nonzero": is_nonzero, "is_signed": is_signed,
    "is_same_size": is_same_size, "is_inference": is_inference, "get_device": get_device,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes, "unsafe_chunk": unsafe_chunk, "ravel": ravel, "row_stack": row_stack,
    "nonzero_static": nonzero_static, "as_strided_scatter": as_strided_scatter, "as_strided_": _as_strided_,
    "histogram": histogram, "histogramdd": histogramdd, "cumulative_trapezoid": cumulative_trapezoid,
    "trapezoid": trapezoid, "trapz": trapz,
    "get_num_interop_threads": get_num_interop_threads, "set_num_interop_threads": set_num_interop_threads,
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "set_anomaly_enabled": set_anomaly_enabled, "is_anomaly_enabled": is_anomaly_enabled,
    "is_anomaly_check_nan_enabled": is_anomaly_check_nan_enabled, "set_default_tensor_type": set_default_tensor_type,
    **{name: _inplace_function(name) for name in _INPLACE_FUNCTIONS},
    "newaxis": None, "OutOfMemoryError": OutOfMemoryError, "rrelu": rrelu, "rrelu_": rrelu_, "typename": typename,
    "is_distributed": is_distributed, "is_vulkan_available": is_vulkan_available, "fill": fill,
    "unravel_index": unravel_index, "vander": vander,
}


METHODS: dict[str, Any] = {
    "polygamma": _polygamma_method, "polygamma_": _polygamma_, "frexp": _method(frexp),
    "mvlgamma": _method(mvlgamma), "mvlgamma_": _mvlgamma_, "isreal": _method(isreal),
    "histogram": _method(histogram), "split_with_sizes": _split_with_sizes_method,
    "unsafe_split": _unsafe_split_method, "unsafe_split_with_sizes": _method(unsafe_split_with_sizes),
    "unsafe_chunk": _method(unsafe_chunk), "ravel": _method(ravel), "nonzero_static": _method(nonzero_static),
    "as_strided_scatter": _method(as_strided_scatter), "as_strided_": _as_strided_, "is_same_size": is_same_size,
}
