"""pytest plugin for the conformance suite: the ``--torchplug-device`` option and a summary line.

Load it with ``pytest -p torchplug.testing.pytest_plugin``.  The suite itself
(``torchplug.testing.conformance``) also runs without the plugin, on ``cpu`` or on
``$TORCHPLUG_TEST_DEVICE``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pytest_addoption", "pytest_runtest_logreport", "pytest_terminal_summary"]

_OUTCOMES: dict[str, dict[str, Any]] = {}


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("torchplug")
    group.addoption(
        "--torchplug-device", action="store", default=None, metavar="DEVICE",
        help="device the torchplug conformance suite runs on (default: cpu, or $TORCHPLUG_TEST_DEVICE)",
    )


def pytest_runtest_logreport(report: Any) -> None:
    # Count conformance cases per device (the id is test_conformance[<device>-<op>-<dtype>-<sample>]).
    if "test_conformance[" not in report.nodeid:
        return
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    param = report.nodeid.split("test_conformance[", 1)[1].rstrip("]")
    device, _, rest = param.partition("-")
    stats = _OUTCOMES.setdefault(device, {"ops": set(), "passed": 0, "skipped": 0, "failed": 0})
    stats["ops"].add(rest.split("-", 1)[0])
    stats[report.outcome] = stats.get(report.outcome, 0) + 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for device, stats in sorted(_OUTCOMES.items()):
        total = stats["passed"] + stats["skipped"] + stats["failed"]
        terminalreporter.write_line(
            f"torchplug conformance on {device}: {len(stats['ops'])} ops, {total} sample cases: "
            f"{stats['passed']} passed, {stats['skipped']} skipped, {stats['failed']} failed"
        )
