"""Plugin loading under stress: many threads at first use, plugins that raise anything at all.

Each scenario runs in a fresh interpreter with a private site folder holding hand-made
``*.dist-info`` entries (importlib-metadata discovers them like installed distributions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXIT_AT_IMPORT = '''
raise SystemExit(3)
'''

EXIT_IN_HOOK = '''
from torchplug.hookspecs import hookimpl

@hookimpl
def torchplug_configure(ctx):
    raise SystemExit("configure gave up")
'''

# Registers the device type 'boom', then fails while registering its kernels.
FAILS_AFTER_DEVICE = '''
import numpy as np
from torchplug import Backend
from torchplug.hookspecs import hookimpl

@hookimpl
def torchplug_register_backends(ctx):
    ctx.register_backend(Backend(device_type="boom", key_name="Boom", from_host=lambda a, d, copy=True: None,
                                 to_host=lambda t: None, storage_offset=lambda t: 0))

@hookimpl
def torchplug_register_kernels(ctx):
    raise OSError("libboom.so: cannot open shared object file")
'''


def _fake_distribution(site: Path, name: str, module: str, source: str, group: str = "torchplug.plugins") -> None:
    (site / f"{module}.py").write_text(source)
    info = site / f"{name.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{module} = {module}\n")


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    return tmp_path


def run(site: Path, code: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(site), environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environ, timeout=120)


def last_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


THREADS_AT_FIRST_USE = """
    import json, threading, torchplug as torch
    results, barrier = [], threading.Barrier(8)
    def work():
        barrier.wait()
        try:
            results.append((torch.ones(2) + 1).tolist())
        except Exception as exc:
            results.append(f"{type(exc).__name__}: {exc}")
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps(results))
"""


@pytest.mark.parametrize("attempt", range(4))
def test_eight_threads_at_first_use_all_see_the_backends(site: Path, attempt: int) -> None:
    proc = run(site, THREADS_AT_FIRST_USE)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert results == [[2.0, 2.0]] * 8


def test_loading_is_reentrant_from_a_plugin_hook(site: Path) -> None:
    # A plugin that makes tensors while it is being loaded must not deadlock on the loading lock.
    _fake_distribution(site, "torchplug-reenter", "torchplug_reenter", '''
from torchplug.hookspecs import hookimpl
SEEN = []

@hookimpl
def torchplug_configure(ctx):
    import torchplug
    SEEN.append(torchplug.ones(1).tolist())
''')
    out = last_json(run(site, """
        import json, torchplug, torchplug_reenter
        x = torchplug.ones(1)
        print(json.dumps({"seen": torchplug_reenter.SEEN, "status": torchplug.plugins.get_plugin("torchplug_reenter").status}))
    """))
    assert out == {"seen": [[1.0]], "status": "loaded"}


@pytest.mark.parametrize("source, where", [(EXIT_AT_IMPORT, "failed to import: SystemExit: 3"),
                                           (EXIT_IN_HOOK, "failed in torchplug_configure: SystemExit: configure gave up")])
def test_plugin_raising_systemexit_is_recorded_not_fatal(site: Path, source: str, where: str) -> None:
    _fake_distribution(site, "torchplug-exits", "torchplug_exits", source)
    out = last_json(run(site, """
        import json, torchplug
        from torchplug.__main__ import doctor_report
        x = (torchplug.ones(2) * 3).tolist()
        rec = torchplug.plugins.get_plugin("torchplug_exits")
        print(json.dumps({"x": x, "status": rec.status, "reason": rec.reason, "doctor": doctor_report()}))
    """))
    assert out["x"] == [3.0, 3.0]
    assert out["status"] == "failed"
    assert out["reason"] == where
    assert "torchplug_exits" in out["doctor"] and "SystemExit" in out["doctor"]


def test_device_of_a_plugin_that_failed_later_names_the_plugin(site: Path) -> None:
    _fake_distribution(site, "torchplug-boom", "torchplug_boom", FAILS_AFTER_DEVICE, group="torchplug.backends")
    out = last_json(run(site, """
        import json, torchplug
        msgs = []
        for attempt in (lambda: torchplug.ones(2, device="boom"), lambda: torchplug.device("boom"),
                        lambda: torchplug.ones(2).to("boom")):
            try:
                attempt()
                msgs.append(None)
            except RuntimeError as exc:
                msgs.append(str(exc))
        print(json.dumps(msgs))
    """))
    assert len(out) == 3
    for msg in out[::2]:  # creating a tensor on it, moving one to it
        assert msg is not None
        assert "Unknown device type" not in msg
        assert "plugin 'torchplug_boom' (torchplug-boom 0.0.1)" in msg
        assert "failed in torchplug_register_kernels: OSError: libboom.so: cannot open shared object file" in msg
