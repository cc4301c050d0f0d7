"""vmap over single ops, compared with torch.vmap: batching rules, decompositions and the fallback agree
with PyTorch for every in_dims combination tried (batch dim first, last, or not batched)."""

from __future__ import annotations

import warnings

import pytest

import torchplug
from func_helpers import close, pair

torch = pytest.importorskip("torch")


def _run(fn_name, shapes, in_dims, kwargs=None, ints=None, atol=1e-6):
    """vmap(fn)(*inputs) under both libraries (the fallback's performance warning is allowed here)."""
    kwargs = kwargs or {}
    mine, theirs = [], []
    for k, shape in enumerate(shapes):
        if ints and k in ints:
            a, b = pair(*shape, seed=k, low=ints[k][0], high=ints[k][1])
        else:
            a, b = pair(*shape, seed=k)
        mine.append(a)
        theirs.append(b)
    f_mine = _resolve(torchplug, fn_name)
    f_theirs = _resolve(torch, fn_name)
    expected = torch.vmap(lambda *a: f_theirs(*a, **kwargs), in_dims=in_dims)(*theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = torchplug.vmap(lambda *a: f_mine(*a, **kwargs), in_dims=in_dims)(*mine)
    close(got, expected, atol=atol, rtol=atol)


def _resolve(mod, name):
    obj = mod
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


UNARY = ["sin", "exp", "tanh", "abs", "neg", "sigmoid", "relu", "nn.functional.gelu", "nn.functional.softplus",
         "square", "sqrt_abs", "clone", "t2", "sum", "mean", "nn.functional.silu", "nn.functional.elu",
         "nn.functional.leaky_relu", "logsumexp1", "amax1", "cumsum1", "flip0", "transpose01", "flatten",
         "squeeze_", "unsqueeze1", "zeros_like", "norm", "softmax1", "log_softmax0", "trace", "tril", "triu",
         "diag_embed", "roll", "var1", "std0", "prod", "argmax1", "max", "median", "sort1", "topk1",
         "linalg.det", "linalg.inv", "diagonal", "narrow", "select", "permute", "expand", "repeat", "reshape"]

_EXTRA = {
    "sqrt_abs": lambda m: (lambda x: m.sqrt(x.abs())),
    "t2": lambda m: (lambda x: x.t() if x.dim() == 2 else x),
    "logsumexp1": lambda m: (lambda x: m.logsumexp(x, 1)),
    "amax1": lambda m: (lambda x: m.amax(x, 1, keepdim=True)),
    "cumsum1": lambda m: (lambda x: m.cumsum(x, 1)),
    "flip0": lambda m: (lambda x: m.flip(x, [0])),
    "transpose01": lambda m: (lambda x: x.transpose(0, 1)),
    "squeeze_": lambda m: (lambda x: x.unsqueeze(0).squeeze(0)),
    "unsqueeze1": lambda m: (lambda x: x.unsqueeze(1)),
    "norm": lambda m: (lambda x: m.linalg.vector_norm(x, dim=-1)),
    "softmax1": lambda m: (lambda x: m.softmax(x, 1)),
    "log_softmax0": lambda m: (lambda x: m.log_softmax(x, 0)),
    "roll": lambda m: (lambda x: m.roll(x, 1, 0)),
    "var1": lambda m: (lambda x: x.var(1)),
    "std0": lambda m: (lambda x: x.std(0, keepdim=True)),
    "argmax1": lambda m: (lambda x: x.argmax(1)),
    "sort1": lambda m: (lambda x: m.sort(x, 1)[0]),
    "topk1": lambda m: (lambda x: m.topk(x, 2, 1)[1]),
    "linalg.det": lambda m: (lambda x: m.linalg.det(x[:, :3])),
    "linalg.inv": lambda m: (lambda x: m.linalg.inv(x[:, :3] + 3 * m.eye(3, dtype=x.dtype))),
    "diagonal": lambda m: (lambda x: x.diagonal()),
    "narrow": lambda m: (lambda x: x.narrow(1, 1, 2)),
    "select": lambda m: (lambda x: x.select(1, 2)),
    "permute": lambda m: (lambda x: x.permute(1, 0)),
    "expand": lambda m: (lambda x: x[:, :1].expand(3, 4)),
    "repeat": lambda m: (lambda x: x.repeat(2, 1)),
    "reshape": lambda m: (lambda x: x.reshape(-1, 2)),
    "max": lambda m: (lambda x: x.max()),
    "median": lambda m: (lambda x: x.median()),
}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("in_dim", [0, 1, -1])
def test_unary(name, in_dim):
    """A (3, 4) sample batched along different dims of a (5, 3, 4)-like input."""
    shape = [3, 4]
    shape.insert(in_dim % 3, 5)
    if name in _EXTRA:
        mine, theirs = _EXTRA[name](torchplug), _EXTRA[name](torch)
        a, b = pair(*shape, seed=1)
        expected = torch.vmap(theirs, in_dims=in_dim)(b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            got = torchplug.vmap(mine, in_dims=in_dim)(a)
        close(got, expected, atol=1e-6)
    else:
        _run(name, [shape], in_dim)


BINARY = [("add", [3, 4], [4]), ("mul", [3, 4], [3, 4]), ("sub", [4], [3, 4]), ("div", [3, 4], []),
          ("maximum", [3, 4], [3, 4]), ("atan2", [3, 4], [4]), ("matmul", [3, 4], [4, 2]), ("matmul", [4], [4, 2]),
          ("matmul", [3, 4], [4]), ("matmul", [4], [4]), ("matmul", [2, 3, 4], [4, 5]), ("mm", [3, 4], [4, 2]),
          ("dot", [4], [4]), ("mv", [3, 4], [4]), ("outer", [3], [4]), ("bmm", [2, 3, 4], [2, 4, 5]),
          ("nn.functional.linear", [3, 4], [2, 4]), ("eq", [3, 4], [3, 4]), ("where_gt", [3, 4], [3, 4]),
          ("cat0", [3, 4], [2, 4]), ("stack1", [3, 4], [3, 4]), ("nn.functional.mse_loss", [3, 4], [3, 4]),
          ("pow", [3, 4], [3, 4]), ("nn.functional.binary_cross_entropy_with_logits", [3, 4], [3, 4])]

_BIN_EXTRA = {
    "where_gt": lambda m: (lambda a, b: m.where(a > b, a, b)),
    "cat0": lambda m: (lambda a, b: m.cat([a, b], 0)),
    "stack1": lambda m: (lambda a, b: m.stack([a, b], 1)),
    "pow": lambda m: (lambda a, b: m.pow(a.abs() + 0.5, b)),
}


@pytest.mark.parametrize("name,sa,sb", BINARY, ids=[f"{n}-{len(a)}-{len(b)}" for n, a, b in BINARY])
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_binary(name, sa, sb, in_dims):
    shapes = []
    for s, d in zip((sa, sb), in_dims):
        s = list(s)
        if d is not None:
            if d > len(s):
                d = len(s)
            s.insert(d, 5)
        shapes.append(s)
    in_dims = tuple(None if d is None else min(d, len(s) - 1) for d, s in zip(in_dims, shapes))
    if name in _BIN_EXTRA:
        mine, theirs = _BIN_EXTRA[name](torchplug), _BIN_EXTRA[name](torch)
        (a1, b1), (a2, b2) = pair(*shapes[0], seed=1), pair(*shapes[1], seed=2)
        expected = torch.vmap(theirs, in_dims=in_dims)(b1, b2)
        got = torchplug.vmap(mine, in_dims=in_dims)(a1, a2)
        close(got, expected)
    else:
        _run(name, shapes, in_dims)


def test_nn_functional_ops_against_torch():
    """conv2d, max_pool2d, layer_norm, group_norm, embedding, cross_entropy/nll_loss, interpolate, pad."""
    cases = [
        (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), [(5, 2, 3, 6, 6), (4, 3, 3, 3)], (0, None)),
        (lambda m, x, w: m.nn.functional.conv2d(x, w), [(5, 3, 6, 6), (4, 3, 3, 3)], (0, None)),
        (lambda m, x: m.nn.functional.max_pool2d(x, 2), [(5, 2, 3, 6, 6)], (0,)),
        (lambda m, x: m.nn.functional.avg_pool2d(x, 2), [(2, 3, 5, 6, 6)], (2,)),
        (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 2), [(5, 3, 6, 6)], (0,)),
        (lambda m, x, w: m.nn.functional.layer_norm(x, (4,), w), [(5, 3, 4), (4,)], (0, None)),
        (lambda m, x: m.nn.functional.group_norm(x, 2), [(5, 2, 4, 3)], (0,)),
        (lambda m, x, t: m.nn.functional.cross_entropy(x, t), [(5, 3, 4), (5, 3)], (0, 0)),
        (lambda m, x, t: m.nn.functional.nll_loss(x.log_softmax(-1), t, reduction="sum"), [(5, 3, 4), (5, 3)], (0, 0)),
        (lambda m, x, t: m.nn.functional.cross_entropy(x, t), [(5, 4), (5,)], (0, 0)),
        (lambda m, x: m.nn.functional.interpolate(x, scale_factor=2), [(5, 2, 3, 4, 4)], (0,)),
        (lambda m, x: m.nn.functional.pad(x, (1, 2)), [(5, 3, 4)], (0,)),
        (lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"), [(5, 2, 3, 4, 4)], (0,)),
        (lambda m, w, i: m.nn.functional.embedding(i, w), [(6, 3), (5, 4)], (None, 0)),
    ]
    for k, (fn, shapes, in_dims) in enumerate(cases):
        ints = {1: (0, 4)} if fn.__code__.co_varnames[2:3] == ("t",) else ({1: (0, 6)} if "i" in fn.__code__.co_varnames else None)
        mine, theirs = [], []
        for j, s in enumerate(shapes):
            if ints and j in ints:
                a, b = pair(*s, seed=j, low=ints[j][0], high=ints[j][1])
            else:
                a, b = pair(*s, seed=j)
            mine.append(a)
            theirs.append(b)
        expected = torch.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*theirs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            got = torchplug.vmap(lambda *a: fn(torchplug, *a), in_dims=in_dims)(*mine)
        close(got, expected, atol=1e-6)


def test_advanced_indexing_and_inplace():
    a, b = pair(5, 3, 4, seed=3)
    idx_m, idx_t = torchplug.tensor([2, 0]), torch.tensor([2, 0])

    def f(m, idx):
        def g(x):
            y = x.clone()
            y[0] = 1.0
            y.mul_(2)
            return y[idx] + x[:, 1:3].sum()
        return g

    close(torchplug.vmap(f(torchplug, idx_m))(a), torch.vmap(f(torch, idx_t))(b))


def test_inplace_into_unbatched_tensor_is_refused_as_torch():
    a, b = pair(5, 3)
    z_mine, z_torch = torchplug.zeros(3, dtype=torchplug.float64), torch.zeros(3, dtype=torch.float64)
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda x: z_torch.add_(x))(b)
    with pytest.raises(RuntimeError) as mine:
        torchplug.vmap(lambda x: z_mine.add_(x))(a)
    assert str(mine.value) == str(theirs.value)


