"""Run a PyTorch tutorial script unchanged under real PyTorch or under torchplug.

Usage: ``python tests/tutorials/run_tutorial.py {torch|torchplug} SCRIPT [ARGS...]``

Under ``torchplug`` an import hook maps ``torch`` and every ``torch.<sub>`` to ``torchplug`` and
``torchplug.<sub>`` (the very same module objects), so ``import torch``, ``import torch.nn as nn``
and ``from torch.utils.data import DataLoader`` in the script resolve to torchplug without any
edit to the script.  The repository had no such hook: ``scripts/digits_vs_torch.py`` aliases the
other way round (``torchplug`` names to torch's modules) for a script written against torchplug.
Both runs use one thread so that their floating-point reductions are as close as possible.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
from types import ModuleType
from typing import Any

__all__ = ["TorchAliasFinder", "install_torch_alias", "main"]


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported torchplug module."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        return None


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch[.sub]`` as ``torchplug[.sub]``; a name torchplug lacks stays a ModuleNotFoundError."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "torchplug" + fullname[len("torch"):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            # Report the torch name the script asked for, and what torchplug lacks.
            raise ModuleNotFoundError(f"No module named {fullname!r} (torchplug has no {real!r}: {exc})",
                                      name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module))


def install_torch_alias() -> None:
    """Put the alias finder first on ``sys.meta_path`` (before a real torch could be found)."""
    if not any(isinstance(f, TorchAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAliasFinder())


def main(argv: list[str] | None = None) -> int:
    """Run ``SCRIPT`` as ``__main__`` under the chosen library."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] not in ("torch", "torchplug"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    lib, script = argv[0], argv[1]
    if lib == "torchplug":
        install_torch_alias()
    import torch  # noqa: F401 - under torchplug this is the alias; one thread under either

    torch.set_num_threads(1)
    sys.argv = [script, *argv[2:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
