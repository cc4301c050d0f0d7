"""Run pytest, treating exit code 5 ("no tests collected") as success (for envs that may select none)."""

from __future__ import annotations

import sys

import pytest

if __name__ == "__main__":
    code = pytest.main(sys.argv[1:])
    sys.exit(0 if code == 5 else int(code))
