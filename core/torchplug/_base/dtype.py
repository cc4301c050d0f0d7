"""Dtype objects, the default dtype and PyTorch's type-promotion rules."""
from __future__ import annotations

import builtins
import functools
import numbers

import ml_dtypes
import numpy as np

# The first module torchplug loads, and one most of its modules import: when a folder named 'torchplug' hides the
# installed package (a namespace package has no __file__), say so here instead of failing later.
if getattr(__import__("sys").modules.get("torchplug"), "__file__", None) is None:
    from torchplug._base.shadow import check_not_shadowed

    check_not_shadowed("torchplug")

__all__ = [
    "scalar_type_name",
    "dtype", "bool_", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "float8_e4m3fn", "float8_e5m2", "FLOAT8_DTYPES",
    "half", "float", "double", "short", "int", "long", "cfloat", "cdouble",
    "ALIASES", "ALL_DTYPES", "from_numpy_dtype", "promote_types", "result_type",
    "can_cast", "get_default_dtype", "set_default_dtype",
    "get_default_complex_dtype", "finfo", "iinfo", "category",
]

# The aliases `float`, `int` (defined at the bottom of this module) shadow the
# builtins at module scope, so all code here refers to the builtins through
# these names, which are bound before the shadowing happens.
_PyBool = builtins.bool
_PyInt = builtins.int
_PyFloat = builtins.float
_PyComplex = builtins.complex

