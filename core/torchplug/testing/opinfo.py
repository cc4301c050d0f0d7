"""OpInfo: a per-op description (callable, dtypes, sample inputs, tolerances, flags) that the conformance suite runs.

An :class:`OpInfo` names an operator by a dotted path resolved against a framework module
(``"add"``, ``"Tensor.add_"``, ``"linalg.inv"``, ``"nn.functional.conv2d"``), so the same
entry calls ``torch`` (the reference) and ``torchplug`` (the implementation under test).  Its
``sample_inputs(dtype)`` yields :class:`SampleInput` objects written in a small spec
language: :class:`T` describes a tensor (shape, dtype, value range, layout flags), anything
else (Python numbers, lists, strings, dtype names wrapped in :class:`Dtype`) passes through.
:func:`materialize` turns one spec into tensors of either library from the same NumPy data,
so both sides see identical inputs.

Area files add OpInfos: ``torchplug/testing/opinfos/<area>.py`` defines ``OPS: list[OpInfo]``
and is collected automatically (see :mod:`torchplug.testing.opinfos` and docs/conformance.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "ALL_DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "COMPLEX_DTYPES", "DEFAULT_TOLERANCES",
    "OpInfo", "SampleInput", "Skip", "T", "Attr", "Dtype", "materialize", "resolve", "make_data",
]

ALL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
# (rtol, atol) per result dtype; integer and bool results compare exactly.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


# ---- the spec language ------------------------------------------------------------------------------
@dataclass(frozen=True)
class T:
    """A tensor spec.  ``dtype=None`` means the sample's dtype.

    Args:
        shape: the logical shape (``()`` is 0-dim, a 0 in it makes an empty tensor).
        dtype: a dtype name (``"int64"``), or None for the dtype under test.
        low, high: value range (inclusive for integers); for index tensors use ``low=0, high=n-1``.
        noncontig: lay the tensor out non-contiguously (every other element of a wider buffer
            in the last dim, plus a transposition for 2+ dims).
        transposed: lay it out in reversed dimension order (a ``permute`` of a contiguous tensor).
        expand: broadcast the (size-1 dims of the) data to this shape with stride 0.
        nonzero: replace zeros by a nonzero value (divisors).
        special: put nan/inf/-inf/-0.0 in the first elements (floating dtypes only).
        values: explicit data (a nested list), converted to ``dtype``.
        seed: varies the data between otherwise identical specs.
    """

    shape: tuple[int, ...] = ()
    dtype: str | None = None
    low: float | None = None
    high: float | None = None
    noncontig: bool = False
    transposed: bool = False
    expand: tuple[int, ...] | None = None
    nonzero: bool = False
    special: bool = False
    values: Any = None
    seed: int = 0


@dataclass(frozen=True)
class Attr:
    """A module attribute argument (``memory_format=Attr("channels_last")``), materialized as ``module.<name>``."""

    name: str


class Dtype(Attr):
    """A dtype argument (``dtype=Dtype("float64")``), materialized as ``module.float64``."""


@dataclass
class SampleInput:
    """One call: positional ``args`` and keyword ``kwargs`` holding specs and plain values.

    ``name`` is a short label shown in test ids; ``data_dependent`` marks samples whose output
    shape depends on values (skipped on backends without data).
    """

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    data_dependent: bool = False
    inplace_ok: bool = True  # run the in-place variant on this sample (if the op has one)
    out_ok: bool = True  # run the out= variant on this sample


@dataclass(frozen=True)
class Skip:
    """Skip (``xfail=False``) some cases of an op, with a reason.

    ``dtypes``/``devices``/``samples`` restrict it (None = all); ``samples`` match sample names.
    ``variant`` is ``None`` (the whole case), ``"out"`` or ``"inplace"``.
    """

    reason: str
    dtypes: tuple[str, ...] | None = None
    devices: tuple[str, ...] | None = None
    samples: tuple[str, ...] | None = None
    variant: str | None = None

    def applies(self, dtype: str, device: str, sample: str, variant: str | None = None) -> bool:
        return ((self.dtypes is None or dtype in self.dtypes) and (self.devices is None or device in self.devices)
                and (self.samples is None or sample in self.samples) and self.variant == variant)


@dataclass
class OpInfo:
    """Everything the conformance suite needs to run one operator against the reference.

    Args:
        name: unique id (also the default ``op`` path).
        op: dotted path of the callable in a framework module (``"Tensor.add_"`` calls
            ``module.Tensor.add_(self, ...)``).
        aten: the aten overloads this entry exercises (``"add.Tensor"``), used by the coverage test.
        dtypes: dtype names the samples are generated for.
        sample_inputs: ``(dtype) -> iterable of SampleInput``.
        tolerances: per-dtype ``(rtol, atol)`` overrides.
        supports_out: also run ``op(..., out=empty)`` and compare.
        inplace_variant: dotted path of the in-place method (``"Tensor.add_"``), run on a
            copy of the first argument; a torch error (cast, shape) must be reproduced.
        meta_ok: False to skip the op on backends without data.
        data_dependent: the output shape depends on input values (skipped on meta).
        factory: pass ``device=`` (the device under test) to the call.
        random: results are random: only shape, dtype (and strides on meta) are compared.
        view: results must share storage with the first tensor argument iff torch's do.
        compare_strides_on_data: also compare result strides on data backends.
        error_message: compare the first line of error messages as well as their type.
        skips: :class:`Skip` entries with reasons.
    """

    name: str
    sample_inputs: Callable[[str], Iterable[SampleInput]]
    dtypes: tuple[str, ...] = ALL_DTYPES
    op: str | None = None
    aten: tuple[str, ...] = ()
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    supports_out: bool = False
    inplace_variant: str | None = None
    meta_ok: bool = True
    data_dependent: bool = False
    factory: bool = False
    random: bool = False
    view: bool = False
    compare_strides_on_data: bool = False
    error_message: bool = True
    skips: tuple[Skip, ...] = ()

    @property
    def path(self) -> str:
        return self.op or self.name

    def tolerance(self, dtype_name: str) -> tuple[float, float]:
        """(rtol, atol) for a result of ``dtype_name``; (0, 0) for exact dtypes."""
        if dtype_name in self.tolerances:
            return self.tolerances[dtype_name]
        return DEFAULT_TOLERANCES.get(dtype_name, (0.0, 0.0))

    def skip_reason(self, dtype: str, device: str, sample: str, variant: str | None = None) -> str | None:
        for skip in self.skips:
            if skip.applies(dtype, device, sample, variant):
                return skip.reason
        return None

    def samples(self, dtype: str) -> list[SampleInput]:
        """The op's samples for ``dtype``, each named (``#i`` when the generator gave no name)."""
        out = []
        for i, s in enumerate(self.sample_inputs(dtype)):
            if not s.name:
                s.name = f"s{i}"
            out.append(s)
        return out


