"""``python -m torchplug``: the doctor — plugins, devices, dispatch keys and kernel coverage.

Options: ``--ops`` lists every operator with the keys that have kernels; ``--op NAME`` shows one
operator's kernels with who registered them; ``--demo`` runs a short tensor demo per device;
``--compat`` compares torchplug's public names with PyTorch's (``--module torch.nn`` to choose
modules, ``--json`` or ``--markdown`` for machine-readable or ``docs/compat.md`` output).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

__all__ = ["main", "doctor_report", "compat_report"]


def doctor_report() -> str:
    """The doctor's text: plugins, devices, keys, kernels per backend."""
    import torchplug
    from torchplug._runtime.backends import registered_backends
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
        from torchplug._runtime.backends import install_command

        lines.append(f"  (none: install a backend, e.g. {install_command('cpu')})")
    for name, b in backends.items():
        kind = "host" if b.is_host else ("no data" if not b.has_data else "device")
        lines.append(
            f"  {name:<8} key={b.key_name:<6} {kind:<8} {_availability(b):<12} from plugin {b.plugin!r} ({b.distribution or '-'})"
        )
    lines.extend(_missing_device_types(backends))
    lines.extend(_extension_groups_section())
    lines.append("")
    lines.extend(_accelerator_section())
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
    lines.extend(_custom_ops_section(DISPATCHER))
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
    lines.append("")
    lines.extend(_forward_ad_section())
    lines.append("")
    lines.extend(_autocast_section())
    return "\n".join(lines)


def _extension_groups_section() -> list[str]:
    """Entry-point groups named ``torchplug.*`` that plugins define for their own extensions (e.g. the
    distributed plugin's process-group backends): each with what is installed in it, nothing imported."""
    from torchplug._plugins.manager import ENTRY_POINT_GROUPS, importlib_metadata

    groups: dict[str, list[str]] = {}
    points = importlib_metadata.entry_points()
    names = getattr(points, "groups", None)  # the standard library's: iterating all of them is deprecated, select
    for ep in points if names is None else [ep for group in sorted(names) for ep in points.select(group=group)]:
        if ep.group.startswith("torchplug.") and ep.group not in ENTRY_POINT_GROUPS:
            dist = getattr(getattr(ep, "dist", None), "name", None) or "-"
            groups.setdefault(ep.group, []).append(f"{ep.name} ({dist})")
    if not groups:
        return []
    lines = ["", "Extension points of plugins (entry-point groups):"]
    for group, names in sorted(groups.items()):
        lines.append(f"  {group:<34} {', '.join(sorted(names))}")
    return lines


def _missing_device_types(backends: dict[str, object]) -> list[str]:
    """Well-known device types without a backend: torchplug.<type> answers as a placeholder."""
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES
    from torchplug._runtime.backends import missing_backend_message

    missing = [t for t in WELL_KNOWN_DEVICE_TYPES if t not in backends]
    if not missing:
        return []
    lines = ["Well-known device types without a backend (torchplug.<type> is a placeholder; is_available() is False):"]
    lines.extend(f"  {t:<8} {missing_backend_message(t)}" for t in missing)
    return lines


def _custom_ops_section(dispatcher: object) -> list[str]:
    """Operators outside ``aten`` (op-library plugins, custom_op), each with who defined it."""
    custom = sorted((name, entry) for name, entry in dispatcher.ops.items() if not name.startswith("aten::"))  # type: ignore[attr-defined]
    if not custom:
        return []
    lines = ["Custom operators (defined by):"]
    for name, entry in custom:
        keys = ", ".join(k for k, regs in entry.kernels.items() if regs)
        lines.append(f"  {name:<32} {entry.defined_by}   [{keys}]")
    return lines


