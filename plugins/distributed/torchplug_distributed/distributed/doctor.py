"""``python -m torchplug.distributed.doctor``: the process-group backends installed, and whether each can run here."""

from __future__ import annotations

import sys

from . import registry

__all__ = ["report", "main"]


def report() -> str:
    """One line per backend of the ``torchplug.distributed_backends`` entry points (and hand-registered ones)."""
    lines = [f"Process-group backends (entry-point group {registry.ENTRY_POINT_GROUP!r}):"]
    for name, cls in sorted(registry.backend_classes().items()):
        available = cls.is_available()
        reason = "" if available else getattr(cls, "unavailable_reason", lambda: "")()
        state = "available" if available else f"unavailable{': ' + reason if reason else ''}"
        devices = ",".join(getattr(cls, "devices", ())) or "-"
        lines.append(f"  {name:<10} devices={devices:<8} {state}  ({cls.__module__}.{cls.__qualname__})")
    for name, error in sorted(registry.failed_backends().items()):
        lines.append(f"  {name:<10} failed to load: {error}")
    for alias, target in sorted(registry.ALIASES.items()):
        lines.append(f"  {alias:<10} alias of {target!r}")
    return "\n".join(lines)


def main() -> int:
    """Print :func:`report`."""
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