def test_binary_cross_entropy_per_sample():
    (x, xt), (t, tt) = pair(5, 3, 4, seed=1), pair(5, 3, 4, seed=2)
    f = lambda m: (lambda a, b: m.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()))  # noqa: E731
    expected = torch.stack([f(torch)(xt[i], tt[i]) for i in range(5)])
    close(torchplug.vmap(f(torchplug))(x, t), expected)


def test_inplace_ops_without_rules_write_each_sample():
    """In-place ops that take the per-sample loop write into the batched tensor's own samples."""
    (x, xt) = pair(4, 5, seed=2)
    idx_m, idx_t = torchplug.tensor([0, 3]), torch.tensor([0, 3])
    f = lambda m, idx: (lambda a: a.clone().index_fill_(0, idx, -1.0).cumsum_(0))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = torchplug.vmap(f(torchplug, idx_m))(x)
        expected = torch.vmap(f(torch, idx_t))(xt)  # torch has no rule for cumsum_ either (its fallback warns)
    close(got, expected)


_INDEX_CASES = {
    "scatter": lambda m, x, s, i, j: m.scatter(x, 0, i, s),
    "scatter_add": lambda m, x, s, i, j: m.scatter_add(x, 1, i % 5, s),
    "scatter_value": lambda m, x, s, i, j: x.scatter(0, i, 2.5),
    "scatter_reduce": lambda m, x, s, i, j: x.scatter_reduce(0, i, s, "amax"),
    "gather": lambda m, x, s, i, j: m.gather(x, 0, i),
    "index_add": lambda m, x, s, i, j: x.index_add(0, j, s[:2]),
    "index_copy": lambda m, x, s, i, j: x.index_copy(1, j, s[:, :2]),
    "index_fill": lambda m, x, s, i, j: x.index_fill(1, j, -1.0),
    "index_select": lambda m, x, s, i, j: x.index_select(1, j),
    "take_along_dim": lambda m, x, s, i, j: m.take_along_dim(x, i, 0),
}


