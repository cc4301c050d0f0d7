"""Install torchplug and torchplug-cpu with their C extensions built under ASan and UBSan.

``python scripts/build_sanitized.py DEST`` copies the sources that build the C extensions
(torchplug._tensor._fastpath, torchplug._dispatch._centry, torchplug_cpu._ckernels, torchplug_cpu._cquick...)
to ``DEST/src`` -- so the checkout's own builds and ``build/`` folders are left alone -- and pip-installs them into the running environment with
``TORCHPLUG_SANITIZE=1``, which makes both setup.py files compile with
``-fsanitize=address,undefined -fno-omit-frame-pointer -O1`` and makes the extensions required:
a failed build fails the install instead of falling back to Python.  It then imports both under
the sanitizer runtimes (scripts/run_sanitized.py) and checks that the instrumented builds are
the ones loaded.  Used by the tox env ``sanitize``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["copy_sources", "install", "verify"]

ROOT = Path(__file__).resolve().parents[1]
# what the root distribution (pyproject.toml's package dirs) and the cpu backend are built from
SOURCES = ["pyproject.toml", "setup.py", "README.md", "core/torchplug", "plugins/amp", "plugins/nn",
           "plugins/autograd", "backends/cpu/pyproject.toml", "backends/cpu/setup.py", "backends/cpu/torchplug_cpu"]
_SKIP = shutil.ignore_patterns("*.so", "*.o", "__pycache__", "*.egg-info", "build", "tests", ".pytest_cache")

VERIFY = """
import pathlib, sys
import torchplug, torchplug._tensor._fastpath as fp, torchplug._tensor.construct as nt
import torchplug._dispatch._centry as ce, torchplug._dispatch.codegen as cg
import torchplug_cpu._ckernels as ck, torchplug_cpu._native as native, torchplug_cpu._cquick as cq
root = pathlib.Path(sys.argv[1])
in_tree = {root / "core" / "torchplug", root / "backends" / "cpu" / "torchplug_cpu"}
assert nt.ACCELERATED and native.ckernels is ck and native.cquick is cq, "the C extensions are not in use"
assert cg.C_ENTRIES and type(torchplug.Tensor.__add__) is ce.Entry, "the C entry points are not in use"
for m in (fp, ce, ck, cq):
    path = pathlib.Path(m.__file__).resolve()
    assert path.parent not in in_tree, f"{m.__name__} comes from the checkout, not the sanitized install: {path}"
    data = path.read_bytes()
    assert b"__asan_report_" in data and b"__ubsan_handle_" in data, f"{path} is not instrumented"
    print(f"sanitized: {m.__name__} <- {path}")
"""


def copy_sources(dest: Path) -> Path:
    """A fresh copy of the build sources under ``dest/src``."""
    src = dest / "src"
    if src.exists():
        shutil.rmtree(src)
    for rel in SOURCES:
        here, there = ROOT / rel, src / rel
        there.parent.mkdir(parents=True, exist_ok=True)
        if here.is_dir():
            shutil.copytree(here, there, ignore=_SKIP)
        else:
            shutil.copy2(here, there)
    return src


def install(src: Path) -> None:
    """pip-installs both distributions from ``src`` with the sanitizer build switched on."""
    env = dict(os.environ, TORCHPLUG_SANITIZE="1")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--force-reinstall", "--no-cache-dir", str(src), str(src / "backends" / "cpu")], check=True, env=env)


def verify() -> None:
    """Imports both extensions under the sanitizer runtimes; fails unless the instrumented builds load."""
    subprocess.run([sys.executable, str(ROOT / "scripts" / "run_sanitized.py"), "-c", VERIFY, str(ROOT)], check=True,
                   cwd=str(ROOT.parent))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    install(copy_sources(Path(sys.argv[1]).resolve()))
    verify()
