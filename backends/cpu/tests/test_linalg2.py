"""Linear algebra on cpu against PyTorch: products (einsum, tensordot, kron...), torchplug.linalg decompositions
(checked by reconstruction where signs/phases are ambiguous), norms, batched inputs and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

FLOATS = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "float64": 1e-9, "complex64": 2e-4, "complex128": 1e-9}


def rand(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed + 7 * len(shape))
    arr = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        arr = arr + 1j * rng.standard_normal(shape)
    return arr.astype(dtype)


def spd(n, batch=(), dtype="float64", seed=0):
    """Hermitian positive-definite matrices."""
    m = rand(batch + (n, n), dtype, seed)
    return (m @ np.swapaxes(m.conj(), -1, -2) + n * np.eye(n)).astype(dtype)


def both(arr):
    return tp.from_numpy(np.array(arr)), torch.from_numpy(np.array(arr))


def close(ours, theirs, tol=1e-5):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=tol, atol=tol)


def np_of(t):
    return t.numpy() if isinstance(t, tp.Tensor) else t.detach().numpy()


# ---- products -------------------------------------------------------------------------------------------
PRODUCTS = {
    "outer": lambda L, a, b: L.outer(a[0, 0], b[0, 0]),
    "ger": lambda L, a, b: L.ger(a[0, 0], b[0, 0, :2]),
    "outer_method": lambda L, a, b: a[0, 0].outer(b[1, 1]),
    "addmv": lambda L, a, b: L.addmv(b[0, 0, :3], a[0], b[1, 1]),
    "addmv_scaled": lambda L, a, b: L.addmv(b[0, 0, 0], a[0], b[1, 1], beta=0.5, alpha=2),
    "addmv_beta0": lambda L, a, b: L.addmv(b[0, 0, :3] * float("nan"), a[0], b[1, 1], beta=0),
    "addr": lambda L, a, b: L.addr(a[0], b[0, 0, :3], a[1, 1], alpha=3, beta=-1),
    "baddbmm": lambda L, a, b: L.baddbmm(a[:, :, :3], a, b.mT[:, :, :3], beta=2),
    "addbmm": lambda L, a, b: L.addbmm(a[0, :, :3], a, b.mT[:, :, :3], alpha=0.5),
    "tensordot_int": lambda L, a, b: L.tensordot(a, b.permute(2, 0, 1), 1),
    "tensordot_lists": lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [1, 2])),
    "tensordot_zero": lambda L, a, b: L.tensordot(a[0], b[0, 0], 0),
    "inner": lambda L, a, b: L.inner(a, b[0]),
    "inner_scalar": lambda L, a, b: L.inner(a, b[0, 0, 0]),
    "kron": lambda L, a, b: L.kron(a[0], b[1, :2, :2]),
    "kron_mixed_rank": lambda L, a, b: L.kron(a, b[0, 0, :2]),
    "cross": lambda L, a, b: L.linalg.cross(a[..., :3], b[..., 1:]),
    "cross_dim": lambda L, a, b: L.cross(a[:, :3], b[:, :3], dim=1),
    "cross_bcast": lambda L, a, b: L.linalg.cross(a[:1, :, :3], b[:, :, :3]),
    "cdist2": lambda L, a, b: L.cdist(a, b),
    "cdist1": lambda L, a, b: L.cdist(a[0], b[1], p=1),
    "cdist0": lambda L, a, b: L.cdist(a.round(), b.round(), p=0),
    "cdistinf": lambda L, a, b: L.cdist(a, b[:1], p=float("inf")),
    "cdist3": lambda L, a, b: L.cdist(a, b, p=3.5),
    "cdist_mm": lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
    "vdot": lambda L, a, b: L.vdot(a[0, 0], b[0, 0]),
    "matrix_power": lambda L, a, b: L.matrix_power(a[:, :3, :3], 3),
    "matrix_power0": lambda L, a, b: a[:, :3, :3].matrix_power(0),
    "matrix_power1": lambda L, a, b: L.linalg.matrix_power(a[0, :3, :3], 1),
    "matrix_power_neg": lambda L, a, b: L.linalg.matrix_power(a[:, :3, :3], -2),
    "multi_dot": lambda L, a, b: L.linalg.multi_dot([a[0], b[0].mT, a[1]]),
    "multi_dot_vectors": lambda L, a, b: L.linalg.multi_dot([a[0, 0, :3], a[0], b[0].mT, b[1, 1, :3]]),
    "multi_dot_first_vec": lambda L, a, b: L.linalg.multi_dot([a[0, 0, :3], a[0]]),
    "multi_dot_last_vec": lambda L, a, b: L.linalg.multi_dot([a[0], b[0, 0]]),
    "chain_matmul": lambda L, a, b: L.chain_matmul(a[0], b[0].mT, a[1]),
    "vecdot": lambda L, a, b: L.linalg.vecdot(a, b[0]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products(tc, name, dtype):
    if dtype.startswith("complex") and name.startswith("cdist"):
        return
    a, b = tc.pair_from_numpy(rand((2, 3, 4), dtype)), tc.pair_from_numpy(rand((2, 3, 4), dtype, seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = PRODUCTS[name](tp, a.tp, b.tp), PRODUCTS[name](torch, a.th, b.th)
    close(ours, theirs, TOL[dtype])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name", ["outer", "kron", "tensordot_lists", "inner", "matrix_power", "addmv", "cross"])
def test_integer_products(tc, name, dtype):
    a, b = tc.pair("int64", (2, 3, 4)), tc.pair("int64", (2, 3, 4), seed=1)
    a, b = tc.Pair(a.tp.to(getattr(tp, dtype)), a.th.to(getattr(torch, dtype))), tc.Pair(b.tp.to(getattr(tp, dtype)), b.th.to(getattr(torch, dtype)))
    tc.compare(PRODUCTS[name], a, b)


def test_cross_warns_without_dim():
    (a, ta), (b, tb) = both(rand((3, 3))), both(rand((3, 3), seed=1))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        ours = tp.cross(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(ours, torch.cross(ta, tb))


def test_chain_matmul_warns():
    a, b = both(rand((3, 3)))
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        tp.chain_matmul(a, a)


# ---- einsum --------------------------------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ijk->", [(2, 3, 4)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("...ij->...ji", [(2, 5, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,de,bf->aef", [(2, 3, 4), (4, 5), (5, 2), (3, 6)]),
    ("ab,bc,cd,de,ef->af", [(7, 2), (2, 8), (8, 3), (3, 9), (9, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    ("ij,jk -> ik", [(2, 3), (3, 4)]),
    ("AB,Bc->Ac", [(2, 3), (3, 4)]),
    ("ba,a", [(2, 3), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("i,j", [(0,), (3,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_einsum(eq, shapes, dtype):
    arrays = [rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    ours = tp.einsum(eq, *[tp.from_numpy(a) for a in arrays])
    theirs = torch.einsum(eq, *[torch.from_numpy(a) for a in arrays])
    close(ours, theirs, TOL[dtype])


def test_einsum_forms_and_dtypes():
    a, b = rand((2, 3)), rand((3, 4), seed=1)
    close(tp.einsum("ij,jk", [tp.from_numpy(a), tp.from_numpy(b)]), torch.einsum("ij,jk", [torch.from_numpy(a), torch.from_numpy(b)]))
    close(tp.einsum(tp.from_numpy(a), [0, 1], tp.from_numpy(b), [1, 2], [0, 2]),
          torch.einsum(torch.from_numpy(a), [0, 1], torch.from_numpy(b), [1, 2], [0, 2]))
    c = rand((3, 2), seed=2)
    close(tp.einsum(tp.from_numpy(a), [Ellipsis, 1], tp.from_numpy(c), [1, Ellipsis]),
          torch.einsum(torch.from_numpy(a), [Ellipsis, 1], torch.from_numpy(c), [1, Ellipsis]))
    ints = np.arange(6).reshape(2, 3).astype(np.int32)
    close(tp.einsum("ij,kj->ik", tp.from_numpy(ints), tp.from_numpy(ints)),
          torch.einsum("ij,kj->ik", torch.from_numpy(ints), torch.from_numpy(ints)))
    close(tp.einsum("ij->", tp.from_numpy(ints)), torch.einsum("ij->", torch.from_numpy(ints)))


def test_einsum_views():
    a = tp.from_numpy(rand((3, 3)))
    assert tp.einsum("ij->ji", a)._base is a
    assert tp.einsum("ii->i", a)._storage is a._storage


def test_einsum_explicit_path():
    arrays = [rand((2, 3)), rand((3, 4)), rand((4, 5))]
    ours = tp.ops.aten.einsum("ij,jk,kl->il", [tp.from_numpy(a) for a in arrays], path=[1, 2, 0, 1])
    close(ours, torch.einsum("ij,jk,kl->il", *[torch.from_numpy(a) for a in arrays]))


EINSUM_ERRORS = [
    ("ij,jk", [(2, 3), (2, 3)]),
    ("ij,jk->ik", [(2, 3)]),
    ("ij->ik", [(2, 3)]),
    ("ijk->i", [(2, 3)]),
    ("i1->i", [(2, 3)]),
    ("ij->ii", [(2, 3)]),
    ("ij,ij->ij", [(2, 3), (3, 3)]),
    ("i", [(2,), (2,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_ERRORS, ids=[e for e, _ in EINSUM_ERRORS])
def test_einsum_errors(tc, eq, shapes):
    pairs = [tc.pair("float32", s) for s in shapes]
    assert isinstance(tc.compare(lambda L, *ts: L.einsum(eq, *ts), *pairs), Exception)


def test_einsum_dtype_mismatch(tc):
    a, b = tc.pair("float32", (2, 3)), tc.pair("float64", (3, 4))
    assert isinstance(tc.compare(lambda L, x, y: L.einsum("ij,jk", x, y), a, b), Exception)


# ---- torchplug.linalg ------------------------------------------------------------------------------------------
BATCHES = [(), (3,), (2, 1)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_inv_solve_det(dtype, batch):
    a, ta = both(rand(batch + (4, 4), dtype))
    b, tb = both(rand(batch + (4, 2), dtype, seed=1))
    tol = TOL[dtype] * 10
    close(tp.linalg.inv(a), torch.linalg.inv(ta), tol)
    assert tp.linalg.inv(a).stride() == torch.linalg.inv(ta).stride()
    close(tp.inverse(a), torch.inverse(ta), tol)
    close(tp.linalg.solve(a, b), torch.linalg.solve(ta, tb), tol)
    assert tp.linalg.solve(a, b).stride() == torch.linalg.solve(ta, tb).stride()
    close(tp.linalg.solve(a, b.mT, left=False), torch.linalg.solve(ta, tb.mT, left=False), tol)
    close(tp.linalg.solve(a, b[..., 0]), torch.linalg.solve(ta, tb[..., 0]), tol)
    close(tp.linalg.det(a), torch.linalg.det(ta), tol)
    close(tp.det(a), torch.det(ta), tol)
    s, ts = tp.linalg.slogdet(a), torch.linalg.slogdet(ta)
    close(s.sign, ts.sign, tol)
    close(s.logabsdet, ts.logabsdet, tol)
    close(tp.slogdet(a)[1], torch.slogdet(ta)[1], tol)
    if not dtype.startswith("complex"):
        close(tp.logdet(a), torch.logdet(ta), tol)


def test_solve_broadcasts(tc):
    a, b = both(rand((3, 4, 4)))
    v, tv = both(rand((2, 1, 4, 5), seed=1))
    close(tp.linalg.solve(a, v), torch.linalg.solve(b, tv))
    close(tp.linalg.solve(a, v[0, 0, :, 0]), torch.linalg.solve(b, tv[0, 0, :, 0]))
    close(tp.linalg.solve(a, v[0, 0, :3, 0].expand(3, 3)[:, :1].expand(3, 4)), torch.linalg.solve(b, tv[0, 0, :3, 0].expand(3, 3)[:, :1].expand(3, 4)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
def test_cholesky(dtype, batch):
    a, ta = both(spd(4, batch, dtype))
    tol = TOL[dtype] * 10
    close(tp.linalg.cholesky(a), torch.linalg.cholesky(ta), tol)
    close(tp.linalg.cholesky(a, upper=True), torch.linalg.cholesky(ta, upper=True), tol)
    assert tp.linalg.cholesky(a).stride() == torch.linalg.cholesky(ta).stride()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(tp.cholesky(a), torch.cholesky(ta), tol)


def _recon_tol(dtype):
    return 1e-4 if dtype in ("float32", "complex64") else 1e-10


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(dtype, shape, mode):
    a, ta = both(rand(shape, dtype))
    q, r = tp.linalg.qr(a, mode=mode)
    tq, tr = torch.linalg.qr(ta, mode=mode)
    assert tuple(q.shape) == tuple(tq.shape) and tuple(r.shape) == tuple(tr.shape)
    assert q.dtype == getattr(tp, dtype) and r.dtype == getattr(tp, dtype)
    assert r.stride() == tr.stride()
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(tr.numpy()), atol=_recon_tol(dtype) * 10)
    if mode != "r":
        assert q.stride() == tq.stride()
        np.testing.assert_allclose(q.numpy() @ r.numpy(), a.numpy(), atol=_recon_tol(dtype) * 10)
        qh = np.swapaxes(q.numpy().conj(), -1, -2)
        np.testing.assert_allclose(qh @ q.numpy(), np.broadcast_to(np.eye(q.shape[-1]), qh.shape[:-2] + (q.shape[-1],) * 2), atol=_recon_tol(dtype) * 10)
    legacy = tp.qr(a)
    np.testing.assert_allclose(legacy.Q.numpy() @ legacy.R.numpy(), a.numpy(), atol=_recon_tol(dtype) * 10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 1, 3, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(dtype, shape, full):
    a, ta = both(rand(shape, dtype))
    u, s, vh = tp.linalg.svd(a, full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(ta, full_matrices=full)
    for ours, theirs in ((u, tu), (s, ts), (vh, tvh)):
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride()
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    tol = _recon_tol(dtype) * 10
    np.testing.assert_allclose(s.numpy(), ts.numpy(), atol=tol)
    k = s.shape[-1]
    recon = (u.numpy()[..., :k] * s.numpy()[..., None, :]) @ vh.numpy()[..., :k, :]
    np.testing.assert_allclose(recon, a.numpy(), atol=tol)
    close(tp.linalg.svdvals(a), torch.linalg.svdvals(ta), tol)
    legacy, tlegacy = tp.svd(a), torch.svd(ta)
    assert tuple(legacy.V.shape) == tuple(tlegacy.V.shape)
    lv = legacy.V.numpy()
    np.testing.assert_allclose((legacy.U.numpy() * legacy.S.numpy()[..., None, :]) @ np.swapaxes(lv.conj(), -1, -2),
                               a.numpy(), atol=tol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, batch, uplo):
    m = rand(batch + (4, 4), dtype)  # not Hermitian: only the UPLO triangle may be read
    a, ta = both(m)
    w, v = tp.linalg.eigh(a, UPLO=uplo)
    tw, tv = torch.linalg.eigh(ta, UPLO=uplo)
    tol = _recon_tol(dtype) * 10
    close(w, tw, tol)
    assert tuple(v.shape) == tuple(tv.shape) and v.stride() == tv.stride()
    herm = torch.from_numpy(m)
    tri = herm.tril() if uplo == "L" else herm.triu()
    herm = (tri + tri.mH - torch.diag_embed(torch.diagonal(tri, dim1=-2, dim2=-1).real.to(tri.dtype))).numpy()
    vv = v.numpy()
    np.testing.assert_allclose((vv * w.numpy()[..., None, :]) @ np.swapaxes(vv.conj(), -1, -2), herm, atol=tol)
    close(tp.linalg.eigvalsh(a, uplo), torch.linalg.eigvalsh(ta, uplo), tol)


NORMS = {
    "vector_norm": lambda L, a: L.linalg.vector_norm(a),
    "vector_norm_dim": lambda L, a: L.linalg.vector_norm(a, 1, dim=(0, 2), keepdim=True),
    "vector_norm_inf": lambda L, a: L.linalg.vector_norm(a, float("inf"), dim=-1),
    "vector_norm_3": lambda L, a: L.linalg.vector_norm(a, 3.5, dim=1),
    "matrix_norm_fro": lambda L, a: L.linalg.matrix_norm(a),
    "matrix_norm_nuc": lambda L, a: L.linalg.matrix_norm(a, "nuc"),
    "matrix_norm_1": lambda L, a: L.linalg.matrix_norm(a, 1),
    "matrix_norm_-1": lambda L, a: L.linalg.matrix_norm(a, -1, keepdim=True),
    "matrix_norm_inf": lambda L, a: L.linalg.matrix_norm(a, float("inf")),
    "matrix_norm_-inf": lambda L, a: L.linalg.matrix_norm(a, -float("inf"), dim=(0, 2)),
    "matrix_norm_2": lambda L, a: L.linalg.matrix_norm(a, 2),
    "matrix_norm_-2": lambda L, a: L.linalg.matrix_norm(a, -2, dim=(2, 0), keepdim=True),
    "norm_default": lambda L, a: L.linalg.norm(a),
    "norm_matrix": lambda L, a: L.linalg.norm(a[0], "fro"),
    "norm_nuc": lambda L, a: L.linalg.norm(a, "nuc", dim=(1, 2)),
    "norm_vector_ord": lambda L, a: L.linalg.norm(a[0, 0], 3),
    "norm_dim": lambda L, a: L.linalg.norm(a, 2, dim=1),
    "norm_dtype": lambda L, a: L.linalg.norm(a, dtype=L.float64) if not a.is_complex() else L.linalg.norm(a),
    "pinv": lambda L, a: L.linalg.pinv(a),
    "pinv_rtol": lambda L, a: L.linalg.pinv(a, rtol=0.5),
    "pinv_atol": lambda L, a: L.linalg.pinv(a, atol=1.0),
    "pinverse": lambda L, a: L.pinverse(a),
    "matrix_rank": lambda L, a: L.linalg.matrix_rank(a),
    "matrix_rank_deficient": lambda L, a: L.linalg.matrix_rank(a[..., :2] @ a[..., :2, :]),
    "matrix_rank_atol": lambda L, a: L.linalg.matrix_rank(a, atol=1.0, rtol=0.0),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(NORMS))
def test_norms(name, dtype):
    a, ta = both(rand((2, 3, 4), dtype))
    close(NORMS[name](tp, a), NORMS[name](torch, ta), _recon_tol(dtype) * 100)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pinv_hermitian_and_rank(dtype):
    a, ta = both(spd(4, (2,), dtype))
    tol = _recon_tol(dtype) * 100
    close(tp.linalg.pinv(a, hermitian=True), torch.linalg.pinv(ta, hermitian=True), tol)
    close(tp.linalg.matrix_rank(a, hermitian=True), torch.linalg.matrix_rank(ta, hermitian=True))


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("shape", [((4, 4), (4, 2)), ((2, 5, 3), (2, 5, 2)), ((3, 5, 3), (1, 5, 2)), ((6, 3), (6,))])
def test_lstsq(driver, shape):
    a_shape, b_shape = shape
    a, ta = both(rand(a_shape))
    b, tb = both(rand(b_shape, seed=1))
    ours, theirs = tp.linalg.lstsq(a, b, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        o, t = getattr(ours, name), getattr(theirs, name)
        close(o, t, 1e-8)
    assert ours.solution.stride() == theirs.solution.stride()


# ---- empty and degenerate inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "svdvals", "eigvalsh", "cholesky"])
def test_empty_matrices(name):
    a, ta = both(np.zeros((2, 0, 0)))
    ours, theirs = getattr(tp.linalg, name)(a), getattr(torch.linalg, name)(ta)
    if isinstance(theirs, tuple):
        for o, t in zip(ours, theirs):
            close(o, t)
    else:
        close(ours, theirs)


def test_singular_det_is_zero():
    a, ta = both(np.array([[1.0, 2.0], [2.0, 4.0]]))
    close(tp.linalg.det(a), torch.linalg.det(ta))
    close(tp.linalg.matrix_rank(a), torch.linalg.matrix_rank(ta))


def test_inv_ex():
    a = tp.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    out = tp.linalg.inv_ex(a[1])
    assert out.info.item() == 0
    assert tp.linalg.inv_ex(a[0]).info.item() == 2
    with pytest.raises(tp.linalg.LinAlgError):
        tp.linalg.inv_ex(a[0], check_errors=True)


def test_linalg_namespace():
    assert "inv" in tp.linalg.__all__
    assert issubclass(tp.linalg.LinAlgError, RuntimeError)
    assert not hasattr(tp, "linalg_inv")


def test_out_arguments():
    a, ta = both(spd(3))
    out = tp.empty(0, dtype=tp.float64)
    assert tp.linalg.inv(a, out=out) is out
    close(out, torch.linalg.inv(ta))
    outs = (tp.empty(0, dtype=tp.float64), tp.empty(0, dtype=tp.float64))
    r = tp.linalg.eigh(a, out=outs)
    assert r[0] is outs[0]
    close(outs[0], torch.linalg.eigvalsh(ta))


# ---- errors ---------------------------------------------------------------------------------------------------
SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = {
    "inv_singular": lambda L: L.linalg.inv(L.tensor(SINGULAR)),
    "inv_singular_batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.tensor(SINGULAR)])),
    "inv_singular_3x3": lambda L: L.linalg.inv(L.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]).double() * 0 + L.tensor([[1.0, 1, 0], [1, 1, 0], [0, 0, 1]]).double()),
    "inv_nonsquare": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv_1d": lambda L: L.linalg.inv(L.ones(3)),
    "inv_int": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.long)),
    "inv_half": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.half)),
    "solve_singular": lambda L: L.linalg.solve(L.tensor(SINGULAR), L.ones(2)),
    "solve_singular_batch": lambda L: L.linalg.solve(L.stack([L.eye(2), L.tensor(SINGULAR)]), L.ones(2, 2)),
    "solve_shapes": lambda L: L.linalg.solve(L.eye(3), L.ones(2)),
    "solve_shapes_matrix": lambda L: L.linalg.solve(L.eye(3), L.ones(2, 2)),
    "solve_shapes_right": lambda L: L.linalg.solve(L.eye(2), L.ones(2, 5), left=False),
    "solve_dtype": lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
    "det_nonsquare": lambda L: L.linalg.det(L.ones(2, 3)),
    "det_1d": lambda L: L.linalg.det(L.ones(2)),
    "det_int": lambda L: L.linalg.det(L.ones(2, 2, dtype=L.int32)),
    "slogdet_nonsquare": lambda L: L.linalg.slogdet(L.ones(2, 3)),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(L.tensor([[1.0, 2], [2, 1]])),
    "cholesky_not_pd_batch": lambda L: L.linalg.cholesky(L.stack([L.eye(2), L.tensor([[1.0, 2], [2, 1]])])),
    "cholesky_nonsquare": lambda L: L.linalg.cholesky(L.ones(2, 3)),
    "cholesky_int": lambda L: L.linalg.cholesky(L.ones(3, 3, dtype=L.long)),
    "qr_mode": lambda L: L.linalg.qr(L.ones(3, 2), mode="foo"),
    "qr_1d": lambda L: L.linalg.qr(L.ones(3)),
    "qr_int": lambda L: L.linalg.qr(L.ones(3, 3, dtype=L.long)),
    "svd_1d": lambda L: L.linalg.svd(L.ones(3)),
    "svd_driver": lambda L: L.linalg.svd(L.ones(3, 4), driver="gesvd"),
    "svd_int": lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.long)),
    "svdvals_int": lambda L: L.linalg.svdvals(L.ones(3, dtype=L.long)),
    "eigh_nonsquare": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.ones(2, 2), UPLO="X"),
    "eigh_int": lambda L: L.linalg.eigh(L.ones(3, 3, dtype=L.long)),
    "lstsq_rows": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 2)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.eye(2), L.ones(2, 1), driver="foo"),
    "lstsq_dtype": lambda L: L.linalg.lstsq(L.eye(2).long(), L.ones(2, 1)),
    "matrix_norm_ord": lambda L: L.linalg.matrix_norm(L.ones(3, 2), "foo"),
    "matrix_norm_1d": lambda L: L.linalg.matrix_norm(L.ones(3), "fro"),
    "matrix_norm_3": lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    "matrix_norm_int": lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.long)),
    "matrix_norm_dims": lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0, 0)),
    "norm_3d_ord": lambda L: L.linalg.norm(L.ones(3, 3, 3), "fro"),
    "norm_dims": lambda L: L.linalg.norm(L.ones(3, 3, 3), dim=(0, 1, 2)),
    "vector_norm_int": lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.long)),
    "pinv_1d": lambda L: L.linalg.pinv(L.ones(3)),
    "matrix_rank_1d": lambda L: L.linalg.matrix_rank(L.ones(3)),
    "matrix_power_1d": lambda L: L.matrix_power(L.ones(3), 2),
    "matrix_power_nonsquare": lambda L: L.matrix_power(L.ones(2, 3), 2),
    "matrix_power_int_neg": lambda L: L.matrix_power(L.ones(2, 2, dtype=L.long), -1),
    "multi_dot_one": lambda L: L.linalg.multi_dot([L.ones(3, 3)]),
    "multi_dot_first": lambda L: L.linalg.multi_dot([L.ones(3, 3, 3), L.ones(3, 3)]),
    "multi_dot_middle": lambda L: L.linalg.multi_dot([L.ones(3, 3), L.ones(3), L.ones(3, 3)]),
    "multi_dot_shapes": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(4, 3)]),
    "multi_dot_dtype": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 3, dtype=L.float64)]),
    "cross_length": lambda L: L.linalg.cross(L.ones(3, 2), L.ones(3, 2)),
    "cross_length_dim": lambda L: L.cross(L.ones(3, 2), L.ones(3, 2), dim=1),
    "cross_ndim": lambda L: L.linalg.cross(L.ones(3), L.ones(2, 3)),
    "cross_dtype": lambda L: L.linalg.cross(L.ones(3), L.ones(3, dtype=L.float64)),
    "outer_2d": lambda L: L.outer(L.ones(2, 3), L.ones(3)),
    "outer_vec2": lambda L: L.outer(L.ones(3), L.ones(2, 3)),
    "addr_2d": lambda L: L.addr(L.ones(2, 3), L.ones(2, 1), L.ones(3)),
    "addmv_size": lambda L: L.addmv(L.ones(3), L.ones(2, 3), L.ones(3)),
    "addbmm_3d": lambda L: L.addbmm(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3, 3)),
    "baddbmm_expand": lambda L: L.baddbmm(L.ones(3, 3), L.ones(2, 2, 3), L.ones(2, 3, 3)),
    "tensordot_negative": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=-1),
    "tensordot_mismatch": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=([0], [1])),
    "tensordot_lengths": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=([0, 1], [1])),
    "inner_mismatch": lambda L: L.inner(L.ones(2, 3), L.ones(3, 4)),
    "vdot_2d": lambda L: L.vdot(L.ones(2, 3), L.ones(2, 3)),
    "vdot_dtype": lambda L: L.vdot(L.ones(3), L.ones(3, dtype=L.float64)),
    "vdot_size": lambda L: L.vdot(L.ones(3), L.ones(4)),
    "vdot_bool": lambda L: L.vdot(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    "cdist_1d": lambda L: L.cdist(L.ones(3), L.ones(3)),
    "cdist_cols": lambda L: L.cdist(L.ones(2, 3), L.ones(3, 4)),
    "cdist_int": lambda L: L.cdist(L.ones(2, 3, dtype=L.long), L.ones(2, 3, dtype=L.long)),
    "cdist_p": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), p=-1),
    "cdist_batch": lambda L: L.cdist(L.ones(2, 2, 3), L.ones(3, 4, 3)),
    "chain_matmul_1d": lambda L: L.chain_matmul(L.ones(2, 3), L.ones(3)),
}


LINALG_ERRORS = ("inv_singular", "inv_singular_batch", "inv_singular_3x3", "solve_singular", "solve_singular_batch",
                 "cholesky_not_pd", "cholesky_not_pd_batch")


@pytest.mark.parametrize("name", LINALG_ERRORS)
def test_linalg_errors(name):
    with pytest.raises(torch.linalg.LinAlgError) as theirs:
        ERRORS[name](torch)
    with pytest.raises(tp.linalg.LinAlgError) as ours:
        ERRORS[name](tp)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value).splitlines()[0]


@pytest.mark.parametrize("name", [n for n in ERRORS if n not in LINALG_ERRORS])
def test_errors(tc, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tc.compare(lambda L: ERRORS[name](L))
    assert isinstance(result, Exception), f"torch accepted {name}"


def test_linalg_error_type():
    with pytest.raises(tp.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        tp.linalg.inv(tp.tensor(SINGULAR))
    assert type(tp.linalg.LinAlgError("x")).__name__ == torch.linalg.LinAlgError.__name__
