"""Python bindings: ``torchplug.<fn>`` functions, ``Tensor`` methods and operators over the aten table.

Simple ops are generated from their schemas (the function form renames ``self`` to ``input``
and gains ``out=``); ops whose Python signature spans several overloads are written by hand
below.  Either way a call reaches exactly one generated entry point.
"""

from __future__ import annotations

import builtins
import numbers
import warnings
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._dispatch.codegen import build_entry
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._schemas import expand_table
from torchplug._ops.pyfuncs import area_modules
from torchplug._ops.surface import FUNCTIONS, return_types
from torchplug._tensor.tensor import Tensor, Size

__all__ = ["FUNCTIONS", "install_bindings", "return_types"]




# Python names that are not generated (hand-written below, or factories in _creation).
_HANDWRITTEN = {
    "max", "min", "clamp", "view", "reshape", "permute", "expand", "transpose", "fill_", "masked_fill",
    "scatter", "split", "split_with_sizes", "var", "std", "nonzero", "flatten", "squeeze",
    "index", "index_put", "copy_", "_to_copy", "alias", "random_", "as_strided", "where",
}
# ATen's C++-only overloads the composites call (PyTorch's Python binds torch.add to add.Tensor): they do not
# count as a second overload of the public name.
_INTERNAL_OVERLOADS = frozenset({"aten::add.Scalar", "aten::mul.Scalar", "aten::div.Scalar", "aten::norm.ScalarOpt_dim"})
_NOT_METHODS = {"cat", "stack"}  # first argument is not a tensor
_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
    "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "clip": "clamp", "concat": "cat",
    "concatenate": "cat", "divide": "div", "true_divide": "div", "multiply": "mul", "subtract": "sub",
    "negative": "neg", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "swapaxes": "transpose", "swapdims": "transpose", "fix": "trunc",
}

# Which Tensor arguments PyTorch's Python API lets a number stand for, where the aten op (defined
# with wrapped numbers, for the composites' sake) would take one anywhere: only where torch has a
# Scalar overload.  A number for the others is refused: "must be Tensor", or, where another argument
# has such an overload, "received an invalid combination of arguments".
_NUMBER_ARGS: dict[str, tuple[str, ...]] = {
    **{n: ("other",) for n in ("eq", "ne", "lt", "le", "gt", "ge", "fmod", "copysign")},
    "clamp_min": ("min",), "clamp_max": ("max",), "lerp": ("weight",),
    **{n: () for n in ("atan2", "logical_and", "logical_or", "logical_xor", "maximum", "minimum")},
}
_COMBINATION_ERRORS: dict[str, tuple[str, ...]] = {
    **{n: ("self",) for n in ("eq", "ne", "lt", "le", "gt", "ge", "fmod", "copysign", "clamp_min", "clamp_max")},
    "lerp": ("self", "end"),
}
# In-place methods torch does not have although the aten table defines the overload.
_NO_INPLACE_METHOD = {"maximum", "minimum"}
# Ops with an aten .out overload whose torch.<name> Python function takes no out= (torch raises
# "got an unexpected keyword argument 'out'"); tests/test_more_ops.py verifies the list against torch.
NO_PYTHON_OUT = frozenset({"diag_embed", "diagflat", "diagonal_scatter", "dist", "flip", "put", "rot90",
                           "select_scatter"})
# aten ops torch does not publish as torch.<name> / Tensor.<name> (reachable as torchplug.ops.aten.<name>);
# tests/test_more_ops.py checks that every other public name exists in torch.
_NO_FUNCTION = {"slice", "linalg_vector_norm", "unfold", "bernoulli_", "cauchy_", "exponential_", "geometric_",
                "log_normal_", "normal_", "uniform_"}
_NO_METHOD = {"slice", "linalg_vector_norm", "combinations", "poisson", "_fft_r2c", "_fft_c2r", "_fft_c2c",
              "_standard_gamma", "_sample_dirichlet", "_standard_gamma_grad"}
# aten's namespaced ops (special_i1, linalg_det, fft_fft) are torch.special.i1 & co., never torch.<name>
_NAMESPACED = ("special_", "linalg_", "fft_")
# torch's view-copy ops (diagonal_copy, expand_copy...) are functions only; index_copy/narrow_copy are methods too
_FUNCTION_ONLY_SUFFIX, _COPY_METHODS = "_copy", frozenset({"index_copy", "narrow_copy"})



