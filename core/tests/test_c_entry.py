"""The C entry points (torchplug._dispatch._centry): the calls they take give what the generated Python entry
points give, everything else goes to those, and they look like the functions they wrap (skips where not built)."""

from __future__ import annotations

import copy
import gc
import inspect
import pickle
import sys
import threading

import numpy as np
import pytest

import torchplug as torch
from torchplug._dispatch import codegen
from torchplug._dispatch.tls import exclude_keys
from torchplug.library import Library

pytestmark = pytest.mark.skipif(not codegen.C_ENTRIES,
                                reason="torchplug._dispatch._centry was not built (or TORCHPLUG_PURE_PYTHON is set)")

T = torch.Tensor


def _centry():
    import torchplug._dispatch._centry as centry

    return centry


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, T):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.numpy() if not a.requires_grad else a.detach().numpy(),
                                      b.numpy() if not b.requires_grad else b.detach().numpy())
    else:
        assert a == b


CALLS = [
    ("add", lambda f, a, b: f(a, b), T.__add__),
    ("add number", lambda f, a, b: f(a, 2.5), T.__add__),
    ("add int", lambda f, a, b: f(a, 3), T.__add__),
    ("add bool", lambda f, a, b: f(a, True), T.__add__),
    ("add alpha", lambda f, a, b: f(a, b, alpha=2), T.__add__),
    ("torch.add", lambda f, a, b: f(a, b), torch.add),
    ("mul", lambda f, a, b: f(a, b), T.__mul__),
    ("mul number first", lambda f, a, b: f(2.0, b), torch.mul),
    ("relu", lambda f, a, b: f(a), torch.relu),
    ("relu method", lambda f, a, b: f(b), T.relu),
    ("sum", lambda f, a, b: f(a), T.sum),
    ("sum dim", lambda f, a, b: f(a, 0), T.sum),
    ("sum keepdim", lambda f, a, b: f(a, (0,), True), T.sum),
    ("matmul", lambda f, a, b: f(a.reshape(4, 4), b.reshape(4, 4)), T.__matmul__),
    ("sub", lambda f, a, b: f(a, b), T.__sub__),
    ("eq", lambda f, a, b: f(a, a), T.__eq__),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.float16])
@pytest.mark.parametrize("name,call,fn", CALLS, ids=[c[0] for c in CALLS])
def test_c_and_python_entries_agree(name, call, fn, dtype):
    a = torch.arange(-8, 8).to(dtype)
    b = torch.arange(16).to(dtype).flip(0)
    python = codegen.python_entry(fn)
    assert python is not fn and type(fn) is _centry().Entry
    with torch.no_grad():
        _same(call(fn, a, b), call(python, a, b))
    _same(call(fn, a, b), call(python, a, b))  # grad mode on: the same kernel (no input requires grad)


def test_entries_arm_on_first_call():
    a = torch.ones(3)
    a + a, a * a, torch.relu(a), a.sum(), a.reshape(3, 1) @ a.reshape(1, 3)
    for fn in (T.__add__, T.__mul__, torch.relu, T.sum, T.__matmul__):
        assert fn.armed, fn


