"""Run Python with the AddressSanitizer and UndefinedBehaviorSanitizer runtimes loaded first.

``python scripts/run_sanitized.py ARGS...`` runs ``python ARGS...`` (the same interpreter) with
``LD_PRELOAD`` set to gcc's libasan and libubsan (CPython is not instrumented, so the ASan runtime
must come first in the process for the sanitized extensions to load), ``ASAN_OPTIONS`` and
``UBSAN_OPTIONS`` that abort on the first report, and ``TORCHPLUG_EXPECT_SANITIZED=1`` so the
tests check that the sanitized builds are the ones imported.  Used by the tox env ``sanitize``.
"""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["runtime", "sanitizer_env"]

# no leak reports (CPython keeps objects until exit); a huge allocation fails as NULL (NumPy raises MemoryError)
# instead of aborting, as it does without ASan
ASAN_OPTIONS = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
UBSAN_OPTIONS = "halt_on_error=1:print_stacktrace=1"


def runtime(name: str) -> str:
    """The path of gcc's sanitizer runtime ``name`` (``libasan.so``), or SystemExit saying what is missing."""
    try:
        path = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        raise SystemExit(f"run_sanitized: cannot ask gcc for {name} ({e}); the sanitize env needs gcc") from e
    if not os.path.isabs(path) or not os.path.exists(path):
        raise SystemExit(f"run_sanitized: gcc does not have {name} (it answered {path!r}); install gcc's sanitizer "
                         "runtimes (Debian: apt-get install gcc libasan8 libubsan1)")
    return os.path.realpath(path)


def sanitizer_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default os.environ) with the sanitizer runtimes preloaded and their options set."""
    env = dict(os.environ if base is None else base)
    preload = [runtime("libasan.so"), runtime("libubsan.so")]
    if env.get("LD_PRELOAD"):
        preload.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = " ".join(preload)
    env.setdefault("ASAN_OPTIONS", ASAN_OPTIONS)
    env.setdefault("UBSAN_OPTIONS", UBSAN_OPTIONS)
    env["TORCHPLUG_EXPECT_SANITIZED"] = "1"
    env.pop("TORCHPLUG_PURE_PYTHON", None)  # the point is to run the C extensions
    return env


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    os.execve(sys.executable, [sys.executable, *sys.argv[1:]], sanitizer_env())