def _autocast_section() -> list[str]:
    """Autocast dtypes and list sizes per device type, from the amp plugin (if it is loaded)."""
    from torchplug._plugins import MANAGER
    from torchplug._plugins.exposure import EXPOSED

    lines = ["Autocast:"]
    amp = EXPOSED.get("amp")
    if amp is None:
        record = MANAGER.records.get("amp")
        state = "not installed" if record is None else (record.reason or record.status)
        return lines + [f"  (the amp plugin is {state})"]
    try:
        summary = amp[0].summary()
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        return lines + [f"  (amp summary failed: {type(exc).__name__}: {exc})"]
    return lines + ([f"  {line}" for line in summary] or ["  (no device type registered an autocast policy)"])


def _forward_ad_section() -> list[str]:
    """Forward-mode AD: a layer of the autograd plugin (no dispatch key of its own, as in PyTorch)."""
    from torchplug._plugins import MANAGER
    from torchplug._plugins.exposure import EXPOSED

    lines = ["Forward AD:"]
    autograd = EXPOSED.get("autograd")
    forward_ad = getattr(autograd[0], "forward_ad", None) if autograd is not None else None
    if forward_ad is None:
        record = MANAGER.records.get("autograd")
        state = "not installed" if record is None else (record.reason or record.status)
        return lines + [f"  (part of the autograd plugin, which is {state})"]
    try:
        return lines + [f"  {line}" for line in forward_ad.summary()]
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        return lines + [f"  (forward AD summary failed: {type(exc).__name__}: {exc})"]


def _availability(backend: object) -> str:
    """'available' / 'unavailable' from the backend's runtime (the reason is in the accelerator section)."""
    runtime = getattr(backend, "runtime", None)
    check = getattr(runtime, "is_available", None) or getattr(backend, "is_available", None)
    if check is None:
        return "available"
    try:
        return "available" if check() else "unavailable"
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        return f"unavailable: {exc}"


def _accelerator_section() -> list[str]:
    """Accelerators in priority order, the current one, and each device type's allocator stats."""
    import os

    from torchplug._runtime import accelerator_choice as accelerator
    from torchplug._runtime.backends import registered_backends

    lines = ["Accelerators (most preferred first):"]
    try:
        order = accelerator.accelerators()
    except Exception as exc:  # noqa: BLE001
        return lines + [f"  (failed: {type(exc).__name__}: {exc})"]
    backends = registered_backends()
    if not order:
        lines.append("  (none registered: cpu and meta are not accelerators)")
    for t in order:
        b = backends[t]
        mod = b.device_module
        if mod.is_available():
            state = f"available, {mod.device_count()} device(s)"
        else:
            reason = getattr(b.runtime, "unavailable_reason", None)
            state = "unavailable" + (f": {reason()}" if reason is not None else "")
            if not b.could_be_available():
                state += f" [cannot exist on {sys.platform}: only on {', '.join(b.platforms)}]"
        lines.append(f"  {t:<8} priority={b.accelerator_priority:<4} {state}")
    order_how = (f"set_accelerator_priority({accelerator.get_accelerator_priority()})"
                 if accelerator.get_accelerator_priority() is not None else
                 f"{accelerator.ENV_VAR}={os.environ[accelerator.ENV_VAR]}" if os.environ.get(accelerator.ENV_VAR)
                 else "backend priorities")
    try:
        current, why = accelerator.current_accelerator_choice()
        shown = "None" if current is None else f"{current}" + ("" if accelerator.is_available() else " (not available)")
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        shown, why = f"<failed: {type(exc).__name__}: {exc}>", "-"
    lines.append(f"Current accelerator: {shown}   ({why}; order from {order_how})")
    lines.append("")
    lines.append("Allocators (device 0):")
    for t, b in backends.items():
        alloc = b.allocator
        try:
            st = alloc.memory_stats(0)
        except Exception as exc:  # noqa: BLE001
            lines.append(f"  {t:<8} (stats failed: {type(exc).__name__}: {exc})")
            continue
        extras = []
        if alloc.get_current_allocator() is not None:
            extras.append(f"replacement {type(alloc.get_current_allocator()).__name__}")
        n_cb = len(getattr(alloc, "_callbacks", ()))
        if n_cb:
            extras.append(f"{n_cb} event subscriber(s)")
        if getattr(alloc, "_history", None) is not None:
            extras.append("recording history")
        lines.append(
            f"  {t:<8} allocated {_bytes(st['allocated_bytes.all.current'])} (peak {_bytes(st['allocated_bytes.all.peak'])}) "
            f"in {st['allocation.all.current']} block(s), reserved {_bytes(st['reserved_bytes.all.current'])}, "
            f"{st['allocation.all.allocated']} allocs / {st['allocation.all.freed']} frees"
            + (f"; {', '.join(extras)}" if extras else "")
        )
    return lines


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


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
    from torchplug._plugins.introspect import _entry_of, kernel_table

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
    """A short tensor demo on every registered device that can be used now (the others say why not)."""
    import torchplug as torch
    from torchplug._runtime.backends import registered_backends

    out = []
    for name, backend in registered_backends().items():
        out.append(f"--- device {name!r}")
        if not _usable(backend):
            reason = getattr(backend.runtime, "unavailable_reason", None)
            out.append("skipped: the device is not available" + (f" ({reason()})" if reason is not None else ""))
            continue
        try:
            x = torch.arange(6, dtype=torch.float32, device=name).reshape(2, 3)
            y = (x * 2 + 1).sum(dim=1)
            out.append(f"x = arange(6).reshape(2, 3)\n{x!r}")
            out.append(f"(x * 2 + 1).sum(dim=1)\n{y!r}")
            out.append(f"x @ x.T -> shape {tuple((x @ x.T).shape)}, dtype {(x @ x.T).dtype}")
        except Exception as exc:  # noqa: BLE001 - the demo reports, it does not crash
            out.append(f"demo failed: {type(exc).__name__}: {exc}")
    return "\n".join(out)


