"""Runs one conformance case (op, dtype, sample) on a torchplug device against real PyTorch.

On a backend with data, results are compared with torch's CPU results (values, dtypes,
shapes, view storage sharing, ``out=`` and in-place variants).  On a backend without data
(``Backend.has_data=False``, e.g. meta), shapes, dtypes, strides and storage offsets are
compared with torch's meta tensors.  A torch error must be reproduced: same exception type
and, unless the OpInfo opts out, the same first line of the message.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torchplug.testing._compare import compare_results, dtype_name, shares_storage
from torchplug.testing.opinfo import OpInfo, SampleInput, T, materialize, resolve
from torchplug.testing.reference_quirks import correct_reference

__all__ = ["Case", "SkipCase", "cases", "run_case", "device_has_data", "reference_device", "REF_DEVICE_VAR",
           "CONFORMANCE_TEST_NAME"]

CONFORMANCE_TEST_NAME = "test_conformance"
REF_DEVICE_VAR = "TORCHPLUG_TEST_REF_DEVICE"


class SkipCase(Exception):
    """Raised by :func:`run_case` when a case does not apply (the test runner turns it into a skip)."""


@dataclass
class Case:
    """One parametrized conformance test: an op, a dtype and one of its samples."""

    op: OpInfo
    dtype: str
    sample: SampleInput

    @property
    def id(self) -> str:
        return f"{self.op.name}-{self.dtype}-{self.sample.name}"


def cases(ops: list[OpInfo] | None = None) -> list[Case]:
    """Every (op, dtype, sample) of the registry (or of ``ops``)."""
    if ops is None:
        from torchplug.testing.opinfos import op_db

        ops = op_db()
    return [Case(op, dtype, sample) for op in ops for dtype in op.dtypes for sample in op.samples(dtype)]


def device_has_data(device: str) -> bool:
    """False for shape-only backends (``Backend.has_data``)."""
    import torchplug
    from torchplug._runtime.backends import backend_for

    return backend_for(torchplug.device(device).type).has_data


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, BaseException | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - any error is compared with the other library's
            return None, exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).replace("torchplug", "torch")
    return text.splitlines()[0] if text else ""


def _check_same_error(ours: BaseException | None, theirs: BaseException, check_message: bool, what: str) -> None:
    if isinstance(theirs, TypeError) and (ours is None or isinstance(ours, TypeError)):
        return  # torch's argument parser rejected the Python types; torchplug may accept a superset
    if ours is None:
        raise AssertionError(f"{what}: torch raised {type(theirs).__name__}: {_first_line(theirs)!r}; torchplug did not raise")
    if type(ours).__name__ != type(theirs).__name__ and not isinstance(ours, type(theirs)):
        raise AssertionError(f"{what}: torch raised {type(theirs).__name__}({_first_line(theirs)!r}), torchplug raised "
                             f"{type(ours).__name__}({_first_line(ours)!r})") from ours
    if check_message and _first_line(ours) != _first_line(theirs):
        raise AssertionError(f"{what}: message {_first_line(ours)!r} != torch's {_first_line(theirs)!r}") from ours


def _cpu_outcome(op: OpInfo, sample: SampleInput, dtype: str, fn_th: Callable[..., Any],
                 extra: dict[str, Any] | None = None) -> tuple[Any, BaseException | None]:
    """torch's result (or error) for ``sample`` on cpu."""
    import torch

    args, kwargs = materialize(sample, torch, "cpu", dtype)
    if op.factory:
        kwargs["device"] = "cpu"
    if extra:
        kwargs.update({k: (v.to("cpu") if hasattr(v, "to") else v) for k, v in extra.items()})
    return _call(fn_th, args, kwargs)


def reference_device(data: bool) -> str:
    """torch's device the results are compared with: ``cpu`` for backends with data (``meta`` for
    shape-only ones); ``$TORCHPLUG_TEST_REF_DEVICE`` overrides it for backends with data
    (``cuda``: compare a GPU backend with torch's CUDA results)."""
    if not data:
        return "meta"
    return os.environ.get(REF_DEVICE_VAR) or "cpu"


