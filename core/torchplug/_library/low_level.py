"""``torchplug.library.define`` and ``torchplug.library.impl``: define an operator by qualified name, and
register its kernel per device type (or dispatch key), as ``torch.library.define`` / ``torch.library.impl``.

Without ``lib=``, the registrations go through a ``FRAGMENT`` library of the namespace kept for the life
of the process (PyTorch keeps them alive the same way).  Both also take PyTorch's older forms, with a
:class:`Library` first: ``define(lib, schema, alias_analysis="")`` and ``impl(lib, name, dispatch_key="")``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.library import Library

__all__ = ["define", "impl"]

# namespace -> the FRAGMENT library that registrations without ``lib=`` go through (never closed)
_KEEP_ALIVE: dict[str, Library] = {}


def _split(qualname: str) -> tuple[str, str]:
    if not isinstance(qualname, str) or "::" not in qualname:
        raise ValueError(
            f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname passed to the '
            "torch.library APIs must consist of a namespace and a name, e.g. aten::sin")
    ns, name = qualname.split("::", 1)
    return ns, name


def _library(ns: str, lib: Library | None) -> Library:
    if lib is not None:
        return lib
    found = _KEEP_ALIVE.get(ns)
    if found is None:
        found = _KEEP_ALIVE[ns] = Library(ns, "FRAGMENT", owner=f"torchplug.library.define/impl for namespace {ns!r}")
    return found


def define(qualname: Any, schema: str, *args: Any, lib: Library | None = None, tags: Any = ()) -> Any:
    """Define the operator ``qualname`` ("namespace::name") with ``schema`` ("(Tensor x) -> Tensor", without
    the name); implement it next with :func:`impl`, ``register_kernel`` or ``register_fake``."""
    if isinstance(qualname, Library):  # the older form: define(lib, schema, alias_analysis="")
        return qualname.define(schema, *args)
    ns, name = _split(qualname)
    if not isinstance(schema, str) or not schema.lstrip().startswith("("):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" but '
                         f'got "{schema}"')
    tags = (tags,) if isinstance(tags, str) else tuple(tags)
    _library(ns, lib).define(name + schema.strip(), tags=tags)
    return None


def _key(typ: str) -> str:
    """A dispatch key name as is, a device type as the key its kernels register at."""
    try:
        K.lookup_key(typ)
        return typ
    except ValueError:
        pass
    from torchplug._library.custom_ops import device_key

    try:
        return device_key(typ)
    except ValueError as exc:
        raise RuntimeError(f"Expected a device type (such as 'cpu', 'cuda', 'meta' or 'default') or a dispatch key "
                           f"name, but got {typ!r}: {exc}") from None


def impl(qualname: Any, types: Any = "", func: Callable[..., Any] | None = None, *,
         lib: Library | None = None) -> Any:
    """Register ``func`` as the kernel of ``qualname`` for the device type(s) ``types`` ('cpu', 'cuda',
    'default' for every device, or a dispatch key name); without ``func``, a decorator.  A later
    registration for the same key replaces the earlier one, as in PyTorch."""
    if isinstance(qualname, Library):  # the older form: impl(lib, name, dispatch_key="") is a decorator
        def register_to_lib(f: Callable[..., Any]) -> Callable[..., Any]:
            qualname.impl(types, f, func or "")
            return f

        return register_to_lib
    ns, name = _split(qualname)
    typs: Sequence[str] = (types,) if isinstance(types, str) else tuple(types)
    keys = [_key(t) for t in typs]

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        use = _library(ns, lib)
        for key in keys:
            use.impl(name, f, key, allow_override=True)
        return f

    if func is None:
        return register
    register(func)
    return None
