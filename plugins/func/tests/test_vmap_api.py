"""torchplug.vmap's API against torch.vmap: in_dims/out_dims pytrees, chunk_size, nesting, randomness, the
per-sample fallback and its one-time warning, and the errors."""

from __future__ import annotations

import warnings

import pytest

import torchplug
from func_helpers import close, pair

torch = pytest.importorskip("torch")


def test_exposed_names():
    import torchplug.func as tf

    assert torchplug.vmap is tf.vmap
    assert torchplug.func.vmap is tf.vmap
    for name in ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize", "rearrange",
                 "functional_call", "stack_module_state", "functionalize", "replace_all_batch_norm_modules_",
                 "debug_unwrap"):
        assert callable(getattr(tf, name)), name


def test_in_dims_and_out_dims_pytrees():
    (x, xt), (y, yt), (z, zt) = pair(3, 5, seed=1), pair(5, 2, seed=2), pair(4, seed=3)

    def f(m):
        def g(d, pair_, w):
            a, b = pair_
            return {"sum": d["x"].sum() + w.sum(), "prod": (a * 2, b.t())}
        return g

    kw = dict(in_dims=({"x": 1}, (0, 0), None), out_dims={"sum": 0, "prod": (1, 0)})
    expected = torch.vmap(f(torch), **kw)({"x": xt}, (yt, yt[:, :1].expand(5, 2)), zt)
    got = torchplug.vmap(f(torchplug), **kw)({"x": x}, (y, y[:, :1].expand(5, 2)), z)
    close(got, expected)


def test_out_dims_none_and_unbatched_outputs():
    (x, xt), (w, wt) = pair(4, 3), pair(3)
    expected = torch.vmap(lambda a: (a + wt, wt * 2, 7), out_dims=(1, 0, None))(xt)
    got = torchplug.vmap(lambda a: (a + w, w * 2, 7), out_dims=(1, 0, None))(x)
    close(got[:2], expected[:2])
    assert got[2] == expected[2] == 7


def test_kwargs_are_not_batched():
    (x, xt) = pair(4, 3)
    close(torchplug.vmap(lambda a, scale: a * scale)(x, scale=3.0), torch.vmap(lambda a, scale: a * scale)(xt, scale=3.0))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 10])
def test_chunk_size(chunk_size):
    (x, xt), (y, yt) = pair(7, 3, seed=1), pair(3, 7, seed=2)
    f = lambda m: (lambda a, b: (m.outer(a, b).sum(0), a.exp()))  # noqa: E731
    kw = dict(in_dims=(0, 1), out_dims=(0, 1), chunk_size=chunk_size)
    close(torchplug.vmap(f(torchplug), **kw)(x, y), torch.vmap(f(torch), **kw)(xt, yt))


def test_nested_vmap():
    (x, xt), (y, yt) = pair(4, 3, seed=1), pair(5, 3, seed=2)
    f = lambda m: m.vmap(m.vmap(lambda a, b: (a * b).sum(), in_dims=(None, 0)), in_dims=(0, None))  # noqa: E731
    close(f(torchplug)(x, y), f(torch)(xt, yt))
    g = lambda m: m.vmap(m.vmap(m.dot))  # noqa: E731
    (a, at), (b, bt) = pair(2, 4, 3, seed=3), pair(2, 4, 3, seed=4)
    close(g(torchplug)(a, b), g(torch)(at, bt))
    # the inner vmap over a dim of a tensor batched by the outer one
    h = lambda m: m.vmap(lambda r: m.vmap(lambda e: e.sin() * r.sum(), in_dims=0)(r))  # noqa: E731
    close(h(torchplug)(x), h(torch)(xt))


