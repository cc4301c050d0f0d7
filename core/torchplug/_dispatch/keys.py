"""Dispatch keys and key sets: one bit per runtime key, highest bit wins."""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = [
    "DispatchKey",
    "AliasKey",
    "KEYS",
    "MAX_BACKENDS",
    "allocate_backend_keys",
    "release_backend_keys",
    "lookup_key",
    "keyset_names",
    "highest_key",
    "FUNCTIONALITY_BITS",
]

# Python ints are arbitrary precision, so unlike PyTorch's 64-bit mask we give every
# runtime key its own bit.  Backends are allocated slots at registration time (no single
# PrivateUse1 slot); each slot owns one bit in each per-backend band below.
MAX_BACKENDS = 24

_BACKEND_BASE = 0  # bits 0..23: backend (dense) keys
BACKEND_SELECT_BIT = MAX_BACKENDS  # 24
PYTHON_BIT = MAX_BACKENDS + 1  # 25
AD_INPLACE_OR_VIEW_BIT = MAX_BACKENDS + 2  # 26
_AUTOGRAD_BASE = MAX_BACKENDS + 3  # 27..50
_AUTOCAST_BASE = _AUTOGRAD_BASE + MAX_BACKENDS  # 51..74
# The conjugate bit of a lazily conjugated complex view (``x.conj()``): above every other key, so
# its fallback resolves or re-views such tensors before autograd records anything (only tensors
# with the bit carry it, so other calls never see this key).
CONJUGATE_BIT = _AUTOCAST_BASE + MAX_BACKENDS  # 75
NEGATIVE_BIT = CONJUGATE_BIT + 1  # the negative bit of a lazily negated view (``x.conj().imag``), likewise
# vmap's batched tensors (PyTorch's FuncTorchBatched): above autograd and autocast, as in PyTorch, so a
# batching rule runs on the unbatched values and autograd records there. The func plugin registers its
# kernels and boxed fallback here; vmap also adds it to the TLS include set (random ops inside vmap).
BATCHED_BIT = NEGATIVE_BIT + 1
# Inference tensors (made under inference_mode) carry this bit, and inference_mode adds it to the TLS include
# set: the autograd plugin's fallback marks what ops make in the mode and refuses what PyTorch refuses outside
# it.  Neither is set otherwise, so ordinary calls never see the key.
INFERENCE_BIT = BATCHED_BIT + 1
# The profiler's key, above every other so one record spans the whole call (PyTorch records at the
# dispatcher's entry). No tensor carries it: ``torchplug.profiler`` adds it to the TLS include set
# while a profile records, so calls outside a profile never see it (their key sets, caches and kernels
# are unchanged). The profiler plugin registers the boxed fallback that times the call and redispatches.
PROFILER_BIT = INFERENCE_BIT + 1

FUNCTIONALITY_BITS = {
    "BackendSelect": BACKEND_SELECT_BIT,
    "Python": PYTHON_BIT,
    "ADInplaceOrView": AD_INPLACE_OR_VIEW_BIT,
    "Conjugate": CONJUGATE_BIT,
    "Negative": NEGATIVE_BIT,
    "Batched": BATCHED_BIT,
    "Inference": INFERENCE_BIT,
    "Profiler": PROFILER_BIT,
}


@dataclass(frozen=True, slots=True)
class DispatchKey:
    """A runtime dispatch key: a name, a bit and (for per-backend keys) the backend it serves."""

    name: str
    bit: int
    kind: str  # 'backend' | 'autograd' | 'autocast' | 'functionality'
    backend: str | None = None  # backend key name ('CPU') for per-backend keys

    @property
    def mask(self) -> int:
        return 1 << self.bit

    def __repr__(self) -> str:
        return f"DispatchKey.{self.name}"


@dataclass(frozen=True, slots=True)
class AliasKey:
    """A registration-only key that fans out to several runtime keys."""

    name: str

    def __repr__(self) -> str:
        return f"DispatchKey.{self.name}"


AUTOGRAD = AliasKey("Autograd")
COMPOSITE_IMPLICIT = AliasKey("CompositeImplicitAutograd")
COMPOSITE_EXPLICIT = AliasKey("CompositeExplicitAutograd")
ALIAS_KEYS = {k.name: k for k in (AUTOGRAD, COMPOSITE_IMPLICIT, COMPOSITE_EXPLICIT)}

_lock = threading.RLock()
# name -> DispatchKey for every runtime key that exists now
KEYS: dict[str, DispatchKey] = {
    name: DispatchKey(name, bit, "functionality") for name, bit in FUNCTIONALITY_BITS.items()
}
_BY_BIT: dict[int, DispatchKey] = {k.bit: k for k in KEYS.values()}
_slots: dict[str, int] = {}  # backend key name -> slot


