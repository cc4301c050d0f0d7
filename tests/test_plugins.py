"""Plugin discovery end to end with a throwaway third-party distribution built and installed here.

The distribution ``torchplug-toy`` has its own pyproject and two entry points: ``toy`` (a backend
with a device type and an op library) and ``toybroken`` (raises on import).  It is installed with
pip into a private target folder, and every scenario runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "torchplug-toy"
version = "0.0.1"
dependencies = []

[project.entry-points."torchplug.backends"]
toy = "torchplug_toy"

[project.entry-points."torchplug.plugins"]
toybroken = "torchplug_toy_broken"

[tool.setuptools]
py-modules = ["torchplug_toy", "torchplug_toy_broken"]
"""

TOY = '''
"""A toy backend: device type 'toy' backed by numpy, and op library 'toy::double'."""
import numpy as np
from torchplug import Backend
from torchplug.hookspecs import hookimpl
from torchplug.library import KernelTable

IMPORTED = True
TABLE = KernelTable("Toy")
_state = {}

def _wrap(arr):
    from torchplug._tensor.tensor import make_tensor
    from torchplug import _dtype as D
    return make_tensor(arr, D.from_numpy_dtype(arr.dtype), _state["device"], _state["keyset"])

@TABLE.impl("aten::empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _wrap(np.zeros(size, dtype=dtype.numpy_dtype))

@TABLE.impl("toy::double")
def double(x):
    return _wrap(x._data * 2)

def _registered(backend):
    from torchplug import device
    _state["device"] = device("toy")
    _state["keyset"] = backend.keyset

@hookimpl
def torchplug_register_backends(ctx):
    ctx.register_backend(Backend(device_type="toy", key_name="Toy", from_host=lambda a, d, copy=True: _wrap(np.array(a)),
                                 to_host=lambda t: t._data, storage_offset=lambda t: 0, on_registered=_registered))

@hookimpl
def torchplug_register_ops(ctx):
    ctx.library("toy", "DEF").define("double(Tensor x) -> Tensor")

@hookimpl
def torchplug_register_kernels(ctx):
    ctx.register_kernels(TABLE)

@hookimpl
def torchplug_configure(ctx):
    import sys
    ctx.expose("toy", sys.modules[__name__])
'''

BROKEN = '''
raise ImportError("toy broken on purpose: missing libtoy.so")
'''


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("toy_src")
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "torchplug_toy.py").write_text(TOY)
    (src / "torchplug_toy_broken.py").write_text(BROKEN)
    target = tmp_path_factory.mktemp("toy_site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
           "--target", str(target), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"pip could not install the toy distribution:\n{proc.stdout}\n{proc.stderr}")
    return target


def run(site: Path, code: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ.update(env)
    environ["PYTHONPATH"] = os.pathsep.join([str(site), environ.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_toy_backend_and_op_appear(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, torchplug
        x = torchplug.tensor([1.0, 2.0], device="toy")
        y = torchplug.ops.toy.double(x)
        rec = torchplug.plugins.get_plugin("toy")
        print(json.dumps({"y": y._data.tolist(), "device": str(y.device), "status": rec.status,
                          "dist": rec.distribution, "ops": list(torchplug.ops.toy),
                          "owner": torchplug.ops.toy.double.default.kernels()["Toy"][0]}))
    """)
    assert out["y"] == [2.0, 4.0] and out["device"] == "toy"
    assert out["status"] == "loaded" and out["dist"] == "torchplug-toy"
    assert out["ops"] == ["double"]
    assert "torchplug_toy:double" in out["owner"] and "plugin 'toy' (torchplug-toy 0.0.1)" in out["owner"]


def test_blocked_plugin_is_never_imported(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, sys, torchplug
        torchplug.plugins.report()
        try:
            torchplug.device("toy")
            err = ""
        except RuntimeError as exc:
            err = str(exc)
        print(json.dumps({"imported": "torchplug_toy" in sys.modules, "status": torchplug.plugins.get_plugin("toy").status,
                          "err": err, "has_ns": "toy" in list(torchplug.ops)}))
    """, TORCHPLUG_BLOCK_PLUGINS="toy")
    assert out["imported"] is False
    assert out["status"] == "blocked"
    assert "blocked by TORCHPLUG_BLOCK_PLUGINS" in out["err"]
    assert out["has_ns"] is False


def test_broken_plugin_does_not_break_import_and_doctor_shows_reason(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, torchplug
        from torchplug.__main__ import doctor_report
        rec = torchplug.plugins.get_plugin("toybroken")
        x = torchplug.ones(2)  # the core and the other plugins still work
        print(json.dumps({"status": rec.status, "reason": rec.reason, "doctor": doctor_report(), "x": x.tolist()}))
    """)
    assert out["status"] == "failed"
    assert "ImportError: toy broken on purpose" in out["reason"]
    assert "toybroken" in out["doctor"] and "failed to import" in out["doctor"]
    assert out["x"] == [1.0, 1.0]


def test_autoload_kill_switch(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, sys, torchplug
        records = torchplug.plugins.report()
        print(json.dumps({"n": len(records), "toy": "torchplug_toy" in sys.modules, "cpu": "torchplug_cpu" in sys.modules}))
    """, TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD="1")
    assert out == {"n": 0, "toy": False, "cpu": False}


def test_manual_registration_with_autoload_disabled(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, torchplug, torchplug_cpu
        rec = torchplug.plugins.load_plugin(torchplug_cpu, "cpu", group="torchplug.backends")
        x = torchplug.zeros(2)
        torchplug.plugins.unload_plugin("cpu")
        try:
            torchplug.zeros(2, device="cpu")
            after = "worked"
        except RuntimeError as exc:
            after = str(exc)
        print(json.dumps({"status": rec.status, "x": x.shape[0], "after": after}))
    """, TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD="1")
    assert out["status"] == "loaded" and out["x"] == 2
    assert "Unknown device type 'cpu'" in out["after"]


def test_importing_plugin_module_does_not_touch_dispatcher(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, torchplug
        from torchplug._dispatch.dispatcher import DISPATCHER
        before = sum(len(r) for e in DISPATCHER.ops.values() for r in e.kernels.values())
        import torchplug_toy, torchplug_cpu.kernels.core
        after = sum(len(r) for e in DISPATCHER.ops.values() for r in e.kernels.values())
        print(json.dumps({"same": before == after, "toy_ns": "toy" in list(torchplug.ops)}))
    """, TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD="1")
    assert out == {"same": True, "toy_ns": False}


def test_plugin_exposes_torchplug_attribute_and_import(toy_site: Path) -> None:
    out = run(toy_site, """
        import json, torchplug
        import torchplug.toy
        from torchplug.toy import IMPORTED
        print(json.dumps({"attr": torchplug.toy.IMPORTED, "imported": IMPORTED,
                          "same": torchplug.toy is __import__("torchplug_toy")}))
    """)
    assert out == {"attr": True, "imported": True, "same": True}
