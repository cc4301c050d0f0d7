"""Runs one fuzz case in torch and in torchplug and classifies what happened.

Categories (``CATEGORIES``):

- ``agree``: both returned, same structure, shapes, dtypes and values (tolerance by dtype).
- ``both_raise``: both raised the same exception type.
- ``type_mismatch``: both raised, different types.
- ``silent_accept``: torch raised, torchplug returned.
- ``torchplug_only_raise``: torch returned, torchplug raised.
- ``value_mismatch``: both returned, results differ (structure, shape, dtype, values, NaN
  placement, input gradients).
- ``crash``: the process died or the case ran past its time limit (see ``_process``).
- ``skipped``: not applicable on this device (a result shape that depends on values, on a
  backend without data).

torch runs on cpu; torchplug on the device under test.  On a backend without data (meta) only
structure, shapes and dtypes are compared, and a case torch's meta kernels accept although torch's
cpu kernels reject it (a data-dependent check such as an index bound) may be accepted.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from torchplug.testing._compare import _assert_values, dtype_name
from torchplug.testing.reference_quirks import correct_reference
from torchplug.testing.fuzz._spec import FLOATS, Call, _complex_literal, _from_numpy, materialize, np_dtype, spec_data
from torchplug.testing.fuzz._table import FuzzOp, call_op, repro

__all__ = ["CATEGORIES", "FAILURES", "Outcome", "Runner", "tolerance"]

CATEGORIES = ("agree", "both_raise", "type_mismatch", "silent_accept", "torchplug_only_raise", "value_mismatch",
              "crash", "skipped")
FAILURES = ("type_mismatch", "silent_accept", "torchplug_only_raise", "value_mismatch", "crash")

# (rtol, atol) per result dtype and tolerance class; "reduce" atols are multiplied by the magnitude
# of the case (see ``_magnitude``): summation order legitimately differs between implementations.
_TOL = {
    "elementwise": {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
                    "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)},
    "reduce": {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (1e-5, 2e-6),
               "float64": (1e-9, 1e-12), "complex64": (1e-5, 2e-6), "complex128": (1e-9, 1e-12)},
}
GRAD_SEED = 20240613


def tolerance(kind: str, dtype: str, magnitude: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for a result of ``dtype`` under tolerance class ``kind`` (exact dtypes: zeros)."""
    if kind == "exact":
        return 0.0, 0.0
    rtol, atol = _TOL[kind].get(dtype, (0.0, 0.0))
    return rtol, atol * (max(1.0, magnitude) if kind == "reduce" else 1.0)


@dataclass
class Outcome:
    """What one case did.  ``detail`` is one line; ``repro`` the reproducer (failures only)."""

    index: int
    op: str
    category: str
    detail: str = ""
    torch_error: str = ""
    ours_error: str = ""
    allowed: str = ""
    repro: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v != ""}


class _Shape:
    """A result tensor of a backend without data: shape and dtype only."""

    def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
        self.shape, self.dtype = shape, dtype


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().replace("torchplug", "torch")
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def _same_type(ours: BaseException, theirs: BaseException) -> bool:
    name = type(theirs).__name__
    return any(cls.__name__ == name for cls in type(ours).__mro__)


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "stride")


