"""Only the optional C modules (the new-tensor fast path, the C entry points) live here; the rest is in pyproject.toml.

``TORCHPLUG_SANITIZE=1`` builds them with AddressSanitizer and UndefinedBehaviorSanitizer, and not
optional, so a failed build fails the install (``scripts/build_sanitized.py``, tox env sanitize).
"""

import os

from setuptools import Extension, setup

SANITIZE = os.environ.get("TORCHPLUG_SANITIZE") == "1"
# -fno-wrapv undoes CPython's -fwrapv, so signed overflow is undefined again and UBSan reports it
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-O1",
                   "-g", "-fno-wrapv"]

setup(
    ext_modules=[
        # optional: without a C compiler the install succeeds and torchplug uses its Python path
        Extension("torchplug._tensor._fastpath", ["core/torchplug/_tensor/_fastpath.c"], optional=not SANITIZE,
                  extra_compile_args=SANITIZER_FLAGS if SANITIZE else [],
                  extra_link_args=SANITIZER_FLAGS[:2] if SANITIZE else []),
        # optional likewise: without it every operator call runs its generated Python entry point
        Extension("torchplug._dispatch._centry", ["core/torchplug/_dispatch/_centry.c"], optional=not SANITIZE,
                  extra_compile_args=SANITIZER_FLAGS if SANITIZE else [],
                  extra_link_args=SANITIZER_FLAGS[:2] if SANITIZE else []),
    ],
)
