"""The core alone (no backend distribution installed): it imports, and says what is missing."""

from __future__ import annotations

import importlib.util

import pytest

import torchplug

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torchplug_cpu") is not None, reason="a backend is installed; this env tests the bare core"
)


def test_import_and_doctor_work_without_backends() -> None:
    from torchplug.__main__ import doctor_report

    text = doctor_report()
    assert "(none: install a backend" in text
    assert torchplug.float32.itemsize == 4
    assert "aten::add.Tensor" in torchplug.list_ops()


def test_creating_a_tensor_says_what_to_install() -> None:
    with pytest.raises(RuntimeError, match="pip install torchplug-cpu"):
        torchplug.zeros(2)


def test_unknown_device_names_the_distribution() -> None:
    with pytest.raises(RuntimeError, match=r"Unknown device type 'cuda'.*pip install torchplug-cuda"):
        torchplug.device("cuda")


def test_requires_grad_without_autograd_plugin_is_explained() -> None:
    # Autograd ships inside the torchplug distribution; block it to see the core explain the gap.
    import os
    import subprocess
    import sys

    code = (
        "import torchplug\nfrom torchplug._tensor import autograd_hooks\n"
        "try:\n    autograd_hooks.require(object(), True)\nexcept RuntimeError as exc:\n    print(exc)\n"
    )
    env = dict(os.environ, TORCHPLUG_BLOCK_PLUGINS="autograd")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert "autograd plugin" in out and "TORCHPLUG_BLOCK_PLUGINS" in out