def _usable(backend: object) -> bool:
    try:
        return bool(backend.runtime.is_available())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a broken driver means "not available"
        return False


def compat_report(modules: list[str] | None = None, fmt: str = "text") -> str:
    """PyTorch's public names that torchplug provides, per module (``fmt``: text, json or markdown)."""
    from torchplug._doctor.compat_coverage import coverage
    from torchplug._doctor.compat_report import json_report, markdown_report, text_report

    rows = coverage(modules)
    return {"text": text_report, "json": json_report, "markdown": markdown_report}[fmt](rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchplug", description=__doc__)
    parser.add_argument("--ops", action="store_true", help="list every operator and its kernel keys")
    parser.add_argument("--op", help="show one operator's kernels and computed dispatch table")
    parser.add_argument("--demo", action="store_true", help="run a short tensor demo on each device")
    parser.add_argument("--compat", action="store_true",
                        help="compare torchplug's public names with PyTorch's: coverage per module and the missing names")
    parser.add_argument("--module", action="append", metavar="MODULE",
                        help="with --compat: only this module (torch.nn, torchplug.nn or nn; torch.nn.* adds its "
                             "submodules); repeatable")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="with --compat: print the report as JSON")
    output.add_argument("--markdown", action="store_true", help="with --compat: print docs/compat.md's Markdown")
    args = parser.parse_args(argv)
    if not args.compat and (args.module or args.json or args.markdown):
        parser.error("--module, --json and --markdown go with --compat (python -m torchplug --compat --module torch.nn)")
    if args.compat:
        try:
            print(compat_report(args.module, "json" if args.json else "markdown" if args.markdown else "text"))
        except ValueError as exc:  # an unknown --module: the message lists the known ones
            parser.error(str(exc))
        return 0
    from torchplug._base.shadow import shadowing_message

    shadowed = shadowing_message()  # a folder named 'torchplug' hides the package: nothing below would work
    if shadowed:
        print(f"python -m torchplug: {shadowed}", file=sys.stderr)
        return 1
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
