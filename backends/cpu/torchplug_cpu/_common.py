"""Shared helpers for cpu kernels: wrapping arrays as tensors, dtype promotion, scalars, errors."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._runtime.allocator import TrackedStorage
from torchplug._tensor.construct import grad_view, new_tensor, new_view
from torchplug._tensor.tensor import Storage, Tensor, make_tensor

__all__ = [
    "wrap", "wrap_view", "result_dtype", "np_dtype", "operand", "storage_offset", "CPU",
    "quiet", "loud", "broadcast_error", "broadcast_shape", "wrap_dim", "reduce_dims",
    "not_implemented", "torch_name", "cpp_name", "FLOATING", "INTEGRAL", "COMPLEX", "HALF",
    "storage", "wrap_foreign", "matmul", "lazy_import", "small_dot", "clamp_below", "clamp_above",
]

pending_backend: Any = None
CPU: Any = None  # torchplug.device('cpu'), set when the backend registers
KEYSET = 0
STATS: Any = None  # the cpu allocator's DeviceStats: every fresh buffer is accounted to it

class _LazyImport:
    """``from <package> import <attr>`` as a module global, run on the global's first attribute access.

    SciPy's ``special`` and ``fft`` take a third of a second to import, more than the rest of a first op, and
    most programs never call a kernel that needs them.  The first access imports the module and rebinds the
    global to it, so the kernels then look the real module up directly (no proxy on their path).  The import
    goes through this module's ``__import__``, so the cuda backend's kernel families (which re-run these
    modules with ``scipy`` mapped to CuPy's) get their own mapping.
    """

    __slots__ = ("_namespace", "_name", "_package", "_attr")

    def __init__(self, namespace: dict[str, Any], name: str, package: str, attr: str) -> None:
        self._namespace, self._name, self._package, self._attr = namespace, name, package, attr

    def __getattr__(self, attr: str) -> Any:
        module = getattr(__import__(self._package, fromlist=[self._attr]), self._attr)
        if self._namespace.get(self._name) is self:
            self._namespace[self._name] = module
        return getattr(module, attr)


def lazy_import(namespace: dict[str, Any], name: str, package: str, attr: str) -> Any:
    """Bind ``namespace[name]`` to ``from package import attr``, imported on first use (see :class:`_LazyImport`)."""
    placeholder = _LazyImport(namespace, name, package, attr)
    namespace[name] = placeholder
    return placeholder


NP_TO_DTYPE = {np.dtype(d.numpy_dtype): d for d in (*D.ALL_DTYPES, *D.FLOAT8_DTYPES)}


def _pick_matmul() -> Any:
    """NumPy's matmul behind the small-product thread policy; the namespace's own matmul when
    these helpers serve another array library (the cuda backend's CuPy family)."""
    import numpy

    if np.matmul is not numpy.matmul:
        return np.matmul
    from torchplug_cpu._blas_policy import matmul as policy_matmul

    return policy_matmul


matmul = _pick_matmul()  # every GEMM of the kernels goes through this


def _pick_small_dot() -> Any:
    """``_blas_policy.small_dot`` for NumPy arrays; None when these helpers serve another array library."""
    import numpy

    if np.ndarray is not numpy.ndarray:
        return None
    from torchplug_cpu._blas_policy import small_dot as found

    return found


small_dot = _pick_small_dot()  # mm's lean path for small float products (None: use matmul)


def _pick_ckernels() -> Any:
    """The optional C kernels (``torchplug_cpu._native``) for NumPy arrays; None when these helpers
    serve another array library (the C kernels read host buffers only) or when they were not built."""
    import numpy

    if np.ndarray is not numpy.ndarray:
        return None
    from torchplug_cpu._native import ckernels as found

    return found


ckernels = _pick_ckernels()  # kernels test ``C.ckernels is not None`` and keep a NumPy fallback


def _pick_cquick() -> Any:
    """The C fast paths of the hottest kernels (``torchplug_cpu._cquick``), or None: not built, NumPy 1.x, or
    this is another backend's instance of these helpers (the cuda backend's kernel families run this code
    again without a module spec; the C module serves the cpu backend's one instance only)."""
    if ckernels is None or ERRSTATE is None or globals().get("__spec__") is None:
        return None
    from torchplug_cpu._native import cquick as found
    from torchplug_cpu._parallel import MIN_ITEMS

    if found is not None:  # what its fast paths compare with, and how they make results (as wrap does)
        found.configure(Tensor, _ndarray, globals(), NP_TO_DTYPE, *ERRSTATE, np.empty_like, np.asarray, np.empty, D.float32,
                        D.float64, D.int64, frozenset(D.FLOAT8_DTYPES), MIN_ITEMS)
    return found


_C_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def native_float(dtype: Any) -> bool:
    """Whether the C kernels handle arrays of ``dtype`` (float32 and float64)."""
    return dtype in _C_FLOATS
_new = object.__new__
_ndarray = np.ndarray

# dtype groups (sets of torchplug dtypes)
INTEGRAL = frozenset((D.uint8, D.int8, D.int16, D.int32, D.int64))
FLOATING = frozenset((D.float16, D.bfloat16, D.float32, D.float64))
COMPLEX = frozenset((D.complex64, D.complex128))
HALF = frozenset((D.float16, D.bfloat16))  # computed in float32 ("opmath") like PyTorch's cpu kernels
F32 = np.dtype(np.float32)


def bind_backend(backend: Any) -> None:
    """Called after registration: remember the device and key set kernels stamp on results."""
    global CPU, KEYSET, STATS
    from torchplug import device

    CPU = device(backend.device_type)
    KEYSET = backend.keyset
    STATS = backend.allocator.stats_for(0)


def wrap(arr: Any) -> Tensor:
    """A fresh cpu tensor owning ``arr`` (NumPy scalars become 0-dim arrays)."""
    if arr.__class__ is not _ndarray:
        arr = np.asarray(arr)
    return new_tensor(arr, NP_TO_DTYPE[arr.dtype], CPU, KEYSET, STATS, arr.nbytes)


def storage(root: np.ndarray) -> Storage:
    """A fresh, allocator-accounted Storage owning the root buffer ``root`` (for kernels that
    build a strided view over their own buffer)."""
    return TrackedStorage(root.nbytes, CPU, root, STATS)


def wrap_foreign(arr: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory the backend did not allocate (``from_numpy``): not accounted.

    Its Storage spans the array's memory from the first element to the last, as PyTorch's
    ``from_numpy`` storage does: a strided array's storage is larger than its elements.
    """
    if arr.flags.c_contiguous or arr.size == 0:
        return make_tensor(arr, NP_TO_DTYPE[arr.dtype], CPU, KEYSET)
    item = arr.itemsize
    span = sum((n - 1) * st for n, st in zip(arr.shape, arr.strides)) // item + 1
    root = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(item,))
    return make_tensor(arr, NP_TO_DTYPE[arr.dtype], CPU, KEYSET, Storage(root.nbytes, CPU, root))


def address_of(st: Storage) -> int:
    """The host address of a storage's root buffer (for memory snapshots)."""
    data = st.data
    return data.__array_interface__["data"][0] if data is not None else 0


def wrap_view(arr: np.ndarray, src: Tensor) -> Tensor:
    """A cpu tensor viewing ``src``'s storage (shares version counter; ``_base`` set).  A view of a
    tensor that requires grad requires grad too, also when made under no_grad (``grad_view``)."""
    base = src._base
    if base is None:
        base = src
    t = new_view(arr, NP_TO_DTYPE[arr.dtype], CPU, KEYSET, src._storage, base)
    if base._requires_grad:
        return grad_view(t, base)
    return t


def storage_offset(t: Tensor) -> int:
    root = t._storage.data
    if root is None:
        return 0
    start = t._data.__array_interface__["data"][0]
    base = root.__array_interface__["data"][0]
    return (start - base) // t._dtype.itemsize


def np_dtype(dtype: D.dtype) -> np.dtype:
    return dtype.numpy_dtype


_SCALAR_TYPES = (bool, int, float, complex)


def result_dtype(*operands: Any) -> D.dtype:
    """PyTorch's promotion over tensors and Python numbers (``None`` operands are skipped)."""
    dims: list[D.dtype] = []
    zeros: list[D.dtype] = []
    scalars: list[type] = []
    for o in operands:
        if isinstance(o, Tensor):
            (dims if o._data.ndim else zeros).append(o._dtype)
        elif o is not None:
            if isinstance(o, np.generic):
                o = o.item()
            scalars.append(type(o) if type(o) in _SCALAR_TYPES else float)
    return D._result_type_parts(tuple(dims), tuple(zeros), tuple(scalars))


def operand(x: Any, npdt: np.dtype) -> Any:
    """The NumPy operand for a tensor or Python number, cast to ``npdt`` when needed."""
    if isinstance(x, Tensor):
        data = x._data
        return data if data.dtype == npdt else data.astype(npdt)
    if isinstance(x, np.generic):
        x = x.item()
    # A Python number: an array of the computation dtype, so out-of-range ints wrap like PyTorch's.
    if isinstance(x, float) and npdt.kind in "fcV":
        return np.asarray(x, dtype=npdt)
    if isinstance(x, complex) and npdt.kind != "c":
        return np.asarray(x.real).astype(npdt)
    return np.array(x).astype(npdt)


# ---- floating-point warnings ----------------------------------------------------------------------
# ``quiet()``/``loud(token)`` bracket NumPy calls that may overflow or divide by zero (PyTorch never
# warns there).  With NumPy 2 this swaps the ufunc error state held in a context variable, which
# is several times cheaper than entering ``np.errstate``.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRVAR
    from numpy._core.umath import _make_extobj

    import functools

    _QUIET = _make_extobj(all="ignore")
    quiet = functools.partial(_ERRVAR.set, _QUIET)
    loud = _ERRVAR.reset
    ERRSTATE: Any = (_ERRVAR, _QUIET)  # for the C kernels (_cquick), which swap the same state

except ImportError:  # NumPy 1.x
    ERRSTATE = None

    def quiet() -> Any:
        return np.seterr(all="ignore")

    def loud(token: Any) -> None:
        np.seterr(**token)


cquick = _pick_cquick()  # used by kernels/pointwise.py and reduction.py


# ---- errors -----------------------------------------------------------------------------------------
_TORCH_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
}
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
    "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def torch_name(dtype: D.dtype) -> str:
    """PyTorch's ScalarType name (``Float``, ``Long``...)."""
    return _TORCH_NAMES[dtype.name]


def cpp_name(dtype: D.dtype) -> str:
    """The C++ type name some PyTorch messages use (``float``, ``long int``...)."""
    return _CPP_NAMES[dtype.name]


def not_implemented(kernel: str, dtype: D.dtype) -> NotImplementedError:
    """PyTorch's dispatch-macro error: ``"add_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{torch_name(dtype)}\'')


def broadcast_error(*shapes: tuple[int, ...]) -> RuntimeError:
    """PyTorch's message for shapes that do not broadcast (operands folded left to right)."""
    acc: tuple[int, ...] = ()
    for s in shapes:
        s = tuple(s)
        n = max(len(acc), len(s))
        a = (1,) * (n - len(acc)) + acc
        b = (1,) * (n - len(s)) + s
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                    f"at non-singleton dimension {i}"
                )
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return RuntimeError(f"shapes {[list(s) for s in shapes]} cannot be broadcast together")


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of ``shapes``, raising PyTorch's RuntimeError when they do not broadcast."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(*shapes) from None


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalize a possibly negative dim (0-dim tensors accept -1 and 0), raising PyTorch's IndexError."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def reduce_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """The axes a reduction covers: ``None`` or ``()`` means all; duplicates are an error."""
    if dim is None or len(dim) == 0:
        return tuple(range(ndim))
    out = []
    for d in dim:
        w = wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    if ndim == 0:
        return ()
    return tuple(out)


def _overflow_name(dtype: D.dtype) -> str:
    if dtype in INTEGRAL:
        return f"{'u' if dtype is D.uint8 else ''}int{dtype.itemsize * 8}_t"
    return cpp_name(dtype)


def scalar_to(value: Any, dtype: D.dtype, npdt: np.dtype | None = None) -> np.ndarray:
    """A Scalar argument (alpha, value...) as a 0-dim array of ``npdt`` (default: ``dtype``'s),
    with c10's checked conversion to ``dtype``: out-of-range values raise instead of wrapping."""
    if isinstance(value, np.generic):
        value = value.item()
    bad = False
    if dtype is D.bool_:
        value = bool(value)  # anything converts to bool
    elif dtype in COMPLEX:
        pass
    elif isinstance(value, complex):
        bad = value.imag != 0
        value = value.real
    if not bad and dtype is not D.bool_ and not isinstance(value, bool):
        if dtype in INTEGRAL:
            info = np.iinfo(dtype.numpy_dtype)
            # c10::overflows: into uint8 an integer may wrap (-255..-1), a float must lie in [0, 255]
            lo = (0 if isinstance(value, float) else -int(info.max)) if dtype is D.uint8 else int(info.min)
            if value != value or not lo <= value <= int(info.max):
                bad = True
        elif dtype in FLOATING and value - value == 0:  # finite (an int too: 2 ** 40 overflows float16)
            bad = abs(value) > D.finfo(dtype).max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_overflow_name(dtype)} without overflow")
    return operand(value, npdt if npdt is not None else dtype.numpy_dtype)


def clamp_below(x: Any, lo: Any) -> Any:
    """``x < lo ? lo : x`` as ATen's clamp with a Scalar bound: an in-range zero keeps its sign (-0.0 against
    min=0); a NaN in ``x`` or ``lo`` gives NaN.  ``np.maximum`` answers a tie of zeros with either sign depending
    on its SIMD loop, so a zero bound takes the comparison (others the ufunc, which agrees)."""
    if np.ndim(lo) == 0 and lo == 0:
        return np.where(x < lo, lo, x)
    return np.maximum(x, lo)


def clamp_above(x: Any, hi: Any) -> Any:
    """``x > hi ? hi : x``, the upper half of :func:`clamp_below` (+0.0 stays itself against max=-0.0)."""
    if np.ndim(hi) == 0 and hi == 0:
        return np.where(x > hi, hi, x)
    return np.minimum(x, hi)
