"""A folder named ``torchplug`` that hides the installed package is reported as such, with the fix."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import torchplug
from torchplug._base.shadow import check_not_shadowed, shadowing_message


def _run(code_or_module: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *code_or_module], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def shadowing_dir(tmp_path):
    (tmp_path / "torchplug").mkdir()
    probe = _run(["-c", "import torchplug; print(torchplug.__file__)"], tmp_path)
    if probe.stdout.strip() != "None":
        # a regular (non-editable) install wins over a namespace folder: nothing is hidden
        pytest.skip("a folder named torchplug does not hide this installation")
    return tmp_path


def test_not_shadowed_in_a_normal_import():
    assert torchplug.__file__ is not None
    assert shadowing_message() is None
    check_not_shadowed()


def test_message_names_the_folder_and_the_fix(monkeypatch, tmp_path):
    fake = types.ModuleType("torchplug")
    fake.__file__ = None
    fake.__path__ = [str(tmp_path / "torchplug")]
    monkeypatch.setitem(sys.modules, "torchplug", fake)
    monkeypatch.chdir(tmp_path)
    message = shadowing_message()
    assert str(tmp_path / "torchplug") in message
    assert "in the current directory" in message and "Rename or move that folder" in message
    with pytest.raises(ImportError, match="a folder named 'torchplug' in the current directory hides it"):
        check_not_shadowed()


def test_doctor_reports_a_shadowing_folder(shadowing_dir):
    proc = _run(["-m", "torchplug"], shadowing_dir)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert str(shadowing_dir / "torchplug") in proc.stderr
    assert "a folder named 'torchplug' in the current directory hides it" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_importing_a_core_module_under_a_shadowing_folder_says_so(shadowing_dir):
    proc = _run(["-c", "import torchplug.linalg"], shadowing_dir)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: `import torchplug` found the folder"), proc.stderr
    assert "Rename or move that folder" in last
