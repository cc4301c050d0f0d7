"""torchplug.linalg's matrix_exp, householder_product, solve_triangular, solve_ex, the LU family, tensorinv,
tensorsolve, vander and cond against the installed torch (values, named results, gradients, refusals)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((2, 4, 4))
B = RNG.standard_normal((2, 4, 3))
T4 = RNG.standard_normal((4, 6, 8, 3))


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return x.detach().numpy()


def _close(ours, theirs):
    for o, t in zip(_np(ours) if isinstance(ours, (tuple, list)) else [_np(ours)],
                    _np(theirs) if isinstance(theirs, (tuple, list)) else [_np(theirs)]):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-9)


CASES = {
    "matrix_exp": lambda m: m.linalg.matrix_exp(m.tensor(A[0] / 4)),
    "householder_product": lambda m: m.linalg.householder_product(*m.geqrf(m.tensor(A[0]))),
    "solve_triangular upper": lambda m: m.linalg.solve_triangular(m.tensor(A), m.tensor(B), upper=True),
    "solve_triangular right unit": lambda m: m.linalg.solve_triangular(
        m.tensor(A), m.tensor(B).mT, upper=False, left=False, unitriangular=True),
    "solve_ex": lambda m: m.linalg.solve_ex(m.tensor(A), m.tensor(B)),
    "lu_factor": lambda m: m.linalg.lu_factor(m.tensor(A)),
    "lu_factor_ex": lambda m: m.linalg.lu_factor_ex(m.tensor(A)),
    "lu": lambda m: m.linalg.lu(m.tensor(A)),
    "lu_solve": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(A)), m.tensor(B)),
    "lu_solve adjoint": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(A)), m.tensor(B), adjoint=True),
    "lu_solve right": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(A)), m.tensor(B).mT, left=False),
    "tensorinv": lambda m: m.linalg.tensorinv(m.tensor(T4), ind=2),
    "tensorsolve": lambda m: m.linalg.tensorsolve(m.tensor(RNG_T[0]), m.tensor(RNG_T[1])),
    "tensorsolve dims": lambda m: m.linalg.tensorsolve(m.tensor(RNG_T[2]), m.tensor(RNG_T[1]), dims=(0,)),
    "vander": lambda m: m.linalg.vander(m.tensor([1.0, 2.0, 3.0])),
    "vander N": lambda m: m.linalg.vander(m.tensor([1.0, -2.0, 0.5]), N=5),
    **{f"cond p={p}": (lambda p: lambda m: m.linalg.cond(m.tensor(A), p))(p)
       for p in (None, 2, -2, 1, -1, float("inf"), "fro", "nuc")},
}
RNG_T = (RNG.standard_normal((2, 3, 6)), RNG.standard_normal((2, 3)), RNG.standard_normal((6, 2, 3)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name):
    ours, theirs = CASES[name](tp), CASES[name](torch)
    if isinstance(theirs, tuple):
        assert type(ours).__name__ == type(theirs).__name__ and ours.__match_args__ == theirs.__match_args__
        for o, t in zip(ours, theirs):
            assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    _close(ours, theirs)


def test_integer_vander_matches_torch():
    ours, theirs = tp.linalg.vander(tp.tensor([1, 2, 3])), torch.linalg.vander(torch.tensor([1, 2, 3]))
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) .split(".")[-1] == str(theirs.dtype).split(".")[-1]


GRADS = {
    "vander": (lambda m, x: m.linalg.vander(x), np.array([1.0, 2.0, 0.5])),
    "solve_triangular": (lambda m, x: m.linalg.solve_triangular(x, m.tensor(B), upper=True), A),
    "cond": (lambda m, x: m.linalg.cond(x), A),
    "lu_solve": (lambda m, x: m.linalg.lu_solve(*m.linalg.lu_factor(x), m.tensor(B)), A),
    "tensorinv": (lambda m, x: m.linalg.tensorinv(x, ind=2), T4),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name):
    fn, value = GRADS[name]
    grads = []
    for m in (tp, torch):
        x = m.tensor(value, requires_grad=True)
        fn(m, x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-9)


def test_refusals_match_torch():
    def run(m):
        out = []
        for call in (lambda: m.linalg.lu_factor(m.zeros(2, 2)), lambda: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=1),
                     lambda: m.linalg.lu_factor_ex(m.zeros(2, 2), check_errors=True)):
            try:
                call()
                out.append(None)
            except RuntimeError as exc:
                out.append(str(exc))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours, theirs = run(tp), run(torch)
    assert ours == theirs


def test_cholesky_ex_info_errors_and_gradient_match_torch():
    def run(m):
        a = m.tensor([[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        batch = m.stack([m.eye(3) * 2, a, -m.eye(3), m.tensor([[1.0, 2.0, 3.0], [2.0, 5.0, 1.0], [3.0, 1.0, 1.0]])])
        result = m.linalg.cholesky_ex(batch)
        good = m.linalg.cholesky_ex(m.eye(2) * 4, upper=True)
        c = m.linalg.cholesky_ex(m.tensor([[4.0, 1 + 1j], [1 - 1j, 3.0]], dtype=m.complex128))
        errors = []
        for call in (lambda: m.linalg.cholesky_ex(a, check_errors=True), lambda: m.linalg.cholesky_ex(batch, check_errors=True)):
            try:
                call()
            except RuntimeError as exc:
                errors.append(str(exc))
        x = (m.eye(3) * 3 + 0.5).requires_grad_()
        m.linalg.cholesky_ex(x).L.sum().backward()
        return (type(result).__name__, result.info.tolist(), str(result.info.dtype).split(".")[-1],
                result.L[0].abs().tolist(), good.L.tolist(), good.info.tolist(), c.info.tolist(),
                c.L.abs().numpy().round(12).tolist(), errors), x.grad.numpy()

    (ours, ours_grad), (theirs, theirs_grad) = run(tp), run(torch)
    assert ours == theirs
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-6)
