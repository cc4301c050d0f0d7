"""Run the digits example under torchplug and, unchanged, under real PyTorch, with the same seed and one thread.

Usage: ``python scripts/digits_vs_torch.py [--epochs N] [--seed S]``

Both runs start from the same random stream (torchplug's CPU generator is PyTorch's), so the
initial weights and every shuffle are identical; what remains different is floating-point
rounding in the kernels (BLAS, convolution), which the accuracies then reflect.  Each run is a
fresh subprocess: the PyTorch one imports ``core/torchplug/examples/digits.py`` with
``torchplug`` and its submodules aliased to ``torch``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "core" / "torchplug" / "examples" / "digits.py"

_RUN = """
import json, sys, importlib.util
from threadpoolctl import threadpool_limits
if {use_torch}:
    import torch, torch.nn, torch.nn.functional, torch.optim, torch.optim.lr_scheduler, torch.utils.data
    torch.set_num_threads(1)
    for name in ("", ".nn", ".nn.functional", ".optim", ".optim.lr_scheduler", ".utils", ".utils.data"):
        sys.modules["torchplug" + name] = sys.modules["torch" + name]
spec = importlib.util.spec_from_file_location("digits_example", {path!r})
digits = importlib.util.module_from_spec(spec)
spec.loader.exec_module(digits)
with threadpool_limits(limits=1):
    _, summary = digits.train(epochs={epochs}, seed={seed}, device=digits.torch.device("cpu"), progress=False)
print(json.dumps(summary))
"""


def run(use_torch: bool, epochs: int, seed: int) -> dict:
    """One training run in a fresh interpreter; its summary."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    code = _RUN.format(use_torch=use_torch, path=str(EXAMPLE), epochs=epochs, seed=seed)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name, use_torch in (("torchplug", False), ("torch", True)):
        s = run(use_torch, args.epochs, args.seed)
        print(f"{name:<10} seed {args.seed}  epochs {args.epochs}  test accuracy {s['accuracy']:.2%}  "
              f"final loss {s['loss']:.4f}  {s['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
