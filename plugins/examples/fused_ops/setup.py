"""Builds the C++ kernels (``torchplug_fused_ops._C``) with pybind11; metadata is in pyproject.toml."""

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

setup(
    ext_modules=[
        Pybind11Extension(
            "torchplug_fused_ops._C",
            ["torchplug_fused_ops/csrc/fused.cpp"],
            cxx_std=17,
            extra_compile_args=["-O3"],
        )
    ],
    cmdclass={"build_ext": build_ext},
)
