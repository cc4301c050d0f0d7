"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve on cpu against PyTorch (both LAPACK's ?sytrf/?hetrf
packing): factors, pivots, info, layouts, solutions, broadcasting, errors, no derivative, meta shapes."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def _symmetric(shape, dtype, hermitian, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    other = np.swapaxes(a, -1, -2)
    return (a + (other.conj() if hermitian else other)).astype(dtype)


def _same(ours, theirs, tol):
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (0, 3, 3)])
def test_factor_and_solve_match_torch(shape, dtype, hermitian):
    a = _symmetric(shape, dtype, hermitian)
    b = np.random.default_rng(1).standard_normal(shape[:-1] + (2,)).astype(dtype)
    ours = tp.linalg.ldl_factor_ex(tp.from_numpy(a.copy()), hermitian=hermitian)
    theirs = torch.linalg.ldl_factor_ex(torch.from_numpy(a.copy()), hermitian=hermitian)
    assert type(ours).__name__ == "linalg_ldl_factor_ex" and ours.LD is ours[0]
    for o, t in zip(ours, theirs):
        _same(o, t, TOL[dtype]) if o.numel() else None
    x = tp.linalg.ldl_solve(*tp.linalg.ldl_factor(tp.from_numpy(a.copy()), hermitian=hermitian), tp.from_numpy(b),
                            hermitian=hermitian)
    tx = torch.linalg.ldl_solve(*torch.linalg.ldl_factor(torch.from_numpy(a.copy()), hermitian=hermitian),
                                torch.from_numpy(b), hermitian=hermitian)
    if a.size:
        _same(x, tx, TOL[dtype] * 10)
        np.testing.assert_allclose(a @ x.numpy(), b, rtol=TOL[dtype] * 100, atol=TOL[dtype] * 100)


def test_solve_broadcasts_batches_like_torch():
    a = _symmetric((4, 4), "float64", False)
    b = np.random.default_rng(2).standard_normal((3, 4, 2))
    ours = tp.linalg.ldl_solve(*tp.linalg.ldl_factor(tp.from_numpy(a)), tp.from_numpy(b))
    theirs = torch.linalg.ldl_solve(*torch.linalg.ldl_factor(torch.from_numpy(a)), torch.from_numpy(b))
    _same(ours, theirs, 1e-10)


def test_singular_input_reports_info_and_raises():
    zeros = np.zeros((2, 3, 3))
    ours, theirs = tp.linalg.ldl_factor_ex(tp.from_numpy(zeros)), torch.linalg.ldl_factor_ex(torch.from_numpy(zeros))
    assert ours.info.tolist() == theirs.info.tolist() == [1, 1]
    assert ours.pivots.tolist() == theirs.pivots.tolist()
    # torch raises RuntimeError too (an internal assert about LAPACK's code); ours says what failed
    with pytest.raises(RuntimeError, match=r"torch.linalg.ldl_factor: \(Batch element 0\): The factorization could "
                                           r"not be completed because the input is singular: D\[0, 0\]"):
        tp.linalg.ldl_factor(tp.from_numpy(zeros))
    with pytest.raises(tp.linalg.LinAlgError, match="torch.linalg.ldl_factor_ex: "):
        tp.linalg.ldl_factor_ex(tp.zeros(3, 3), check_errors=True)
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor_ex(torch.zeros(3, 3), check_errors=True)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.ldl_factor(m.zeros(3, 4)),
    lambda m: m.linalg.ldl_factor(m.zeros(3)),
    lambda m: m.linalg.ldl_factor(m.zeros(3, 3, dtype=m.int64)),
    lambda m: m.linalg.ldl_factor(m.zeros(3, 3, dtype=m.float16)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(4, 2)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3, 2, dtype=m.float64)),
], ids=["not_square", "1d", "int", "half", "solve_sizes", "solve_vector", "solve_dtypes"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value) == str(theirs.value)


def test_not_differentiable_like_torch():
    a = _symmetric((3, 3), "float64", False)
    for m in (tp, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        LD, pivots = m.linalg.ldl_factor(x)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        b = m.ones(3, 1, dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not implemented"):
            m.linalg.ldl_solve(LD.detach(), pivots, b).sum().backward()


def test_meta_shapes_match_torch():
    ours = tp.linalg.ldl_factor_ex(tp.empty(2, 4, 4, device="meta"))
    theirs = torch.linalg.ldl_factor_ex(torch.empty(2, 4, 4, device="meta"))
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    x = tp.linalg.ldl_solve(ours.LD, ours.pivots, tp.empty(3, 1, 4, 2, device="meta"))
    assert tuple(x.shape) == (3, 2, 4, 2) and x.device.type == "meta"
