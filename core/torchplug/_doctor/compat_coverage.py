"""Which of PyTorch's public names torchplug provides, per module.

A name counts as supported when ``getattr`` on torchplug's module (or on ``torchplug.Tensor``)
returns an object that is not a not-supported-yet placeholder.  Resolution goes through the
same lookups user code does (plugin exposure, lazy core submodules), catching every error, so
a broken or absent module only shows up as missing names.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable

from torchplug._compat.missing import is_unsupported
from torchplug._compat.reference import MODULES, names, torchplug_name

__all__ = ["ModuleCoverage", "coverage", "resolve_module", "resolve_name", "supports", "select_modules"]

_NOTHING = object()


@dataclass(frozen=True)
class ModuleCoverage:
    """One module's comparison: the names torchplug has and those it lacks."""

    torch_module: str
    supported: tuple[str, ...]
    missing: tuple[str, ...]
    problem: str | None = None  # why the whole module could not be resolved, if it could not

    @property
    def torchplug_module(self) -> str:
        """torchplug's name for the module (``torchplug.nn`` for ``torch.nn``)."""
        return torchplug_name(self.torch_module)

    @property
    def total(self) -> int:
        """How many public names PyTorch's module has."""
        return len(self.supported) + len(self.missing)

    @property
    def percent(self) -> float:
        """The share of them torchplug provides, in percent."""
        return 100.0 * len(self.supported) / self.total if self.total else 100.0

    def as_dict(self) -> dict[str, Any]:
        """The row as ``--json`` prints it."""
        return {"torch_module": self.torch_module, "torchplug_module": self.torchplug_module,
                "supported": len(self.supported), "total": self.total, "percent": round(self.percent, 1),
                "problem": self.problem, "supported_names": list(self.supported), "missing_names": list(self.missing)}


def resolve_module(torch_module: str) -> Any:
    """torchplug's object for ``torch_module`` (``torch.Tensor`` -> the Tensor class); raises if absent."""
    import torchplug

    obj: Any = torchplug
    for part in torch_module.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def resolve_name(owner: Any, name: str) -> Any:
    """``getattr(owner, name)``, or ``_NOTHING`` when it fails or gives a placeholder."""
    try:
        value = getattr(owner, name)
    except Exception:  # noqa: BLE001 - any failure means "not usable", which is what is counted
        return _NOTHING
    return _NOTHING if is_unsupported(value) else value


def supports(torch_module: str, name: str) -> bool:
    """Whether torchplug provides PyTorch's ``torch_module.name`` (False also when the module is absent)."""
    try:
        owner = resolve_module(torch_module)
    except Exception:  # noqa: BLE001 - no module: nothing of it is provided
        return False
    return resolve_name(owner, name) is not _NOTHING


def _module_coverage(torch_module: str) -> ModuleCoverage:
    wanted = sorted(names(torch_module))
    try:
        owner = resolve_module(torch_module)
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        if isinstance(exc, AttributeError) and "is not supported yet" in str(exc):
            problem = f"{torchplug_name(torch_module)} does not exist yet"
        elif isinstance(exc, AttributeError):  # e.g. the plugin that provides it is blocked: say so
            problem = str(exc)
        else:
            problem = f"{torchplug_name(torch_module)} failed to load: {type(exc).__name__}: {exc}"
        return ModuleCoverage(torch_module, (), tuple(wanted), problem)
    supported, missing = [], []
    for name in wanted:
        (supported if resolve_name(owner, name) is not _NOTHING else missing).append(name)
    return ModuleCoverage(torch_module, tuple(supported), tuple(missing))


def select_modules(selection: Iterable[str] | None = None) -> list[str]:
    """Reference modules matching ``selection`` (``torch.nn``, ``torchplug.nn`` or ``nn``); all if None.

    A selected module brings its submodules too (``torch.nn`` includes ``torch.nn.functional``)
    only when asked with a trailing ``.*``; otherwise exactly the module named.
    """
    if selection is None:
        return list(MODULES)
    chosen = []
    for raw in selection:
        wildcard = raw.endswith(".*")
        key = raw[:-2] if wildcard else raw
        if key.startswith("torchplug"):
            key = "torch" + key[len("torchplug"):]
        elif key != "torch" and not key.startswith("torch."):
            key = f"torch.{key}"
        found = [m for m in MODULES if m == key or (wildcard and m.startswith(key + "."))]
        if not found:
            raise ValueError(f"{raw!r} is not a module the compatibility reference covers; "
                             f"choose from: {', '.join(MODULES)}")
        chosen.extend(m for m in found if m not in chosen)
    return chosen


def coverage(selection: Iterable[str] | None = None) -> list[ModuleCoverage]:
    """Coverage of every reference module (or of ``selection``, see :func:`select_modules`)."""
    modules = select_modules(selection)
    from torchplug._plugins.manager import MANAGER

    MANAGER.ensure_loaded()  # plugins add names (torchplug.nn, Tensor.backward's engine, ...)
    with warnings.catch_warnings():
        # a deprecated alias warns when looked up; the report only asks whether it exists
        warnings.simplefilter("ignore")
        return [_module_coverage(m) for m in modules]
