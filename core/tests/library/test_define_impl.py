"""torchplug.library.define / impl (qualified-name forms and the older Library-first forms) against torch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import torchplug
from torchplug.library import Library

_ids = itertools.count()


def _name(prefix: str) -> str:
    return f"{prefix}{next(_ids)}"


def test_define_then_impl_per_device_type():
    name = _name("sin")
    torchplug.library.define(f"tpdefine::{name}", "(Tensor x) -> Tensor")

    @torchplug.library.impl(f"tpdefine::{name}", "cpu")
    def f(x):
        return torchplug.from_numpy(np.sin(x.numpy()))

    x = torchplug.randn(3)
    torchplug.testing.assert_close(getattr(torchplug.ops.tpdefine, name)(x), x.sin())
    # a later registration for the same device type replaces the kernel, as in PyTorch
    torchplug.library.impl(f"tpdefine::{name}", ["cpu"], lambda x: x * 0)
    assert getattr(torchplug.ops.tpdefine, name)(x).tolist() == [0.0, 0.0, 0.0]


def test_impl_with_dispatch_key_and_default():
    name = _name("twice")
    torchplug.library.define(f"tpdefine::{name}", "(Tensor x) -> Tensor", tags=())
    torchplug.library.impl(f"tpdefine::{name}", "default", lambda x: x * 2)
    assert getattr(torchplug.ops.tpdefine, name)(torchplug.ones(2)).tolist() == [2.0, 2.0]
    torchplug.library.impl(f"tpdefine::{name}", "CPU", lambda x: x * 3)
    assert getattr(torchplug.ops.tpdefine, name)(torchplug.ones(2)).tolist() == [3.0, 3.0]


def test_older_library_first_forms():
    with Library(_name("tpdefold"), "DEF") as lib:
        torchplug.library.define(lib, "neg(Tensor x) -> Tensor")

        @torchplug.library.impl(lib, "neg", "CPU")
        def neg(x):
            return x * -1

        assert getattr(torchplug.ops, lib.ns).neg(torchplug.ones(2)).tolist() == [-1.0, -1.0]


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    for args in [("nonamespace", "(Tensor x) -> Tensor"), ("tpdefine::named", "named(Tensor x) -> Tensor")]:
        msgs = []
        for M in (torch, torchplug):
            with pytest.raises(ValueError) as info:
                M.library.define(*args)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match="Expected a device type"):
        torchplug.library.impl("tpdefine::whatever", "foo", lambda x: x)
