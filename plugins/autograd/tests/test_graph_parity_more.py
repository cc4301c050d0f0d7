"""Graph parity for the remaining ops of ``scripts/graph_diff.py``: each op's OpInfo samples record PyTorch's nodes
(type names and ``next_functions`` structure), and the gradients through them equal torch's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import torchplug as tp
from torchplug.testing.opinfo import materialize, resolve
from torchplug.testing.opinfos import op_db

torch = pytest.importorskip("torch")
with warnings.catch_warnings():  # torch's first make_dual scripts its jvp decompositions (a jit DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch._decomp.decompositions_for_jvp  # noqa: E402,F401
    import torch.autograd.forward_ad  # noqa: E402,F401


def graph_tree(fn: Any, depth: int = 8) -> Any:
    """``(type name, child trees)`` of a grad_fn, ``None`` for an input without a gradient edge."""
    if fn is None:
        return None
    name = type(fn).__name__
    if depth == 0 or name == "AccumulateGrad":
        return (name, ())
    return (name, tuple(graph_tree(f, depth - 1) for f, _ in fn.next_functions))


def _requires_grad(value: Any, module: Any) -> Any:
    if isinstance(value, module.Tensor):
        return value.requires_grad_(True) if value.dtype.is_floating_point else value
    if isinstance(value, (list, tuple)):
        return type(value)(_requires_grad(v, module) for v in value)
    return value


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, (tuple, list)) else out


OPS = ("index_reduce_prod", "index_reduce_mean", "index_reduce_amax", "index_reduce_amin", "quantile", "nanquantile", "nn.functional.scaled_dot_product_attention", "linalg.pinv", "combinations", "unique", "unique_consecutive", "nn.functional.max_unpool1d", "nn.functional.max_unpool2d", "nn.functional.max_unpool3d")


@pytest.mark.parametrize("name", OPS)
def test_opinfo_graphs_match_torch(name: str) -> None:
    compared = 0
    for op in (o for o in op_db() if o.name == name):
        for sample in op.samples("float64"):
            outs = []
            for module in (torch, tp):
                args, kwargs = materialize(sample, module, "cpu", "float64")
                args = _requires_grad(args, module)
                kwargs = {k: _requires_grad(v, module) for k, v in kwargs.items()}
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        outs.append(_first(resolve(module, op.path)(*args, **kwargs)))
                except Exception:  # noqa: BLE001 - an error sample: the error tests compare it
                    outs.append(None)
            ref, got = outs
            if ref is None:
                continue
            assert got is not None, sample.name
            assert graph_tree(got.grad_fn) == graph_tree(ref.grad_fn), sample.name
            compared += 1
    assert compared


RNG = np.random.default_rng(11)
V = RNG.standard_normal(5)
IMG = RNG.standard_normal((2, 3, 4, 6))
SIG = RNG.standard_normal((2, 3, 8))
VOL = RNG.standard_normal((1, 2, 4, 4, 6))


QX = np.round(RNG.standard_normal((4, 6)), 1)  # (rounded: ties)
# index_reduce: zeros (one and two in a row's sources, one in self) and ties with self for amax/amin
RX = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0], [2.0, 2.0, 2.0], [1.5, 0.5, -2.0]])
RS = np.array([[0.0, 1.0, 2.0], [1.0, 3.0, -2.0], [0.0, 2.0, 2.0], [4.0, 0.5, 1.0], [0.5, -1.0, 3.0]])


def _quantile(T: Any, fn: str, how: str, mode: str, x: Any) -> Any:
    f = getattr(T, fn)
    q = T.tensor([0.0, 0.3, 0.5, 1.0], dtype=T.float64)
    if how == "flat":
        return f(x, 0.4, interpolation=mode)
    if how == "dim0":
        return f(x, 0.65, dim=0, interpolation=mode)
    if how == "dim_last_keepdim":
        return f(x, 0.35, dim=-1, keepdim=True, interpolation=mode)
    if how == "q_vector":
        return f(x, q, dim=1, interpolation=mode)
    nan = T.tensor([[False] * 6, [True] + [False] * 5, [True] * 6, [False] * 5 + [True]])
    return f(x.masked_fill(nan, float("nan")), q, dim=1, interpolation=mode)


def _unpool(T: Any, x: Any, n: int, **kwargs: Any) -> Any:
    """max_unpool{n}d of the max_pool{n}d of ``x`` (the pooled values keep x's graph; indices have none)."""
    F = T.nn.functional
    pooled, indices = getattr(F, f"max_pool{n}d")(x, 2, return_indices=True)
    return getattr(F, f"max_unpool{n}d")(pooled * 3, indices, 2, **kwargs)


def _grads(T: Any, build: Any, arrays: tuple[np.ndarray, ...]) -> list[Any]:
    leaves = [T.tensor(a, requires_grad=True) for a in arrays]
    out = build(T, *leaves)
    weights = T.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)))
    (out * weights).nan_to_num(0.0).sum().backward()
    return [leaf.grad for leaf in leaves]