def resolve(module: Any, path: str) -> Callable[..., Any]:
    """``module.<path>`` for a dotted path (``"linalg.inv"``), importing submodules as needed."""
    import importlib
    import types

    obj = module
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            if not isinstance(obj, types.ModuleType):
                raise AttributeError(f"{module.__name__}.{path}: {obj!r} has no attribute {part!r}") from None
            obj = importlib.import_module(f"{obj.__name__}.{part}")
    return obj


# ---- data -----------------------------------------------------------------------------------------------
def _np_dtype(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(name)


def make_data(spec: T, dtype: str, shape: Sequence[int], salt: int) -> np.ndarray:
    """Deterministic values for ``spec`` (same for both libraries): small, exactly representable."""
    if spec.values is not None:
        values = np.asarray(spec.values)
        if dtype == "bfloat16":
            return values.astype(np.float32).astype(_np_dtype(dtype))
        return values.astype(_np_dtype(dtype))
    shape = tuple(shape)
    rng = np.random.default_rng(spec.seed * 7919 + salt + zlib.crc32(f"{dtype}{shape}".encode()))
    if dtype == "bool":
        arr = np.asarray(rng.integers(0, 2, shape)).astype(bool)
        if spec.nonzero:
            arr[...] = True
        return arr
    if dtype in INT_DTYPES:
        low = int(spec.low if spec.low is not None else (0 if dtype == "uint8" else -4))
        high = int(spec.high if spec.high is not None else 4)
        arr = np.asarray(rng.integers(max(low, 0) if dtype == "uint8" else low, high + 1, shape))
        if spec.nonzero:
            arr[arr == 0] = 1 if high >= 1 else -1
        return arr.astype(dtype)
    low = float(spec.low if spec.low is not None else -4)
    high = float(spec.high if spec.high is not None else 4)
    values = np.asarray(np.round(rng.uniform(low, high, shape), 1))
    if dtype in COMPLEX_DTYPES:
        values = np.asarray(values + 1j * np.round(rng.uniform(low, high, shape), 1))
    if spec.nonzero:
        values[values == 0] = 0.5
    if spec.special and values.size >= 4 and dtype not in COMPLEX_DTYPES:
        flat = values.reshape(-1)
        flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return np.asarray(values).astype(_np_dtype(dtype))


def _from_numpy(module: Any, arr: np.ndarray, device: str) -> Any:
    """A contiguous tensor of ``module`` on ``device`` holding ``arr``."""
    if arr.size == 0:
        # NumPy gives empty arrays 0 strides; build them with the library's own C strides instead
        t = module.zeros(arr.shape, dtype=getattr(module, arr.dtype.name))
    elif module.__name__ == "torch" and arr.dtype.name == "bfloat16":
        t = module.from_numpy(np.ascontiguousarray(arr.astype(np.float32))).to(module.bfloat16)
    else:
        t = module.from_numpy(np.ascontiguousarray(arr).copy())
    return t if device == "cpu" else t.to(device)


def _tensor(module: Any, spec: T, dtype: str, device: str, salt: int) -> Any:
    target = spec.expand if spec.expand is not None else spec.shape
    shape = tuple(spec.shape)
    if spec.noncontig and len(shape) >= 1:
        # every other element of the last dim of a wider buffer, stored transposed for 2+ dims
        n = len(shape)
        phys = tuple(reversed(shape[:-1] + (shape[-1] * 2,)))
        data = make_data(spec, dtype, shape, salt)
        t = _from_numpy(module, np.zeros(phys, dtype=data.dtype), device)
        if n >= 2:
            t = t.permute(*reversed(range(n)))
        t = t[..., ::2]
        src = _from_numpy(module, data, device)
        t.copy_(src)
        return t if spec.expand is None else t.expand(*target)
    if spec.transposed and len(shape) >= 2:
        data = make_data(spec, dtype, shape, salt)
        t = _from_numpy(module, np.ascontiguousarray(data.transpose()), device)
        t = t.permute(*reversed(range(len(shape))))
        return t if spec.expand is None else t.expand(*target)
    data = make_data(spec, dtype, shape, salt)
    t = _from_numpy(module, data, device)
    return t if spec.expand is None else t.expand(*target)


def materialize(value: Any, module: Any, device: str, dtype: str, _salt: list[int] | None = None) -> Any:
    """Replace every :class:`T` (and :class:`Dtype`) in ``value`` by an object of ``module``.

    Materializing the same sample for two modules gives tensors with equal values, dtypes,
    shapes and strides (a meta device keeps shapes, dtypes and strides).
    """
    salt = _salt if _salt is not None else [0]
    if isinstance(value, T):
        salt[0] += 1
        return _tensor(module, value, value.dtype or dtype, device, salt[0])
    if isinstance(value, Attr):
        return getattr(module, value.name)
    if isinstance(value, SampleInput):
        args = tuple(materialize(a, module, device, dtype, salt) for a in value.args)
        kwargs = {k: materialize(v, module, device, dtype, salt) for k, v in value.kwargs.items()}
        return args, kwargs
    if isinstance(value, list):
        return [materialize(v, module, device, dtype, salt) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(v, module, device, dtype, salt) for v in value)
    return value