def test_batched_tensor_facts_inside_vmap():
    x, _ = pair(4, 3, 2)
    seen = {}

    def f(a):
        seen["shape"] = tuple(a.shape)
        seen["dim"] = a.dim()
        seen["repr"] = repr(a)
        return a

    torchplug.vmap(f, in_dims=1)(x)
    assert seen["shape"] == (4, 2) and seen["dim"] == 2
    assert seen["repr"].startswith("BatchedTensor(lvl=")
    with pytest.raises(RuntimeError, match="vmap: It looks like you're calling .item"):
        torchplug.vmap(lambda a: a.sum().item())(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        torchplug.vmap(lambda a: a if a.sum() > 0 else -a)(x)


@pytest.mark.parametrize("call,message", [
    (lambda m, x: m.vmap(lambda a: a, in_dims=[0])(x), "expected `in_dims` to be int or a (potentially nested) tuple"),
    (lambda m, x: m.vmap(lambda a: a)(), "got no inputs"),
    (lambda m, x: m.vmap(lambda a, b: a, in_dims=(0, 0, 0))(x, x), "in_dims is not compatible with the structure"),
    (lambda m, x: m.vmap(lambda a: a, in_dims=3)(x), "Got in_dim=3 for some input, but that input is a Tensor of "
                                                      "dimensionality 2"),
    (lambda m, x: m.vmap(lambda a, b: a, in_dims=(0, 0))(x, 1.0), "We cannot vmap over non-Tensor arguments"),
    (lambda m, x: m.vmap(lambda a: a, in_dims=None)(x), "expected `in_dims` to be int or a (potentially nested)"),
    (lambda m, x: m.vmap(lambda a: a, in_dims=(None,))(x), "Expected at least one Tensor to vmap over"),
    (lambda m, x: m.vmap(lambda a, b: a)(x, x[:2]), "Expected all tensors to have the same size in the mapped "
                                                    "dimension, got sizes [4, 2]"),
    (lambda m, x: m.vmap(lambda a: "s")(x), "must only return Tensors, got type <class 'str'>"),
    (lambda m, x: m.vmap(lambda a: a, out_dims=None)(x), "can not return a BatchedTensor when out_dim is None"),
    (lambda m, x: m.vmap(lambda a: a, randomness="sometimes")(x), "Only allowed values for randomness are"),
])
def test_errors_match_torch(call, message):
    x, xt = pair(4, 3)
    with pytest.raises((ValueError, RuntimeError)) as theirs:
        call(torch, xt)
    with pytest.raises((ValueError, RuntimeError)) as mine:
        call(torchplug, x)
    assert type(mine.value) is type(theirs.value)
    assert message in str(theirs.value)
    assert message in str(mine.value)


# ---- randomness --------------------------------------------------------------------------------------------
def test_randomness_error_mode_refuses_random_ops():
    x, xt = pair(4, 3)
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda a: torch.nn.functional.dropout(a, 0.5))(xt)
    with pytest.raises(RuntimeError) as mine:
        torchplug.vmap(lambda a: torchplug.nn.functional.dropout(a, 0.5))(x)
    assert str(mine.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torchplug.vmap(lambda a: a + torchplug.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torchplug.vmap(lambda a: torchplug.rand_like(a))(x)


def test_randomness_different_and_same():
    x = torchplug.ones(6, 200)
    diff = torchplug.vmap(lambda a: torchplug.nn.functional.dropout(a, 0.5), randomness="different")(x)
    same = torchplug.vmap(lambda a: torchplug.nn.functional.dropout(a, 0.5), randomness="same")(x)
    assert not all(bool((diff[0] == diff[i]).all()) for i in range(1, 6))
    assert all(bool((same[0] == same[i]).all()) for i in range(1, 6))
    # the kept values are scaled by 1/(1-p), as outside vmap
    assert set(torchplug.unique(same).tolist()) <= {0.0, 2.0}
    r_same = torchplug.vmap(lambda a: a * torchplug.randn_like(a), randomness="same")(x)
    assert bool((r_same[0] == r_same[5]).all())
    r_diff = torchplug.vmap(lambda a: torchplug.bernoulli(a * 0.5), randomness="different")(x)
    assert r_diff.shape == (6, 200) and not bool((r_diff[0] == r_diff[1]).all())
    # an unbatched random op: 'same' gives one draw for all, as torch
    r = torchplug.vmap(lambda a: a + torchplug.rand(200), randomness="same")(torchplug.zeros(3, 200))
    assert bool((r[0] == r[2]).all())


def test_randomness_same_matches_torch_shapes_with_chunks():
    x = torchplug.ones(5, 50)
    out = torchplug.vmap(lambda a: torchplug.nn.functional.dropout(a, 0.3), randomness="same", chunk_size=2)(x)
    assert all(bool((out[0] == out[i]).all()) for i in range(5))


def test_inplace_random_on_unbatched_tensor_in_different_mode_is_refused():
    x, xt = pair(3, 4)
    buf_m, buf_t = torchplug.empty(4), torch.empty(4)
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda a: a + buf_t.uniform_(), randomness="different")(xt)
    with pytest.raises(RuntimeError) as mine:
        torchplug.vmap(lambda a: a + buf_m.uniform_(), randomness="different")(x)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("randomness", ["different", "same"])
@pytest.mark.parametrize("make", [
    lambda m: (lambda a: m.nn.functional.dropout(a, 0.5)),
    lambda m: (lambda a: a * m.rand_like(a)),
    lambda m: (lambda a: a + m.randn(a.shape[-1])),
    lambda m: (lambda a: m.bernoulli(a * 0.5)),
], ids=["dropout", "rand_like", "randn", "bernoulli"])
def test_random_values_equal_torch(make, randomness):
    """torchplug's random stream is PyTorch's, and vmap draws in PyTorch's order: the same values."""
    x, xt = torchplug.ones(5, 300), torch.ones(5, 300)
    torch.manual_seed(3)
    try:
        expected = torch.vmap(make(torch), randomness=randomness)(xt)
    except RuntimeError as exc:  # torch refuses 'same' randomness for a random op on a batched input
        with pytest.raises(RuntimeError) as mine:
            torchplug.vmap(make(torchplug), randomness=randomness)(x)
        assert str(mine.value) == str(exc)
        return
    torchplug.manual_seed(3)
    got = torchplug.vmap(make(torchplug), randomness=randomness)(x)
    close(got, expected)


# ---- the per-sample fallback ----------------------------------------------------------------------------------
def test_fallback_is_correct_and_warns_once_per_op():
    from torchplug_func import _kernels

    lib = torchplug.library.Library("functest", "DEF")
    try:
        lib.define("rowscale(Tensor x, Tensor s) -> Tensor")
        lib.impl("rowscale", lambda x, s: x * s.sum(), "CPU")
        op = torchplug.ops.functest.rowscale.default
        x, xt = pair(4, 3, seed=1)
        s, st = pair(4, 2, seed=2)
        _kernels.WARNED.discard("functest::rowscale")
        with pytest.warns(UserWarning, match="There is a performance drop because we have not yet implemented the "
                                             "batching rule for functest::rowscale"):
            got = torchplug.vmap(op)(x, s)
        close(got, xt * st.sum(1, keepdim=True))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = torchplug.vmap(op, in_dims=(0, None))(x, s[0])
        close(again, xt * st[0].sum())
    finally:
        lib.close()


def test_explain_shows_the_batched_key():
    x, _ = pair(4, 3)
    text = {}

    def f(a):
        text["add"] = str(torchplug.explain("aten::add.Tensor", a, a))
        return a

    torchplug.vmap(f)(x)
    assert "Batched" in text["add"]
    assert "batching_rule[pointwise]" in text["add"]


def test_expand_error_matches_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda a: a.expand(2))(torch.ones(5, 3, 4))
    with pytest.raises(RuntimeError) as mine:
        torchplug.vmap(lambda a: a.expand(2))(torchplug.ones(5, 3, 4))
    assert str(mine.value) == str(theirs.value)
