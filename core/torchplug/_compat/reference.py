"""The committed reference of PyTorch's public names (``pytorch_names.json``) and the module mapping.

The file is written by ``scripts/generate_compat_reference.py`` from an installed torch, so
nothing here imports torch.  ``torch.X.Y`` corresponds to ``torchplug.X.Y`` and ``torch.Tensor``
to ``torchplug.Tensor``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["MODULES", "REFERENCE_FILE", "reference", "names", "torch_version", "torchplug_name", "has_name"]

REFERENCE_FILE = Path(__file__).with_name("pytorch_names.json")

# The modules compared, in report order (the generator writes exactly these).
MODULES = (
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.utils.rnn", "torch.optim", "torch.optim.lr_scheduler", "torch.autograd", "torch.autograd.functional",
    "torch.autograd.graph", "torch.utils", "torch.utils.data", "torch.utils.checkpoint", "torch.linalg", "torch.fft",
    "torch.special", "torch.distributions", "torch.func", "torch.cuda", "torch.mps", "torch.cpu",
    "torch.accelerator", "torch.amp", "torch.backends", "torch.random", "torch.testing", "torch.library",
    "torch.profiler", "torch.autograd.profiler", "torch.utils.benchmark", "torch.multiprocessing", "torch.utils.hooks",
    "torch.nn.attention",
)


@lru_cache(maxsize=1)
def reference() -> dict[str, Any]:
    """The parsed reference file: ``torch_version`` and ``modules`` (torch module -> {name: kind})."""
    import json  # (here: ``import torchplug`` needs the file only when a missing name is looked up)

    with REFERENCE_FILE.open(encoding="utf-8") as f:
        return json.load(f)


def names(torch_module: str) -> dict[str, str]:
    """PyTorch's public names of ``torch_module`` with their kinds ({} for a module not in the reference)."""
    return reference()["modules"].get(torch_module, {})


def torch_version() -> str:
    """The torch version the reference was generated from, e.g. ``2.13.0+cpu``."""
    return reference()["torch_version"]


def torchplug_name(torch_name: str) -> str:
    """``torch.nn.functional`` -> ``torchplug.nn.functional`` (also for a dotted attribute path)."""
    return "torchplug" + torch_name[len("torch"):]


def has_name(torch_module: str, name: str) -> bool:
    """Whether PyTorch's ``torch_module`` has the public ``name`` (per the reference)."""
    if name.startswith("_"):
        return False  # never in the reference: skip reading the file for private probes
    return name in names(torch_module)
