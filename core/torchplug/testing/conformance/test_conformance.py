"""Every OpInfo sample on the device under test, compared with real PyTorch (skipped without torch).

Run on any backend::

    pytest -p torchplug.testing.pytest_plugin --pyargs torchplug.testing.conformance --torchplug-device=meta

A module that imports ``pytest_generate_tests`` and ``test_conformance`` from this one may set
``DEVICES = ("cpu", "meta")`` (run on several devices) and ``DTYPES = (...)`` (only those dtypes);
the repository's ``tests/test_conformance.py`` runs a quick slice that way.
"""

from __future__ import annotations

import os

import pytest

from torchplug.testing import SkipCase, cases, run_case

__all__ = ["pytest_generate_tests", "test_conformance"]


def _devices(metafunc: pytest.Metafunc) -> list[str]:
    fixed = getattr(metafunc.module, "DEVICES", None)
    if fixed:
        return list(fixed)
    option = metafunc.config.getoption("--torchplug-device", default=None)
    return [option or os.environ.get("TORCHPLUG_TEST_DEVICE", "cpu")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_case" not in metafunc.fixturenames:
        return
    all_cases = cases()
    only = getattr(metafunc.module, "DTYPES", None)
    if only:
        all_cases = [c for c in all_cases if c.dtype in only]
    params, ids = [], []
    for device in _devices(metafunc):
        for case in all_cases:
            params.append((device, case))
            ids.append(f"{device}-{case.id}")
    metafunc.parametrize("conformance_case", params, ids=ids)


def test_conformance(conformance_case: tuple[str, object]) -> None:
    pytest.importorskip("torch")
    device, case = conformance_case
    try:
        run_case(case, device)  # type: ignore[arg-type]
    except SkipCase as exc:
        pytest.skip(str(exc))
