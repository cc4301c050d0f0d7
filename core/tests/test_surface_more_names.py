"""Names of PyTorch's surface that tutorials and scripts use, each against the installed torch: the ``*_copy`` functions,
the functional RNN cells, ``sym_*``, ``channel_shuffle``, ``empty_permuted``, ``index_put``, ``resize_as_``,
the build flags, ``Tensor.as_subclass``/``to_dense``/``sparse_dim``/``dense_dim``/``module_load`` and
``utils.swap_tensors``/``set_module``."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

X = np.arange(24.0).reshape(2, 3, 4) / 7


def _outcome(fn):
    try:
        return "ok", fn()
    except RuntimeError as exc:
        return "RuntimeError", str(exc)


COPIES = {
    "alias_copy": lambda m, x: m.alias_copy(x),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 3),
    "expand_copy": lambda m, x: m.expand_copy(x[:1], (3, 3, 4)),
    "permute_copy": lambda m, x: m.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda m, x: m.select_copy(x, 1, 2),
    "slice_copy": lambda m, x: m.slice_copy(x, 2, 1, 4, 2),
    "squeeze_copy": lambda m, x: m.squeeze_copy(x[:1, :, :1]),
    "squeeze_copy dim": lambda m, x: m.squeeze_copy(x[:1], 0),
    "t_copy": lambda m, x: m.t_copy(x[0]),
    "transpose_copy": lambda m, x: m.transpose_copy(x, 0, 2),
    "unfold_copy": lambda m, x: m.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda m, x: m.unsqueeze_copy(x, 1),
    "view_copy": lambda m, x: m.view_copy(x, (4, 6)),
    "view_as_real_copy": lambda m, x: m.view_as_real_copy(m.complex(x, x)),
    "split_copy": lambda m, x: m.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda m, x: m.split_with_sizes_copy(x, [1, 3], 2),
    "unbind_copy": lambda m, x: m.unbind_copy(x, 1),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_variants_match_torch(name):
    def run(m):
        x = m.tensor(X, requires_grad=True)
        r = COPIES[name](m, x)
        outs = r if isinstance(r, tuple) else (r,)
        loss = sum((o.abs() if o.is_complex() else o).pow(2).sum() for o in outs)
        loss.backward()
        facts = [(tuple(o.shape), o.stride(), o.is_contiguous(), o._base is None) for o in outs]
        return type(r).__name__, facts, [o.detach().numpy().copy() for o in outs], x.grad.numpy()

    ours, theirs = run(tp), run(torch)
    assert ours[:2] == theirs[:2]
    for o, t in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(o, t, rtol=1e-12)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


def test_copy_variant_out_matches_torch():
    for m in (tp, torch):
        out = m.empty(0)
        assert m.t_copy(m.ones(2, 3), out=out) is out and tuple(out.shape) == (3, 2)


CELLS = {
    "rnn_tanh_cell": (lambda m, x, h, c, w: m.rnn_tanh_cell(x, h, w[0][:4], w[1][:4], w[2][:4], w[3][:4])),
    "rnn_relu_cell": (lambda m, x, h, c, w: m.rnn_relu_cell(x, h, w[0][:4], w[1][:4])),
    "lstm_cell": (lambda m, x, h, c, w: m.lstm_cell(x, (h, c), w[0], w[1], w[2], w[3])),
    "gru_cell": (lambda m, x, h, c, w: m.gru_cell(x, h, w[0][:12], w[1][:12], w[2][:12], w[3][:12])),
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_rnn_cells_match_torch(name):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((2, 3), (2, 4), (2, 4), (16, 3), (16, 4), (16,), (16,))]

    def run(m):
        x, h, c, *w = [m.tensor(a, requires_grad=True) for a in arrays]
        out = CELLS[name](m, x, h, c, w)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        return [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in (x, h) + tuple(w[:2])]

    for o, t in zip(run(tp), run(torch)):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_sym_functions_match_torch():
    def run(m):
        return (m.sym_float(3), m.sym_int(3.7), m.sym_int(-3.7), m.sym_max(2, 5), m.sym_min(2.0, 5), m.sym_not(True),
                m.sym_sqrt(4), m.sym_sum([1, 2, 3]), m.sym_ite(True, 1, 2), m.sym_ite(False, 1, 2))

    ours, theirs = run(tp), run(torch)
    assert ours == theirs and [type(v) for v in ours] == [type(v) for v in theirs]


def test_channel_shuffle_and_refusals_match_torch():
    def run(m):
        x = m.arange(16.0).reshape(1, 4, 2, 2)
        return ([m.channel_shuffle(x, g).tolist() for g in (1, 2, 4)], m.native_channel_shuffle(x, 2).tolist(),
                [_outcome(lambda g=g, s=s: m.channel_shuffle(m.ones(*s), g)) for g, s in ((0, (1, 4, 2)), (3, (1, 4, 2)),
                                                                                     (2, (4,)))])

    assert run(tp) == run(torch)


def test_empty_permuted_index_put_resize_as_match_torch():
    def run(m):
        e = m.empty_permuted((2, 3, 4), (0, 2, 1))
        x = m.zeros(3)
        put = m.index_put(x, (m.tensor([0, 2]),), m.tensor([1.0, 2.0]))
        acc = m.index_put(x, (m.tensor([0, 0]),), m.tensor([1.0, 2.0]), accumulate=True)
        y = m.zeros(2)
        r = m.resize_as_(y, m.ones(2, 3))
        return (tuple(e.shape), e.stride(), put.tolist(), acc.tolist(), x.tolist(), r is y, tuple(y.shape),
                _outcome(lambda: m.empty_permuted((2, 3), (0, 0))), m.has_lapack, m.has_spectral,
                m.init_num_threads())

    assert run(tp) == run(torch)


def test_tensor_methods_match_torch():
    def run(m):
        class Sub(m.Tensor):
            pass

        p = m.ones(2, requires_grad=True)
        y = p * 2
        z = y.as_subclass(Sub)
        (z * 3).sum().backward()
        x = m.ones(2, 3)
        target = m.zeros(2)
        loaded = target.module_load(m.full((2,), 5.0))
        assigned = target.module_load(m.full((2,), 7.0), assign=True)
        refused = None
        try:
            y.as_subclass(int)
        except TypeError as exc:
            refused = str(exc)
        return (type(z).__name__, z.grad_fn.name(), z.requires_grad, z.data_ptr() == y.data_ptr(), p.grad.tolist(),
                x.to_dense() is x, x.to_dense(dtype=m.float64).dtype == m.float64, x.sparse_dim(), x.dense_dim(),
                loaded.tolist(), target.tolist(), loaded is target, assigned.tolist(), refused)

    assert run(tp) == run(torch)


def test_swap_tensors_and_set_module_match_torch():
    def run(m):
        a = m.ones(2, requires_grad=True)
        b = m.zeros(3)
        a.tag = "a"
        ident = id(a)
        m.utils.swap_tensors(a, b)
        p = m.nn.Parameter(m.ones(2))
        q = m.zeros(2)
        m.utils.swap_tensors(p, q)
        x = m.ones(2, requires_grad=True)
        loss = (x * 2).sum()
        m.utils.swap_tensors(x, m.zeros(2, requires_grad=True))
        poisoned = _outcome(lambda: loss.backward())

        class Thing:
            pass

        m.utils.set_module(Thing, "somewhere")
        bad = None
        try:
            m.utils.set_module(Thing, 3)
        except TypeError as exc:
            bad = str(exc)
        return (id(a) == ident, tuple(a.shape), a.requires_grad, tuple(b.shape), b.requires_grad, b.tag,
                hasattr(a, "tag"), type(p).__name__, type(q).__name__, q.requires_grad, poisoned[0],
                poisoned[1][:60], Thing.__module__, bad)

    assert run(tp) == run(torch)


GRADIENT = {
    "default": lambda m, f, g: m.gradient(f),
    "edge 2": lambda m, f, g: m.gradient(f, edge_order=2),
    "scalar spacing": lambda m, f, g: m.gradient(f, spacing=2.0, edge_order=2),
    "coordinates": lambda m, f, g: m.gradient(f, spacing=(m.tensor([0.0, 1.0, 1.5, 3.5, 4.0]),)),
    "coordinates edge 2": lambda m, f, g: m.gradient(f, spacing=(m.tensor([0.0, 1.0, 1.5, 3.5, 4.0]),), edge_order=2),
    "2-d": lambda m, f, g: m.gradient(g),
    "2-d spacings": lambda m, f, g: m.gradient(g, spacing=[1.0, 2.0]),
    "2-d one dim": lambda m, f, g: m.gradient(g, dim=-1, edge_order=2),
    "integer input": lambda m, f, g: m.gradient(m.tensor([1, 2, 4])),
}


@pytest.mark.parametrize("name", sorted(GRADIENT))
def test_gradient_matches_torch(name):
    def run(m):
        f = m.tensor([1.0, 2.0, 4.0, 8.0, 10.0], requires_grad=True)
        g = (m.arange(12.0).reshape(3, 4) ** 2).requires_grad_()
        out = GRADIENT[name](m, f, g)
        total = sum(t.pow(2).sum() for t in out)
        if total.requires_grad:
            total.backward()
        return [t.detach().numpy() for t in out], [str(t.dtype).split(".")[-1] for t in out], \
            [None if x.grad is None else x.grad.numpy() for x in (f, g)]

    ours, theirs = run(tp), run(torch)
    assert ours[1] == theirs[1]
    for o, t in zip(ours[0] + ours[2], theirs[0] + theirs[2]):
        if o is None or t is None:
            assert o is None and t is None
        else:
            np.testing.assert_allclose(o, t, rtol=1e-6)


def test_gradient_refusals_match_torch():
    def run(m):
        f, g = m.ones(5), m.ones(3, 4)
        return [_outcome(call) for call in (lambda: m.gradient(f, edge_order=3), lambda: m.gradient(m.ones(2), edge_order=2),
                                            lambda: m.gradient(g, spacing=[1.0, 2.0, 3.0]),
                                            lambda: m.gradient(g, spacing=[1.0, 2.0], dim=[0]),
                                            lambda: m.gradient(g, dim=[0, 0]))]

    assert run(tp) == run(torch)


LOWRANK = {
    "svd_lowrank": lambda m, a: m.svd_lowrank(a, q=6),
    "svd_lowrank M": lambda m, a: m.svd_lowrank(a, q=3, niter=1, M=a.mean(0, keepdim=True)),
    "pca_lowrank": lambda m, a: m.pca_lowrank(a.T.contiguous(), q=4),
    "pca_lowrank uncentered": lambda m, a: m.pca_lowrank(a, center=False),
}


@pytest.mark.parametrize("name", sorted(LOWRANK))
def test_seeded_lowrank_factorizations_match_torch(name):
    """Same random start (the cpu stream is PyTorch's): the same singular values and the same approximation
    (singular vectors are compared through it: their signs are LAPACK's choice)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20, 8)) @ rng.standard_normal((8, 12))

    def run(m):
        m.manual_seed(3)
        U, S, V = LOWRANK[name](m, m.tensor(a))
        return S.numpy(), (U * S.unsqueeze(-2)).matmul(V.mH).numpy(), tuple(U.shape), tuple(V.shape)

    ours, theirs = run(tp), run(torch)
    assert ours[2:] == theirs[2:]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-9)


def test_pca_lowrank_refusals_match_torch():
    for m in (tp, torch):
        with pytest.raises(ValueError, match=r"q\(=50\) must be non-negative integer and not greater than"):
            m.pca_lowrank(m.ones(20, 12), q=50)
        with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
            m.pca_lowrank(m.ones(20, 12), niter=-1)


def test_conv_tbc_and_cudnn_is_acceptable_match_torch():
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4))

    def run(m):
        x, w, b = (m.tensor(a, requires_grad=True) for a in arrays)
        out = m.conv_tbc(x, w, b, 1)
        out.pow(2).sum().backward()
        refusals = [_outcome(call) for call in (lambda: m.conv_tbc(x[0], w, b), lambda: m.conv_tbc(x, w[0], b),
                                                lambda: m.conv_tbc(x, w, b[:2]))]
        return [out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)], refusals, m.cudnn_is_acceptable(x)

    ours, theirs = run(tp), run(torch)
    assert ours[1:] == theirs[1:]
    for o, t in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_cond_and_while_loop_run_eagerly_like_torch():
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        taken = m.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, (x,))
        other = m.cond(False, lambda a: a * 2, lambda a: a - 1, (x,))
        taken.sum().backward()
        i, acc = m.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (m.tensor(0), x.detach()))
        return taken.tolist(), other.tolist(), x.grad.tolist(), int(i), acc.tolist()

    assert run(tp) == run(torch)


def test_removed_volatile_flag_warns_like_torch():
    for m in (tp, torch):
        x = m.ones(2)
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert x.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect. Use `with torch.no_grad"):
            x.volatile = True