def _entry(name: str) -> OperatorEntry:
    return DISPATCHER.entry(f"aten::{name}")


def _generated() -> None:
    """Generate functions and methods for every op with a single functional overload."""
    by_name: dict[str, list[str]] = {}
    for schema, tags, _ in expand_table():
        full = schema.split("(")[0]
        if "inplace" in tags or "out" in tags or full in _INTERNAL_OVERLOADS:
            continue
        by_name.setdefault(full.removeprefix("aten::").split(".")[0], []).append(full)
    handwritten = set(_HANDWRITTEN)
    for module in area_modules():
        handwritten |= set(getattr(module, "HANDWRITTEN", ()))
    for name, overloads in by_name.items():
        if name in handwritten or len(overloads) != 1:
            continue
        entry = DISPATCHER.entry(overloads[0])
        if "factory" in entry.tags:
            continue
        out_entry = None if name in NO_PYTHON_OUT else _find_out(entry)
        first = entry.schema.arguments[0].name if entry.schema.arguments else ""
        numbers = _NUMBER_ARGS.get(name)
        combination = _COMBINATION_ERRORS.get(name, ())
        published = name not in _NO_FUNCTION and not name.startswith(_NAMESPACED)
        if published:
            FUNCTIONS[name] = build_entry(
                entry, display=name, first_name="input" if first == "self" else None, out_entry=out_entry,
                func_name=name, numbers=numbers, combination_errors=combination,
            )
        view_copy = name.endswith(_FUNCTION_ONLY_SUFFIX) and name not in _COPY_METHODS
        if (first == "self" and name not in _NOT_METHODS and name not in _NO_METHOD and not view_copy
                and not name.startswith(_NAMESPACED)):
            setattr(Tensor, name, build_entry(entry, display=name, func_name=name, numbers=numbers,
                                              combination_errors=combination, method=True))
            inplace = DISPATCHER.find(f"aten::{name}_" + (f".{entry.schema.overload_name}" if entry.schema.overload_name else ""))
            if inplace is not None and not hasattr(Tensor, name + "_") and name not in _NO_INPLACE_METHOD:
                setattr(Tensor, name + "_", build_entry(inplace, display=f"{name}_", func_name=name + "_",
                                                        numbers=numbers, combination_errors=combination, method=True))
        if name.endswith("_"):
            setattr(Tensor, name, build_entry(entry, display=name, func_name=name, method=True))


def _find_out(entry: OperatorEntry) -> OperatorEntry | None:
    schema = entry.schema
    overload = "out" if schema.overload_name in ("", "Tensor", "default") else f"{schema.overload_name}_out"
    return DISPATCHER.find(f"aten::{schema.name}.{overload}")


def _vararg_sizes(op: str, arg: str, args: tuple[Any, ...]) -> Any:
    """``_sizes`` of a method taking ``*sizes``; with none given, PyTorch's TypeError."""
    if not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{arg}"')
    return _sizes(args)


def _sizes(args: tuple[Any, ...]) -> Any:
    """Accept both f(2, 3) and f((2, 3)) / f([2, 3]) / f(torch.Size(...))."""
    if len(args) == 1 and not isinstance(args[0], int) and not hasattr(args[0], "__index__"):
        return args[0]
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    return args