GRAD_CASES = {
    **{f"combinations_r{r}_{w}": (lambda T, v, r=r, w=w: T.combinations(v, r, w), (V,))
       for r in (1, 2, 3) for w in (False, True)},
    "combinations_empty": (lambda T, v: T.combinations(v[:2], 3), (V,)),
    "pinv_wide": (lambda T, a: T.linalg.pinv(a[0]), (IMG,)),
    "pinv_tall_batched": (lambda T, a: T.linalg.pinv(a.transpose(-2, -1)), (IMG,)),
    "pinv_square_hermitian": (lambda T, a: T.linalg.pinv(a[0, 0, :, :4] @ a[0, 0, :, :4].mT, hermitian=True), (IMG,)),
    "pinv_rtol": (lambda T, a: T.linalg.pinv(a[1], rtol=1e-3), (IMG,)),
    "pinverse": (lambda T, a: T.pinverse(a[0, 1]), (IMG,)),
    "sdpa_causal": (lambda T, q: T.nn.functional.scaled_dot_product_attention(q, q * 2, q.flip(-1), is_causal=True),
                    (IMG,)),
    # a fully masked row: _safe_softmax's zeros (no NaN), in the values and the gradient
    "sdpa_bool_mask_full_row": (lambda T, q: T.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=T.tensor([[True] * 4, [False] * 4, [True, False] * 2, [False] * 3 + [True]])), (IMG,)),
    "sdpa_float_mask": (lambda T, q: T.nn.functional.scaled_dot_product_attention(
        q, q, q, attn_mask=T.tensor(np.linspace(-1, 1, 16).reshape(4, 4))), (IMG,)),
    "safe_softmax": (lambda T, x: T.ops.aten._safe_softmax(x.masked_fill(T.tensor(IMG < -1.0), float("-inf")), 1),
                     (IMG,)),
    **{f"{fn}_{how}_{mode}": (lambda T, x, fn=fn, how=how, mode=mode: _quantile(T, fn, how, mode, x), (QX,))
       for fn in ("quantile", "nanquantile") for how in ("flat", "dim0", "dim_last_keepdim", "q_vector", "nan_rows")
       for mode in ("linear", "lower", "higher", "midpoint", "nearest")},
    "quantile_q_requires_grad": (lambda T, x, q: T.quantile(x, q * 0.5 + 0.25, dim=1), (QX, np.array([0.1, 0.7, 0.9]))),
    **{f"index_reduce_{r}_{inc}": (lambda T, x, s, r=r, inc=inc: (x * 1).index_reduce(
        0, T.tensor([1, 3, 1, 0, 1]), s, r, include_self=inc), (RX, RS))
       for r in ("prod", "mean", "amax", "amin") for inc in (True, False)},
    "max_unpool1d": (lambda T, x: _unpool(T, x, 1, output_size=[9]), (SIG,)),
    "max_unpool2d": (lambda T, x: _unpool(T, x, 2), (IMG,)),
    "max_unpool2d_unbatched": (lambda T, x: _unpool(T, x[0], 2, output_size=[5, 7]), (IMG,)),
    "max_unpool3d": (lambda T, x: _unpool(T, x, 3), (VOL,)),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_gradients_match_torch(case: str) -> None:
    build, arrays = GRAD_CASES[case]
    ref, got = _grads(torch, build, arrays), _grads(tp, build, arrays)
    for r, g in zip(ref, got):  # (pinv's factorizations differ in the last bits)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-9, atol=1e-10)
    values = [build(T, *(T.tensor(a) for a in arrays)) for T in (torch, tp)]
    np.testing.assert_allclose(values[1].numpy(), values[0].numpy(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4)])
