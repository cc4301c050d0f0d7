"""Only the optional C kernels live here; everything else is declared in pyproject.toml.

``TORCHPLUG_SANITIZE=1`` builds them with AddressSanitizer and UndefinedBehaviorSanitizer, and
not optional, so a failed build fails the install (``scripts/build_sanitized.py``, tox env sanitize).
"""

import os

from setuptools import Extension, setup

SANITIZE = os.environ.get("TORCHPLUG_SANITIZE") == "1"
# -fno-wrapv undoes CPython's -fwrapv, so signed overflow is undefined again and UBSan reports it
SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-O1",
                   "-g", "-fno-wrapv"]

setup(
    ext_modules=[
        # optional: without a C compiler the install succeeds and the NumPy versions are used
        Extension("torchplug_cpu._ckernels", ["torchplug_cpu/_ckernels.c"], optional=not SANITIZE,
                  extra_compile_args=(SANITIZER_FLAGS if SANITIZE else ["-O3"]) + ["-fno-math-errno"],
                  extra_link_args=SANITIZER_FLAGS[:2] if SANITIZE else []),
        # PyTorch's CPU random stream; -ffp-contract=off: only the fma() calls written there are fused
        Extension("torchplug_cpu._crandom", ["torchplug_cpu/_crandom.c"], optional=not SANITIZE,
                  extra_compile_args=(SANITIZER_FLAGS if SANITIZE else ["-O3"]) + ["-ffp-contract=off", "-fno-math-errno"],
                  extra_link_args=SANITIZER_FLAGS[:2] if SANITIZE else []),
        # the hottest small kernels' fast paths without Python frames (pointwise.py keeps the Python kernels)
        Extension("torchplug_cpu._cquick", ["torchplug_cpu/_cquick.c"], optional=not SANITIZE,
                  extra_compile_args=(SANITIZER_FLAGS if SANITIZE else ["-O3"]) + ["-fno-math-errno"],
                  extra_link_args=SANITIZER_FLAGS[:2] if SANITIZE else []),
    ],
)
