"""The public surface: every public module has __all__, every exported name resolves."""

from __future__ import annotations

import importlib

import pytest

import torchplug

PUBLIC_MODULES = ["torchplug.library", "torchplug.hookspecs", "torchplug.plugins"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_modules_have_all(name: str) -> None:
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), name
    for attr in module.__all__:
        assert hasattr(module, attr), f"{name}.{attr}"


def test_torch_style_names_exist() -> None:
    for name in ["tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "rand", "randn", "randint",
                 "randperm", "manual_seed", "Generator", "add", "sum", "matmul", "cat", "stack", "where", "float32",
                 "int64", "bool", "dtype", "device", "Size", "Tensor", "promote_types", "result_type", "can_cast",
                 "finfo", "iinfo", "set_default_dtype", "get_default_dtype", "ops", "explain", "is_tensor"]:
        assert hasattr(torchplug, name), name
    assert torchplug.bool.name == "bool"
    assert torchplug.float is torchplug.float32 and torchplug.long is torchplug.int64


def test_function_and_method_reach_same_op() -> None:
    from torchplug._dispatch.dispatcher import DISPATCHER

    entry = DISPATCHER.entry("aten::sum")
    a = torchplug.ones(3)
    torchplug.sum(a)
    n = len(entry.cache)
    a.sum()
    assert len(entry.cache) == n  # same op, same cache key


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    import torchplug

    assert torchplug.__version__ == version("torchplug")