# Category codes returned by `category()`; their order is the promotion order.
_BOOL, _INTEGRAL, _FLOATING, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type. Instances are immutable, process-wide singletons."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex",
                 "is_signed", "numpy_dtype", "_category")

    def __new__(cls, *args, **kwargs):
        # Like torch.dtype: the fixed set of instances below is the only one,
        # so identity comparison (and identity hashing) is always valid.
        raise TypeError("cannot create 'torchplug.dtype' instances")

    @classmethod
    def _make(cls, name: str, itemsize: _PyInt, cat: _PyInt, np_dtype) -> dtype:
        self = object.__new__(cls)
        for attr, value in (("name", name), ("itemsize", itemsize),
                            ("is_floating_point", cat == _FLOATING),
                            ("is_complex", cat == _COMPLEX),
                            # torch: only bool and uint8 are unsigned.
                            ("is_signed", name not in ("bool", "uint8")),
                            ("numpy_dtype", np.dtype(np_dtype)),
                            ("_category", cat)):
            object.__setattr__(self, attr, value)
        return self

    def __setattr__(self, key, value):
        raise AttributeError(f"torchplug.dtype objects are immutable (tried to set {key!r})")

    def __delattr__(self, key):
        raise AttributeError(f"torchplug.dtype objects are immutable (tried to delete {key!r})")

    def __repr__(self) -> str:
        return f"torchplug.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        # Unpickling must yield the existing singleton, never a copy.
        return (_from_name, (self.name,))

    def to_real(self) -> dtype:
        """Return the real counterpart of a complex dtype; other dtypes map to themselves."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> dtype:
        """Return the complex counterpart of a floating dtype (complex dtypes map to themselves).

        Raises RuntimeError for bool and integer dtypes, as torch does.
        float16 maps to complex64 because torchplug has no complex32.
        """
        if self._category == _COMPLEX:
            return self
        if self._category == _FLOATING:
            return complex128 if self is float64 else complex64
        raise RuntimeError(f"Unknown Complex ScalarType for {self.name}")


_mk = dtype._make
bool_ = _mk("bool", 1, _BOOL, np.bool_)
uint8 = _mk("uint8", 1, _INTEGRAL, np.uint8)
int8 = _mk("int8", 1, _INTEGRAL, np.int8)
int16 = _mk("int16", 2, _INTEGRAL, np.int16)
int32 = _mk("int32", 4, _INTEGRAL, np.int32)
int64 = _mk("int64", 8, _INTEGRAL, np.int64)
float16 = _mk("float16", 2, _FLOATING, np.float16)
bfloat16 = _mk("bfloat16", 2, _FLOATING, ml_dtypes.bfloat16)
float32 = _mk("float32", 4, _FLOATING, np.float32)
float64 = _mk("float64", 8, _FLOATING, np.float64)
complex64 = _mk("complex64", 8, _COMPLEX, np.complex64)
complex128 = _mk("complex128", 16, _COMPLEX, np.complex128)
# 8-bit floats (ml_dtypes' layouts, the same as PyTorch's): storage and casts only, as in PyTorch,
# which promotes them with nothing and has no arithmetic kernels for them on the host.
float8_e4m3fn = _mk("float8_e4m3fn", 1, _FLOATING, ml_dtypes.float8_e4m3fn)
float8_e5m2 = _mk("float8_e5m2", 1, _FLOATING, ml_dtypes.float8_e5m2)
del _mk

ALL_DTYPES: tuple[dtype, ...] = (bool_, uint8, int8, int16, int32, int64, float16,
                                 bfloat16, float32, float64, complex64, complex128)

# Not in ALL_DTYPES: that tuple lists the dtypes every op supports.
FLOAT8_DTYPES: tuple[dtype, ...] = (float8_e4m3fn, float8_e5m2)

_BY_NAME = {d.name: d for d in (*ALL_DTYPES, *FLOAT8_DTYPES)}
_TO_REAL = {complex64: float32, complex128: float64}


def _from_name(name: str) -> dtype:
    # Module-level so pickle can reference it; used by dtype.__reduce__.
    return _BY_NAME[name]


def category(d: dtype) -> _PyInt:
    """Return the promotion category of `d`: 0 bool, 1 integral, 2 floating, 3 complex."""
    return d._category


# ---------------------------------------------------------------- numpy interop

# Keyed on np.dtype objects; equivalent dtypes (e.g. 'l' and 'q' on Linux) hash
# equally, so a single entry per dtype is enough.
_FROM_NUMPY = {d.numpy_dtype: d for d in (*ALL_DTYPES, *FLOAT8_DTYPES)}


def from_numpy_dtype(np_dtype) -> dtype:
    """Map a numpy dtype (or anything np.dtype() accepts) to a torchplug dtype.

    Raises TypeError for numpy dtypes without a torchplug counterpart
    (e.g. uint16/uint32/uint64, strings, objects, non-native byte order).
    """
    try:
        return _FROM_NUMPY[np_dtype]  # fast path: a native np.dtype instance
    except (KeyError, TypeError):
        pass
    try:
        npd = np.dtype(np_dtype)
    except TypeError:
        npd = None
    result = _FROM_NUMPY.get(npd) if npd is not None else None
    if result is None:
        supported = ", ".join(str(d.numpy_dtype) for d in ALL_DTYPES)
        shown = str(npd) if npd is not None else repr(np_dtype)
        raise TypeError(f"can't convert numpy dtype {shown} "
                        f"to a torchplug dtype; supported numpy dtypes: {supported}")
    return result


# ---------------------------------------------------------------- promotion

def _compute_promotion(a: dtype, b: dtype) -> dtype:
    # Derives torch's promoteTypes lookup table (c10/core/ScalarType.cpp)
    # from its rules; the test-suite checks all pairs against real torch.
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca < cb or (ca == cb and a.itemsize < b.itemsize):
        a, b, ca, cb = b, a, cb, ca  # now a is the "bigger" one
    if cb == _BOOL:
        return a
    if ca == _INTEGRAL:  # both integral and distinct
        if a is uint8 or b is uint8:
            # mixing unsigned and signed needs a signed type holding 0..255
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a  # both signed: the wider one
    if ca == _FLOATING:
        if cb == _INTEGRAL:
            return a
        # both floating: float16 and bfloat16 have no common 16-bit supertype
        return float32 if {a, b} == {float16, bfloat16} else a
    # a is complex: the value type is promoted, then made complex again
    if cb != _FLOATING:  # complex+complex: the wider; complex+integral: the complex
        return a
    return _compute_promotion(a.to_real(), b).to_complex()


_PROMOTE = {(a, b): _compute_promotion(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}
_PROMOTE.update({(d, d): d for d in FLOAT8_DTYPES})


_TORCH_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
}


def scalar_type_name(dtype: dtype) -> str:
    """PyTorch's ScalarType spelling (Float, Long, ...) used in its error messages."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


