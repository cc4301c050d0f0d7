"""Run a Python script with the cuda device emulated on NumPy: ``python -m torchplug_cuda.emulate SCRIPT ARGS...``.

CI uses it to run the conformance suite on ``--torchplug-device=cuda`` without a GPU (the
shared kernels through the loader, on host arrays).  This is not GPU verification.
``TORCHPLUG_CUDA_EMULATE`` keeps its value when already set (``=2`` for two devices).
"""

from __future__ import annotations

import os
import runpy
import sys

from ._runtime import EMULATE_VAR

__all__ = ["main"]


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m torchplug_cuda.emulate SCRIPT [ARGS...]")
    os.environ.setdefault(EMULATE_VAR, "1")
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