def allocate_backend_keys(name: str, *, high_priority: bool = False) -> DispatchKey:
    """Allocate a backend slot and its runtime keys (``name``, ``Autograd<name>``, ``Autocast<name>``).

    ``high_priority`` slots are taken from the top so that such a backend (meta) wins
    when its tensors are mixed with others, as PyTorch's Meta key does.
    Allocating an existing name returns the existing key (idempotent).
    """
    with _lock:
        if name in _slots:
            return KEYS[name]
        used = set(_slots.values())
        order = range(MAX_BACKENDS - 1, -1, -1) if high_priority else range(MAX_BACKENDS)
        slot = next((s for s in order if s not in used), None)
        if slot is None:
            raise RuntimeError(
                f"Cannot register backend key {name!r}: all {MAX_BACKENDS} backend slots are in use "
                f"by {sorted(_slots)}. Unregister a backend first."
            )
        _slots[name] = slot
        for key in (
            DispatchKey(name, _BACKEND_BASE + slot, "backend", name),
            DispatchKey("Autograd" + name, _AUTOGRAD_BASE + slot, "autograd", name),
            DispatchKey("Autocast" + name, _AUTOCAST_BASE + slot, "autocast", name),
        ):
            KEYS[key.name] = key
            _BY_BIT[key.bit] = key
        return KEYS[name]


def release_backend_keys(name: str) -> None:
    """Free a backend slot (used when a scoped registration is closed)."""
    with _lock:
        slot = _slots.pop(name, None)
        if slot is None:
            return
        for key_name in (name, "Autograd" + name, "Autocast" + name):
            key = KEYS.pop(key_name)
            _BY_BIT.pop(key.bit, None)


def backend_slots() -> dict[str, int]:
    """Backend key name -> slot, for introspection."""
    return dict(_slots)


def lookup_key(key: str | DispatchKey | AliasKey) -> DispatchKey | AliasKey:
    """Resolve a key name to a runtime or alias key; unknown names list the known ones."""
    if isinstance(key, (DispatchKey, AliasKey)):
        return key
    if key in ALIAS_KEYS:
        return ALIAS_KEYS[key]
    found = KEYS.get(key)
    if found is None:
        known = sorted(KEYS) + sorted(ALIAS_KEYS)
        raise ValueError(f"Unknown dispatch key {key!r}. Known keys are {known}.")
    return found


def key_for_bit(bit: int) -> DispatchKey | None:
    return _BY_BIT.get(bit)


def highest_key(keyset: int) -> DispatchKey | None:
    """The runtime key of the highest set bit, or None for an empty set."""
    if keyset <= 0:
        return None
    return _BY_BIT.get(keyset.bit_length() - 1)


def keyset_names(keyset: int) -> list[str]:
    """Names of the keys in a key set, highest priority first."""
    names = []
    while keyset > 0:
        bit = keyset.bit_length() - 1
        key = _BY_BIT.get(bit)
        if key is not None:  # bits of unallocated backend slots are skipped
            names.append(key.name)
        keyset &= ~(1 << bit)
    return names


def band_mask(kind: str) -> int:
    """The mask of every currently allocated key of one kind ('backend', 'autograd', 'autocast')."""
    return sum(k.mask for k in KEYS.values() if k.kind == kind)


def alias_expansion(alias: AliasKey) -> list[DispatchKey]:
    """Runtime keys an alias key fills, in the order PyTorch documents."""
    if alias is AUTOGRAD:
        return [k for k in KEYS.values() if k.kind == "autograd"]
    if alias is COMPOSITE_EXPLICIT:
        return [k for k in KEYS.values() if k.kind == "backend"]
    if alias is COMPOSITE_IMPLICIT:
        return [k for k in KEYS.values() if k.kind in ("backend", "autograd")]
    raise ValueError(f"Unknown alias key {alias!r}")


def below(bit: int) -> int:
    """Mask keeping only keys of lower priority than ``bit`` (for redispatch)."""
    return (1 << bit) - 1


AUTOGRAD_BAND = ((1 << MAX_BACKENDS) - 1) << _AUTOGRAD_BASE
AUTOCAST_BAND = ((1 << MAX_BACKENDS) - 1) << _AUTOCAST_BASE
BACKEND_BAND = (1 << MAX_BACKENDS) - 1
AFTER_AUTOGRAD = below(_AUTOGRAD_BASE)  # everything below the autograd band
AFTER_AD_INPLACE_OR_VIEW = below(AD_INPLACE_OR_VIEW_BIT)