class Runner:
    """Runs cases on ``device`` against torch on cpu (torch and torchplug are imported once)."""

    def __init__(self, device: str = "cpu", allowances: Any = None) -> None:
        import torch

        import torchplug
        from torchplug._runtime.backends import backend_for

        self.torch, self.tp, self.device = torch, torchplug, device
        self.data = backend_for(torchplug.device(device).type).has_data
        if allowances is None:
            from torchplug.testing.fuzz.allowed import ALLOWED

            allowances = ALLOWED
        self.allowances = allowances

    # ---- running -------------------------------------------------------------------------------------------
    def _execute(self, op: FuzzOp, call: Call, module: Any, device: str) -> tuple[Any, BaseException | None, Any]:
        """(result, exception, input gradients or None) of ``call`` in ``module``."""
        leaves: list[Any] = []
        try:
            args = materialize(call.args, module, device, leaves)
            kwargs = materialize(call.kwargs, module, device, leaves)
        except Exception as exc:  # noqa: BLE001 - building the inputs failed: reported like the op's error
            return None, exc, None
        if op.factory and device != "cpu":
            kwargs["device"] = device
        try:
            result = call_op(op, module, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - every error is compared with the other library's
            return None, exc, None
        if module is self.torch and device != "meta":
            # torch's answers that change with its CPU dispatch level become the mathematically right ones
            first = call.tensors()
            result = correct_reference(op.path, first[0].dtype if first else "", args, kwargs, result)
        if not call.grad:
            return result, None, None
        target = _grad_target(result)
        if target is None:
            return result, None, None
        try:
            gout = _grad_output(module, target, device)
            target.backward(gout)
        except Exception as exc:  # noqa: BLE001
            return result, exc, None
        return result, None, [leaf.grad for leaf in leaves]

    def run(self, op: FuzzOp, call: Call, index: int = 0) -> Outcome:
        """Run ``call`` in both libraries and classify it (allowances applied).

        An error of the harness itself (comparing, matching allowances) is reported as a ``crash`` of
        the case with its traceback, so that a run never stops half way.
        """
        try:
            return self._run(op, call, index)
        except Exception:  # noqa: BLE001
            import traceback

            lines = traceback.format_exc().strip().splitlines()
            return Outcome(index, op.name, "crash", "fuzz harness error: " + " | ".join(lines[-3:]),
                           repro=repro(op, call))

    def _run(self, op: FuzzOp, call: Call, index: int) -> Outcome:
        if not self.data and (op.data_dependent or call.data_dependent):
            return Outcome(index, op.name, "skipped", "the output shape depends on values (no data on this device)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected, theirs, grads_th = self._execute(op, call, self.torch, "cpu")
            actual, ours, grads_tp = self._execute(op, call, self.tp, self.device)
            outcome = self._classify(op, call, index, expected, theirs, grads_th, actual, ours, grads_tp)
        if outcome.category in FAILURES:
            for allowance in self.allowances:
                if allowance.matches(op.name, outcome, call, self.device):
                    outcome.allowed = allowance.id
                    break
            outcome.repro = repro(op, call, _grad_source(expected if theirs is None else actual) if call.grad else None)
        return outcome

    def _classify(self, op: FuzzOp, call: Call, index: int, expected: Any, theirs: BaseException | None,
                  grads_th: Any, actual: Any, ours: BaseException | None, grads_tp: Any) -> Outcome:
        if theirs is not None and not self.data and ours is None:
            # shape-only backend: a check that needs the data (index bounds) cannot happen; torch's own
            # meta kernels say whether the call is checkable without data
            if self._meta_accepts(op, call):
                return Outcome(index, op.name, "agree", "torch cpu raised a data-dependent error")
        if theirs is not None and ours is not None:
            cat = "both_raise" if _same_type(ours, theirs) else "type_mismatch"
            return Outcome(index, op.name, cat, torch_error=_first_line(theirs), ours_error=_first_line(ours))
        if theirs is not None:
            return Outcome(index, op.name, "silent_accept", f"torchplug returned {_summary(actual)}",
                           torch_error=_first_line(theirs))
        if ours is not None:
            return Outcome(index, op.name, "torchplug_only_raise", f"torch returned {_summary(expected)}",
                           ours_error=_first_line(ours))
        problem = self._compare(op, call, expected, actual)
        if problem is None and (grads_th is not None or grads_tp is not None):
            if grads_th is None or grads_tp is None:
                problem = f"grad: torch {'computed' if grads_th is not None else 'did not compute'} input gradients, " \
                          f"torchplug {'did' if grads_tp is not None else 'did not'}"
            else:
                scale = op.grad_tol(call) if op.grad_tol is not None else 1.0
                # the backward ran in the forward result's precision when that is lower (log_softmax(dtype=))
                target = _grad_target(expected)
                problem = self._compare(op, call, tuple(grads_th), tuple(grads_tp), what="grad", kind="reduce",
                                        scale=scale, floor=dtype_name(target.dtype) if target is not None else None)
        if problem is not None:
            return Outcome(index, op.name, "value_mismatch", problem)
        return Outcome(index, op.name, "agree")

    def _meta_accepts(self, op: FuzzOp, call: Call) -> bool:
        _, exc, _ = self._execute(op, call, self.torch, "meta")
        return exc is None

    # ---- comparing ---------------------------------------------------------------------------------------------
    def _compare(self, op: FuzzOp, call: Call, expected: Any, actual: Any, what: str = "result",
                 kind: str | None = None, scale: float = 1.0, floor: str | None = None) -> str | None:
        """None if ``actual`` matches ``expected``, else a one-line description of the first difference."""
        try:
            e, a = _to_numpy(expected, True), _to_numpy(actual, self.data)
            if op.canon is not None and what == "result" and self.data:
                inputs = [np.broadcast_to(spec_data(s), s.shape) for s in call.tensors()]
                e, a = op.canon(call, inputs, e), op.canon(call, inputs, a)
            magnitude = _magnitude(call, e) * scale
            return _diff(e, a, kind or op.tol, magnitude, what, floor)
        except Exception as exc:  # noqa: BLE001 - an unreadable result is a mismatch, not a harness crash
            return f"{what}: could not compare: {_first_line(exc)}"


def _summary(x: Any) -> str:
    if _is_tensor(x):
        return f"a tensor of shape {tuple(x.shape)} and dtype {dtype_name(x.dtype)}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)}"
    return repr(x)[:80]


def _grad_target(result: Any) -> Any:
    """The first floating tensor of ``result`` that requires grad (the one backward runs through)."""
    if isinstance(result, (list, tuple)):
        for r in result:
            t = _grad_target(r)
            if t is not None:
                return t
        return None
    if _is_tensor(result) and getattr(result, "requires_grad", False) and dtype_name(result.dtype) in FLOATS:
        return result
    return None


def grad_output_data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The incoming gradient of a backward pass: fixed values in [-2, 2] (multiples of 1/8)."""
    rng = np.random.default_rng(GRAD_SEED)
    return np.asarray(np.round(rng.uniform(-2, 2, shape) * 8) / 8).astype(np_dtype(dtype))


def _grad_output(module: Any, target: Any, device: str) -> Any:
    return _from_numpy(module, grad_output_data(tuple(target.shape), dtype_name(target.dtype)), device)


def _grad_source(result: Any) -> str | None:
    """The reproducer's incoming gradient for ``result`` (as ``_grad_output`` builds it)."""
    target = _grad_target(result)
    if target is None:
        return None
    name = dtype_name(target.dtype)
    data = grad_output_data(tuple(target.shape), name)
    if not data.size:
        return f"torch.zeros({tuple(data.shape)}, dtype=torch.{name})"
    return f"torch.tensor({_complex_literal(data)}, dtype=torch.{name})"


def _to_numpy(x: Any, data: bool) -> Any:
    """Results as NumPy: tensors become arrays of their own dtype (bfloat16 via ml_dtypes)."""
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v, data) for v in x) if type(x) in (list, tuple) else tuple(
            _to_numpy(v, data) for v in x)
    if not _is_tensor(x):
        return x
    name = dtype_name(x.dtype)
    if not data or str(x.device) == "meta":
        return _Shape(tuple(x.shape), name)
    t = x.detach()
    if str(t.device) != "cpu":
        t = t.cpu()
    if hasattr(t, "resolve_conj"):
        t = t.resolve_conj().resolve_neg()
    if name == "bfloat16":
        return np.asarray(t.float().numpy()).astype(np_dtype("bfloat16"))
    if name == "complex32":  # NumPy has no complex32: its values as complex64, its name kept
        return np.asarray(t.to(_module_of(t).complex64).numpy()).view(_Complex32)
    return np.asarray(t.numpy())


