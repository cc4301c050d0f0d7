"""The recorded graph looks like PyTorch's: node type names, ``next_functions`` structure (``None``
entries included) and, for the composites PyTorch differentiates as one node, gradients equal to torch's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn.functional as TF
from torchplug.testing.opinfo import materialize, resolve
from torchplug.testing.opinfos import op_db

torch = pytest.importorskip("torch")
torch_F = torch.nn.functional


def graph_tree(fn: Any, depth: int = 8) -> Any:
    """``(type name, child trees)`` of a grad_fn, ``None`` for an input without a gradient edge."""
    if fn is None:
        return None
    name = type(fn).__name__
    if depth == 0 or name == "AccumulateGrad":
        return (name, ())
    return (name, tuple(graph_tree(f, depth - 1) for f, _ in fn.next_functions))


def _leaf(T: Any, arr: np.ndarray, grad: bool = True) -> Any:
    return T.tensor(arr, requires_grad=grad)


def _both(build: Any, *arrays: np.ndarray, grads: tuple[bool, ...] | None = None) -> tuple[Any, Any]:
    """``build(module, *leaves)`` for torch and torchplug on the same float64 data."""
    grads = grads or (True,) * len(arrays)
    out = []
    for T in (torch, tp):
        leaves = [_leaf(T, a, g) for a, g in zip(arrays, grads)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # broadcasting losses warn (the warning has its own tests)
            out.append((build(T, *leaves), leaves))
    return out[0], out[1]


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))
P = RNG.uniform(0.05, 0.95, (4, 5))
W = RNG.uniform(0.5, 2.0, (5,))


def _F(T: Any) -> Any:
    return torch_F if T is torch else TF


# ---- graphs of single calls ---------------------------------------------------------------------
GRAPH_CASES = {
    "mse_loss": (lambda T, x, y: _F(T).mse_loss(x, y), (X, Y)),
    "mse_loss_sum_target_const": (lambda T, x, y: _F(T).mse_loss(x, y, reduction="sum"), (X, Y), (True, False)),
    "mse_loss_none": (lambda T, x, y: _F(T).mse_loss(x, y, reduction="none"), (X, Y)),
    "mse_loss_broadcast": (lambda T, x, y: _F(T).mse_loss(x, y[0]), (X, Y)),
    "smooth_l1_loss": (lambda T, x, y: _F(T).smooth_l1_loss(x, y, beta=0.5), (X, Y)),
    "smooth_l1_loss_beta0": (lambda T, x, y: _F(T).smooth_l1_loss(x, y, beta=0.0), (X, Y)),
    "huber_loss": (lambda T, x, y: _F(T).huber_loss(x, y, delta=0.7), (X, Y)),
    "bce_with_logits": (lambda T, x, p: _F(T).binary_cross_entropy_with_logits(x, p), (X, P)),
    "bce_with_logits_weights": (lambda T, x, p, w: _F(T).binary_cross_entropy_with_logits(x, p, weight=w, pos_weight=w),
                                (X, P, W), (True, False, False)),
    "celu": (lambda T, x: _F(T).celu(x, 0.5), (X,)),
    "celu_inplace": (lambda T, x: _F(T).celu(x * 1, inplace=True), (X,)),
    "logsigmoid": (lambda T, x: _F(T).logsigmoid(x), (X,)),
    "cross_entropy": (lambda T, x: _F(T).cross_entropy(x, T.tensor([0, 1, 4, 2])), (X,)),
    "nll_loss": (lambda T, x: _F(T).nll_loss(x.log_softmax(1), T.tensor([0, 1, 4, 2])), (X,)),
    "linear_2d_bias": (lambda T, x, w, b: _F(T).linear(x, w, b), (X, Y, W[:4])),
    "linear_2d_no_bias": (lambda T, x, w: _F(T).linear(x, w), (X, Y)),
    "linear_1d": (lambda T, x, w, b: _F(T).linear(x, w, b), (X[0], Y, W[:4])),
    "linear_3d": (lambda T, x, w, b: _F(T).linear(x, w, b), (X.reshape(2, 2, 5), Y, W[:4])),
    "linear_3d_no_bias": (lambda T, x, w: _F(T).linear(x, w), (X.reshape(2, 2, 5), Y)),
    "linear_noncontiguous_3d": (lambda T, x, w, b: _F(T).linear(x.expand(3, 4, 5), w, b), (X, Y, W[:4])),
    "linear_2d_bias_2d": (lambda T, x, w, b: _F(T).linear(x, w, b), (X, Y, Y[:, :4])),
    "matmul_batched_vector": (lambda T, x, v: T.matmul(x.view(2, 2, 5), v), (X, W)),
    "matmul_vector_batched": (lambda T, v, x: T.matmul(v[:2], x.view(2, 2, 5)), (W, X)),
    "matmul_broadcast_batches": (lambda T, x, y: T.matmul(x.view(2, 1, 2, 5), y.view(2, 5, 2)), (X, Y)),
    "matmul_fold_3d_2d": (lambda T, x, y: T.matmul(x.view(2, 2, 5), y.t()), (X, Y)),
    "reshape_copy": (lambda T, x: x.t().reshape(-1), (X,)),
    "reshape_alias": (lambda T, x: x.t().reshape(5, 2, 2), (X,)),
    "reshape_alias_same_shape": (lambda T, x: x[:, :2].reshape(4, 2), (X,)),
    "reshape_contiguous": (lambda T, x: x.reshape(2, 10), (X,)),
    "tile": (lambda T, x: x.tile((2, 1)), (X,)),
    "sum_dim": (lambda T, x: x.sum(1), (X,)),
    "mean_dim": (lambda T, x: x.mean(0), (X,)),
    "max_full": (lambda T, x: x.max(), (X,)),
    "fmod_scalar": (lambda T, x: T.fmod(x, 2), (X,)),
    "fmod_tensor": (lambda T, x, y: T.fmod(x, y), (X, Y)),
    "remainder_scalar": (lambda T, x: x % 2, (X,)),
    "pow_scalar_exponent": (lambda T, x: x ** 3, (X,)),
    "pow_tensor": (lambda T, x, y: x ** y, (P, Y)),
    "pow_scalar_base": (lambda T, x: 2 ** x, (X,)),
    "xlogy_scalar_other": (lambda T, x: T.xlogy(x, 2.0), (X,)),
    "lerp_scalar_weight": (lambda T, x, y: T.lerp(x, y, 0.3), (X, Y)),
    "div_mode": (lambda T, x, y: T.div(x, y, rounding_mode="floor"), (X, Y)),
    "round_decimals": (lambda T, x: x.round(decimals=1), (X,)),
    "squeeze_dim": (lambda T, x: x[None].squeeze(0), (X,)),
    "clamp_scalars": (lambda T, x: x.clamp(-0.5, 0.5), (X,)),
    "log1p": (lambda T, x: T.log1p(x.abs()), (X,)),
    "max_pool2d": (lambda T, x: _F(T).max_pool2d(x.view(1, 1, 4, 5), 2), (X,)),
    "add_scalar": (lambda T, x: x + 2, (X,)),
    "radd": (lambda T, x: 2 + x, (X,)),
    "rmul": (lambda T, x: 0.5 * x, (X,)),
    "rsub": (lambda T, x: 1 - x, (X,)),
    "rdiv": (lambda T, x: 2 / x, (X,)),
    "rpow": (lambda T, x: 2 ** x, (X,)),
    "not_implemented_scalar": (lambda T, x: T.floor_divide(x, 2), (X,)),
    "not_implemented_tensors": (lambda T, x, y: T.floor_divide(x, y), (X, Y)),
    # the fallback node has edges for the inputs that require grad only (an int or constant tensor has none)
    "not_implemented_int_tensor": (lambda T, x: T.floor_divide(x, T.tensor([1, 2, 3, 4, 5])), (X,)),
    "not_implemented_constant_first": (lambda T, y, x: T.heaviside(y, x), (Y, X), (False, True)),
    "clamp_min_scalar": (lambda T, x: x.clamp_min(0.1), (X,)),
    "clamp_max_tensor": (lambda T, x, y: T.clamp_max(x, y), (X, Y)),
    "clamp_min_inplace": (lambda T, x: (x * 1).clamp_min_(0.1), (X,)),
    "fmod_inplace": (lambda T, x: (x * 1).fmod_(2), (X,)),
    "normalize": (lambda T, x: _F(T).normalize(x, dim=1), (X,)),
    "cosine_similarity": (lambda T, x, y: _F(T).cosine_similarity(x, y), (X, Y)),
    "matmul_2d_3d_fold": (lambda T, x, y: T.matmul(x[:2], y.view(2, 5, 2)[:1].expand(3, 5, 2)), (X, Y)),
    "matmul_2d_3d_fold_grad_both": (lambda T, x, y: T.matmul(x[:2], y.view(2, 5, 2)), (X, Y)),
    "stack_mixed": (lambda T, x, y: T.stack([x, y, x], 1), (X, Y), (True, False)),
    "var_mean_dim": (lambda T, x: T.var_mean(x, 1)[1], (X,)),
    "aminmax": (lambda T, x: T.aminmax(x, dim=0)[0], (X,)),
    "diag_1d": (lambda T, x: T.diag(x[0], 1), (X,)),
    "matrix_power_0": (lambda T, x: T.matrix_power(x[:4, :4], 0), (X,)),
    "matrix_power_5": (lambda T, x: T.matrix_power(x[:4, :4], 5), (X,)),
    "multi_dot_chain": (lambda T, x, y: T.linalg.multi_dot([x[:, :2], y[:2], x.t(), y[:, :1]]), (X, Y)),
    "multi_dot_vectors": (lambda T, x, y: T.linalg.multi_dot([x[0, :4], y[:4], x.t(), y[0, :4]]), (X, Y)),
    # ATen's C++ calls the Scalar overloads: AddBackward1 / MulBackward1 / DivBackward1 / NormBackward1, one edge
    "rms_norm_weight": (lambda T, x, w: _F(T).rms_norm(x, [5], w, eps=1e-3), (X, W)),
    "cross_entropy_label_smoothing": (lambda T, x: _F(T).cross_entropy(x, T.tensor([0, 1, 4, 2]), label_smoothing=0.2),
                                      (X,)),
    "cross_entropy_probabilities": (lambda T, x, p: _F(T).cross_entropy(x, p, label_smoothing=0.1), (X, P),
                                    (True, False)),
    "pairwise_distance": (lambda T, x, y: _F(T).pairwise_distance(x, y, p=3.0), (X, Y)),
    "ndtr": (lambda T, x: T.special.ndtr(x), (X,)),
    # ATen writes in place where the result is fresh: squeeze_ (SqueezeBackward4) after matmul's 1-d @ 2-d mm
    "matmul_vector_matrix": (lambda T, v, y: T.matmul(v[:4], y), (W, Y)),
    **{f"inplace_view_{k}": (lambda T, x, f=f: f(x * 1), (X,)) for k, f in {
        "squeeze_": lambda x: x[None].squeeze_(), "squeeze_dim": lambda x: x[None].squeeze_(0),
        "squeeze_dims": lambda x: x[None].squeeze_((0,)), "unsqueeze_": lambda x: x.unsqueeze_(1),
        "t_": lambda x: x.t_(), "transpose_": lambda x: x.transpose_(0, 1), "swapdims_": lambda x: x.swapdims_(1, 0),
        "swapaxes_": lambda x: x.swapaxes_(0, 1)}.items()},
    "unsafe_chunk": (lambda T, x: x.unsafe_chunk(2, 1)[1], (X,)),
    "unsafe_split_written_in_place": (lambda T, x: (x * 1).unsafe_split(2, 0)[0].mul_(2), (X,)),
    # ATen's _pad_circular: copies into slices of an empty output (CopySlices), borders copied from the output
    "pad_circular_2d": (lambda T, x: _F(T).pad(x.view(1, 1, 4, 5), (1, 2, 2, 1), mode="circular"), (X,)),
    "pad_circular_negative": (lambda T, x: _F(T).pad(x.view(1, 4, 5), (-1, 2), mode="circular"), (X,)),
    # ATen's einsum: operands unsqueezed and permuted to the output's labels, then sumproduct_pair's bmm
    **{f"einsum_{eq}": (lambda T, x, y, eq=eq, views=views: T.einsum(eq, *(v(t) for v, t in zip(views, (x, y)))),
                        (X, Y)) for eq, views in {
        "ij,jk->ik": (lambda t: t, lambda t: t.t()), "ij,kj->ik": (lambda t: t, lambda t: t),
        "ij,ij->i": (lambda t: t, lambda t: t), "i,j->ij": (lambda t: t[0], lambda t: t[1]),
        "ii,ij->ij": (lambda t: t[:4, :4], lambda t: t[:4]), "...j,j": (lambda t: t.view(2, 2, 5), lambda t: t[0]),
        "bij,bjk->bik": (lambda t: t.view(2, 2, 5), lambda t: t.reshape(2, 5, 2)),
        "ij,i->": (lambda t: t, lambda t: t[:, 0])}.items()},
    "einsum_chain_path": (lambda T, x, y: T.einsum("ij,jk,kl->il", x, y.t(), x), (X, Y)),
    "einsum_single_operand": (lambda T, x: T.einsum("ij->j", x), (X,)),
    "einsum_single_operand_diagonal": (lambda T, x: T.einsum("ii->i", x[:4, :4]), (X,)),
    # composites PyTorch records as one node with its own formula
    "fmax": (lambda T, x, y: T.fmax(x, y), (X, Y)),
    "fmin_constant_other": (lambda T, x, y: T.fmin(x, y[0]), (X, Y), (True, False)),
    "ldexp_int_exponent": (lambda T, x: T.ldexp(x, T.tensor([1, -2, 0, 3, 1])), (X,)),
    "dist": (lambda T, x, y: T.dist(x, y, 3), (X, Y)),
    "cov_aweights": (lambda T, x, p: T.cov(x, aweights=p[0]), (X, P), (True, False)),
    "standard_gamma_grad": (lambda T, a, o: T._standard_gamma_grad(a, o), (P, P)),
    "renorm": (lambda T, x: T.renorm(x, 2, 0, 1.0), (X,)),
    **{f"cdist_p{p}": (lambda T, x, y, p=p: T.cdist(x, y[:3], p), (X, Y)) for p in (0, 1, 2, 3, float("inf"))},
    **{f"pdist_p{p}": (lambda T, x, p=p: _F(T).pdist(x, p), (X,)) for p in (0, 1, 2, float("inf"))},
    "pdist_noncontiguous": (lambda T, x: _F(T).pdist(x.t()), (X,)),
    "pdist_one_row": (lambda T, x: _F(T).pdist(x[:1]), (X,)),
    "logcumsumexp": (lambda T, x: T.logcumsumexp(x, 1), (X,)),
    "put": (lambda T, x, y: T.put(x, T.tensor([1, 7, -2]), y[0, :3]), (X, Y)),
    "put_inplace": (lambda T, x, y: (x * 1).put_(T.tensor([1, 7, -2]), y[0, :3], accumulate=True), (X, Y)),
    "diff_n0_is_a_copy": (lambda T, x: T.diff(x, n=0), (X,)),
    "diff_n_too_big": (lambda T, x: T.diff(x, n=7, dim=1), (X,)),
    "public_scalar_operands_keep_the_tensor_overloads": (lambda T, x: T.add(x, 2) * 3 / 4 + T.mul(x, 0.5), (X,)),
}


@pytest.mark.parametrize("case", sorted(GRAPH_CASES))
def test_graph_matches_torch(case: str) -> None:
    build, arrays, *grads = GRAPH_CASES[case]
    (ref, _), (got, _) = _both(build, *arrays, grads=grads[0] if grads else None)
    assert graph_tree(got.grad_fn) == graph_tree(ref.grad_fn)
    assert got.grad_fn.name() == ref.grad_fn.name()


def test_linear_2d_is_addmm_with_t_of_weight() -> None:
    x, w, b = (tp.tensor(a, requires_grad=True) for a in (X, Y[:3], W[:3]))
    node = TF.linear(x, w, b).grad_fn
    assert type(node).__name__ == "AddmmBackward0"
    (bias_acc, _), (x_acc, _), (t_node, _) = node.next_functions
    assert bias_acc.variable is b and x_acc.variable is x
    assert type(t_node).__name__ == "TBackward0" and t_node.next_functions[0][0].variable is w


# ---- the graphs of the OpInfo samples of the ops this covers ----------------------------------------
OPINFO_OPS = (
    "nn.functional.mse_loss", "nn.functional.smooth_l1_loss", "nn.functional.huber_loss", "nn.functional.l1_loss",
    "nn.functional.binary_cross_entropy_with_logits", "nn.functional.binary_cross_entropy", "nn.functional.celu",
    "nn.functional.logsigmoid", "nn.functional.nll_loss", "nn.functional.linear", "nn.functional.max_pool2d",
    "nn.functional.avg_pool2d", "nn.functional.adaptive_avg_pool2d", "nn.functional.interpolate",
    "nn.functional.unfold", "nn.functional.fold", "nn.functional.conv2d", "nn.functional.max_pool1d",
    "sum", "mean", "prod", "max", "min", "pow", "fmod", "remainder", "div", "round", "clamp", "lerp", "xlogy",
    "copysign", "log1p", "deg2rad", "rad2deg", "squeeze", "scatter.value", "masked_fill", "sort", "median.dim",
    "nanmedian.dim", "reshape", "square", "linalg.inv", "linalg.solve", "linalg.cholesky", "linalg.svdvals",
    "linalg.eigvalsh", "clamp_min", "clamp_max", "nn.functional.normalize", "nn.functional.cosine_similarity",
    "stack", "cartesian_prod", "var_mean", "std_mean", "aminmax", "nn.functional.pixel_shuffle",
    "nn.functional.pixel_unshuffle", "masked_select", "cross", "diagflat", "matrix_power", "nn.functional.kl_div",
    "inner", "unflatten", "linalg.multi_dot", "linalg.matrix_norm", "linalg.norm", "diag", "split", "split_with_sizes", "chunk", "unbind", "flatten", "tensordot", "kron", "linalg.matrix_power", "tile",
    "nn.functional.rms_norm", "nn.functional.cross_entropy", "nn.functional.pairwise_distance", "special.ndtr",
    "matmul", "nn.functional.pad", "floor_divide", "einsum", "fmax", "fmin", "ldexp", "dist", "cov",
    "_standard_gamma_grad", "renorm", "diff", "cdist", "nn.functional.pdist", "logcumsumexp", "put",
)


def _requires_grad(value: Any, module: Any) -> Any:
    if isinstance(value, module.Tensor):
        return value.requires_grad_(True) if value.dtype.is_floating_point else value
    if isinstance(value, (list, tuple)):
        return type(value)(_requires_grad(v, module) for v in value)
    return value


def _first_tensor(out: Any, module: Any) -> Any:
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


@pytest.mark.parametrize("name", OPINFO_OPS)
def test_opinfo_graphs_match_torch(name: str) -> None:
    op = next(o for o in op_db() if o.name == name)
    compared = 0
    for sample in op.samples("float64"):
        outs = []
        for module in (torch, tp):
            args, kwargs = materialize(sample, module, "cpu", "float64")
            args = _requires_grad(args, module)
            kwargs = {k: _requires_grad(v, module) for k, v in kwargs.items()}
            try:
                outs.append(_first_tensor(resolve(module, op.path)(*args, **kwargs), module))
            except Exception:  # noqa: BLE001 - an error sample: the error tests compare it
                outs.append(None)
        ref, got = outs
        if ref is None:
            continue
        assert got is not None, sample.name
        assert graph_tree(got.grad_fn) == graph_tree(ref.grad_fn), sample.name
        compared += 1
    assert compared


# ---- gradients of the fused nodes -------------------------------------------------------------------------
def _grads(T: Any, build: Any, arrays: tuple[np.ndarray, ...], grads: tuple[bool, ...]) -> list[Any]:
    leaves = [_leaf(T, a, g) for a, g in zip(arrays, grads)]
    out = build(T, *leaves)
    out.backward(T.ones_like(out) if out.dim() else None)
    return [leaf.grad for leaf, g in zip(leaves, grads) if g]


LOSS_CASES = {
    **{f"mse_{r}": (lambda T, x, y, r=r: _F(T).mse_loss(x, y, reduction=r), (X, Y)) for r in ("mean", "sum", "none")},
    **{f"smooth_l1_{r}": (lambda T, x, y, r=r: _F(T).smooth_l1_loss(x, y, reduction=r, beta=0.6), (X, Y))
       for r in ("mean", "sum", "none")},
    **{f"huber_{r}": (lambda T, x, y, r=r: _F(T).huber_loss(x, y, reduction=r, delta=0.4), (X, Y))
       for r in ("mean", "sum", "none")},
    **{f"bce_logits_{r}": (lambda T, x, p, r=r: _F(T).binary_cross_entropy_with_logits(x, p, reduction=r), (X, P))
       for r in ("mean", "sum", "none")},
    "bce_logits_weight_pos_weight": (
        lambda T, x, p: _F(T).binary_cross_entropy_with_logits(
            x, p, weight=T.tensor(W[:x.shape[1]]), pos_weight=T.tensor(W[::-1][:x.shape[1]].copy())), (X, P)),
    "mse_broadcast_target": (lambda T, x, y: _F(T).mse_loss(x, y[:1]), (X, Y)),
    "celu": (lambda T, x: _F(T).celu(x, 0.7), (X,)),
    # zero and tiny rows: PyTorch's gradient ignores the eps clamp (the norms are clamped unrecorded)
    "cosine_similarity_degenerate": (lambda T, x, y: _F(T).cosine_similarity(x, y),
                                     (np.vstack([X[:2], np.zeros((1, 5)), X[3:] * 1e-9]), Y)),
    "normalize_degenerate": (lambda T, x: _F(T).normalize(x), (np.vstack([X[:2], np.zeros((1, 5)), X[3:] * 1e-9]),)),
    "clamp_min_tensor": (lambda T, x, y: T.clamp_min(x, y), (X, Y)),
    "stack": (lambda T, x, y: T.stack([x, y], 2) * T.arange(40.0, dtype=T.float64).view(4, 5, 2), (X, Y)),
    "var_mean": (lambda T, x: sum(r * w for r, w in zip(T.var_mean(x, 1, correction=0), (2.0, 3.0))), (X,)),
    "std_mean": (lambda T, x: sum(r * w for r, w in zip(T.std_mean(x, [0, 1], keepdim=True), (2.0, 3.0))), (X,)),
    "std_mean_constant_row": (lambda T, x: T.std_mean(x, 1)[0], (np.vstack([np.ones((1, 5)), X[1:]]),)),
    "aminmax_ties": (lambda T, x: sum(T.aminmax(x.round(), dim=1)), (X * 2,)),
    "aminmax_full": (lambda T, x: T.aminmax(x)[1] * 2 - T.aminmax(x)[0], (X,)),
    "pixel_shuffle": (lambda T, x: _F(T).pixel_shuffle(x.view(1, 4, 5, 1), 2) * T.arange(20.0, dtype=T.float64).view(1, 1, 10, 2),
                      (X,)),
    "pixel_unshuffle": (lambda T, x: _F(T).pixel_unshuffle(x[:, :4].reshape(1, 1, 4, 4), 2).pow(2), (X,)),
    "masked_select_expanded_mask": (lambda T, x: T.masked_select(x[0], T.tensor(Y > 0)) * 3, (X,)),
    "kl_div": (lambda T, x, p: _F(T).kl_div(x, p, reduction="batchmean"), (X, P)),
    "matrix_power": (lambda T, x: T.matrix_power(x[:4, :4], 6), (X,)),
    "cross": (lambda T, x, y: T.linalg.cross(x[:, :3], y[:, :3]), (X, Y)),
    "diag_of_matrix": (lambda T, x: T.diag(x, -1) * T.arange(3.0, dtype=T.float64), (X,)),
    "diagonal_copy": (lambda T, x: T.diagonal_copy(x.view(2, 2, 5), 1, 1, 2).exp(), (X,)),
    "split_pieces": (lambda T, x: T.cat([p * (k + 1) for k, p in enumerate(x.split(2, 1))], 1), (X,)),
    "split_one_piece_used": (lambda T, x: x.split([1, 3], 0)[1] * 2, (X,)),
    "chunk_uneven": (lambda T, x: x.chunk(3, 1)[2].exp(), (X,)),
    "unbind_rows": (lambda T, x: x.unbind(0)[0] * 2 + x.unbind(0)[3], (X,)),
    "rms_norm": (lambda T, x, w: _F(T).rms_norm(x, [5], w), (X, W)),
    "cross_entropy_label_smoothing": (lambda T, x: _F(T).cross_entropy(x, T.tensor([0, 1, 4, 2]), label_smoothing=0.3),
                                      (X,)),
    "cross_entropy_probabilities": (lambda T, x, p: _F(T).cross_entropy(x, p / p.sum(1, keepdim=True),
                                                                        label_smoothing=0.2), (X, P)),
    "pairwise_distance": (lambda T, x, y: _F(T).pairwise_distance(x, y, p=3.0, keepdim=True), (X, Y)),
    "ndtr": (lambda T, x: T.special.ndtr(x), (X,)),
    "matmul_vector_matrix": (lambda T, v, y: T.matmul(v[:4], y).exp(), (W, Y)),
    "inplace_views": (lambda T, x: (x * 1).t_().unsqueeze_(0).transpose_(0, 2).squeeze_(1).exp(), (X,)),
    # the pieces written in place keep their own version counters: the saved sigmoid results stay valid
    "unsafe_chunk_pieces_written_in_place": (
        lambda T, x, y: (lambda a, b: a.add_(b).sigmoid_() * b.sigmoid_())(*(x * y).unsafe_chunk(2, 0)), (X, Y)),
    "einsum_diagonal_and_size_one": (lambda T, x, y: T.einsum("iij,kj->ik", x[:4, :4, None] * y[0], y[:3]), (X, Y)),
    "einsum_chain": (lambda T, x, y: T.einsum("ij,jk,kl,lm->im", x, y.t(), x, y.t()), (X, Y)),
    "einsum_explicit_path": (lambda T, x, y: T.einsum("ij,jk,kl->il", x, y.t(), x[:, :1]), (X, Y)),
    # NaNs and ties: fmax/fmin route the gradient where the value was taken
    "fmax_nan_ties": (lambda T, x, y: T.fmax(x, y) * T.arange(20.0, dtype=T.float64).view(4, 5),
                      (np.where(X > 1, np.nan, X), np.where(Y > 1, np.nan, np.where(Y < -1, X, Y)))),
    "fmin_nan_ties": (lambda T, x, y: T.fmin(x, y) * T.arange(20.0, dtype=T.float64).view(4, 5),
                      (np.where(X > 1, np.nan, X), np.where(Y > 1, np.nan, np.where(Y < -1, X, Y)))),
    "ldexp": (lambda T, x, y: T.ldexp(x, y), (X, Y)),
    **{f"dist_p{p}": (lambda T, x, y, p=p: T.dist(x, y, p), (X, Y)) for p in (1, 2, 3, float("inf"))},
    **{f"renorm_p{p}_dim{d}": (lambda T, x, p=p, d=d: T.renorm(x, p, d, 0.8) * T.arange(20.0, dtype=T.float64).view(4, 5),
                               (X,)) for p, d in ((1, 0), (2, 1), (3.5, -1), (float("inf"), 0))},
    "diff_n0": (lambda T, x: T.diff(x, n=0) * 2, (X,)),
    **{f"cdist_p{p}": (lambda T, x, y, p=p: T.cdist(x.view(2, 2, 5), y[:3], p) * T.arange(12.0, dtype=T.float64).view(2, 2, 3),
                       (X, Y)) for p in (1, 2, 0.5, 3, float("inf"))},
    **{f"pdist_p{p}": (lambda T, x, p=p: _F(T).pdist(x.t(), p) * T.arange(10.0, dtype=T.float64), (X,))
       for p in (1, 2, 0.5, 3, float("inf"))},
    # gradients of both signs and exact zeros (the positive and negative parts are scanned apart)
    **{f"put_accumulate_{acc}": (lambda T, x, y, acc=acc: T.put(x, T.tensor([[0, 3], [3, 11]]), y[:2, :2], acc) * 3,
                                 (X, Y)) for acc in (False, True)},
    **{f"logcumsumexp_dim{d}": (lambda T, x, d=d: T.logcumsumexp(x * 3, d) * T.tensor(np.round(Y)), (X,)) for d in (0, 1)},
    "pad_circular": (lambda T, x: _F(T).pad(x.view(1, 1, 4, 5), (2, 1, -1, 3), mode="circular").pow(2), (X,)),
    "reshape_alias_then_inplace": (lambda T, x: (x * 1).t().reshape(5, 2, 2).mul_(T.arange(20.0, dtype=T.float64).view(5, 2, 2)),
                                   (X,)),
}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_fused_gradients_match_torch(case: str) -> None:
    build, arrays = LOSS_CASES[case]
    grads = (True,) * len(arrays)
    with pytest.warns(UserWarning) if "broadcast" in case else _nullcontext():
        ref = _grads(torch, build, arrays, grads)
    with pytest.warns(UserWarning, match="target size") if "broadcast" in case else _nullcontext():
        got = _grads(tp, build, arrays, grads)
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


@pytest.mark.parametrize("case", ["mse_mean", "smooth_l1_sum", "huber_none", "bce_logits_mean",
                                  "bce_logits_weight_pos_weight", "celu", "var_mean", "std_mean", "split_pieces",
                                  "kl_div", "clamp_min_tensor", "aminmax_full", "dist_p3", "ldexp", "pairwise_distance",
                                  "ndtr", "cross_entropy_probabilities"])
def test_fused_formulas_are_differentiable(case: str) -> None:
    # the formulas are written with differentiable ops: second derivatives by finite differences
    build, arrays = LOSS_CASES[case]
    inputs = tuple(tp.tensor(a[:2, :3], requires_grad=True) for a in arrays)

    def fn(*xs: Any) -> Any:
        return build(tp, *xs)

    assert tp.autograd.gradcheck(fn, inputs)
    assert tp.autograd.gradgradcheck(fn, inputs)


def test_fused_loss_float32_matches_torch() -> None:
    for T in (torch, tp):
        x = T.tensor(X.astype(np.float32), requires_grad=True)
        y = T.tensor(Y.astype(np.float32), requires_grad=True)
        _F(T).mse_loss(x, y).backward()
        if T is torch:
            ref = (x.grad.numpy(), y.grad.numpy())
    assert x.grad.dtype is tp.float32
    np.testing.assert_allclose(x.grad.numpy(), ref[0], rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), ref[1], rtol=1e-6)


# ---- inputs PyTorch refuses to differentiate -------------------------------------------------------------
REFUSED = {
    "bce_with_logits_pos_weight": lambda T, x, w: _F(T).binary_cross_entropy_with_logits(
        x, T.tensor(P), pos_weight=w),
    "bce_with_logits_weight": lambda T, x, w: _F(T).binary_cross_entropy_with_logits(x, T.tensor(P), weight=w),
    "bce_weight": lambda T, x, w: _F(T).binary_cross_entropy(x.sigmoid(), T.tensor(P), weight=w),
    "nll_loss_weight": lambda T, x, w: _F(T).nll_loss(x, T.tensor([0, 1, 4, 2]), weight=w),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_weight_requiring_grad_is_refused_like_torch(case: str) -> None:
    messages = []
    for T in (torch, tp):
        x = T.tensor(X, requires_grad=True)
        w = T.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            REFUSED[case](T, x, w)
        messages.append(str(info.value))
        with T.no_grad():  # no graph, no check
            assert not REFUSED[case](T, x, w).requires_grad
    assert messages[0] == messages[1]
    assert "is not differentiable with respect to argument" in messages[1]


@pytest.mark.parametrize("split", ["split", "chunk", "unbind"])
def test_pieces_share_one_node_and_refuse_inplace_like_torch(split: str) -> None:
    messages = []
    for T in (torch, tp):
        x = T.tensor(X, requires_grad=True) * 1
        pieces = {"split": lambda: x.split(2), "chunk": lambda: x.chunk(2, 1), "unbind": lambda: x.unbind(1)}[split]()
        assert len({id(p.grad_fn) for p in pieces}) == 1
        assert [p.grad_fn is pieces[0].grad_fn for p in pieces] == [True] * len(pieces)
        with pytest.raises(RuntimeError) as info:
            pieces[1].mul_(2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_reflected_operators_match_torch_values_and_gradients() -> None:
    # torch's 2 / x is x.reciprocal() * 2 (values can differ from 2 / x in the last place), 1 - x is rsub
    results = []
    for T in (torch, tp):
        x = T.tensor(P * 3, requires_grad=True)
        y = 2 / x + 3 * (1 - x) + 0.5 + x
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


def test_hidden_scalar_edge_still_differentiates() -> None:
    # fmod(x, 2) shows one edge like torch but its gradient is the same
    x = tp.tensor(X, requires_grad=True)
    node = tp.fmod(x, 2).grad_fn
    assert len(node.next_functions) == 1
    tp.fmod(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(X))


@pytest.mark.parametrize("use", ["var_mean", "split", "aminmax"])
def test_unused_outputs_of_fused_nodes_get_zeros_on_the_outputs_device(use: str) -> None:
    # the engine materializes zeros for the outputs nobody used: on the device of the node's outputs
    x = tp.tensor(X, device="meta", requires_grad=True)
    out = {"var_mean": lambda: tp.var_mean(x, 1)[1], "split": lambda: x.split(2)[1],
           "aminmax": lambda: tp.aminmax(x, dim=0)[1]}[use]()
    out.sum().backward()
    assert x.grad.device.type == "meta" and tuple(x.grad.shape) == X.shape


def test_unsafe_chunk_pieces_have_their_own_version_counters_like_torch() -> None:
    versions = []
    for T in (torch, tp):
        x = T.tensor(X, requires_grad=True) * 1
        a, b = x.unsafe_chunk(2, 0)
        a.add_(1)
        versions.append((a._version, b._version, x._version, a._is_view(),
                         a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()))
    assert versions[1] == versions[0] == (1, 0, 0, False, True)


_RNN_CONFIGS = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("RNN", {"bias": False}), ("RNN", {"num_layers": 2}),
                ("RNN", {"bidirectional": True}), ("RNN", {"num_layers": 2, "bidirectional": True}),
                ("RNN", {"batch_first": True}), ("GRU", {}), ("GRU", {"bias": False}),
                ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"batch_first": True})]


@pytest.mark.parametrize("mode, config", _RNN_CONFIGS, ids=[f"{m}-{c}" for m, c in _RNN_CONFIGS])
@pytest.mark.parametrize("unbatched", [False, True])
def test_rnn_graph_and_gradients_match_torch(mode: str, config: dict[str, Any], unbatched: bool) -> None:
    # ATen's CPU RNN/GRU: the input projection of the whole sequence, unbound into steps, addmm + add_ per step
    # (GRU: its cell in place on unsafe_chunk pieces); batch_first transposes the output in place
    seq = np.random.default_rng(3).standard_normal((5, 2, 4))
    x_data = seq[:, 0] if unbatched else seq
    models, trees, grads = [], [], []
    for T in (torch, tp):
        T.manual_seed(0)
        models.append(getattr(T.nn, mode)(4, 3, dtype=T.float64, **config))
    with tp.no_grad():
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            q.copy_(tp.tensor(p.detach().numpy()))
    for T, model in zip((torch, tp), models):
        x = T.tensor(x_data, requires_grad=True)
        out, h_n = model(x)
        trees.append((graph_tree(out.grad_fn, 12), graph_tree(h_n.grad_fn, 12)))
        (out.sum() + (h_n * h_n).sum()).backward()
        grads.append([x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    assert trees[1] == trees[0]
    for got, ref in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


def test_circular_pad_wider_than_the_cropped_size_is_refused() -> None:
    # ATen copies overlapping regions there and returns uninitialized memory; torchplug refuses
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        TF.pad(tp.tensor(X).view(1, 4, 5), (4, -2), mode="circular")


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("pads", [(1, 2, 2, 1), (-1, 2, 0, 0), (-1, -1, 0, 0), (0, 0, 0, 0), (4, 5, 3, 3)])
def test_circular_pad_values_and_a_fresh_output_like_torch(grad: bool, pads: tuple[int, ...]) -> None:
    # with a graph to record: ATen's copy sequence; without: concatenated borders; the same values either way
    results = []
    for T in (torch, tp):
        x = T.tensor(X.reshape(1, 1, 4, 5), requires_grad=grad)
        y = _F(T).pad(x, pads, mode="circular")
        results.append((y.detach().numpy(), y.is_contiguous(), y._base is None, y.data_ptr() != x.data_ptr()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1:] == results[0][1:] == (True, True, True)


@pytest.mark.parametrize("op", ["logcumsumexp", "renorm", "pdist", "cdist"])
def test_single_node_formulas_are_differentiable(op: str) -> None:
    # their formulas are written with differentiable ops: second derivatives by finite differences
    fn = {"logcumsumexp": lambda x: tp.logcumsumexp(x, 1), "renorm": lambda x: tp.renorm(x, 3, 0, 0.9),
          "pdist": lambda x: TF.pdist(x, 3), "cdist": lambda x: tp.cdist(x, x[:2] * 2, 3)}[op]
    x = tp.tensor(X[:3, :3], requires_grad=True)
    assert tp.autograd.gradcheck(fn, (x,))
    assert tp.autograd.gradgradcheck(fn, (x,))