@pytest.mark.parametrize("name", sorted(_INDEX_CASES))
@pytest.mark.parametrize("in_dims", [(0, 0, 0, None), (0, None, 0, None), (None, 0, 0, None), (0, 0, None, None)])
def test_indexing_ops(name, in_dims):
    f = _INDEX_CASES[name]
    (x, xt), (s, st) = pair(4, 3, 5, seed=1), pair(4, 3, 5, seed=2)
    (i, it) = pair(4, 3, 5, seed=3, low=0, high=3)
    j, jt = torchplug.tensor([0, 2]), torch.tensor([0, 2])
    mine, theirs = [x, s, i, j], [xt, st, it, jt]
    for k, d in enumerate(in_dims[:3]):
        if d is None:
            mine[k], theirs[k] = mine[k][0], theirs[k][0]
    expected = torch.vmap(lambda *a: f(torch, *a), in_dims=in_dims)(*theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = torchplug.vmap(lambda *a: f(torchplug, *a), in_dims=in_dims)(*mine)
    close(got, expected)


_PROMOTION_FNS = {
    "add": lambda m, b: (lambda x: x + b), "mul": lambda m, b: (lambda x: b * x),
    "where": lambda m, b: (lambda x: m.where(x > 0, x, b)), "maximum": lambda m, b: (lambda x: m.maximum(x, b)),
    "masked_fill": lambda m, b: (lambda x: x.masked_fill(x > 0, 2) + b),
}


@pytest.mark.parametrize("name", sorted(_PROMOTION_FNS))
@pytest.mark.parametrize("da,db", [("float32", "float64"), ("float64", "float32"), ("int32", "int64"),
                                   ("int64", "int32"), ("int64", "float32")])
@pytest.mark.parametrize("shape_b", [[], [3]])
def test_type_promotion_of_batched_zero_dim_tensors(name, da, db, shape_b):
    """A sample that is a 0-dim tensor promotes as torch.vmap's rules do (logically for binary ops)."""
    f = _PROMOTION_FNS[name]
    b_m, b_t = torchplug.ones(shape_b, dtype=getattr(torchplug, db)), torch.ones(shape_b, dtype=getattr(torch, db))
    got = torchplug.vmap(f(torchplug, b_m))(torchplug.ones([4], dtype=getattr(torchplug, da)))
    expected = torch.vmap(f(torch, b_t))(torch.ones([4], dtype=getattr(torch, da)))
    close(got, expected)
