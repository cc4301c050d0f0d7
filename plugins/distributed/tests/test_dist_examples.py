"""The digits CNN trained with DDP on 2 ranks reaches the accuracy one process reaches."""

from __future__ import annotations

import re

import pytest

from _dist_launch import torchplugrun


def test_digits_ddp_two_ranks():
    pytest.importorskip("sklearn")
    proc = torchplugrun("--nproc-per-node", "2", "-m", "torchplug.examples.digits_ddp", "--quick", timeout=180)
    assert proc.returncode == 0, proc.stderr
    found = re.search(r"ranks: 2  test accuracy: ([\d.]+)%", proc.stdout)
    assert found, proc.stdout
    # the bar one process's --quick run is held to (tests/test_digits.py)
    assert float(found.group(1)) >= 97.0, proc.stdout
