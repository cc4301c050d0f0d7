"""torch.linalg.eig / eigvals on cpu against PyTorch: dtypes, shapes and strides; values by reconstruction
(A V = V diag(L), unit-norm eigenvectors) and sorted eigenvalues, since LAPACK builds may order them differently;
errors; out=; gradients (torch's, for losses independent of order and phase, and gradcheck); meta shapes."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

TOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}
COMPLEX = {"float32": "complex64", "float64": "complex128", "complex64": "complex64", "complex128": "complex128"}


def rand(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        arr = arr + 1j * rng.standard_normal(shape)
    return arr.astype(dtype)


def _sorted(values):
    values = np.asarray(values)
    return np.sort_complex(np.round(values, 6)) if values.ndim == 1 else np.stack([_sorted(v) for v in values])


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_matches_torch(dtype, shape):
    a = rand(shape, dtype)
    L, V = tp.linalg.eig(tp.from_numpy(a))
    tL, tV = torch.linalg.eig(torch.from_numpy(a))
    for ours, theirs in ((L, tL), (V, tV)):
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == COMPLEX[dtype]
    if not a.size:
        return
    assert V.stride() == tV.stride()  # column-major eigenvectors, as LAPACK (and torch's cpu kernel) returns them
    l, v = L.numpy(), V.numpy()
    tol = TOL[dtype]
    np.testing.assert_allclose(a.astype(v.dtype) @ v, v * l[..., None, :], atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)
    np.testing.assert_allclose(_sorted(l), _sorted(tL.numpy()), atol=tol * 10)
    np.testing.assert_allclose(_sorted(tp.linalg.eigvals(tp.from_numpy(a)).numpy()), _sorted(l), atol=tol * 10)


def test_named_result_and_eigvals_dtype():
    result = tp.linalg.eig(tp.eye(3))
    assert type(result).__name__ == "linalg_eig" and result.eigenvalues is result[0]
    assert tp.linalg.eigvals(tp.eye(2, dtype=tp.float64)).dtype == tp.complex128


def test_eigvals_does_not_refuse_non_finite_matrices():
    a = np.stack([np.array([[1.0, np.inf], [0.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])])
    values = tp.linalg.eigvals(tp.from_numpy(a)).numpy()
    torch.linalg.eigvals(torch.from_numpy(a))  # no error in torch either
    assert np.isnan(values[0]).all()
    np.testing.assert_allclose(_sorted(values[1]), _sorted(np.linalg.eigvals(a[1])), atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.eig(m.ones(3, 4)),
    lambda m: m.linalg.eig(m.ones(3)),
    lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.int64)),
    lambda m: m.linalg.eig(m.ones(3, 4, dtype=m.int64)),
    lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.bool)),
    lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.bfloat16)),
    lambda m: m.linalg.eig(m.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    lambda m: m.linalg.eig(m.tensor([[1.0, float("inf")], [0.0, 1.0]])),
    lambda m: m.linalg.eigvals(m.ones(3, 4)),
    lambda m: m.linalg.eigvals(m.ones(2)),
    lambda m: m.linalg.eigvals(m.ones(2, 2, dtype=m.int32)),
    lambda m: m.linalg.eig(m.ones(3, 3), out=(m.empty(0), m.empty(0))),
    lambda m: m.linalg.eig(m.ones(3, 3), out=(m.empty(0, dtype=m.complex64), m.empty(0))),
    lambda m: m.linalg.eigvals(m.ones(3, 3), out=m.empty(0)),
], ids=["not_square", "1d", "int", "int_not_square", "bool", "bfloat16", "nan", "inf", "eigvals_not_square",
        "eigvals_1d", "eigvals_int", "out_values", "out_vectors", "eigvals_out"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value) == str(theirs.value)


def test_out_writes_and_casts_like_torch():
    a = rand((3, 3), "float64", seed=4)
    values, vectors = tp.empty(0, dtype=tp.complex64), tp.empty(0, dtype=tp.complex64)
    result = tp.linalg.eig(tp.from_numpy(a), out=(values, vectors))
    assert result[0] is values and result[1] is vectors and tuple(vectors.shape) == (3, 3)
    np.testing.assert_allclose(_sorted(values.numpy()), _sorted(np.linalg.eigvals(a)), atol=1e-5)
    out = tp.empty(0, dtype=tp.complex128)
    assert tp.linalg.eigvals(tp.from_numpy(a), out=out) is out and tuple(out.shape) == (3,)


def _loss(m, L, V):
    # independent of the eigenpairs' order and of each eigenvector's phase, as a well-defined loss must be
    return (L.abs() ** 2).sum() + ((V.abs() ** 4) * L.real.unsqueeze(-2)).sum()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_gradients_match_torch(dtype):
    a = rand((2, 3, 3), dtype, seed=1)
    grads = []
    for m in (tp, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        _loss(m, *m.linalg.eig(x)).backward()
        y = m.from_numpy(a.copy()).requires_grad_()
        (m.linalg.eigvals(y).abs() ** 3).sum().backward()
        grads.append((x.grad.resolve_conj().numpy(), y.grad.resolve_conj().numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-8, atol=1e-10)


def test_gradcheck_float64():
    a = tp.from_numpy(rand((3, 3), "float64", seed=2)).requires_grad_()
    assert tp.autograd.gradcheck(lambda x: tp.view_as_real(tp.linalg.eigvals(x)), (a,))
    assert tp.autograd.gradcheck(lambda x: _loss(tp, *tp.linalg.eig(x)), (a,))


def test_phase_dependent_loss_is_refused_like_torch():
    a = rand((3, 3), "complex128", seed=3)
    messages = []
    for m in (tp, torch):
        x = m.from_numpy(a).requires_grad_()
        with pytest.raises(RuntimeError) as info:
            m.linalg.eig(x)[1].real.sum().backward()
        messages.append(str(info.value))
    assert messages[0].startswith("linalg_eig_backward: The eigenvectors in the complex case")
    assert messages[1].startswith(messages[0])


def test_meta_shapes_match_torch():
    for name in ("eig", "eigvals"):
        ours = getattr(tp.linalg, name)(tp.empty(2, 4, 4, device="meta"))
        theirs = getattr(torch.linalg, name)(torch.empty(2, 4, 4, device="meta"))
        for o, t in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
            assert tuple(o.shape) == tuple(t.shape) and o.stride() == t.stride() and o.device.type == "meta"
            assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
