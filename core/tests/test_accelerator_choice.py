"""Which accelerator is current: the most preferred available one; else the most preferred one
that could exist on this system; else None.  The user's priority list and TORCHPLUG_ACCELERATOR
still win.  The doctor and --demo show the choice without failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import torchplug as torch
from torchplug import accelerator
from torchplug._runtime.backends import Backend, registered_backends
from torchplug._runtime.registration import register_backend, unregister_backend

LINUX = sys.platform.startswith("linux")


def run_clean(code: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ.update(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


CHOICE = """
    import json, torchplug as torch
    acc = torch.accelerator
    print(json.dumps({"current": str(acc.current_accelerator()), "checked": str(acc.current_accelerator(check_available=True)),
                      "avail": acc.is_available(), "count": acc.device_count(), "order": acc.accelerators(),
                      "module": torch.get_device_module().__name__}))
"""


@pytest.mark.skipif(not LINUX, reason="the mps stub could be available on macOS")
def test_quickstart_on_linux_has_no_current_accelerator():
    """cpu + meta + the mps stub (no cuda backend): torch answers None on Linux, and so do we."""
    out = run_clean(CHOICE, TORCHPLUG_BLOCK_PLUGINS="cuda")
    assert out == {"current": "None", "checked": "None", "avail": False, "count": 0, "order": ["mps"],
                   "module": "torchplug.cpu"}


@pytest.mark.skipif(not LINUX, reason="the mps stub could be available on macOS")
def test_emulated_mps_is_current_when_cuda_is_installed_without_a_gpu():
    if "cuda" not in registered_backends():
        pytest.skip("torchplug-cuda is not installed")
    out = run_clean(CHOICE, TORCHPLUG_MPS_EMULATE="1")
    assert out["current"] == "mps" and out["checked"] == "mps" and out["avail"] is True and out["count"] == 1
    assert out["order"] == ["cuda", "mps"] and out["module"] == "torchplug.mps"


def test_cuda_without_a_gpu_is_current_but_unavailable():
    """Nothing is available; cuda could be (it exists on every platform): current, not available."""
    if "cuda" not in registered_backends():
        pytest.skip("torchplug-cuda is not installed")
    out = run_clean(CHOICE)
    if out["avail"]:
        pytest.skip("this machine has a GPU")
    assert out["current"] == "cuda" and out["checked"] == "None" and out["count"] == 0
    assert out["module"] == "torchplug.cuda"


@pytest.mark.skipif(not LINUX, reason="the mps stub could be available on macOS")
def test_user_choice_wins_even_when_unavailable():
    out = run_clean("""
        import json, torchplug as torch
        acc = torch.accelerator
        acc.set_accelerator_priority(["mps"])
        user = [str(acc.current_accelerator()), acc.is_available()]
        acc.set_accelerator_priority(None)
        print(json.dumps({"user": user, "default": str(acc.current_accelerator())}))
    """, TORCHPLUG_BLOCK_PLUGINS="cuda")
    assert out == {"user": ["mps", False], "default": "None"}
    out = run_clean(CHOICE, TORCHPLUG_BLOCK_PLUGINS="cuda", TORCHPLUG_ACCELERATOR="mps")
    assert out["current"] == "mps" and out["checked"] == "None"


class _Runtime:
    def __init__(self, available: bool) -> None:
        self.available = available

    def is_available(self) -> bool:
        return self.available

    def device_count(self) -> int:
        return int(self.available)

    def current_device(self) -> int:
        return 0

    def set_device(self, index: int) -> None:
        return None

    def synchronize(self, index: int) -> None:
        return None


def _toy(name: str, priority: int, available: bool, platforms: tuple[str, ...] = ()) -> Backend:
    return register_backend(Backend(
        device_type=name, key_name=name.capitalize(), from_host=lambda a, d, copy=True: None, to_host=lambda t: None,
        storage_offset=lambda t: 0, is_accelerator=True, accelerator_priority=priority, platforms=platforms,
        runtime=_Runtime(available)))


@pytest.fixture
def toys(monkeypatch):
    monkeypatch.delenv(accelerator.ENV_VAR, raising=False)
    made = []

    def make(*args, **kwargs):
        made.append(_toy(*args, **kwargs))
        return made[-1]

    yield make
    accelerator.set_accelerator_priority(None)
    for b in made:
        unregister_backend(b.device_type)


def test_available_beats_preferred(toys):
    toys("accpref", 2000, available=False)
    toys("accavail", 1500, available=True)
    assert accelerator.current_accelerator() == torch.device("accavail")
    assert accelerator.current_accelerator_choice() == ("accavail", "the most preferred available accelerator")
    assert accelerator.accelerators()[:2] == ["accpref", "accavail"]  # the preference order is unchanged


def test_unavailable_accelerator_that_cannot_exist_here_is_skipped(toys):
    elsewhere = toys("accelsewhere", 2000, available=False, platforms=("nosuchos",))
    here = toys("acchere", 1500, available=False, platforms=(sys.platform[:3],))
    assert not elsewhere.could_be_available() and here.could_be_available()
    for b in registered_backends().values():  # the installed backends must not be available for this test
        if b.is_accelerator and b.device_type not in ("accelsewhere", "acchere") and b.runtime.is_available():
            pytest.skip(f"{b.device_type} is available on this machine")
    assert accelerator.current_accelerator() == torch.device("acchere")
    assert accelerator.current_accelerator(check_available=True) is None
    assert accelerator.is_available() is False and accelerator.device_count() == 0


def test_user_priority_picks_among_named_then_first_named(toys):
    toys("accone", 2000, available=True)
    toys("acctwo", 1500, available=False)
    toys("accthree", 1000, available=True)
    accelerator.set_accelerator_priority(["acctwo", "accthree"])
    assert accelerator.current_accelerator() == torch.device("accthree")  # the first named one that is available
    accelerator.set_accelerator_priority(["acctwo"])
    assert accelerator.current_accelerator() == torch.device("acctwo")  # named: stands even unavailable
    assert accelerator.current_accelerator(check_available=True) is None
    accelerator.set_accelerator_priority(None)
    assert accelerator.current_accelerator() == torch.device("accone")


def test_platforms_match_sys_platform_prefixes(monkeypatch):
    b = Backend(device_type="x", key_name="X", from_host=None, to_host=None, storage_offset=None,
                platforms=("darwin",))
    monkeypatch.setattr(sys, "platform", "darwin")
    assert b.could_be_available()
    monkeypatch.setattr(sys, "platform", "linux")
    assert not b.could_be_available()
    assert Backend(device_type="y", key_name="Y", from_host=None, to_host=None, storage_offset=None).could_be_available()


def test_mps_stub_declares_macos_only():
    if "mps" not in registered_backends():
        pytest.skip("torchplug-mps is not installed")
    assert registered_backends()["mps"].platforms == ("darwin",)


@pytest.mark.skipif(not LINUX, reason="the mps stub could be available on macOS")
def test_demo_and_doctor_do_not_fail_without_a_usable_accelerator():
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ["TORCHPLUG_BLOCK_PLUGINS"] = "cuda"
    proc = subprocess.run([sys.executable, "-m", "torchplug", "--demo"], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "demo failed" not in out
    assert "--- device 'mps'\nskipped: the device is not available (this machine runs Linux" in out
    assert "Current accelerator: None   (none is available, and none could be on this system" in out
    assert "[cannot exist on linux: only on darwin]" in out
    assert "tensor([ 9., 27.])" in out  # the cpu demo ran
    assert "Well-known device types without a backend" in out and "  cuda     The 'cuda' device type is not available." in out


def test_no_accelerator_message_explains_each_registered_one(toys):
    if any(b.is_accelerator and b.runtime.is_available() for b in registered_backends().values()):
        pytest.skip("an accelerator is available here")
    toys("accgone", 3000, available=False, platforms=("nosuchos",))
    accelerator.set_accelerator_priority(["nosuch"])  # named but not registered: ignored
    msg = accelerator.no_accelerator_message()
    assert msg.startswith("No accelerator is available (installed device types: ")
    assert "cpu and meta are not accelerators" in msg
    assert "The 'accgone' accelerator (no distribution) is registered but not usable: it exists only on nosuchos" in msg
