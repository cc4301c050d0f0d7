"""bfloat16 on the GPU: CuPy 14 holds ``ml_dtypes.bfloat16`` arrays and runs most of its kernels on them.

CuPy's own follow-up list (cupy/cupy#9630) names the gaps: ``cupyx`` (so ``cupyx.scipy.special``),
FFT, a few ufuncs (rounding, ``divmod``), the old fusion path, and nvcc older than 12.2.  For an op
that CuPy cannot run in bfloat16 the guard computes it as PyTorch does for several of its own
bfloat16 kernels: in float32, the result rounded back to bfloat16 (:func:`via_float32`).  Ops known
to be gaps go that way directly; any other op that CuPy refuses for a bfloat16 operand is retried
that way once and goes that way from then on.

Only a CuPy without bfloat16 (older than 14, or without ml_dtypes) refuses bfloat16 outright,
with :data:`ERROR`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._tensor.tensor import Tensor

__all__ = ["probe", "MISSING", "ERROR", "refuse", "known_gap", "via_float32", "retry", "has_bfloat16", "CUPY_GAPS",
           "LEARNED"]

MISSING: str | None = None  # None until probed; '' when CuPy holds bfloat16, else why it cannot
CUPY_GAPS: tuple[type[BaseException], ...] = (TypeError, NotImplementedError)
LEARNED: set[str] = set()  # ops found at run time to need float32 (CuPy refused them in bfloat16)
_GAP_PREFIXES = ("aten::_fft_", "aten::fft_")  # cuFFT has no bfloat16 (nor CuPy's FFT)


def ERROR(reason: str) -> str:  # noqa: N802 - a message builder named like the constant it replaces
    return (f"bfloat16 is not supported on the cuda device here: {reason} (torchplug.cuda.is_bf16_supported() "
            "is False). Install CuPy 14 or newer with ml_dtypes (pip install -U 'cupy-cuda12x>=14' ml_dtypes), or "
            "use float16 (torch.autocast('cuda') defaults to it) or float32.")


def probe(cp: Any) -> str:
    """'' when CuPy can hold and compute bfloat16 arrays, else why not; cached in :data:`MISSING`."""
    global MISSING, CUPY_GAPS
    if MISSING is not None:
        return MISSING
    try:
        import ml_dtypes

        a = cp.ones(2, dtype=ml_dtypes.bfloat16)
        (a + a).sum()
        MISSING = ""
    except ImportError:
        MISSING = "ml_dtypes is not installed"
    except Exception as exc:  # noqa: BLE001 - CuPy 13 raises ValueError/TypeError for the dtype
        MISSING = f"CuPy {getattr(cp, '__version__', '?')} has no bfloat16 arrays ({type(exc).__name__}: {exc})"
    try:
        from cupy.cuda.compiler import CompileException

        CUPY_GAPS = (TypeError, NotImplementedError, CompileException)
    except ImportError:
        pass
    return MISSING


def has_bfloat16(args: tuple[Any, ...]) -> bool:
    """Whether a tensor argument (or a dtype= argument) is bfloat16."""
    bf16 = D.bfloat16
    stack = list(args)
    while stack:
        value = stack.pop()
        if value is bf16 or (isinstance(value, Tensor) and value._dtype is bf16):
            return True
        if value.__class__ in (list, tuple):
            stack.extend(value)
    return False


def refuse(args: tuple[Any, ...]) -> None:
    """The clear error for bfloat16 operands when CuPy cannot hold them (:data:`MISSING` set)."""
    if MISSING and has_bfloat16(args):
        raise TypeError(ERROR(MISSING))


def known_gap(name: str) -> bool:
    """Whether op ``name`` is one CuPy cannot run in bfloat16 (listed, or learned at run time)."""
    return name in LEARNED or name.startswith(_GAP_PREFIXES)


def via_float32(name: str, fn: Callable[..., Any], common: Any, *args: Any) -> Any:
    """``fn(*args)`` with bfloat16 tensors computed in float32 and the results rounded to bfloat16.

    In-place ops (``add_``) and ``out=`` overloads write the rounded values back into the bfloat16
    tensors they were given and return those tensors, so aliasing is as without the detour.
    """
    bf16, f32 = D.bfloat16, D.float32
    originals: dict[int, Tensor] = {}

    def up(value: Any) -> Any:
        if isinstance(value, Tensor) and value._dtype is bf16:
            wide = common.wrap(value._data.astype(f32.numpy_dtype))
            originals[id(wide)] = value
            return wide
        if value is bf16:
            return f32
        if value.__class__ in (list, tuple):
            return value.__class__(up(v) for v in value)
        return value

    base = name.split("::")[-1]
    writes = base.split(".")[0].endswith("_") or ".out" in base or base.endswith("_out")
    result = fn(*(up(a) for a in args))

    def down(value: Any) -> Any:
        if isinstance(value, Tensor):
            original = originals.get(id(value))
            if original is not None and writes:
                original._data[...] = value._data.astype(bf16.numpy_dtype)
                return original
            if value._dtype is f32:
                return common.wrap(value._data.astype(bf16.numpy_dtype))
            return value
        if value.__class__ in (list, tuple):
            return value.__class__(down(v) for v in value)
        return value

    return down(result)


def retry(exc: BaseException, name: str, fn: Callable[..., Any], common: Any, args: tuple[Any, ...], off: int,
          run: Callable[[Callable[..., Any], tuple[Any, ...]], Any]) -> Any:
    """After ``fn`` raised ``exc`` (one of :data:`CUPY_GAPS`): with a bfloat16 operand, the op again
    through :func:`via_float32` (``run(f, args)`` calls on the device), remembered in :data:`LEARNED`
    when that works; otherwise (no bfloat16, or the op fails in float32 too) ``exc`` itself."""
    if not has_bfloat16(args[off:]):
        raise exc
    try:
        result = run(via_float32, (name, fn, common, *args))
    except Exception:  # noqa: BLE001 - not a bfloat16 gap: the op's own error is the one to see
        raise exc from None
    LEARNED.add(name)
    return result
