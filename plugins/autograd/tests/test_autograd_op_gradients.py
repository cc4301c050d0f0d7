"""Every differentiable op of the base op table: gradcheck in float64 and gradients equal to torch's."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_helpers import compare_grads, gradcheck

R = np.random.default_rng(1234)


def rnd(*shape, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape)


POS = dict(lo=0.5, hi=2.0)
UNIT = dict(lo=-0.9, hi=0.9)

UNARY = {
    "abs": {}, "neg": {}, "exp": {}, "log": POS, "sqrt": POS, "rsqrt": POS, "sin": {}, "cos": {}, "tan": UNIT,
    "tanh": {}, "sigmoid": {}, "reciprocal": POS, "log1p": POS, "expm1": {}, "log2": POS, "log10": POS, "exp2": {},
    "floor": {}, "ceil": {}, "trunc": {}, "sign": {}, "asin": UNIT, "acos": UNIT, "atan": {}, "sinh": {}, "cosh": {},
    "asinh": {}, "acosh": dict(lo=1.5, hi=3.0), "atanh": UNIT, "frac": {}, "square": {}, "relu": {}, "round": {},
}


def _nonint(a):
    # keep finite differences away from the jumps of floor/round/frac/sign and the kink of abs/relu
    return np.where(np.abs(a - np.round(a)) < 0.05, a + 0.1, a) + 0.013


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x = _nonint(rnd(3, 4, **UNARY[name]))
    fn = lambda T, x: getattr(T, name)(x)  # noqa: E731
    compare_grads(fn, x)
    assert gradcheck(fn, x)


CASES = {
    # name: (fn, arrays, requires)
    "add": (lambda T, a, b: T.add(a, b, alpha=2.5), [rnd(3, 4), rnd(4)], None),
    "add_scalar": (lambda T, a: a + 3.0, [rnd(3)], None),
    "radd": (lambda T, a: 2 + a, [rnd(3)], None),
    "sub": (lambda T, a, b: T.sub(a, b, alpha=0.5), [rnd(2, 3), rnd(2, 1)], None),
    "rsub": (lambda T, a: 1 - a, [rnd(3)], None),
    "mul": (lambda T, a, b: a * b, [rnd(2, 3), rnd(3)], None),
    "mul_one_grad": (lambda T, a, b: a * b, [rnd(2, 3), rnd(2, 3)], [True, False]),
    "div": (lambda T, a, b: a / b, [rnd(3, 2), rnd(3, 2, **POS)], None),
    "rdiv": (lambda T, a: 2.0 / a, [rnd(3, **POS)], None),
    "div_floor": (lambda T, a, b: T.div(a, b, rounding_mode="floor"), [rnd(4) + 0.13, rnd(4, **POS)], None),
    "div_trunc": (lambda T, a, b: T.div(a, b, rounding_mode="trunc"), [rnd(4) + 0.13, rnd(4, **POS)], None),
    "pow_tt": (lambda T, a, b: a ** b, [rnd(3, **POS), rnd(3)], None),
    "pow_ts": (lambda T, a: a ** 3, [rnd(3)], None),
    "pow_ts_frac": (lambda T, a: a ** 0.5, [rnd(3, **POS)], None),
    "pow_st": (lambda T, a: 2.0 ** a, [rnd(3)], None),
    "maximum": (lambda T, a, b: T.maximum(a, b), [rnd(5), rnd(5)], None),
    "minimum": (lambda T, a, b: T.minimum(a, b), [rnd(2, 5), rnd(5)], None),
    "remainder": (lambda T, a, b: T.remainder(a, b), [rnd(4, lo=0.1, hi=0.9) + np.array([0, 1, 2, 3]), np.full(4, 1.1)], None),
    "fmod": (lambda T, a, b: T.fmod(a, b), [rnd(4, lo=0.1, hi=0.9) + np.array([0, 1, 2, 3]), np.full(4, 1.1)], None),
    "atan2": (lambda T, a, b: T.atan2(a, b), [rnd(3), rnd(3, **POS)], None),
    "where": (lambda T, a, b: T.where(a > 0, a, b), [rnd(6), rnd(6)], None),
    "where_scalar": (lambda T, a: T.where(a > 0, a, 0.0), [rnd(6)], None),
    "lerp": (lambda T, a, b, w: T.lerp(a, b, w), [rnd(3), rnd(3), rnd(3)], None),
    "addcmul": (lambda T, a, b, c: T.addcmul(a, b, c, value=0.5), [rnd(3), rnd(3), rnd(3)], None),
    "addcdiv": (lambda T, a, b, c: T.addcdiv(a, b, c, value=2.0), [rnd(3), rnd(3), rnd(3, **POS)], None),
    "masked_fill": (lambda T, a: a.masked_fill(a > 0, 1.5), [rnd(6)], None),
    "masked_fill_t": (lambda T, a, v: a.masked_fill(a > 0, v), [rnd(6), np.array(0.7)], None),
    "clamp": (lambda T, a: a.clamp(-0.5, 0.7), [rnd(8)], None),
    "clamp_min": (lambda T, a: a.clamp(min=-0.5), [rnd(8)], None),
    "clamp_max": (lambda T, a: a.clamp(max=0.5), [rnd(8)], None),
    "clamp_tensor": (lambda T, a, lo, hi: a.clamp(lo, hi), [rnd(8), np.full(8, -0.5), np.full(8, 0.5)], None),
    "clamp_tensor_min": (lambda T, a, lo: T.clamp(a, min=lo), [rnd(8), np.full(8, -0.5)], None),
    # reductions
    "sum": (lambda T, a: a.sum(), [rnd(3, 4)], None),
    "sum_dim": (lambda T, a: a.sum(1), [rnd(3, 4)], None),
    "sum_dims_keep": (lambda T, a: a.sum((0, 2), keepdim=True), [rnd(2, 3, 4)], None),
    "mean": (lambda T, a: a.mean(), [rnd(3, 4)], None),
    "mean_dim": (lambda T, a: a.mean(-1), [rnd(3, 4)], None),
    "prod": (lambda T, a: a.prod(), [rnd(5)], None),
    "prod_dim": (lambda T, a: a.prod(1), [rnd(3, 4)], None),
    "prod_zero": (lambda T, a: a.prod(), [np.array([2.0, 0.0, 3.0, 1.5])], None),
    "prod_dim_zero": (lambda T, a: a.prod(0), [np.array([[2.0, 0.0], [3.0, 0.0], [1.0, 4.0]])], None),
    "amax": (lambda T, a: a.amax(1), [rnd(3, 4)], None),
    "amin_keep": (lambda T, a: a.amin(0, keepdim=True), [rnd(3, 4)], None),
    "max_all": (lambda T, a: a.max(), [rnd(3, 4)], None),
    "min_all": (lambda T, a: a.min(), [rnd(3, 4)], None),
    "max_dim": (lambda T, a: a.max(1)[0], [rnd(3, 4)], None),
    "min_dim_keep": (lambda T, a: a.min(0, keepdim=True).values, [rnd(3, 4)], None),
    "var": (lambda T, a: a.var(), [rnd(3, 4)], None),
    "var_dim": (lambda T, a: a.var(1, correction=0), [rnd(3, 4)], None),
    "std": (lambda T, a: a.std(), [rnd(3, 4)], None),
    "std_dim": (lambda T, a: a.std(0, keepdim=True), [rnd(3, 4)], None),
    # linear algebra
    "mm": (lambda T, a, b: a.mm(b), [rnd(2, 3), rnd(3, 4)], None),
    "bmm": (lambda T, a, b: a.bmm(b), [rnd(2, 2, 3), rnd(2, 3, 2)], None),
    "mv": (lambda T, a, b: a.mv(b), [rnd(2, 3), rnd(3)], None),
    "dot": (lambda T, a, b: a.dot(b), [rnd(3), rnd(3)], None),
    "addmm": (lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0), [rnd(4), rnd(2, 3), rnd(3, 4)], None),
    "matmul_3d_2d": (lambda T, a, b: a @ b, [rnd(2, 2, 3), rnd(3, 2)], None),
    "matmul_batched": (lambda T, a, b: a @ b, [rnd(2, 1, 2, 3), rnd(3, 3, 2)], None),
    "matmul_vec": (lambda T, a, b: a @ b, [rnd(3), rnd(3, 2)], None),
    # joining / splitting
    "cat": (lambda T, a, b: T.cat([a, b], 1), [rnd(2, 3), rnd(2, 2)], None),
    "cat_partial": (lambda T, a, b: T.cat([a, b]), [rnd(2, 3), rnd(1, 3)], [False, True]),
    "stack": (lambda T, a, b: T.stack([a, b], 1), [rnd(2, 3), rnd(2, 3)], None),
    "split": (lambda T, a: a.split(2, 1), [rnd(2, 5)], None),
    "chunk": (lambda T, a: a.chunk(2), [rnd(4, 2)], None),
    "unbind": (lambda T, a: a.unbind(1), [rnd(2, 3)], None),
    # indexing
    "gather": (lambda T, a: a.gather(1, T.tensor([[0, 0], [1, 0]])), [rnd(2, 3)], None),
    "scatter_src": (lambda T, a, s: a.scatter(1, T.tensor([[0, 1], [2, 0]]), s), [rnd(2, 3), rnd(2, 2)], None),
    "scatter_value": (lambda T, a: a.scatter(1, T.tensor([[0, 1], [2, 0]]), 0.5), [rnd(2, 3)], None),
    "scatter_add": (lambda T, a, s: a.scatter_add(0, T.tensor([[0, 1, 0], [0, 0, 1]]), s), [rnd(2, 3), rnd(2, 3)], None),
    "index_select": (lambda T, a: a.index_select(1, T.tensor([2, 0, 2])), [rnd(2, 3)], None),
    "index_int": (lambda T, a: a[T.tensor([0, 2, 0])], [rnd(3, 2)], None),
    "index_mask": (lambda T, a: a[a > 0], [rnd(3, 2)], None),
    "index_2d": (lambda T, a: a[:, T.tensor([1, 1])], [rnd(3, 2)], None),
    "index_put": (lambda T, a, v: a.index_put((T.tensor([0, 2]),), v), [rnd(3, 2), rnd(2, 2)], None),
    "index_put_acc": (lambda T, a, v: a.index_put((T.tensor([0, 0]),), v, accumulate=True), [rnd(3, 2), rnd(2)], None),
    # copies and conversions
    "clone": (lambda T, a: a.clone() * 2, [rnd(3)], None),
    "to_float32_and_back": (lambda T, a: a.float().double() * 1.0, [rnd(3)], None),
    "copy_": (lambda T, a, b: (a * 1).copy_(b), [rnd(2, 3), rnd(3)], None),
    "fill_": (lambda T, a: (a * 2).fill_(1.0) + a, [rnd(3)], None),
    "fill_tensor": (lambda T, a, v: (a * 2).fill_(v), [rnd(3), np.array(0.5)], None),
    "zero_": (lambda T, a: (a * 2).zero_() + a, [rnd(3)], None),
    # views
    "view": (lambda T, a: a.view(4, 3), [rnd(3, 4)], None),
    "reshape": (lambda T, a: a.t().reshape(-1), [rnd(3, 4)], None),
    "flatten": (lambda T, a: a.flatten(), [rnd(2, 3, 2)], None),
    "permute": (lambda T, a: a.permute(2, 0, 1), [rnd(2, 3, 4)], None),
    "transpose": (lambda T, a: a.transpose(0, 2), [rnd(2, 3, 4)], None),
    "t": (lambda T, a: a.t(), [rnd(2, 3)], None),
    "expand": (lambda T, a: a.expand(3, 2, 4), [rnd(2, 1)], None),
    "squeeze": (lambda T, a: a.squeeze(), [rnd(2, 1, 3)], None),
    "unsqueeze": (lambda T, a: a.unsqueeze(1), [rnd(2, 3)], None),
    "narrow": (lambda T, a: a.narrow(1, 1, 2), [rnd(2, 4)], None),
    "select": (lambda T, a: a[1], [rnd(3, 2)], None),
    "slice_step": (lambda T, a: a[::2, 1:], [rnd(5, 3)], None),
    "unfold": (lambda T, a: a.unfold(0, 3, 1), [rnd(5)], None),
    "diagonal": (lambda T, a: a.diagonal(1), [rnd(3, 4)], None),
    "as_strided": (lambda T, a: a.as_strided((2, 2), (1, 2), 1), [rnd(6)], None),
    "detach": (lambda T, a, b: a.detach() * b, [rnd(3), rnd(3)], None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    fn, arrays, requires = CASES[name]
    compare_grads(fn, *arrays, requires=requires)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"detach", "to_float32_and_back"}))  # by design not smooth in float64
def test_gradcheck(name):
    fn, arrays, requires = CASES[name]

    def single(T, *xs):
        out = fn(T, *xs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    assert gradcheck(single, *arrays, requires=requires)


def test_every_base_op_is_covered():
    """Every op of the base table has a formula, a decomposition, or is non-differentiable."""
    import torchplug
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._schemas import base
    from torchplug_autograd._register import classify

    torchplug.rand(1)
    names = set()
    for row in base.ROWS:
        head = row.split("(")[0]
        names.add("aten::" + head)
    missing = []
    for name in sorted(names):
        entry = DISPATCHER.find(name)
        if entry is None:
            continue
        kind, _ = classify(entry)
        if kind == "not_implemented" and name != "aten::floor_divide":  # torch has no formula either
            missing.append(name)
    assert not missing, missing


def test_missing_formula_fails_loudly():
    import torchplug
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug_autograd._register import classify

    lib = torchplug.library.Library("agtest", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
        aglib = torchplug.library.Library("agtest", "IMPL")
        kind, kernel = classify(DISPATCHER.entry("agtest::twice"))
        assert kind == "not_implemented"
        aglib.impl("twice", kernel, "Autograd", with_keyset=True)
        x = torchplug.ones(3, requires_grad=True)
        y = torchplug.ops.agtest.twice(x)
        assert y.requires_grad
        with pytest.raises(NotImplementedError, match="derivative for 'twice' is not implemented"):
            y.sum().backward()
        aglib.close()
    finally:
        lib.close()
