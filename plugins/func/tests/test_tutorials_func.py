"""The PyTorch tutorials on torch.func (per-sample gradients, model ensembling, Jacobians/Hessians, neural
tangent kernels) run unchanged under torch and under torchplug (``tests/tutorials/run_tutorial.py`` maps
``torch`` to ``torchplug``); each script asserts its own checks, and the figures it prints agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent / "tutorials"
RUNNER = Path(__file__).resolve().parents[3] / "tests" / "tutorials" / "run_tutorial.py"
SCRIPTS = sorted(p.name for p in HERE.glob("*.py"))
_NUMBER = re.compile(r"[-+]?\d+\.\d+")


def _run(lib: str, script: str, cwd: Path) -> str:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(RUNNER), lib, str(HERE / script)], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{script} failed under {lib}:\n{proc.stderr[-3000:]}"
    return proc.stdout


def _values(output: str) -> list[float]:
    return [float(x) for line in output.splitlines() if line.startswith("value") for x in _NUMBER.findall(line)]


@pytest.mark.parametrize("script", SCRIPTS)
def test_tutorial_runs_unchanged(script, tmp_path):
    theirs = _values(_run("torch", script, tmp_path))
    mine = _values(_run("torchplug", script, tmp_path))
    assert theirs and len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (mine, theirs)
