"""The core's own registrations: aten definitions, composites, BackendSelect and ADInplaceOrView.

These are attributed to "torchplug core" in introspection.  They are made once, when
``torchplug`` is imported, through the same Library API plugins use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._runtime.backends import backend_for
from torchplug._ops import composites_complex as _composites_complex
from torchplug._ops import composites_linalg as _composites_linalg
from torchplug._ops import composites_nn as _composites_nn
from torchplug._ops import composites_shape as _composites_shape
from torchplug._tensor import math_bits as _math_bits
from torchplug._ops.composites import COMPOSITES, inplace_kernel, out_kernel
from torchplug._ops.composites_math import register as register_math_composites
from torchplug._ops.composites_more import register as register_more_composites
from torchplug._ops.composites_quantile import register as register_quantile_composites
from torchplug._runtime.device import get_default_device
from torchplug._tensor.mem_overlap import INTERNAL_OVERLAP_MESSAGE, assert_no_partial_overlap, has_internal_overlap, overlap_policy
from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.tls import tls
from torchplug._schemas import expand_table
from torchplug._tensor.tensor import Tensor, autograd_hooks
from torchplug._dispatch.library import Library
from torchplug._ops.composites_fft import register as register_fft_composites

__all__ = ["register_core", "CORE_OWNER"]

CORE_OWNER = "torchplug core"
_BELOW_BACKEND_SELECT = K.below(K.BACKEND_SELECT_BIT)


def _redispatcher(entry: OperatorEntry) -> Callable[..., Any]:
    cache_get = entry.cache.get

    def redispatch(ks: int, *args: Any) -> Any:
        kernel = cache_get(ks)
        if kernel is None:
            kernel = DISPATCHER.lookup(entry, ks)
        return kernel(*args)

    return redispatch


def backend_select_kernel(entry: OperatorEntry) -> Callable[..., Any]:
    """Factory ops have no tensor to pick a backend: use ``device=`` (or the default device)."""
    index = next(i for i, a in enumerate(entry.schema.arguments) if a.name == "device")
    redispatch = _redispatcher(entry)

    def kernel(ks: int, *args: Any) -> Any:
        dev = args[index]
        if dev is None:
            dev = get_default_device()
            args = args[:index] + (dev,) + args[index + 1 :]
        backend = backend_for(dev.type)
        return redispatch(((ks & _BELOW_BACKEND_SELECT) | backend.keyset) & tls.mask, *args)

    kernel.__qualname__ = f"backend_select[{entry.name}]"
    return kernel


def _inplace_self_kernel(redispatch: Callable[..., Any], partial: tuple[int, ...] | None) -> Callable[..., Any]:
    """ADInplaceOrView for ``op_(self, ...)``, the common in-place op, with the overlap checks inlined.

    ``partial`` is None when PyTorch makes no overlap check for the op, else the inputs that may not
    partially overlap ``self``.  A ``self`` that is its storage's root buffer (a fresh tensor) cannot
    overlap itself, and an input on another storage cannot overlap ``self``: each costs one test.
    """
    mask = K.AFTER_AD_INPLACE_OR_VIEW
    # Like PyTorch's AutoDispatchBelowADInplaceOrView: ops the kernel below calls (a composite's
    # inner copy_) must not bump versions or record autograd again.
    below = ~(K.AUTOGRAD_BAND | (1 << K.AD_INPLACE_OR_VIEW_BIT))
    hooks = autograd_hooks

    if partial is None:
        def kernel(ks: int, *args: Any) -> Any:
            self = args[0]
            if self._base is not None:
                check = hooks.check_view_write
                if check is not None:
                    check(self)
            old = tls.mask
            tls.mask = old & below
            try:
                result = redispatch(ks & mask, *args)
            finally:
                tls.mask = old
            self._storage.version += 1
            return result

    elif partial == (1,):  # binary ops: self and one input
        def kernel(ks: int, *args: Any) -> Any:
            self = args[0]
            storage = self._storage
            if self._base is not None:
                check = hooks.check_view_write
                if check is not None:
                    check(self)
            data = self._data
            if data is not storage.data and 0 in data.strides and has_internal_overlap(self):
                raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
            other = args[1]
            if isinstance(other, Tensor) and other._storage is storage and other is not self:
                assert_no_partial_overlap(self, other)
            old = tls.mask
            tls.mask = old & below
            try:
                result = redispatch(ks & mask, *args)
            finally:
                tls.mask = old
            self._storage.version += 1
            return result

    else:
        def kernel(ks: int, *args: Any) -> Any:
            self = args[0]
            storage = self._storage
            if self._base is not None:
                check = hooks.check_view_write
                if check is not None:
                    check(self)
            data = self._data
            if data is not storage.data and 0 in data.strides and has_internal_overlap(self):
                raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
            for i in partial:
                other = args[i]
                if isinstance(other, Tensor) and other._storage is storage and other is not self:
                    assert_no_partial_overlap(self, other)
            old = tls.mask
            tls.mask = old & below
            try:
                result = redispatch(ks & mask, *args)
            finally:
                tls.mask = old
            self._storage.version += 1
            return result

    return kernel


def version_bump_kernel(entry: OperatorEntry) -> Callable[..., Any]:
    """ADInplaceOrView for a mutating op: run it below, then bump each written tensor's version."""
    written = entry.schema.mutated_argument_indices
    redispatch = _redispatcher(entry)
    mask = K.AFTER_AD_INPLACE_OR_VIEW
    # Like PyTorch's AutoDispatchBelowADInplaceOrView: ops the kernel below calls (a composite's
    # inner copy_) must not bump versions or record autograd again.
    below = ~(K.AUTOGRAD_BAND | (1 << K.AD_INPLACE_OR_VIEW_BIT))

    hooks = autograd_hooks

    # PyTorch's memory-overlap checks (expanded or partially aliased write targets), once for every
    # backend; None for ops PyTorch does not check.
    policy = overlap_policy(entry.schema, entry.tags)
    first = entry.schema.arguments[0].type if entry.schema.arguments else None
    args_schema = entry.schema.arguments
    simple = policy is None or (
        policy.internal == "raise" and policy.writes_if is None and not policy.disjoint
        and all(not args_schema[i].type.is_list for i in policy.partial)
    )
    if list(written) == [0] and first is not None and first.base == "Tensor" and not first.is_list and not first.optional and simple:
        kernel_self = _inplace_self_kernel(redispatch, policy.partial if policy is not None else None)
        kernel_self.__qualname__ = f"bump_version[{entry.name}]"
        return kernel_self

    overlap_check = policy.check if policy is not None else None

    def kernel(ks: int, *args: Any) -> Any:
        check = hooks.check_view_write
        if check is not None:
            for i in written:
                if getattr(args[i], "_base", None) is not None:  # lists (foreach ops) and None have none
                    check(args[i])
        if overlap_check is not None:
            overlap_check(args)
        old = tls.mask
        tls.mask = old & below
        try:
            result = redispatch(ks & mask, *args)
        finally:
            tls.mask = old
        for i in written:
            target = args[i]
            if target is None:
                continue
            if isinstance(target, (list, tuple)):
                for t in target:
                    t._storage.version += 1
            else:
                target._storage.version += 1
        return result

    kernel.__qualname__ = f"bump_version[{entry.name}]"
    return kernel


