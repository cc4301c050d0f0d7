"""Without a GPU: the backend installs, registers and explains itself; CuPy is never imported early."""

from __future__ import annotations

import subprocess
import sys

import pytest

import torchplug as torch
from torchplug import accelerator
from torchplug_cuda import _runtime


def test_import_never_imports_cupy_nor_probes():
    code = ("import sys, torchplug as t; t.ones(1); a = t.accelerator.current_accelerator(); "
            "print(a, 'cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={k: v for k, v in __import__("os").environ.items()
                              if k not in (_runtime.EMULATE_VAR, accelerator.ENV_VAR)})
    assert out.stdout.split() == ["cuda", "False"], out.stderr


def test_registered_but_unavailable(no_gpu):
    assert torch.device("cuda:1").type == "cuda"
    assert accelerator.accelerators()[0] == "cuda"  # priority 20 beats mps's 10
    assert accelerator.current_accelerator() == torch.device("cuda")  # from registration alone
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    assert accelerator.current_accelerator(check_available=True) != torch.device("cuda")
    assert torch.cuda.is_bf16_supported() is False
    assert torch.cuda.get_arch_list() == []
    torch.cuda.manual_seed(0)  # silently ignored, as in torch.cuda without CUDA
    torch.cuda.manual_seed_all(0)


@pytest.mark.parametrize("use", [
    lambda: torch.zeros(2, device="cuda"),
    lambda: torch.empty(2, 3, device="cuda:0"),
    lambda: torch.ones(2).to("cuda"),
    lambda: torch.tensor([1.0], device="cuda"),
    lambda: torch.randn(3, device="cuda"),
    lambda: torch.cuda.memory_allocated(),
    lambda: torch.cuda.synchronize(),
    lambda: torch.cuda.current_stream(),
    lambda: torch.cuda.Event(),
    lambda: torch.cuda.get_rng_state(),
    lambda: torch.cuda.get_device_properties(0),
    lambda: torch.cuda.mem_get_info(),
    lambda: torch.cuda.set_per_process_memory_fraction(0.5),
], ids=["zeros", "empty", "to", "tensor", "randn", "memory_allocated", "synchronize", "current_stream", "Event",
        "get_rng_state", "get_device_properties", "mem_get_info", "memory_fraction"])
def test_any_use_says_no_cuda_device_was_found(no_gpu, use):
    with pytest.raises(RuntimeError, match="'cuda' device is not available: no CUDA device was found") as info:
        use()
    assert _runtime.EMULATE_VAR in str(info.value)  # and how to test without one


def test_reason_names_the_fix(no_gpu):
    reason = torch.cuda.is_available() or _runtime.CUDARuntime().unavailable_reason()
    assert "no CUDA device was found" in reason
    assert "backends/cuda[cuda12]" in reason or "nvidia-smi" in reason or "cudaGetDeviceCount" in reason


def test_device_module_has_the_surface_and_cuda_extras(no_gpu):
    from torchplug._runtime.backends import backend_for
    from torchplug._runtime.device_module import SURFACE
    from torchplug_cuda.device_module import CUDA_EXTRAS

    generic = backend_for("cuda").device_module
    assert sorted(generic.__all__) == sorted(n for n in SURFACE if not n.startswith("_"))
    assert set(torch.cuda.__all__) == set(generic.__all__) | set(CUDA_EXTRAS)
    for name in SURFACE:
        assert hasattr(torch.cuda, name), name
    assert torch.cuda.OutOfMemoryError is generic.OutOfMemoryError
    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)
    assert torch.cuda.Stream is generic.Stream and torch.cuda.Event is generic.Event


def test_get_device_module_and_explain(no_gpu):
    assert torch.get_device_module("cuda").device_type == "cuda"


def test_missing_cupy_names_an_install_command_that_works_from_this_repository():
    import importlib.util
    from pathlib import Path

    from torchplug._runtime.backends import install_command, repository_root

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: the missing-CuPy message cannot be observed here")
    _cp, why = _runtime._probe()
    command = install_command("cuda", "cuda12")
    assert command in why and "[cuda13]" in why
    root = repository_root()
    if root is not None:  # an editable checkout: the command names this checkout's backends/cuda
        assert command == f"pip install -e '{root / 'backends' / 'cuda'}[cuda12]'"
        assert (Path(root) / "backends" / "cuda" / "pyproject.toml").is_file()
    assert "pip install torchplug-cuda" not in why  # no package index has it