_torch_scalar_name = scalar_type_name


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """Return the smallest dtype to which both dtypes can be safely cast (torch.promote_types)."""
    try:
        return _PROMOTE[type1, type2]
    except KeyError:
        if type1 in FLOAT8_DTYPES or type2 in FLOAT8_DTYPES:
            raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                               f"{_torch_scalar_name(type1)} and {_torch_scalar_name(type2)}") from None
        raise TypeError("promote_types() expects torchplug dtypes, "
                        f"got {type1!r} and {type2!r}") from None


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # Port of combine_categories() in aten/src/ATen/native/TypeProperties.cpp;
    # None plays the role of ScalarType::Undefined.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        # keep the higher-priority operand's precision if it is floating
        return higher.to_complex() if higher._category == _FLOATING else lower
    if higher._category == _FLOATING:
        return higher
    if higher is bool_ or lower._category == _FLOATING:
        return promote_types(higher, lower)
    return higher


def _fold(dtypes) -> dtype | None:
    result = None
    for d in dtypes:
        result = d if result is None else promote_types(result, d)
    return result


@functools.lru_cache(maxsize=4096)
def _result_type_parts(dim_dtypes: tuple, zero_dtypes: tuple, scalar_types: tuple) -> dtype:
    """Compute result_type() from operands already split into priority classes.

    `dim_dtypes`/`zero_dtypes` are tuples of dtypes of tensors with ndim > 0 and
    ndim == 0; `scalar_types` is a tuple of the Python types (bool, int, float,
    complex) of scalar operands. All arguments must be tuples (they are cache keys).
    The cache is cleared by set_default_dtype(), since wrapped floats depend on it.
    """
    wrapped = []
    for t in scalar_types:
        if t is _PyBool:
            wrapped.append(bool_)
        elif t is _PyInt:
            wrapped.append(int64)
        elif t is _PyFloat:
            wrapped.append(_default_dtype)
        elif t is _PyComplex:
            wrapped.append(_default_complex_dtype)
        else:
            raise TypeError(f"unsupported scalar type {t!r}; expected bool, int, float or complex")
    result = _combine_categories(_fold(dim_dtypes),
                                 _combine_categories(_fold(zero_dtypes), _fold(wrapped)))
    if result is None:
        raise TypeError("result_type() requires at least one operand")
    return result


def _scalar_type(x) -> type:
    # Exact-type check first (fast); then the numeric tower, so numpy scalars
    # and other registered numbers behave like the Python type they model.
    t = type(x)
    if t is _PyBool or t is _PyInt or t is _PyFloat or t is _PyComplex:
        return t
    if isinstance(x, (_PyBool, np.bool_)):
        return _PyBool
    if isinstance(x, numbers.Integral):
        return _PyInt
    if isinstance(x, numbers.Real):
        return _PyFloat
    if isinstance(x, numbers.Complex):
        return _PyComplex
    raise TypeError(f"result_type() got an unsupported operand of type {t.__name__}")


def result_type(*operands) -> dtype:
    """Return the dtype of an elementwise op on `operands` (torch.result_type rules).

    Operands are tensor-likes (objects with a torchplug `dtype` and an int `ndim`)
    or Python scalars. Dimensioned tensors take priority over zero-dim tensors,
    which take priority over scalars, unless a lower-priority operand is of a
    higher category (bool < integral < floating < complex).
    """
    dims, zeros, scalars = [], [], []
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            (dims if x.ndim > 0 else zeros).append(d)
        else:
            scalars.append(_scalar_type(x))
    return _result_type_parts(tuple(dims), tuple(zeros), tuple(scalars))


