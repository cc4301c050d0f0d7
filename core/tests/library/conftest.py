"""Fixtures shared by the library tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def ops():
    """Collects ops made by a test and destroys them afterwards, so tests stay independent."""
    made = []
    yield made
    for op in reversed(made):
        op._destroy()
