"""``python -m torchplug --compat`` with the core alone (no backend distribution installed)."""

from __future__ import annotations

import importlib.util
import json

import pytest

import torchplug

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torchplug_cpu") is not None, reason="a backend is installed; this env tests the bare core"
)


def test_compat_report_works_without_backends(capsys: pytest.CaptureFixture[str]) -> None:
    from torchplug.__main__ import main

    assert main(["--compat", "--module", "torch", "--module", "torch.cuda", "--module", "torch.nn", "--json"]) == 0
    rows = {m["torch_module"]: m for m in json.loads(capsys.readouterr().out)["modules"]}
    # the names exist without a backend (creating a tensor then says what to install)
    assert "zeros" in rows["torch"]["supported_names"] and "Linear" in rows["torch.nn"]["supported_names"]
    # torch.cuda is the placeholder device module: its names answer as a build without CUDA does
    assert "is_available" in rows["torch.cuda"]["supported_names"] and rows["torch.cuda"]["problem"] is None


def test_missing_name_of_a_placeholder_device_module_is_explained() -> None:
    from torchplug._doctor.compat_coverage import coverage

    (row,) = coverage(["torch.cuda"])
    name = row.missing[0]
    with pytest.raises(AttributeError, match=rf"^torchplug\.cuda\.{name} is not supported yet"):
        getattr(torchplug.cuda, name)