def can_cast(from_: dtype, to: dtype) -> _PyBool:
    """Return whether casting `from_` to `to` is allowed under torch's casting rules.

    Casting is disallowed only to a lower category: complex -> non-complex,
    floating -> integral/bool and non-bool -> bool.
    """
    # Same three checks, in the same order, as c10::canCast.
    if from_._category == _COMPLEX and to._category != _COMPLEX:
        return False
    if from_._category == _FLOATING and to._category == _INTEGRAL:
        return False
    return from_ is bool_ or to is not bool_


# ---------------------------------------------------------------- default dtype

# Process-global, like PyTorch's (not thread-local).
_default_dtype: dtype = float32
_default_complex_dtype: dtype = complex64


def get_default_dtype() -> dtype:
    """Return the current default floating-point dtype (initially float32)."""
    return _default_dtype


def get_default_complex_dtype() -> dtype:
    """Return the default complex dtype: complex128 if the default is float64, else complex64."""
    return _default_complex_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the default floating-point dtype (float16, bfloat16, float32 or float64)."""
    global _default_dtype, _default_complex_dtype
    if not isinstance(d, dtype) or d._category != _FLOATING:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d
    # torch would pick complex32 for float16; torchplug has none, so complex64.
    _default_complex_dtype = complex128 if d is float64 else complex64
    _result_type_parts.cache_clear()


# ---------------------------------------------------------------- finfo / iinfo

def _float_info(d: dtype):
    nf = ml_dtypes.finfo(d.numpy_dtype) if d is bfloat16 or d in FLOAT8_DTYPES else np.finfo(d.numpy_dtype)
    return (nf.bits, _PyFloat(nf.eps), _PyFloat(nf.max), _PyFloat(nf.min), _PyFloat(nf.tiny),
            _PyFloat(nf.smallest_normal),
            # torch uses 10**-digits10 (floor(mantissa bits * log10(2))) computed in
            # double; numpy's own `resolution` is rounded to the narrow type, and its
            # `precision` rounds up for float8, so recompute it.
            10.0 ** -_PyInt(nf.nmant * 0.30102999566398120))


_FINFO = {d: _float_info(d) for d in (*ALL_DTYPES, *FLOAT8_DTYPES) if d._category == _FLOATING}


class finfo:
    """Machine limits of a floating-point dtype (complex: its real type's), like torch.finfo."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: dtype | None = None):
        d = _default_dtype if type is None else type
        if not isinstance(d, dtype) or d._category < _FLOATING:
            raise TypeError(f"torchplug.finfo() requires a floating point input type, got {d!r}. "
                            "Use torchplug.iinfo to handle integer types")
        d = d.to_real()
        (self.bits, self.eps, self.max, self.min, self.tiny,
         self.smallest_normal, self.resolution) = _FINFO[d]
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype, like torch.iinfo (bool is rejected, as in torch)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: dtype):
        if not isinstance(type, dtype) or type._category != _INTEGRAL:
            raise TypeError(f"{type!r} is not supported by torchplug.iinfo; "
                            "it requires an integer input type (use torchplug.finfo for floats)")
        ni = np.iinfo(type.numpy_dtype)
        self.bits, self.dtype = ni.bits, type.name
        self.max, self.min = _PyInt(ni.max), _PyInt(ni.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# ---------------------------------------------------------------- aliases
# Defined last: `float`, `int` shadow the builtins in this module from here on
# (the code above only uses the _Py* names captured at the top).
ALIASES = {
    "half": float16, "float": float32, "double": float64, "short": int16,
    "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128,
}
half = float16
float = float32
double = float64
short = int16
int = int32
long = int64
cfloat = complex64
cdouble = complex128
