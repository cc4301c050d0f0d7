"""docs/primitives.md (the primitive ops a backend must implement) matches the live registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "primitive_count.py"


def test_primitives_doc_is_up_to_date():
    if not SCRIPT.exists():
        pytest.skip("not a source checkout")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, (
        "docs/primitives.md is stale: run `python scripts/primitive_count.py` and commit the result\n" + proc.stderr
    )
