"""torchplug.device: parsing, equality, default device and the unknown-type message."""

from __future__ import annotations

import pickle
import re

import pytest

import torchplug


def test_parse_forms() -> None:
    assert torchplug.device("cpu").type == "cpu" and torchplug.device("cpu").index is None
    d = torchplug.device("cpu:1")
    assert (d.type, d.index) == ("cpu", 1)
    assert torchplug.device("cpu", 0) == torchplug.device("cpu:0")
    assert torchplug.device(torchplug.device("meta")) == torchplug.device("meta")
    assert str(d) == "cpu:1" and repr(d) == "device(type='cpu', index=1)"
    assert repr(torchplug.device("meta")) == "device(type='meta')"


def test_equality_hash_pickle() -> None:
    d = torchplug.device("cpu")
    assert d == "cpu" and d != "meta" and d != torchplug.device("cpu:0")
    assert len({torchplug.device("cpu"), torchplug.device("cpu")}) == 1
    assert pickle.loads(pickle.dumps(d)) == d


@pytest.mark.parametrize("bad", ["cpu:", "cpu:-1", "cpu:x", ":0", "c p u"])
def test_malformed_strings(bad: str) -> None:
    with pytest.raises(RuntimeError):
        torchplug.device(bad)


def test_unknown_type_lists_known_and_names_distribution() -> None:
    with pytest.raises(RuntimeError, match=r"Unknown device type 'cdua'\. Available device types are \[.*'cpu'.*\]"):
        torchplug.device("cdua")
    from torchplug._runtime.backends import registered_backends, unknown_device_message

    # The distribution is named with the command that installs it from this repository (no index has it).
    expected = r"'torchplug-cuda' distribution, which ships in the torchplug repository: pip install -e \S*backends/cuda"
    if "cuda" in registered_backends():  # torchplug-cuda installed: the message it would give without it
        assert re.search(expected, unknown_device_message("cuda"))
    else:
        with pytest.raises(RuntimeError, match=expected):
            torchplug.device("cuda")


def test_immutable() -> None:
    with pytest.raises(AttributeError):
        torchplug.device("cpu").type = "meta"  # type: ignore[misc]


def test_default_device_and_context_manager() -> None:
    assert torchplug.get_default_device() == torchplug.device("cpu")
    with torchplug.device("meta"):
        assert torchplug.get_default_device() == torchplug.device("meta")
        assert torchplug.empty(3).device.type == "meta"
    assert torchplug.empty(3).device.type == "cpu"
    torchplug.set_default_device("meta")
    try:
        assert torchplug.empty(2).device.type == "meta"
    finally:
        torchplug.set_default_device(None)
    assert torchplug.empty(2).device.type == "cpu"


def test_device_argument_conversion_errors() -> None:
    with pytest.raises(TypeError, match="device"):
        torchplug.empty(2, device=3.5)


def test_device_named_copy_methods_follow_the_registered_backends():
    x = torchplug.ones(2)
    m = x.meta()
    assert m.is_meta and m.meta() is m and x.cpu() is x
    with pytest.raises(RuntimeError, match="Invalid device, must be meta device"):
        x.meta("cpu")
    with pytest.raises(AttributeError, match="no attribute 'quantum'"):
        x.quantum()


def test_pin_memory_without_an_available_accelerator_says_so():
    x = torchplug.ones(2)
    assert not x.is_pinned()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        x.pin_memory()