def _materialized(sample: SampleInput, module: Any, device: str, dtype: str, factory: bool) -> tuple[Any, Any]:
    args, kwargs = materialize(sample, module, device, dtype)
    if factory:
        kwargs["device"] = device
    return args, kwargs


def _first_tensor_spec(sample: SampleInput) -> T | None:
    return sample.args[0] if sample.args and isinstance(sample.args[0], T) else None


def _tensors(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _tensors(item)]
    return [x] if hasattr(x, "untyped_storage") else []


def run_case(case: Case, device: str) -> None:
    """Run ``case`` on ``device``; raises AssertionError on a mismatch, SkipCase if not applicable."""
    import torch

    import torchplug

    op, dtype, sample = case.op, case.dtype, case.sample
    data = device_has_data(device)
    reason = op.skip_reason(dtype, device, sample.name)
    if reason:
        raise SkipCase(reason)
    if not data and not op.meta_ok:
        raise SkipCase(f"{op.name}: not run on backends without data")
    if not data and (op.data_dependent or sample.data_dependent):
        raise SkipCase(f"{op.name}: output shape depends on the data")
    ref_device = reference_device(data)
    if ref_device not in ("cpu", "meta"):
        # An invalid call can poison a GPU context (device-side asserts): torch's CPU decides
        # validity first, and an error is then compared by type only.
        _cpu_result, cpu_exc = _cpu_outcome(op, sample, dtype, resolve(torch, op.path))
        if cpu_exc is not None:
            _, ours = _call(resolve(torchplug, op.path), *_materialized(sample, torchplug, device, dtype, op.factory))
            _check_same_error(ours, cpu_exc, False, f"{op.path} (error type vs torch cpu)")
            return
    th_args, th_kwargs = materialize(sample, torch, ref_device, dtype)
    tp_args, tp_kwargs = materialize(sample, torchplug, device, dtype)
    if op.factory:
        th_kwargs["device"] = ref_device
        tp_kwargs["device"] = device
    fn_th, fn_tp = resolve(torch, op.path), resolve(torchplug, op.path)
    expected, exc = _call(fn_th, th_args, th_kwargs)
    if data:
        expected = correct_reference(op.path, dtype, th_args, th_kwargs, expected)
    actual, ours = _call(fn_tp, tp_args, tp_kwargs)
    if not data and (exc is not None or ours is not None):
        # torch's meta kernels skip many of its CPU checks (and word errors differently): CPU decides
        # whether the call is valid; the meta backend must then raise the same exception type.
        cpu_result, cpu_exc = _cpu_outcome(op, sample, dtype, fn_th)
        if cpu_exc is not None:
            _check_same_error(ours, cpu_exc, False, f"{op.path} (error type vs torch cpu)")
            return
        if ours is not None:
            raise AssertionError(f"{op.path}: torchplug raised {type(ours).__name__}: {ours}") from ours
        if exc is not None:  # torch cannot run it on meta: compare shapes and dtypes with its cpu result
            compare_results(actual, cpu_result, values=False, strides=False)
            return
    if exc is not None:
        _check_same_error(ours, exc, op.error_message, op.path)
        return
    if ours is not None:
        raise AssertionError(f"{op.path}: torchplug raised {type(ours).__name__}: {ours}") from ours
    values = data and not op.random
    compare_results(actual, expected, values=values, strides=not data or op.compare_strides_on_data, tol_for=op.tolerance)
    if op.view and data:
        base_th, base_tp = _tensors(th_args[:1]), _tensors(tp_args[:1])
        if base_th and base_tp:
            for r_th, r_tp in zip(_tensors(expected), _tensors(actual)):
                if r_th.untyped_storage().nbytes() == 0:
                    continue
                want = shares_storage(r_th, base_th[0])
                assert shares_storage(r_tp, base_tp[0]) == want, (
                    f"{op.path}: result {'should' if want else 'should not'} share storage with the input")
    if op.supports_out and sample.out_ok and hasattr(expected, "dtype"):
        reason = op.skip_reason(dtype, device, sample.name, "out")
        if not reason:
            _run_out(op, sample, dtype, device, ref_device, fn_th, fn_tp, expected, values)
    if op.inplace_variant and sample.inplace_ok:
        reason = op.skip_reason(dtype, device, sample.name, "inplace")
        spec = _first_tensor_spec(sample)
        if not reason and spec is not None and spec.expand is None:
            _run_inplace(op, sample, dtype, device, ref_device, values)