def test_pinv_formula_is_differentiable(shape: tuple[int, ...]) -> None:
    a = tp.tensor(RNG.standard_normal(shape), requires_grad=True)
    assert tp.autograd.gradcheck(tp.linalg.pinv, (a,))
    assert tp.autograd.gradgradcheck(tp.linalg.pinv, (a,))


def test_pinv_complex_gradient_matches_torch() -> None:
    data = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    grads = []
    for T in (torch, tp):
        a = T.tensor(data, requires_grad=True)
        T.linalg.pinv(a).abs().sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_formula_is_differentiable(n: int) -> None:
    shape = (1, 2) + (4,) * n
    x = tp.tensor(np.arange(float(np.prod(shape))).reshape(shape) % 7.3)
    _, indices = getattr(tp.nn.functional, f"max_pool{n}d")(x, 2, return_indices=True)
    pooled = tp.tensor(RNG.standard_normal(tuple(indices.shape)), requires_grad=True)

    def fn(p: Any) -> Any:
        return getattr(tp.nn.functional, f"max_unpool{n}d")(p, indices, 2)

    assert tp.autograd.gradcheck(fn, (pooled,))
    assert tp.autograd.gradgradcheck(fn, (pooled,))


UNIQUE_CALLS = {
    "unique": lambda T, x: T.unique(x),
    "unique_all_outputs": lambda T, x: T.unique(x, return_inverse=True, return_counts=True),
    "unique_unsorted": lambda T, x: T.unique(x, sorted=False),
    "unique_dim": lambda T, x: T.unique(x.view(2, 3), dim=1),
    "unique_consecutive": lambda T, x: T.unique_consecutive(x, return_counts=True),
    "method": lambda T, x: x.unique(),
}


@pytest.mark.parametrize("case", sorted(UNIQUE_CALLS))
def test_unique_records_a_node_whose_backward_refuses(case: str) -> None:
    def run(T: Any) -> Any:
        x = T.tensor([1.0, 2.0, 2.0, 3.0, 3.0, 1.0], requires_grad=True)
        out = UNIQUE_CALLS[case](T, x)
        outs = out if isinstance(out, tuple) else (out,)
        with pytest.raises(NotImplementedError) as info:
            outs[0].sum().backward()
        return graph_tree(outs[0].grad_fn), [o.requires_grad for o in outs], str(info.value)

    assert run(tp) == run(torch)


def test_unique_under_no_grad_and_forward_ad_as_torch() -> None:
    for T in (torch, tp):
        x = T.tensor([1.0, 2.0, 2.0], requires_grad=True)
        with T.no_grad():
            assert not T.unique(x).requires_grad
        with T.autograd.forward_ad.dual_level(), pytest.raises(
                NotImplementedError, match="^Trying to use forward AD with _unique2 that does not support it"):
            T.unique(T.autograd.forward_ad.make_dual(x.detach(), T.ones(3)))


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_formula_passes_gradcheck(reduce: str) -> None:
    x = tp.tensor(RNG.uniform(0.5, 2.0, (4, 3)), requires_grad=True)
    src = tp.tensor(RNG.uniform(0.5, 2.0, (5, 3)), requires_grad=True)
    index = tp.tensor([1, 3, 1, 0, 1])
    for include_self in (True, False):
        def fn(a: Any, b: Any, include_self: bool = include_self) -> Any:
            return a.index_reduce(0, index, b, reduce, include_self=include_self)

        assert tp.autograd.gradcheck(fn, (x, src))
