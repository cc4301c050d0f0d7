"""torchplug.utils.hooks against torch.utils.hooks."""

from __future__ import annotations

import pickle
import warnings
from collections import OrderedDict

import pytest

import torchplug
from torchplug.utils import hooks


def _libs():
    torch = pytest.importorskip("torch")
    import torch.utils.hooks as torch_hooks

    return (hooks, torch_hooks)


def _scenario(mod):
    table, extra = OrderedDict(), OrderedDict()
    a = mod.RemovableHandle(table, extra_dict=extra)
    b = mod.RemovableHandle(table, extra_dict=[extra])
    table[a.id], table[b.id], extra[a.id], extra[b.id] = "a", "b", True, True
    steps = [(list(table.values()), list(extra.values()))]
    a.remove()
    steps.append((list(table.values()), list(extra.values())))
    a.remove()  # twice: a no-op
    with b:
        pass
    steps.append((list(table.values()), list(extra.values())))
    return steps, b.id - a.id


def test_removable_handle_matches_torch():
    results = [_scenario(mod) for mod in _libs()]
    assert results[0] == results[1]
    assert results[0][0][-1] == ([], [])


def test_removable_handle_pickles_with_its_dict():
    table = OrderedDict()
    handle = hooks.RemovableHandle(table)
    table[handle.id] = "h"
    copy_table, copy_handle = pickle.loads(pickle.dumps((table, handle)))
    assert copy_handle.id == handle.id and hooks.RemovableHandle.next_id > handle.id
    copy_handle.remove()
    assert len(copy_table) == 0 and len(table) == 1
    dead = pickle.loads(pickle.dumps(handle))  # its dict was not pickled with it: a dead reference
    dead.remove()


def test_module_hooks_return_this_handle():
    lin = torchplug.nn.Linear(2, 2)
    handle = lin.register_forward_hook(lambda m, i, o: None)
    assert isinstance(handle, hooks.RemovableHandle)
    handle.remove()
    assert not lin._forward_hooks


def test_warn_if_has_hooks_like_torch():
    torch_hooks = _libs()[1]
    import torch

    for lib, mod in ((torchplug, hooks), (torch, torch_hooks)):
        t = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mod.warn_if_has_hooks(t)  # no hooks: silent
        t.register_hook(lambda g: g)
        with pytest.warns(UserWarning, match="on tensor will not be serialized"):
            mod.warn_if_has_hooks(t)
        u = lib.ones(2, requires_grad=True)
        u.register_hook(mod.unserializable_hook(lambda g: g))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mod.warn_if_has_hooks(u)


def test_public_names():
    torch_hooks = _libs()[1]
    assert set(hooks.__all__) == set(torch_hooks.__all__) - {"BackwardHook"}