# ---- hand-written multi-overload functions --------------------------------------------------------
def _minmax(which: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    full = A[f"{which}"]
    dim_op = A[f"{which}.dim"]
    binary = A["maximum" if which == "max" else "minimum"]
    rtype = getattr(return_types, which)

    def function(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if isinstance(dim, Tensor):
            return binary(input, dim) if out is None else A["maximum.out" if which == "max" else "minimum.out"](input, dim, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{which}() received an invalid combination of arguments: keepdim without dim")
            return full(input)
        values, indices = dim_op(input, dim, keepdim)
        if out is not None:
            out[0].copy_(values)
            out[1].copy_(indices)
            values, indices = out
        return rtype(values, indices)

    def method(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
        return function(self, dim, keepdim)

    function.__name__ = method.__name__ = which
    return function, method


_BOUND_NUMBERS = (bool, int, float, complex)


def _clamp_bounds(name: str, input: Tensor, min: Any, max: Any) -> tuple[Any, Any]:
    """PyTorch's parser with a Python number and a Tensor bound: it reads a 0-dim tensor as a Scalar
    (clamp's Scalar overload, numbers promote as Python numbers); no overload takes a number beside
    a tensor with dims."""
    if isinstance(min, _BOUND_NUMBERS) and isinstance(max, Tensor) or isinstance(max, _BOUND_NUMBERS) and isinstance(min, Tensor):
        bound = max if isinstance(max, Tensor) else min
        if bound.dim() != 0:
            got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in (input, min, max))
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)"
            )
        min, max = (min.item() if isinstance(min, Tensor) else min), (max.item() if isinstance(max, Tensor) else max)
    if isinstance(min, complex) or isinstance(max, complex):
        if not input.is_complex():  # the Scalar overload reads a bound as a double (complex input: refused later)
            if any(isinstance(b, complex) and b.imag != 0 for b in (min, max)):
                raise RuntimeError("value cannot be converted to type double without overflow")
            min, max = (b.real if isinstance(b, complex) else b for b in (min, max))
    return min, max


def clamp(input: Tensor, min: Any = None, max: Any = None, *, out: Any = None) -> Tensor:
    """Clamp every element into ``[min, max]`` (numbers or tensors)."""
    min, max = _clamp_bounds("clamp", input, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        name = "clamp.Tensor"
    else:
        name = "clamp"
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if out is not None:
        return A[f"{name}_out" if "." in name else "clamp.out"](input, min, max, out=out)
    return A[name](input, min, max)


def _clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    min, max = _clamp_bounds("clamp_", self, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return A["clamp_.Tensor"](self, min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return A["clamp_"](self, min, max)


def _var_std(which: str) -> Callable[..., Any]:
    op = A[which]
    out_op = A[f"{which}.out"]

    def function(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
                 correction: Any = None, out: Any = None) -> Tensor:
        if isinstance(dim, bool):  # legacy var(input, unbiased)
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise RuntimeError(f"{which}: can't specify both unbiased and correction")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        if out is not None:
            return out_op(input, dim, correction=correction, keepdim=keepdim, out=out)
        return op(input, dim, correction=correction, keepdim=keepdim)

    function.__name__ = which
    return function


def where(condition: Tensor, input: Any = None, other: Any = None, *, out: Any = None) -> Any:
    """Elementwise ``input if condition else other``; ``where(cond)`` is ``nonzero(cond, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor) or input is None or other is None:
        # Only input and other take numbers; there is no two-operand form (PyTorch's parser words).
        given = (condition, input) if other is None else (condition, input, other)
        got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in given)
        raise TypeError(
            f"where() received an invalid combination of arguments - got ({got}), but expected one of:\n"
            " * (Tensor condition)\n * (Tensor condition, Tensor input, Tensor other, *, Tensor out)\n"
            " * (Tensor condition, Number self, Tensor other)\n * (Tensor condition, Tensor input, Number other)\n"
            " * (Tensor condition, Number self, Number other)"
        )
    if out is not None:
        return A["where.self_out"](condition, input, other, out=out)
    return A["where.self"](condition, input, other)


def nonzero(input: Tensor, *, out: Any = None, as_tuple: bool = False) -> Any:
    """Indices of non-zero elements: an (n, ndim) int64 tensor, or a tuple of 1-D tensors."""
    result = A.nonzero(input)
    if as_tuple:
        if input.dim() == 0:  # PyTorch indexes a 0-dim input as if it were 1-D
            return (A.zeros([result.shape[0]], dtype=result.dtype, device=result.device),)
        return tuple(A.select(result, 1, i) for i in range(input.dim()))
    if out is not None:
        from torchplug._ops.composites import resize_output

        resize_output(out, result.shape)
        A.copy_(out, result)
        return out
    return result


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into chunks of a given size, or of the listed sizes."""
    if isinstance(split_size_or_sections, int) or hasattr(split_size_or_sections, "__index__"):
        return tuple(A["split.Tensor"](tensor, int(split_size_or_sections), dim))
    return tuple(A.split_with_sizes(tensor, split_size_or_sections, dim))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Flatten dims ``start_dim..end_dim`` into one."""
    return A.flatten(input, start_dim, end_dim)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Remove size-1 dims (all of them, or the given ones)."""
    return A.squeeze(input, dim)


def reshape(input: Tensor, shape: Any) -> Tensor:
    """The same data with a new shape: a view when possible, else a copy."""
    return A.reshape(input, shape)


def permute(input: Tensor, dims: Any) -> Tensor:
    """Reorder dimensions (a view)."""
    return A.permute(input, dims)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    return A.transpose(input, dim0, dim1)


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """Fill where ``mask`` is True with ``value`` (number or 0-dim tensor)."""
    if isinstance(value, Tensor):
        return A["masked_fill.Tensor"](input, mask, value)
    return A["masked_fill.Scalar"](input, mask, value)


_SCATTER_REDUCE_WARNED = False


def _scatter_overload(src: Any, reduce: Any) -> str:
    """The overload of scatter(reduce=...) PyTorch calls (its Tensor-src form warns, once, that it is deprecated)."""
    global _SCATTER_REDUCE_WARNED
    if reduce is None:
        return "src" if isinstance(src, Tensor) else "value"
    if isinstance(src, Tensor):
        if reduce in ("add", "multiply") and not _SCATTER_REDUCE_WARNED:  # torch: TORCH_WARN_ONCE
            _SCATTER_REDUCE_WARNED = True
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
                "PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                UserWarning, stacklevel=3,
            )
        return "reduce"
    return "value_reduce"


def _scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None, reduce: Any = None) -> Tensor:
    src = value if src is None else src
    which = _scatter_overload(src, reduce)
    if reduce is not None:
        return A[f"scatter_.{which}"](self, dim, index, src, reduce=reduce)
    return A[f"scatter_.{which}"](self, dim, index, src)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None, reduce: Any = None,
            out: Any = None) -> Tensor:
    """Write ``src`` (tensor or number) into ``input`` at ``index`` along ``dim`` (out of place)."""
    src = value if src is None else src
    which = _scatter_overload(src, reduce)
    if reduce is not None:
        if out is not None:
            return A[f"scatter.{which}_out"](input, dim, index, src, reduce=reduce, out=out)
        return A[f"scatter.{which}"](input, dim, index, src, reduce=reduce)
    if out is not None:
        return A[f"scatter.{which}_out"](input, dim, index, src, out=out)
    return A[f"scatter.{which}"](input, dim, index, src)


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view with explicit sizes, strides and storage offset."""
    return A.as_strided(input, size, stride, storage_offset)


def _view_method(self: Tensor, *shape: Any) -> Tensor:
    """``Tensor.view(*shape)`` or ``Tensor.view(dtype)``."""
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, type)):
        return A["view.dtype"](self, shape[0])
    if not shape:
        raise TypeError(
            "view() received an invalid combination of arguments - got (), but expected one of:\n"
            " * (torch.dtype dtype)\n * (tuple of ints size)"
        )
    return A.view(self, _sizes(shape))


def _install_methods() -> None:
    T = Tensor
    T.max, T.min = _minmax("max")[1], _minmax("min")[1]
    T.clamp = T.clip = lambda self, min=None, max=None: clamp(self, min, max)
    T.clamp_ = T.clip_ = _clamp_
    T.var, T.std = FUNCTIONS["var"], FUNCTIONS["std"]
    T.view = _view_method
    T.view_as = lambda self, other: A.view(self, other.shape)
    T.reshape = lambda self, *shape: A.reshape(self, _vararg_sizes("reshape", "shape", shape))
    T.reshape_as = lambda self, other: A.reshape(self, other.shape)
    T.permute = lambda self, *dims: A.permute(self, _vararg_sizes("permute", "dims", dims))
    T.expand = lambda self, *sizes: A.expand(self, _vararg_sizes("expand", "size", sizes))
    T.expand_as = lambda self, other: A.expand(self, other.shape)
    T.transpose = lambda self, dim0, dim1: A.transpose(self, dim0, dim1)
    T.swapaxes = T.swapdims = T.transpose
    T.flatten = lambda self, start_dim=0, end_dim=-1: A.flatten(self, start_dim, end_dim)
    T.squeeze = lambda self, dim=None: A.squeeze(self, dim)
    T.fill_ = lambda self, value: A["fill_.Tensor"](self, value) if isinstance(value, Tensor) else A["fill_.Scalar"](self, value)
    T.masked_fill = masked_fill
    T.masked_fill_ = lambda self, mask, value: (
        A["masked_fill_.Tensor"](self, mask, value) if isinstance(value, Tensor) else A["masked_fill_.Scalar"](self, mask, value)
    )
    T.scatter = scatter
    T.scatter_ = _scatter_
    T.split = lambda self, split_size, dim=0: split(self, split_size, dim)
    T.nonzero = lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple)
    T.where = lambda self, condition, other: A["where.self"](condition, self, other)
    T.copy_ = lambda self, src, non_blocking=False: A.copy_(self, src if isinstance(src, Tensor) else _number_tensor(src), non_blocking)
    T.as_strided = lambda self, size, stride, storage_offset=None: A.as_strided(self, size, stride, storage_offset)
    T.index_put_ = lambda self, indices, values, accumulate=False: A["index_put_"](self, list(indices), values, accumulate)
    T.index_put = lambda self, indices, values, accumulate=False: A["index_put"](self, list(indices), values, accumulate)
    T.uniform_ = lambda self, from_=0.0, to=1.0, *, generator=None: A.uniform_(self, from_, to, generator=generator)
    T.random_ = _random_
    T.bernoulli_ = _bernoulli_
    T.bernoulli = _bernoulli
    T.T = property(_T)
    T.mT = property(lambda self: _matrix_transpose(self, "mT"))
    T.H = property(_H)
    T.mH = property(lambda self: _matrix_transpose(self, "mH"))


def _number_tensor(value: Any) -> Tensor:
    """``Tensor.copy_(5)``: PyTorch accepts a Python number as the source."""
    from torchplug._tensor.creation import tensor

    return tensor(value)


def _matrix_transpose(self: Tensor, name: str) -> Tensor:
    """``mT``/``mH``: the last two dims swapped (mH of a complex tensor: see _conj); identity, deprecated, on 0-dim."""
    n = self.dim()
    if n == 0:
        advice = "This function is the identity in these cases." if name == "mT" else "Consider using x.conj()."
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {advice}", UserWarning, stacklevel=3)
        out = A.alias(self)
    elif n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    else:
        out = A.transpose(self, -2, -1)
    return _conj(out, f"Tensor.{name}") if name == "mH" else out


def _H(self: Tensor) -> Tensor:
    n = self.dim()
    if n == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
    elif n != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
            + (" For batches of matrices, consider using tensor.mH" if n > 2 else "")
        )
    return _conj(_T(self), "Tensor.H")


def _conj(t: Tensor, what: str) -> Tensor:
    """``t.conj()`` (a lazy conjugate view) for complex ``t``; ``t`` itself otherwise."""
    return A._conj(t) if t.is_complex() else t


def _T(self: Tensor) -> Tensor:
    n = self.dim()
    return self if n < 2 else A.permute(self, list(range(n - 1, -1, -1)))


def _bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """``bernoulli_(p)``: p a probability or a tensor of them (broadcast to ``self``)."""
    if isinstance(p, Tensor):
        return A["bernoulli_.Tensor"](self, p, generator=generator)
    return A["bernoulli_.float"](self, p, generator=generator)


def _bernoulli(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """``bernoulli()`` draws with the probabilities in ``self``; ``bernoulli(p)`` with ``p`` everywhere."""
    if p is None:
        return A.bernoulli(self, generator=generator)
    return A["bernoulli.p"](self, p, generator=generator)


_NO_TO = object()  # random_(from, None) (up to the dtype's top) differs from random_(to)


def _random_(self: Tensor, from_: Any = None, to: Any = _NO_TO, *, generator: Any = None) -> Tensor:
    """``random_()`` (every integer the dtype holds exactly), ``random_(to)``, ``random_(from, to)``."""
    if to is _NO_TO:
        if from_ is None:
            return A["random_"](self, generator=generator)
        from_, to = 0, from_
    elif from_ is None:
        from_ = 0
    return A["random_.from"](self, int(from_), to, generator=generator)


# ---- operators ----------------------------------------------------------------------------------
def _operator(op: str, dunder: str) -> Any:
    """``Tensor.<dunder>`` for aten ``op``: its entry point, answering NotImplemented for an operand that is no
    tensor or number (torch's operators do, so ``t + None`` is Python's own TypeError and an object with
    ``__radd__`` gets its turn)."""
    return build_entry(A._entry(op), display=op.partition(".")[0], func_name=dunder, binary_operator=True)


def _install_operators() -> None:
    T = Tensor
    add, sub, mul = A.add, A.sub, A.mul
    for dunder, op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("floordiv", "floor_divide"),
                       ("mod", "remainder"), ("pow", "pow"), ("matmul", "matmul"), ("and", "bitwise_and"),
                       ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"),
                       ("rshift", "bitwise_right_shift")):
        setattr(T, f"__{dunder}__", _operator(op, f"__{dunder}__"))
    for dunder, op in (("iadd", "add_.Tensor"), ("isub", "sub_.Tensor"), ("imul", "mul_"), ("itruediv", "div_.Tensor"),
                       ("ifloordiv", "floor_divide_"), ("imod", "remainder_"), ("ipow", "pow_.Tensor_Tensor"),
                       ("iand", "bitwise_and_"), ("ior", "bitwise_or_"), ("ixor", "bitwise_xor_"),
                       ("ilshift", "bitwise_left_shift_"), ("irshift", "bitwise_right_shift_")):
        setattr(T, f"__{dunder}__", _operator(op, f"__{dunder}__"))
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):  # t == None is False, t < "a" Python's TypeError
        setattr(T, f"__{op}__", _operator(f"{op}.Tensor", f"__{op}__"))
    # reflected operators as torch's: the tensor first for + and * (its edge comes first in the graph),
    # rsub for -, reciprocal times the number for / (torch's __rdiv__)
    T.__radd__ = _reflected(lambda self, other: add(self, other))
    T.__rsub__ = _reflected(lambda self, other: sub(other, self))
    T.__rmul__ = _reflected(lambda self, other: mul(self, other))
    T.__rtruediv__ = _reflected(lambda self, other: mul(A.reciprocal(self), other))
    T.__rfloordiv__ = _reflected(lambda self, other: A.floor_divide(other, self))
    T.__rmod__ = _reflected(lambda self, other: A.remainder(other, self))
    T.__rpow__ = _reflected(lambda self, other: A.pow(other, self))
    T.__rmatmul__ = _reflected(lambda self, other: A.matmul(other, self))
    for op, name in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                     ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
        setattr(T, f"__r{op}__", _reflected((lambda f: lambda self, other: f(other, self))(getattr(A, name))))
    T.__neg__ = A.neg
    T.__pos__ = lambda self: self
    T.__abs__ = A.abs
    T.__invert__ = _invert


def _reflected(fn: Any) -> Any:
    """A reflected operator that answers NotImplemented where the operand is no tensor or number (None, a str, a
    list), as torch's do: Python then raises its own error ("unsupported operand type(s) for +: 'NoneType' and
    'Tensor'") or falls back to the other operand's sequence operation ([1] + t, [1] * t)."""
    def op(self: Tensor, other: Any) -> Any:
        try:
            return fn(self, other)
        except TypeError:  # torch turns any TypeError of a binary operator into NotImplemented
            return NotImplemented

    op.__name__ = op.__qualname__ = getattr(fn, "__name__", "op")
    return op


def _invert(self: Tensor) -> Tensor:
    """``~t``: PyTorch's operator rejects floating and complex tensors before dispatch."""
    if self._dtype.is_floating_point or self._dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return A.bitwise_not(self)


def install_bindings(namespace: dict[str, Any]) -> None:
    """Generate everything and publish the functions into ``namespace`` (the torchplug module)."""
    _generated()
    FUNCTIONS["var"], FUNCTIONS["std"] = _var_std("var"), _var_std("std")
    FUNCTIONS["max"], FUNCTIONS["min"] = _minmax("max")[0], _minmax("min")[0]
    for fn in (clamp, where, nonzero, split, flatten, squeeze, reshape, permute, transpose, masked_fill, scatter, as_strided):
        FUNCTIONS[fn.__name__] = fn
    for alias, target in _ALIASES.items():
        if target in FUNCTIONS:
            FUNCTIONS[alias] = FUNCTIONS[target]
            if hasattr(Tensor, target) and not hasattr(Tensor, alias):
                setattr(Tensor, alias, getattr(Tensor, target))
            if hasattr(Tensor, target + "_") and not hasattr(Tensor, alias + "_"):
                setattr(Tensor, alias + "_", getattr(Tensor, target + "_"))
    _install_methods()
    _install_operators()
    for module in area_modules():
        FUNCTIONS.update(getattr(module, "FUNCTIONS", {}))
        for name, method in getattr(module, "METHODS", {}).items():
            setattr(Tensor, name, method)
    namespace.update(FUNCTIONS)


# keep a reference so linters see builtins is intentionally imported for shadowed names
_ = (builtins, Size)
