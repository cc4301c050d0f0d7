"""``grad_fn._saved_<name>`` / ``_raw_saved_<name>`` and ``SavedTensor.register_hooks``, against PyTorch."""

from __future__ import annotations

import pytest

import torchplug

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("T", [torchplug, torch], ids=["torchplug", "torch"])


@LIBS
def test_saved_inputs_are_the_saved_objects_and_outputs_come_back_reconnected(T):
    a = T.randn(5, requires_grad=True)
    b = T.ones(5, requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    e = T.exp(a)
    r = e.grad_fn._saved_result
    assert r is not e and r.equal(e) and r.grad_fn is e.grad_fn
    x = T.randn(3, requires_grad=True)
    assert x.pow(2).grad_fn._saved_exponent == 2
    assert x.sum().grad_fn._saved_self_sym_sizes == (3,)
    assert {"_saved_self", "_saved_other", "_raw_saved_self"} <= set(dir(y.grad_fn))


@LIBS
def test_unknown_saved_name_is_an_attribute_error(T):
    y = T.randn(3, requires_grad=True) * 2
    with pytest.raises(AttributeError, match="object has no attribute '_saved_foo'"):
        y.grad_fn._saved_foo
    with pytest.raises(AttributeError, match="object has no attribute '_raw_saved_foo'"):
        y.grad_fn._raw_saved_foo


@LIBS
def test_saved_access_after_backward_and_after_inplace_raise(T):
    x = T.randn(3, requires_grad=True)
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.grad_fn._saved_self
    v = x * 2
    w = v * v
    v.add_(1)
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation has been modified"):
        w.grad_fn._saved_self


@LIBS
def test_register_hooks_packs_now_and_unpacks_on_each_access(T):
    events = []
    x = T.randn(5, requires_grad=True)
    y = x.pow(2)

    def pack(t):
        events.append(("pack", t.requires_grad, t.grad_fn))
        return t * 4

    def unpack(p):
        events.append(("unpack",))
        return p / 4

    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    assert events == [("pack", False, None)]  # a detached alias, under no_grad
    s = y.grad_fn._saved_self
    assert s.requires_grad and s.grad_fn is None and T.allclose(s, x)
    y.sum().backward()
    assert T.allclose(x.grad, 2 * x)
    assert events.count(("unpack",)) == 2
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor after it has been freed"):
        y.grad_fn._raw_saved_self.register_hooks(pack, unpack)


@LIBS
def test_register_hooks_twice_or_on_hooked_tensor_refused(T):
    x = T.randn(3, requires_grad=True)
    y = x * x
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose hooks have already been set"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = x * x
    with pytest.raises(RuntimeError, match="^Calling register_hooks on a saved tensor whose hooks have already been set"):
        z.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="^register_hooks\\(\\): incompatible function arguments"):
        (x * x).grad_fn._raw_saved_self.register_hooks(1, 2)


@LIBS
def test_unpack_hook_must_return_a_tensor(T):
    x = T.randn(3, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x * x
    msg = "^Output of saved tensor unpack_hook expected to be a Tensor but got result of type int"
    with pytest.raises(TypeError, match=msg):
        y.grad_fn._saved_self
    with pytest.raises(TypeError, match=msg):
        y.sum().backward()


@LIBS
def test_pack_hook_runs_without_grad_and_may_not_write_its_input(T):
    # A pack hook that computes with its input (``x * 4``) must not record (and pack) again.
    modes = []

    def pack(t):
        modes.append(T.is_grad_enabled())
        return t * 4

    x = T.randn(5, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(pack, lambda p: p / 4):
        y = T.pow(x, 2)
    y.sum().backward()
    assert modes and not any(modes) and T.allclose(x.grad, 2 * x)

    def writes(t):
        t.add_(1)
        return t

    with pytest.raises(RuntimeError, match="^A saved tensor pack hook is modifying its input in place"):
        with T.autograd.graph.saved_tensors_hooks(writes, lambda p: p):
            x.detach() * x