def _run_out(op: OpInfo, sample: SampleInput, dtype: str, device: str, ref_device: str, fn_th: Any, fn_tp: Any,
             expected: Any, values: bool) -> None:
    import torch

    import torchplug

    th_args, th_kwargs = materialize(sample, torch, ref_device, dtype)
    tp_args, tp_kwargs = materialize(sample, torchplug, device, dtype)
    if op.factory:
        th_kwargs["device"] = ref_device
        tp_kwargs["device"] = device
    out_dt = dtype_name(expected.dtype)
    out_th = torch.empty(0, dtype=getattr(torch, out_dt), device=ref_device)
    out_tp = torchplug.empty(0, dtype=getattr(torchplug, out_dt), device=device)
    r_th, exc = _call(fn_th, th_args, {**th_kwargs, "out": out_th})
    r_tp, ours = _call(fn_tp, tp_args, {**tp_kwargs, "out": out_tp})
    what = f"{op.path}(out=)"
    if ref_device == "meta" and (exc is not None or ours is not None):
        _, cpu_exc = _cpu_outcome(op, sample, dtype, fn_th, {"out": torch.empty(0, dtype=getattr(torch, out_dt))})
        if cpu_exc is not None:
            _check_same_error(ours, cpu_exc, False, what)
            return
        if ours is not None:
            raise AssertionError(f"{what}: torchplug raised {type(ours).__name__}: {ours}") from ours
        if exc is not None:
            return
    if exc is not None:
        _check_same_error(ours, exc, op.error_message, what)
        return
    if ours is not None:
        raise AssertionError(f"{what}: torchplug raised {type(ours).__name__}: {ours}") from ours
    assert r_tp is out_tp, f"{op.path}(out=) must return the out tensor"
    compare_results(out_tp, out_th, values=values, strides=ref_device == "meta", tol_for=op.tolerance)


def _run_inplace(op: OpInfo, sample: SampleInput, dtype: str, device: str, ref_device: str, values: bool) -> None:
    import torch

    import torchplug

    assert op.inplace_variant is not None
    th_args, th_kwargs = materialize(sample, torch, ref_device, dtype)
    tp_args, tp_kwargs = materialize(sample, torchplug, device, dtype)
    fn_th, fn_tp = resolve(torch, op.inplace_variant), resolve(torchplug, op.inplace_variant)
    r_th, exc = _call(fn_th, th_args, th_kwargs)
    r_tp, ours = _call(fn_tp, tp_args, tp_kwargs)
    what = op.inplace_variant
    if ref_device == "meta" and (exc is not None or ours is not None):
        _, cpu_exc = _cpu_outcome(op, sample, dtype, fn_th)
        if cpu_exc is not None:
            _check_same_error(ours, cpu_exc, False, what)
            return
        if ours is not None:
            raise AssertionError(f"{what}: torchplug raised {type(ours).__name__}: {ours}") from ours
        if exc is not None:
            return
    if exc is not None:
        _check_same_error(ours, exc, op.error_message, what)
        return
    if ours is not None:
        raise AssertionError(f"{what}: torchplug raised {type(ours).__name__}: {ours}") from ours
    assert r_tp is tp_args[0], f"{what} must return self"
    compare_results(tp_args[0], th_args[0], values=values, strides=ref_device == "meta", tol_for=op.tolerance)