def register_core(lib: Library) -> None:
    """Define the aten table and register every core kernel through ``lib``."""
    rows = expand_table()
    for schema, tags, wrapped in rows:
        lib.define(schema.removeprefix("aten::"), tags=tags, wrapped_numbers=wrapped)
    for name, (key, fn) in COMPOSITES.items():
        lib.impl(name, fn, key)
    for name, (key, fn) in _composites_shape.COMPOSITES.items():
        lib.impl(name, fn, key)
    for name, (key, fn) in _composites_linalg.COMPOSITES.items():
        lib.impl(name, fn, key)
    for name, (key, fn) in _composites_nn.COMPOSITES.items():
        lib.impl(name, fn, key)
    for name, (key, fn) in _composites_complex.COMPOSITES.items():
        lib.impl(name, fn, key)
    lib.fallback(_math_bits.conjugate_fallback, "Conjugate", with_keyset=True)
    lib.fallback(_math_bits.negative_fallback, "Negative", with_keyset=True)
    for schema, tags, _ in rows:
        full = schema.split("(")[0]
        entry = DISPATCHER.entry(full)
        if "inplace" in tags or "out" in tags:
            functional = _functional_of(entry)
            if functional is not None:
                maker = inplace_kernel if "inplace" in tags else out_kernel
                lib.impl(full, maker(functional), "CompositeExplicitAutograd")
        if entry.schema.is_mutable:
            lib.impl(full, version_bump_kernel(entry), "ADInplaceOrView", with_keyset=True)
        if "factory" in tags:
            lib.impl(full, backend_select_kernel(entry), "BackendSelect", with_keyset=True)
    register_math_composites(lib)
    register_more_composites(lib)
    register_quantile_composites(lib)
    register_fft_composites(lib)


def _functional_of(entry: OperatorEntry) -> OperatorEntry | None:
    schema = entry.schema
    base = schema.name.removesuffix("_")
    if schema.overload_name in ("out", ""):
        overload = ""
    elif schema.overload_name.endswith("_out"):
        overload = schema.overload_name[: -len("_out")]
    else:
        overload = schema.overload_name
    for candidate in ([f"aten::{base}.{overload}"] if overload else []) + [f"aten::{base}", f"aten::{base}.Tensor"]:
        found = DISPATCHER.find(candidate)
        if found is not None and not found.schema.is_mutable:
            return found
    return None
