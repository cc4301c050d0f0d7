"""``python -m torchplug``: the doctor — plugins, devices, dispatch keys and kernel coverage.

Options: ``--ops`` lists every operator with the keys that have kernels; ``--op NAME`` shows one
operator's kernels with who registered them; ``--demo`` runs a short tensor demo per device.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

__all__ = ["main", "doctor_report"]


def doctor_report() -> str:
    """The doctor's text: plugins, devices, keys, kernels per backend."""
    import torchplug
    from torchplug._backends import registered_backends
    from torchplug._dispatch import keys as K
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._plugins import MANAGER

    lines = [f"torchplug {_version()}  (python {sys.version.split()[0]})", ""]
    lines.append("Plugins:")
    records = MANAGER.report()
    if not records:
        lines.append("  (none discovered)")
    for r in records:
        dist = f"{r.distribution} {r.version}".strip() or "-"
        status = r.status if not r.reason else f"{r.status}: {r.reason}"
        lines.append(f"  {r.name:<12} {r.group:<20} {dist:<26} {status}")
    lines.append("")
    lines.append("Device types:")
    backends = registered_backends()
    if not backends:
        lines.append("  (none: install a backend, e.g. pip install torchplug-cpu)")
    for name, b in backends.items():
        kind = "host" if b.is_host else ("no data" if not b.has_data else "device")
        lines.append(
            f"  {name:<8} key={b.key_name:<6} {kind:<8} {_availability(b):<12} from plugin {b.plugin!r} ({b.distribution or '-'})"
        )
    lines.append("")
    lines.append(f"Default device: {_safe(torchplug.get_default_device)}   default dtype: {torchplug.get_default_dtype()}")
    lines.append("")
    per_key: Counter[str] = Counter()
    for entry in DISPATCHER.ops.values():
        for key, regs in entry.kernels.items():
            if regs:
                per_key[key] += 1
    total = len(DISPATCHER.ops)
    namespaces = Counter(name.split("::")[0] for name in DISPATCHER.ops)
    lines.append(f"Operators: {total} overloads ({', '.join(f'{ns}: {n}' for ns, n in sorted(namespaces.items()))})")
    lines.append("Kernels per dispatch key:")
    for key, n in sorted(per_key.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {key:<28} {n}")
    lines.append("")
    runtime = [k.name for k in sorted(K.KEYS.values(), key=lambda k: -k.bit)]
    lines.append("Runtime dispatch keys (highest priority first):")
    lines.append("  " + ", ".join(runtime))
    fallbacks = {k: regs[0].describe() for k, regs in DISPATCHER.fallbacks.items() if regs}
    if fallbacks:
        lines.append("Backend fallbacks:")
        for k, desc in sorted(fallbacks.items()):
            lines.append(f"  {k:<20} {desc}")
    return "\n".join(lines)


def _availability(backend: object) -> str:
    """'available' / 'unavailable: why' from the backend's own check (no check: always available)."""
    check = getattr(backend, "is_available", None)
    if check is None:
        return "available"
    try:
        return "available" if check() else "unavailable"
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        return f"unavailable: {exc}"


def _version() -> str:
    try:
        import importlib_metadata

        return importlib_metadata.version("torchplug")
    except Exception:  # noqa: BLE001 - running from a source tree
        return "(source)"


def _safe(fn: object) -> str:
    try:
        return str(fn())  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001
        return f"<none: {exc}>"


def op_report(name: str) -> str:
    """One operator: schema, tags, registered kernels and the computed table."""
    import torchplug
    from torchplug._introspect import _entry_of, kernel_table

    entry = _entry_of(name)
    lines = [f"{entry.name}", f"  schema:     {entry.schema}", f"  defined by: {entry.defined_by}"]
    if entry.tags:
        lines.append(f"  tags:       {', '.join(entry.tags)}")
    lines.append("  registered kernels:")
    for key, regs in sorted(entry.kernels.items()):
        for i, reg in enumerate(regs):
            shadow = "" if i == 0 else "   (shadowed)"
            lines.append(f"    {key:<28} {reg.describe()}{shadow}")
    lines.append("  computed table:")
    for key, what in kernel_table(entry.name).items():
        lines.append(f"    {key:<28} {what}")
    _ = torchplug
    return "\n".join(lines)


def demo() -> str:
    """A short tensor demo on every registered device."""
    import torchplug as torch
    from torchplug._backends import registered_backends

    out = []
    for name in registered_backends():
        out.append(f"--- device {name!r}")
        try:
            x = torch.arange(6, dtype=torch.float32, device=name).reshape(2, 3)
            y = (x * 2 + 1).sum(dim=1)
            out.append(f"x = arange(6).reshape(2, 3)\n{x!r}")
            out.append(f"(x * 2 + 1).sum(dim=1)\n{y!r}")
            out.append(f"x @ x.T -> shape {tuple((x @ x.T).shape)}, dtype {(x @ x.T).dtype}")
        except Exception as exc:  # noqa: BLE001 - the demo reports, it does not crash
            out.append(f"demo failed: {type(exc).__name__}: {exc}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchplug", description=__doc__)
    parser.add_argument("--ops", action="store_true", help="list every operator and its kernel keys")
    parser.add_argument("--op", help="show one operator's kernels and computed dispatch table")
    parser.add_argument("--demo", action="store_true", help="run a short tensor demo on each device")
    args = parser.parse_args(argv)
    if args.op:
        print(op_report(args.op))
        return 0
    print(doctor_report())
    if args.ops:
        from torchplug._dispatch.dispatcher import DISPATCHER

        print("\nOperators:")
        for name, entry in sorted(DISPATCHER.ops.items()):
            keys = ", ".join(sorted(k for k, regs in entry.kernels.items() if regs))
            print(f"  {name:<40} {keys}")
    if args.demo:
        print()
        print(demo())
    return 0


if __name__ == "__main__":
    sys.exit(main())
