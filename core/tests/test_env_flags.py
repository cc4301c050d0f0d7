"""Boolean environment switches: ``0`` means off (``TORCHPLUG_PURE_PYTHON=0`` keeps the C modules)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from torchplug._base.env import env_flag, pure_python

NAME = "TORCHPLUG_TEST_FLAG"


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "yes", "on", " 1 "])
def test_on_values(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    assert env_flag(NAME) is True


@pytest.mark.parametrize("raw", ["0", "false", "False", "no", "off", ""])
def test_off_values(monkeypatch, raw):
    monkeypatch.setenv(NAME, raw)
    assert env_flag(NAME, default=True) is False


def test_unset_gives_the_default(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    assert env_flag(NAME) is False
    assert env_flag(NAME, default=True) is True


def test_invalid_value_warns_and_keeps_the_default(monkeypatch):
    monkeypatch.setenv(NAME, "maybe")
    with pytest.warns(UserWarning, match=r"Ignoring invalid value 'maybe' of boolean environment variable "
                                          r"TORCHPLUG_TEST_FLAG: valid values are 0 or 1"):
        assert env_flag(NAME) is False


def test_pure_python_reads_its_variable(monkeypatch):
    monkeypatch.setenv("TORCHPLUG_PURE_PYTHON", "0")
    assert pure_python() is False
    monkeypatch.setenv("TORCHPLUG_PURE_PYTHON", "1")
    assert pure_python() is True


_PROBE = ("import json, torchplug\n"
          "from torchplug._tensor import construct\n"
          "from torchplug._dispatch import codegen\n"
          "a = torchplug.ones(2)\n"
          "print(json.dumps({'fastpath': construct.ACCELERATED, 'centry': codegen.C_ENTRIES,\n"
          "                  'add': type(torchplug.Tensor.__add__).__name__, 'sum': (a + a).sum().item()}))\n")


def _probe(value: str | None) -> dict:
    env = dict(os.environ)
    env.pop("TORCHPLUG_PURE_PYTHON", None)
    if value is not None:
        env["TORCHPLUG_PURE_PYTHON"] = value
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_zero_keeps_the_c_fast_path():
    built = _probe(None)["fastpath"]
    if not built:
        pytest.skip("torchplug._tensor._fastpath was not built")
    assert _probe("0")["fastpath"] is True
    assert _probe("1")["fastpath"] is False


def test_pure_python_turns_the_c_entry_points_off():
    if not _probe(None)["centry"]:
        pytest.skip("torchplug._dispatch._centry was not built")
    on, off = _probe("0"), _probe("1")
    assert on["centry"] is True and on["add"] == "Entry"
    assert off["centry"] is False and off["add"] == "function"  # the generated Python entry points
    assert on["sum"] == off["sum"] == 4.0