class _Complex32(np.ndarray):
    """complex64 values of a complex32 tensor."""


def _module_of(t: Any) -> Any:
    import sys

    return sys.modules[type(t).__module__.split(".")[0]]


def _finite_max(x: np.ndarray) -> float:
    v = _finite(x)
    return float(np.abs(v).max()) if v.size else 0.0


def _magnitude(call: Call, expected: Any) -> float:
    """How large the case's numbers are: the largest finite |result| or the product of the two
    largest finite |input| maxima (a sum of products such as matmul or conv grows with both)."""
    maxima = sorted((_finite_max(spec_data(s)) for s in call.tensors() if s.numel), reverse=True)
    inputs = maxima[0] * (maxima[1] if len(maxima) > 1 and maxima[1] > 1 else 1.0) if maxima else 1.0
    flat = expected if isinstance(expected, (list, tuple)) else [expected]
    result = max((_finite_max(r) for r in flat if isinstance(r, np.ndarray) and r.size), default=0.0)
    return max(1.0, inputs, result)


def _finite(a: np.ndarray) -> np.ndarray:
    v = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    return v[np.isfinite(v)]


def _diff(e: Any, a: Any, kind: str, magnitude: float, where: str, floor: str | None = None) -> str | None:
    """None if ``a`` matches ``e``; else the first difference.  ``floor``: a dtype whose (looser)
    tolerance applies when it is looser than the result's own."""
    if isinstance(e, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(e):
            return f"{where}: torch returned {_kind(e)}, torchplug {_kind(a)}"
        for i, (ee, aa) in enumerate(zip(e, a)):
            problem = _diff(ee, aa, kind, magnitude, f"{where}[{i}]", floor)
            if problem:
                return problem
        return None
    if isinstance(e, _Shape) or isinstance(a, _Shape):
        if not isinstance(a, (_Shape, np.ndarray)):
            return f"{where}: torch returned a tensor, torchplug {_kind(a)}"
        if tuple(a.shape) != tuple(e.shape):
            return f"{where}: shape {tuple(a.shape)} != torch's {tuple(e.shape)}"
        dt_a = a.dtype if isinstance(a, _Shape) else _np_name(a)
        dt_e = e.dtype if isinstance(e, _Shape) else _np_name(e)
        return None if dt_a == dt_e else f"{where}: dtype {dt_a} != torch's {dt_e}"
    if isinstance(e, np.ndarray):
        if not isinstance(a, np.ndarray):
            return f"{where}: torch returned a tensor, torchplug {_kind(a)}"
        if a.shape != e.shape:
            return f"{where}: shape {a.shape} != torch's {e.shape}"
        if _np_name(a) != _np_name(e):
            return f"{where}: dtype {_np_name(a)} != torch's {_np_name(e)}"
        rtol, atol = tolerance(kind, _np_name(e), magnitude)
        if floor is not None:
            rtol_f, atol_f = tolerance(kind, floor, magnitude)
            rtol, atol = max(rtol, rtol_f), max(atol, atol_f)
        try:
            _assert_values(a, e, rtol, atol, True, "", "")
        except AssertionError as exc:
            lines = [ln for ln in str(exc).splitlines() if ln.strip()]
            return f"{where}: {'; '.join(lines[1:3])}"
        return None
    if isinstance(a, np.ndarray) or isinstance(a, _Shape):
        return f"{where}: torch returned {_kind(e)}, torchplug a tensor"
    if e is None or a is None or isinstance(e, str) or isinstance(a, str):
        return None if e == a else f"{where}: {a!r} != torch's {e!r}"
    try:
        if type(e) is bool or type(a) is bool:
            same = type(e) is type(a) and e == a
        else:
            same = bool(e == a) or (e != e and a != a) or abs(complex(a) - complex(e)) <= 1e-6 * max(1.0, abs(complex(e)))
    except (TypeError, ValueError):
        same = False
    return None if same else f"{where}: {a!r} != torch's {e!r}"


def _np_name(a: np.ndarray) -> str:
    if isinstance(a, _Complex32):
        return "complex32"
    return "bfloat16" if a.dtype == np_dtype("bfloat16") else a.dtype.name


def _kind(x: Any) -> str:
    if isinstance(x, np.ndarray) or isinstance(x, _Shape):
        return "a tensor"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)}"
    return f"{type(x).__name__} {x!r}"[:80]

