"""Only the optional C kernels live here; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # optional: without a C compiler the install succeeds and the NumPy versions are used
        Extension("torchplug_cpu._ckernels", ["torchplug_cpu/_ckernels.c"], optional=True,
                  extra_compile_args=["-O3"]),
    ],
)
