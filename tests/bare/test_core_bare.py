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
    with pytest.raises(RuntimeError, match=r"'torchplug-cpu' distribution, which ships in the torchplug repository: pip install -e \S*backends/cpu"):
        torchplug.zeros(2)


def test_unknown_device_names_the_distribution() -> None:
    with pytest.raises(RuntimeError, match=r"Unknown device type 'cuda'.*'torchplug-cuda'.*pip install -e \S*backends/cuda"):
        torchplug.device("cuda")


def test_requires_grad_without_autograd_plugin_is_explained() -> None:
    # Autograd ships inside the torchplug distribution; block it to see the core explain the gap.
    import os
    import subprocess
    import sys

    code = (
        "import torchplug\nfrom torchplug._tensor.tensor import autograd_hooks\n"
        "try:\n    autograd_hooks.require(object(), True)\nexcept RuntimeError as exc:\n    print(exc)\n"
    )
    env = dict(os.environ, TORCHPLUG_BLOCK_PLUGINS="autograd")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert "autograd plugin" in out and "TORCHPLUG_BLOCK_PLUGINS" in out


def test_device_modules_and_backends_exist_without_backends() -> None:
    """torch.cuda.is_available() is the first line of most scripts: it works on the bare core."""
    assert torchplug.cuda.is_available() is False and torchplug.cuda.device_count() == 0
    assert torchplug.cpu.is_available() is False  # a placeholder too: torchplug-cpu is not installed
    torchplug.cuda.manual_seed_all(0)
    with pytest.raises(RuntimeError, match=r"torchplug\.cuda\.current_device\(\) needs a 'cuda' device, but no backend "
                                           r"for the 'cuda' device type is installed\..*pip install -e \S*backends/cuda"):
        torchplug.cuda.current_device()
    assert torchplug.accelerator.current_accelerator() is None and torchplug.accelerator.is_available() is False
    assert torchplug.backends.cuda.is_built() is False and torchplug.backends.mps.is_built() is False
    assert torchplug.backends.mps.is_available() is False
    with pytest.raises(TypeError, match=r"type torch\.cuda\.FloatTensor not available\. No backend for the 'cuda'"):
        torchplug.cuda.FloatTensor(2)
    with pytest.raises(TypeError, match=r"type torch\.FloatTensor not available\. No backend for the 'cpu'"):
        torchplug.FloatTensor(2)
