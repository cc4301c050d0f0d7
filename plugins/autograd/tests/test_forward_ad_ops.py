"""jvp of every differentiable op of the op table, compared with torch's forward AD (float64).

The cases are the backward tests' own (``test_autograd_op_gradients``, ``test_formulas_ext``): each
floating input gets a random tangent, and every output's primal and tangent must equal torch's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug
import torchplug.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
with warnings.catch_warnings():  # torch's first make_dual scripts its jvp decompositions (a jit DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch._decomp.decompositions_for_jvp  # noqa: E402,F401
    import torch.autograd.forward_ad as torch_fwAD  # noqa: E402

import test_autograd_op_gradients as OPS  # noqa: E402
import test_formulas_ext as EXT  # noqa: E402


def _cases():
    cases = {}
    for name, extra in OPS.UNARY.items():
        x = OPS._nonint(np.random.default_rng(len(name)).uniform(extra.get("lo", -2.0), extra.get("hi", 2.0), (3, 4)))
        cases[f"unary_{name}"] = ((lambda n: lambda T, a: getattr(T, n)(a))(name), [x], None)
    for name, (fn, arrays, requires) in OPS.CASES.items():
        cases[f"base_{name}"] = (fn, arrays, requires)
    for name, (fn, arrays) in EXT.CASES.items():
        cases[f"ext_{name}"] = (fn, arrays, None)
    for name, (fn, arrays, requires) in EXT.PARTIAL.items():
        cases[f"partial_{name}"] = (fn, arrays, requires)
    for name, (fn, arrays) in EXT.NN_CASES.items():
        cases[f"nn_{name}"] = (fn, arrays, None)
    return cases


CASES = _cases()
CASES.update({
    # ops of the base table the backward cases reach only through composites
    "split_with_sizes": (lambda T, a: a.split([1, 3], 1), [np.linspace(-1, 1, 8).reshape(2, 4)], None),
    "reshape_copy": (lambda T, a: T.ops.aten.reshape(a.t(), [6]), [np.linspace(-1, 1, 6).reshape(2, 3)], None),
    "alias": (lambda T, a: T.ops.aten.alias(a) * 2, [np.linspace(-1, 1, 6)], None),
    "poisson": (lambda T, a: T.poisson(a) * 0, [np.linspace(0.5, 2, 6)], None),
})
_Z = np.array([0.5 + 1.0j, -1.2 + 0.3j, 0.7 - 0.8j])
_Z2 = np.array([1.1 - 0.4j, 0.2 + 0.9j, -0.6 - 0.5j])
CASES.update({
    # complex tangents (holomorphic and not), math-bit views, and ops only the full table has
    "complex_mul_exp": (lambda T, a, b: (a * b).exp() / (b + 2), [_Z, _Z2], None),
    "complex_abs_angle": (lambda T, a: (a.abs(), a.angle()), [_Z], None),
    "complex_conj_views": (lambda T, a, b: (a.conj() * b, a.conj().imag, T.view_as_real(a * b)), [_Z, _Z2], None),
    "complex_neg_view": (lambda T, a: (a.conj().imag * 2), [_Z], None),
    "complex_real_to_complex": (lambda T, x, y: T.complex(x, y) * T.polar(x.abs() + 0.5, y), [np.linspace(-1, 1, 3),
                                                                                              np.linspace(0.2, 2, 3)],
                                None),
    "view_as_complex": (lambda T, a: T.view_as_complex(a) ** 2, [np.linspace(-1, 1, 6).reshape(3, 2)], None),
    # complex pointwise ops, holomorphic or not (sgn): the complex route differentiates their formula again
    "complex_pointwise": (lambda T, a: (a.sgn(), a.sqrt(), a.log(), a.reciprocal(), a.sigmoid(), a.tanh(),
                                        a.abs() * a.angle()), [_Z], None),
    "conj_physical": (lambda T, a: T.conj_physical(a) * a, [_Z], None),
    "complex_sum_matmul": (lambda T, a, b: (a.unsqueeze(1) @ b.unsqueeze(0)).sum(0), [_Z, _Z2], None),
    "igamma": (lambda T, a, x: T.igamma(a, x) + T.igammac(a, x) * 2, [np.array([0.5, 1.5, 3.0]),
                                                                   np.array([0.4, 2.0, 1.1])], [False, True]),
    "i0_i1": (lambda T, a: T.i0(a) + T.ops.aten.special_i1(a), [np.linspace(-1, 2, 5)], None),
    # torch.fft's primitives (real-to-complex, complex-to-real, complex-to-complex)
    "fft_rfft_irfft": (lambda T, a: (T.fft.rfft(a).abs(), T.fft.irfft(T.fft.rfft(a) * 2, n=8)), [np.linspace(-1, 1, 8)], None),
    "fft_fft_c2c": (lambda T, a: T.view_as_real(T.fft.ifft(T.fft.fft(a) * 1j, norm="ortho")), [np.linspace(-1, 1, 6)], None),
    "special_unary": (lambda T, a: (T.special.entr(a), T.special.erfcx(a), T.special.i0e(a), T.special.i1e(a),
                                    T.special.log_ndtr(a), T.special.ndtri(a / 2)), [np.linspace(0.1, 0.9, 5)], None),
    "special_xlog1py": (lambda T, a, b: T.special.xlog1py(a, b), [np.linspace(0.1, 0.9, 5), np.linspace(0.2, 1.2, 5)],
                        None),
    "special_zeta": (lambda T, a, b: T.special.zeta(a + 1.5, b), [np.linspace(0.1, 0.9, 5), np.linspace(0.2, 1.2, 5)],
                     [False, True]),  # zeta has no derivative in x
    "polygamma": (lambda T, a: T.polygamma(2, a), [np.linspace(0.5, 3, 5)], None),
    "frexp": (lambda T, a: T.frexp(a)[0], [np.linspace(-3, 3, 5) + 0.1], None),
    "nextafter": (lambda T, a, b: T.nextafter(a, b), [np.linspace(-1, 1, 4), np.linspace(2, 3, 4)], None),
    "huber": (lambda T, a, b: T.nn.functional.huber_loss(a, b, delta=0.5), [np.linspace(-1, 1, 6),
                                                                            np.linspace(1, -0.5, 6)], None),
    "replication_pad1d": (lambda T, a: T.nn.functional.pad(a, (2, 1), mode="replicate"),
                          [np.linspace(-1, 1, 8).reshape(1, 2, 4)], None),
    "pixel_unshuffle": (lambda T, a: T.nn.functional.pixel_unshuffle(a, 2), [np.linspace(-1, 1, 32).reshape(1, 2, 4, 4)],
                        None),
    "upsample_nearest_exact": (lambda T, a: T.nn.functional.interpolate(a, scale_factor=2, mode="nearest-exact"),
                               [np.linspace(-1, 1, 8).reshape(1, 2, 4)], None),
    "dropout_eval_and_p0": (lambda T, a: T.nn.functional.dropout(a, 0.0, training=True) + T.nn.functional.dropout(a, 0.5, training=False),
                            [np.linspace(-1, 1, 6)], None),
    "diagonal_copy": (lambda T, a: T.diagonal_copy(a, 1), [np.linspace(-1, 1, 12).reshape(3, 4)], None),
    # composites recorded as one node with their own formula (the jvp differentiates it)
    "fmax_fmin_ldexp_dist": (lambda T, a, b: (T.fmax(a, b), T.fmin(a, b), T.ldexp(a, b), T.dist(a, b), T.dist(a, b, 3)),
                             [np.linspace(-1, 1, 6), np.linspace(0.9, -1.1, 6)], None),
    "renorm": (lambda T, a: (T.renorm(a, 2, 0, 1.0), T.renorm(a, 1, 1, 0.5)), [np.linspace(-1, 1.5, 6).reshape(2, 3)],
               None),
    "max_unpool": (lambda T, a: tuple(getattr(T.nn.functional, f"max_unpool{n}d")(
        a.reshape(shape), getattr(T.nn.functional, f"max_pool{n}d")(
            T.arange(8.0 * 2 ** n).reshape(shape[:2] + tuple(2 * s for s in shape[2:])) % 7, 2,
            return_indices=True)[1], 2) for n, shape in ((1, (1, 2, 4)), (2, (1, 2, 2, 2)), (3, (1, 1, 2, 2, 2)))),
                   [np.linspace(-1, 1, 8)], None),
    "logcumsumexp": (lambda T, a: (T.logcumsumexp(a, 1), T.logcumsumexp(a, 0)), [np.linspace(-1, 1.5, 6).reshape(2, 3)],
                     None),
    "put": (lambda T, a, s: (T.put(a, T.tensor([1, 4, -1]), s), T.put(a, T.tensor([0, 0, 2]), s, True)),
            [np.linspace(-1, 1.5, 6).reshape(2, 3), np.linspace(0.3, 0.9, 3)], None),
    # the composites that call ATen's Scalar overloads (add.Scalar, mul.Scalar, div.Scalar, norm.ScalarOpt_dim)
    "scalar_overloads": (lambda T, a, b: (T.nn.functional.pairwise_distance(a, b), T.nn.functional.rms_norm(a, [4]),
                                          T.nn.functional.cross_entropy(a, b.softmax(1), label_smoothing=0.2),
                                          T.special.ndtr(a)),
                         [np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(1.5, -0.5, 12).reshape(3, 4)], None),
    # general eigenproblem: losses independent of the eigenpairs' order and the eigenvectors' phases (LAPACK
    # builds may order them differently)
    "linalg_eig_eigvals": (lambda T, a: ((T.linalg.eigvals(a).abs() ** 2).sum(),
                                         (T.linalg.eig(a)[1].abs() ** 4 * T.linalg.eig(a)[0].real.unsqueeze(-2)).sum()),
                           [np.array([[1.0, 2.0, 0.5], [-0.3, 0.4, 1.1], [0.8, -1.2, 0.6]])], None),
})


def _seeded_dropout(T, a):
    T.manual_seed(7)  # torchplug's cpu stream is torch's: the same mask
    return T.nn.functional.dropout(a, 0.4, training=True)


_L = np.linspace(-1.0, 1.0, 24)
CASES.update({
    # ops reached by forward-over-reverse through these: the backward ops of upsampling, padding,
    # embedding and dropout
    "nn_interp_nearest1d": (lambda T, a: T.nn.functional.interpolate(a, scale_factor=2) ** 2, [_L.reshape(1, 3, 8)], None),
    "nn_interp_nearest2d": (lambda T, a: T.nn.functional.interpolate(a, size=(5, 3)) ** 2, [_L.reshape(1, 2, 3, 4)], None),
    "nn_interp_nearest3d": (lambda T, a: T.nn.functional.interpolate(a, scale_factor=2) ** 2, [_L.reshape(1, 1, 2, 3, 4)],
                            None),
    "nn_interp_nearest_exact1d": (lambda T, a: T.nn.functional.interpolate(a, size=5, mode="nearest-exact") ** 2,
                                  [_L.reshape(1, 3, 8)], None),
    "nn_interp_nearest_exact2d": (lambda T, a: T.nn.functional.interpolate(a, size=(5, 3), mode="nearest-exact") ** 2,
                                  [_L.reshape(1, 2, 3, 4)], None),
    "nn_interp_nearest_exact3d": (lambda T, a: T.nn.functional.interpolate(a, size=(3, 4, 5), mode="nearest-exact") ** 2,
                                  [_L.reshape(1, 1, 2, 3, 4)], None),
    "nn_interp_linear": (lambda T, a: T.nn.functional.interpolate(a, size=11, mode="linear") ** 2, [_L.reshape(1, 3, 8)],
                         None),
    "nn_interp_bilinear": (lambda T, a: T.nn.functional.interpolate(a, size=(5, 7), mode="bilinear",
                                                                     align_corners=True) ** 2, [_L.reshape(1, 2, 3, 4)], None),
    "nn_interp_trilinear": (lambda T, a: T.nn.functional.interpolate(a, scale_factor=2, mode="trilinear") ** 2,
                            [_L.reshape(1, 1, 2, 3, 4)], None),
    "nn_replication_pad1d": (lambda T, a: T.nn.functional.pad(a, (2, 3), mode="replicate") ** 2, [_L.reshape(1, 3, 8)],
                             None),
    "nn_embedding_dense": (lambda T, w: T.nn.functional.embedding(T.tensor([[0, 2], [2, 3]]), w) ** 2,
                           [_L.reshape(6, 4)], None),
    "nn_dropout_train": (_seeded_dropout, [_L.reshape(4, 6)], None),
    "nn_native_dropout": (lambda T, a: (T.manual_seed(7), T.ops.aten.native_dropout(a, 0.4, True)[0] ** 2)[1],
                          [_L.reshape(4, 6)], None),
})


def _tangent(a, rng):
    t = rng.standard_normal(a.shape)
    if np.iscomplexobj(a):
        t = t + 1j * rng.standard_normal(a.shape)
    return t


def run_jvp(T, fw, fn, arrays, requires, seed=0):
    """Outputs of ``fn`` as (primal, tangent) numpy pairs, each floating input made dual."""
    rng = np.random.default_rng(seed)
    requires = requires if requires is not None else [True] * len(arrays)
    with fw.dual_level():
        args = []
        for a, r in zip(arrays, requires):
            if not isinstance(a, np.ndarray):
                args.append(a)
                continue
            t = T.tensor(a)
            tan = _tangent(a, rng)
            if r and (t.is_floating_point() or t.is_complex()):
                t = fw.make_dual(t, T.tensor(tan, dtype=t.dtype))
            args.append(t)
        out = fn(T, *args)
        outs = out if isinstance(out, (tuple, list)) else [out]
        res = []
        for o in outs:
            if not isinstance(o, T.Tensor):
                continue
            p, tan = fw.unpack_dual(o)
            p = p.resolve_conj().resolve_neg()
            tan = None if tan is None else tan.resolve_conj().resolve_neg()
            if tan is not None and getattr(tan, "_is_zerotensor", lambda: False)():
                tan = T.zeros_like(p)  # torch's ZeroTensor tangents: all zeros
            res.append((p.detach().numpy().copy(), None if tan is None else tan.detach().numpy().copy()))
    return res


def compare_jvp(fn, arrays, requires=None, atol=1e-8, rtol=1e-6):
    mine = run_jvp(torchplug, fwAD, fn, arrays, requires)
    ref = run_jvp(torch, torch_fwAD, fn, arrays, requires)
    assert len(mine) == len(ref)
    for k, ((pm, tm), (pr, tr)) in enumerate(zip(mine, ref)):
        np.testing.assert_allclose(pm, pr, atol=atol, rtol=rtol, equal_nan=True, err_msg=f"primal {k}")
        if tr is None or tm is None:
            # torch leaves the tangent of an output that does not depend on a dual input undefined
            other = tm if tr is None else tr
            assert other is None or not np.any(other), f"output {k}: tangent {tm} vs torch's {tr}"
            continue
        np.testing.assert_allclose(tm, tr, atol=atol, rtol=rtol, equal_nan=True, err_msg=f"tangent {k}")


# Random samples are piecewise constant in their parameters: zero tangents (torch: zeros for bernoulli(p)
# and poisson; it has no forward formula for bernoulli(float p) and raises, torchplug gives zeros there too).
RANDOM_ZERO = {
    "bernoulli": lambda T, p: T.bernoulli(p),
    "bernoulli_p": lambda T, a: a.bernoulli(0.3),
}


@pytest.mark.parametrize("name", sorted(RANDOM_ZERO))
def test_random_ops_have_zero_tangents(name):
    x = np.linspace(0.1, 0.9, 6)
    if name == "bernoulli_p":
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with aten::bernoulli"):
            run_jvp(torch, torch_fwAD, RANDOM_ZERO[name], [x], None)
    else:
        ((_, ref),) = run_jvp(torch, torch_fwAD, RANDOM_ZERO[name], [x], None)
        assert ref is not None and not np.any(ref)
    ((primal, tangent),) = run_jvp(torchplug, fwAD, RANDOM_ZERO[name], [x], None)
    assert set(np.unique(primal)) <= {0.0, 1.0}
    assert tangent is not None and not np.any(tangent)


# Cases where torch's tangent is not the derivative: checked against central finite differences instead.
TORCH_DIFFERS = {
    "ext_scatter_prod": "torch leaves the tangent of scatter_reduce(reduce='prod') undefined (no forward formula)",
    "ext_scatter_prod_zero": "torch leaves the tangent of scatter_reduce(reduce='prod') undefined (no forward formula)",
    "igamma": "torch: 'Trying to use forward AD with igamma that does not support it' (no forward formula)",
    "special_zeta": "torch: 'Trying to use forward AD with special_zeta that does not support it' (no forward formula)",
    "ext_det_singular": "torch's det jvp (det * tr(A^-1 dA) through an LU solve) is 0 at an exactly singular matrix",
}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(TORCH_DIFFERS)))
def test_jvp_against_torch(name):
    fn, arrays, requires = CASES[name]
    compare_jvp(fn, arrays, requires)


@pytest.mark.parametrize("name", sorted(TORCH_DIFFERS))
def test_jvp_against_finite_differences(name):
    fn, arrays, requires = CASES[name]
    mine = run_jvp(torchplug, fwAD, fn, arrays, requires)
    rng = np.random.default_rng(0)
    tangents = [_tangent(a, rng) for a in arrays]
    eps = 1e-6

    def at(sign):
        xs = [torchplug.tensor(a + sign * eps * t * (r is not False)) for a, t, r in
              zip(arrays, tangents, requires or [True] * len(arrays))]
        out = fn(torchplug, *xs)
        return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]

    fd = [(p - m) / (2 * eps) for p, m in zip(at(1), at(-1))]
    for (_, tan), ref in zip(mine, fd):
        np.testing.assert_allclose(tan, ref, rtol=1e-5, atol=1e-6)


def run_forward_over_reverse(T, fw, fn, arrays, seed=1):
    """Tangent of the gradient of ``<fn(x), w>`` (a Hessian-vector product): exercises the backward ops' jvps."""
    rng = np.random.default_rng(seed)
    with fw.dual_level():
        xs, duals = [], []
        for a in arrays:
            if not isinstance(a, np.ndarray) or not np.issubdtype(a.dtype, np.floating):
                duals.append(T.tensor(a) if isinstance(a, np.ndarray) else a)
                continue
            x = T.tensor(a).requires_grad_(True)
            xs.append(x)
            duals.append(fw.make_dual(x, T.tensor(rng.standard_normal(a.shape))))
        out = fn(T, *duals)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                if isinstance(o, T.Tensor) and o.requires_grad]
        if not outs:
            return []
        loss = sum((o * T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum() for o in outs)
        grads = T.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
        res = []
        for g in grads:
            if g is None:
                res.append(None)
                continue
            tan = fw.unpack_dual(g).tangent
            if tan is not None and getattr(tan, "_is_zerotensor", lambda: False)():
                tan = T.zeros_like(g)
            res.append(None if tan is None else tan.detach().numpy().copy())
    return res


def run_gradient_differences(fn, arrays, seed=1, eps=1e-6):
    """Central differences of torch's gradient of ``<fn(x), w>`` along the tangents (a Hessian-vector product
    for ops torch's forward AD and double backward both lack)."""
    rng = np.random.default_rng(seed)
    floating = [isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) for a in arrays]
    vs = [rng.standard_normal(a.shape) if f else None for a, f in zip(arrays, floating)]
    weights_seed = rng.bit_generator.state

    def grads(sign):
        rng.bit_generator.state = weights_seed
        xs, args = [], []
        for a, f, v in zip(arrays, floating, vs):
            if not f:
                args.append(torch.tensor(a) if isinstance(a, np.ndarray) else a)
                continue
            x = torch.tensor(a + sign * eps * v).requires_grad_(True)
            xs.append(x)
            args.append(x)
        out = fn(torch, *args)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if o.requires_grad]
        loss = sum((o * torch.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum() for o in outs)
        return torch.autograd.grad(loss, xs, allow_unused=True)

    return [None if p is None else ((p - m) / (2 * eps)).numpy() for p, m in zip(grads(1), grads(-1))]


# nn cases whose backward ops torch's forward AD cannot differentiate: compared with differences of gradients
FOR_NO_TORCH = {"nn_hardsigmoid": "torch: no forward formula (nor double backward) for hardsigmoid_backward"}


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("nn_")))
def test_forward_over_reverse_against_torch(name):
    fn, arrays, _ = CASES[name]
    mine = run_forward_over_reverse(torchplug, fwAD, fn, arrays)
    if name in FOR_NO_TORCH:
        ref = run_gradient_differences(fn, arrays)
    else:
        ref = run_forward_over_reverse(torch, torch_fwAD, fn, arrays)
    assert len(mine) == len(ref)
    for k, (a, b) in enumerate(zip(mine, ref)):
        if a is None or b is None:
            other = a if b is None else b
            assert other is None or not np.any(other), f"input {k}: {a} vs torch's {b}"
            continue
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, err_msg=f"input {k}")


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_every_op_of_the_tables_has_a_checked_jvp():
    """Every differentiable op of the whole op table (the base/P0 table included) gets its jvp from its
    rule, and the cases above run it (jvp or forward-over-reverse); ops without a rule decompose, are
    non-differentiable, or refuse forward AD loudly."""
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._schemas import base, expand_table
    from torchplug_autograd._jvp import strategy_kind
    from torchplug_autograd._kernels import FORWARD_BUILT
    from torchplug_autograd._register import classify
    from torchplug_autograd._rules import RULES

    for name, (fn, arrays, requires) in CASES.items():
        run_jvp(torchplug, fwAD, fn, arrays, requires)
        if name.startswith("nn_"):
            run_forward_over_reverse(torchplug, fwAD, fn, arrays)
    for fn in RANDOM_ZERO.values():
        run_jvp(torchplug, fwAD, fn, [np.linspace(0.1, 0.9, 6)], None)
    # _standard_gamma's jvp is its reparameterised derivative (torch has no forward formula for it): finite
    with fwAD.dual_level():
        assert np.isfinite(fwAD.unpack_dual(torchplug.ops.aten._standard_gamma(
            fwAD.make_dual(torchplug.tensor([1.0, 2.0]), torchplug.ones(2)))).tangent.numpy()).all()
    # the distributions' other samplers and their gradient ops have no forward formula (as in torch): forward AD
    # through them refuses loudly
    a, b = torchplug.tensor([1.0, 2.0]), torchplug.tensor([0.5, 1.5])
    for refuse in (lambda d: torchplug.ops.aten._standard_gamma_grad(d, b),
                   lambda d: torchplug.ops.aten._dirichlet_grad(d, b, b + 1),
                   lambda d: torchplug.ops.aten._sample_dirichlet(d.reshape(1, 2)),
                   lambda d: torchplug.binomial(torchplug.full_like(d, 5.0), d / 4),
                   lambda d: torchplug.cdist(d.reshape(1, 2), b.reshape(1, 2)),  # torch: no formula for _cdist_forward
                   lambda d: torchplug.pdist(torchplug.stack([d, b])),  # nor for _pdist_forward
                   lambda d: torchplug.linalg.ldl_factor(torchplug.diag(d)),  # nor for the LDL factorization
                   lambda d: torchplug.linalg.ldl_solve(*torchplug.linalg.ldl_factor(torchplug.eye(2)), d.reshape(2, 1)),
                   lambda d: torchplug.unique(d), lambda d: torchplug.unique(d, dim=0),  # nor for unique
                   lambda d: torchplug.unique_consecutive(d),
                   lambda d: torchplug.ones(3).index_reduce(0, torchplug.tensor([2, 0]), d, "amax")):  # nor index_reduce
        with fwAD.dual_level(), pytest.raises((NotImplementedError, RuntimeError), match="not (implemented|support)"):
            refuse(fwAD.make_dual(a, torchplug.ones(2)))
    # scatter(reduce=) has no derivative in torch (derivatives.yaml: not_implemented): forward AD refuses
    idx = torchplug.tensor([1, 0])
    for refuse in (lambda d: torchplug.scatter(d, 0, idx, d, reduce="add"),
                   lambda d: torchplug.scatter(d, 0, idx, 2.0, reduce="multiply")):
        with warnings.catch_warnings(), fwAD.dual_level(), pytest.raises(NotImplementedError, match="not support"):
            warnings.simplefilter("ignore", UserWarning)  # Tensor src with reduce= is deprecated
            refuse(fwAD.make_dual(a, torchplug.ones(2)))
    base_ops = {"aten::" + row.split("(")[0] for row in base.ROWS}
    unchecked, kinds, seen_base = [], {}, 0
    for schema, _tags, _wrapped in expand_table():
        name = schema.split("(")[0]
        entry = DISPATCHER.find(name)
        if entry is None:
            continue
        kind, _ = classify(entry)
        if kind != "rule" or entry.kernels.get("CompositeImplicitAutograd"):  # (a CIA op's rule is never reached)
            continue
        kinds[name] = strategy_kind(entry, RULES[name])
        seen_base += name in base_ops
        if name not in FORWARD_BUILT:
            unchecked.append(name)
    assert not unchecked, f"ops whose jvp no case runs: {unchecked}"
    assert seen_base > 60 and len(kinds) > 250
    assert set(kinds.values()) == {"rule", "decomposition", "linear", "elementwise", "double_vjp"}


