"""Only the optional C fast path lives here; everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # optional: without a C compiler the install succeeds and torchplug uses its Python path
        Extension("torchplug._fastpath", ["core/torchplug/_fastpath.c"], optional=True),
    ],
)
