"""Thread-local dispatch state: the include set and the exclude mask every call applies."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from torchplug._dispatch.keys import AUTOCAST_BAND, BACKEND_SELECT_BIT, DispatchKey, lookup_key

__all__ = [
    "tls",
    "exclude_keys",
    "include_keys",
    "included_keyset",
    "excluded_keyset",
]


class _DispatchTLS(threading.local):
    # Class attributes are the defaults each new thread sees.  ``mask`` is the complement
    # of the exclude set so the hot path is one AND.  Autocast keys are excluded until an
    # autocast region removes its device's key, exactly as PyTorch's TLS defaults do.
    include: int = 1 << BACKEND_SELECT_BIT
    mask: int = ~AUTOCAST_BAND


tls = _DispatchTLS()


def _keyset_of(keys: Iterable[str | DispatchKey] | int) -> int:
    if isinstance(keys, int):
        return keys
    total = 0
    for key in keys:
        resolved = lookup_key(key)
        if not isinstance(resolved, DispatchKey):
            raise ValueError(f"{resolved!r} is an alias key; only runtime keys can be in a key set.")
        total |= resolved.mask
    return total


def included_keyset() -> int:
    """The thread-local include set."""
    return tls.include


def excluded_keyset() -> int:
    """The thread-local exclude set."""
    return ~tls.mask


@contextmanager
def exclude_keys(keys: Iterable[str | DispatchKey] | int) -> Iterator[None]:
    """Exclude ``keys`` from every dispatch on this thread inside the block."""
    bits = _keyset_of(keys)
    old = tls.mask
    tls.mask = old & ~bits
    try:
        yield
    finally:
        tls.mask = old


@contextmanager
def include_keys(keys: Iterable[str | DispatchKey] | int) -> Iterator[None]:
    """Add ``keys`` to every dispatch on this thread inside the block (and un-exclude them)."""
    bits = _keyset_of(keys)
    old_include, old_mask = tls.include, tls.mask
    tls.include = old_include | bits
    tls.mask = old_mask | bits
    try:
        yield
    finally:
        tls.include, tls.mask = old_include, old_mask