def _module(T, name):
    T.manual_seed(0)
    nn = T.nn
    table = {
        "lstm": (lambda: nn.LSTM(4, 5, num_layers=2, batch_first=True), (2, 3, 4)),
        "gru_bidirectional": (lambda: nn.GRU(4, 5, bidirectional=True), (3, 2, 4)),
        "rnn_relu": (lambda: nn.RNN(4, 5, nonlinearity="relu"), (3, 2, 4)),
        "multihead_attention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True), (2, 3, 8)),
        "conv_batchnorm": (lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.GELU(),
                                                 nn.AdaptiveAvgPool2d(1)), (2, 2, 5, 5)),
        "mlp_layernorm": (lambda: nn.Sequential(nn.Linear(6, 8), nn.SiLU(), nn.LayerNorm(8), nn.Linear(8, 3),
                                                nn.Softplus()), (4, 6)),
        "convtranspose_upsample_groupnorm": (lambda: nn.Sequential(nn.ConvTranspose2d(2, 3, 3, stride=2),
                                                                   nn.Upsample(scale_factor=2, mode="bilinear"),
                                                                   nn.GroupNorm(1, 3)), (1, 2, 3, 3)),
        "maxpool_logsoftmax": (lambda: nn.Sequential(nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8, 2),
                                                     nn.LogSoftmax(-1)), (2, 2, 4, 4)),
    }
    make, shape = table[name]
    return make().double(), shape