def test_errors_are_the_python_entrys():
    a = torch.ones(2)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Tensor' and 'NoneType'"):
        a + None
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor or number, not str"):
        torch.add(a, "x")
    with pytest.raises(TypeError, match=r"relu\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        torch.relu([1.0])
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match the size of tensor b \\(3\\)"):
        a + torch.ones(3)
    with pytest.raises(TypeError, match="expected at least one argument to be a Tensor"):
        T.__add__(1, 2)


def test_reflected_and_numpy_operands_take_the_python_entry():
    a = torch.ones(2)
    _same(2 + a, torch.full((2,), 3.0))
    _same(a + np.float32(2.0), torch.full((2,), 3.0))


def test_autograd_records_through_the_c_entry():
    x = torch.ones(3, requires_grad=True)
    y = (x * 2 + x).relu().sum()
    assert y.grad_fn is not None
    y.backward()
    _same(x.grad, torch.full((3,), 3.0))
    with torch.no_grad():
        assert (x + x).grad_fn is None


def test_keysets_past_63_bits_take_the_python_entry():
    z = torch.tensor([1 + 2j, 3 - 1j])
    c = z.conj()  # a lazily conjugated view: its Conjugate key is bit 75
    assert c._keyset >= 1 << 63
    _same(c + z, torch.tensor([2 + 0j, 6 + 0j]))
    _same(c.sum(), torch.tensor(4 - 1j))


def test_tls_is_read_per_call_and_per_thread():
    x = torch.ones(2, requires_grad=True)
    x + x  # cached for the autograd key set
    seen = {}

    def other_thread():
        with exclude_keys(["AutogradCPU"]):
            seen["thread"] = (x + x).grad_fn

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen["thread"] is None  # excluded on that thread: the cpu kernel, no graph
    assert (x + x).grad_fn is not None  # this thread's TLS is untouched
    with exclude_keys(["AutogradCPU"]):
        assert (x + x).grad_fn is None


def test_tensor_subclasses_dispatch_like_tensors():
    class Sub(T):
        pass

    s = torch.ones(2).as_subclass(Sub)
    np.testing.assert_array_equal((s + s).numpy(), [2.0, 2.0])
    p = torch.nn.Parameter(torch.ones(2))
    r = p * 3
    assert r.grad_fn is not None
    np.testing.assert_array_equal(r.detach().numpy(), [3.0, 3.0])


@pytest.fixture
def lib():
    with Library("cdisptest", "DEF") as library:
        yield library


def test_a_new_kernel_is_used_after_registration(lib):
    lib.define("pair(Tensor self, Tensor other) -> Tensor")
    lib.impl("pair", lambda a, b: a + b, "CPU")
    op = torch.ops.cdisptest.pair.default
    from torchplug._dispatch.dispatcher import DISPATCHER

    assert type(DISPATCHER.entry("cdisptest::pair").call) is _centry().Entry  # two plain tensors: C-eligible
    a = torch.ones(2)
    _same(op(a, a), torch.full((2,), 2.0))
    _same(op(a, a), torch.full((2,), 2.0))  # from the cache now
    with Library("cdisptest", "IMPL") as other:
        other.impl("pair", lambda a, b: a * 5, "CPU", allow_override=True)  # clears the cache
        _same(op(a, a), torch.full((2,), 5.0))
    _same(op(a, a), torch.full((2,), 2.0))


def test_kernels_stay_referenced_once_per_cache_entry():
    a = torch.ones(2)
    a + a
    from torchplug._dispatch.dispatcher import DISPATCHER

    kernels = list(DISPATCHER.entry("aten::add.Tensor").cache.values())
    before = [sys.getrefcount(k) for k in kernels]
    for _ in range(1000):
        a + a
    gc.collect()
    assert [sys.getrefcount(k) for k in kernels] == before


def test_entries_look_like_their_functions():
    fn = torch.add
    python = codegen.python_entry(fn)
    assert fn.__name__ == python.__name__ == "add"
    assert fn.__doc__ == python.__doc__
    assert fn.__module__ == python.__module__
    assert repr(fn) == repr(python)
    assert inspect.signature(fn) == inspect.signature(python)
    assert str(inspect.signature(T.add)) == str(inspect.signature(codegen.python_entry(T.add)))
    assert "_kernel" in codegen.entry_source(fn)
    a = torch.ones(2)
    assert a.add.__self__ is a and a.add.__func__ is T.add  # binds as a method
    _same(T.__add__(a, a), a + a)
    assert copy.copy(fn) is fn and copy.deepcopy({"act": fn})["act"] is fn  # as functions (nn.Module deep copies)
    assert pickle.loads(pickle.dumps(fn)) is fn  # by qualified name, found as torchplug.add (as torch.add pickles)
    fn.__dict__["cdisp_note"] = 1  # attributes live on the Python entry
    assert python.cdisp_note == 1
    del python.cdisp_note


def test_frame_observers_send_every_call_to_python(lib):
    from torchplug._runtime.allocator import current_op

    lib.define("where_am_i(Tensor self) -> Tensor")
    seen = []
    lib.impl("where_am_i", lambda a: seen.append(current_op()) or a, "CPU")
    op = torch.ops.cdisptest.where_am_i.default
    a = torch.ones(2)
    op(a), op(a)
    assert seen[-1] is None  # the C entry: no Python entry frame on the stack
    codegen.observe_entry_frames("cdisp-test", True)
    try:
        op(a)
    finally:
        codegen.observe_entry_frames("cdisp-test", False)
    assert seen[-1] == "cdisptest::where_am_i"
    op(a)
    assert seen[-1] is None


def test_memory_events_name_their_op():
    a = torch.ones(4)
    a * a
    ops = []
    from torchplug._runtime.allocator import subscribe

    with subscribe(lambda ev: ops.append(ev.op), "cpu"):
        b = a * a
    del b
    assert "aten::mul" in ops  # read from the Python entry's frame: subscribers switch the C entries off


def test_arm_checks_its_arguments():
    centry = _centry()
    e = centry.Entry(lambda *a: a)
    with pytest.raises(TypeError):
        centry.Entry(3)
    with pytest.raises(ValueError, match="ntensors must be 1 to 2"):
        e.arm({}, object(), 3, 0, ())
    with pytest.raises(ValueError, match="at most 8 arguments"):
        e.arm({}, object(), 2, 0, (None,) * 7)
    with pytest.raises(ValueError, match="numbers names an argument past the tensors"):
        e.arm({}, object(), 1, 2, ())
    with pytest.raises(TypeError):
        e.arm([], object(), 1, 0, ())
    assert not e.armed
    e.arm({}, object(), 1, 0, ())
    assert e.armed
    x = torch.ones(1)
    assert e(x) == (x,)  # a cache miss and an odd TLS object: the wrapped function
    e.disarm()
    assert not e.armed