MODULES = ["lstm", "gru_bidirectional", "rnn_relu", "multihead_attention", "conv_batchnorm", "mlp_layernorm",
           "convtranspose_upsample_groupnorm", "maxpool_logsoftmax"]


@pytest.mark.parametrize("name", MODULES)
def test_module_jvp_against_torch(name):
    mine, shape = _module(torchplug, name)
    ref, _ = _module(torch, name)
    ref.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in mine.state_dict().items()})
    x = np.random.default_rng(1).standard_normal(shape)

    def fn(T, a):
        m = mine if T is torchplug else ref
        out = m(a, a, a)[0] if name == "multihead_attention" else m(a)
        return out[0] if isinstance(out, tuple) else out

    compare_jvp(fn, [x], None, atol=1e-10)


def _scalarized(T, fn, xs):
    """``<fn(xs), w>`` with fixed weights (the real part for complex outputs)."""
    out = fn(T, *xs)
    rng = np.random.default_rng(5)
    total = 0
    for o in (out if isinstance(out, (tuple, list)) else [out]):
        if isinstance(o, T.Tensor) and (o.is_floating_point() or o.is_complex()):
            term = (o * T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum()
            total = total + (term.real if o.is_complex() else term)
    return total


# Second derivatives torchplug's own double backward gets wrong too (gradgradcheck fails): not forward AD's
NESTED_SKIP = {"ext_cumprod_zeros": "cumprod's backward formula is not twice differentiable at zeros"}
PIECEWISE_LINEAR = {"nn_hardsigmoid"}  # (torch: "derivative for aten::hardsigmoid_backward is not implemented")
NESTED_CASES = sorted(
    n for n, (fn, arrays, req) in CASES.items()
    if n not in NESTED_SKIP and not any(isinstance(a, np.ndarray) and np.iscomplexobj(a) for a in arrays)
    and any(isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) and r is not False
            for a, r in zip(arrays, req or [True] * len(arrays))))


@pytest.mark.parametrize("name", NESTED_CASES)
def test_nested_levels_against_torch_double_backward(name):
    """u^T H v by a jvp inside a jvp on the level stack (torch.func's nesting) equals torch's double backward."""
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    fn, arrays, requires = CASES[name]
    dual = [isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) and r is not False
            for a, r in zip(arrays, requires or [True] * len(arrays))]
    rng = np.random.default_rng(3)
    us = [rng.standard_normal(a.shape) if d else None for a, d in zip(arrays, dual)]
    vs = [rng.standard_normal(a.shape) if d else None for a, d in zip(arrays, dual)]

    def make(level, xs, tangents):
        out = []
        for x, d, t in zip(xs, dual, tangents):
            if d:
                x = x.view_as(x)
                set_tangent(x, level, torchplug.tensor(t))
            out.append(x)
        return out

    outer = enter_level()
    try:
        xs = make(outer, [torchplug.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays], us)
        inner = enter_level()
        try:
            first = tangent_of(_scalarized(torchplug, fn, make(inner, xs, vs)), inner)
        finally:
            exit_level(inner)
        second = None if first is None else tangent_of(first, outer)
    finally:
        exit_level(outer)
    got = 0.0 if second is None else float(second)
    if name in PIECEWISE_LINEAR:  # torch has no double backward here; the second derivative is 0
        assert got == 0.0
        return

    txs = [torch.tensor(a, requires_grad=bool(d)) if isinstance(a, np.ndarray) else a for a, d in zip(arrays, dual)]
    leaves = [t for t, d in zip(txs, dual) if d]
    grads = torch.autograd.grad(_scalarized(torch, fn, txs), leaves, create_graph=True, allow_unused=True)
    gv = sum((g * torch.tensor(v)).sum() for g, v in zip(grads, [v for v in vs if v is not None]) if g is not None)
    ref = 0.0
    if getattr(gv, "requires_grad", False):
        hs = torch.autograd.grad(gv, leaves, allow_unused=True)
        ref = sum(float((h * torch.tensor(u)).sum()) for h, u in zip(hs, [u for u in us if u is not None])
                  if h is not None)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
