"""Shape, indexing and linear-algebra ops on meta tensors against PyTorch.

Each case ``fn(L, mk)`` runs with torchplug on meta tensors and with torch: shapes and dtypes are
compared with torch's cpu results (real data), strides with torch's meta tensors where torch has a
meta kernel (else with its cpu result).  Views must share the input's storage.  Ops whose output
size depends on values raise NotImplementedError, as on torch's meta device.
"""

from __future__ import annotations

import warnings

import pytest

import torchplug

torch = pytest.importorskip("torch")


def _maker(L, device):
    gen = torch.Generator().manual_seed(0)

    def mk(*shape, dtype="float32", kind="rand"):
        dt = getattr(L, dtype)
        if device == "meta":
            return L.empty(shape, dtype=dt, device="meta")
        if kind == "index" or dtype in ("int64", "int32"):
            return torch.zeros(shape, dtype=dt)
        if dtype == "bool":
            return torch.ones(shape, dtype=dt)
        t = torch.randn(shape, generator=gen, dtype=torch.float64)
        if kind == "spd":
            t = t @ t.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
        return t.to(dt)

    return mk


CASES = {
    # shape and reordering
    "flip": lambda L, mk: L.flip(mk(2, 3, 4), (0, 2)),
    "fliplr": lambda L, mk: L.fliplr(mk(2, 3)),
    "roll": lambda L, mk: L.roll(mk(2, 3, 4), 1),
    "roll_dims": lambda L, mk: L.roll(mk(2, 3, 4), (1, 2), (0, 2)),
    "rot90": lambda L, mk: L.rot90(mk(2, 3, 4)),
    "rot90_2": lambda L, mk: L.rot90(mk(2, 3, 4), 2),
    "repeat": lambda L, mk: mk(2, 3).repeat(2, 1, 2),
    "tile": lambda L, mk: mk(2, 3).tile(2),
    "repeat_interleave_int": lambda L, mk: L.repeat_interleave(mk(2, 3), 2, dim=0),
    "repeat_interleave_output_size": lambda L, mk: L.repeat_interleave(mk(2, 3), mk(2, dtype="int64"), dim=0, output_size=0),
    "tril": lambda L, mk: L.tril(mk(3, 4)),
    "triu_batched": lambda L, mk: L.triu(mk(2, 3, 4), 1),
    "diag": lambda L, mk: L.diag(mk(3)),
    "diag_2d": lambda L, mk: L.diag(mk(3, 4), 1),
    "diag_embed": lambda L, mk: L.diag_embed(mk(2, 3), 1),
    "diagflat": lambda L, mk: L.diagflat(mk(2, 2)),
    "trace": lambda L, mk: L.trace(mk(3, 3)),
    "trace_int": lambda L, mk: L.trace(mk(3, 3, dtype="int32")),
    "narrow_copy": lambda L, mk: L.narrow_copy(mk(3, 4), 1, 1, 2),
    "hstack": lambda L, mk: L.hstack([mk(2, 3), mk(2, 1)]),
    "vstack": lambda L, mk: L.vstack([mk(3), mk(2, 3)]),
    "dstack": lambda L, mk: L.dstack([mk(3), mk(3)]),
    "column_stack": lambda L, mk: L.column_stack([mk(3), mk(3, 2)]),
    "cartesian_prod": lambda L, mk: L.cartesian_prod(mk(2), mk(3)),
    "block_diag": lambda L, mk: L.block_diag(mk(2, 2), mk(3), mk(1, 2, dtype="float64")),
    "combinations": lambda L, mk: L.combinations(mk(4), 2),
    "select_scatter": lambda L, mk: L.select_scatter(mk(2, 3), mk(3), 0, 0),
    "slice_scatter": lambda L, mk: L.slice_scatter(mk(4, 3), mk(2, 3), 0, 0, 4, 2),
    "diagonal_scatter": lambda L, mk: L.diagonal_scatter(mk(3, 3), mk(3)),
    "tril_indices": lambda L, mk: L.tril_indices(3, 4, device="meta" if L is torchplug else "cpu"),
    # indexing
    "index_add": lambda L, mk: L.index_add(mk(3, 4), 0, mk(2, dtype="int64"), mk(2, 4)),
    "index_copy": lambda L, mk: L.index_copy(mk(3, 4), 1, mk(2, dtype="int64"), mk(3, 2)),
    "index_fill": lambda L, mk: L.index_fill(mk(3, 4), 1, mk(2, dtype="int64"), 1.0),
    "index_fill_tensor": lambda L, mk: mk(3, 4).index_fill(1, mk(2, dtype="int64"), mk(dtype="float32")),
    "take": lambda L, mk: L.take(mk(3, 4), mk(2, 2, dtype="int64")),
    "take_along_dim": lambda L, mk: L.take_along_dim(mk(3, 4), mk(3, 2, dtype="int64"), 1),
    "masked_scatter": lambda L, mk: mk(3, 4).masked_scatter(mk(4, dtype="bool"), mk(12)),
    "scatter_reduce": lambda L, mk: mk(3, 4).scatter_reduce(0, mk(2, 4, dtype="int64"), mk(2, 4), "amax"),
    "searchsorted": lambda L, mk: L.searchsorted(mk(5), mk(2, 3)),
    "searchsorted_int32": lambda L, mk: L.searchsorted(mk(2, 5), mk(2, 3), out_int32=True),
    "bucketize": lambda L, mk: L.bucketize(mk(2, 3), mk(5)),
    # products
    "outer": lambda L, mk: L.outer(mk(3), mk(4)),
    "addmv": lambda L, mk: L.addmv(mk(3), mk(3, 4), mk(4)),
    "addr": lambda L, mk: L.addr(mk(3, 4), mk(3), mk(4)),
    "baddbmm": lambda L, mk: L.baddbmm(mk(2, 3, 5), mk(2, 3, 4), mk(2, 4, 5)),
    "addbmm": lambda L, mk: L.addbmm(mk(3, 5), mk(2, 3, 4), mk(2, 4, 5)),
    "einsum": lambda L, mk: L.einsum("bij,bjk->bik", mk(2, 3, 4), mk(2, 4, 5)),
    "einsum_3": lambda L, mk: L.einsum("ij,jk,kl->li", mk(2, 3), mk(3, 4), mk(4, 5)),
    "einsum_ellipsis": lambda L, mk: L.einsum("...ij->...ji", mk(2, 3, 4)),
    "tensordot": lambda L, mk: L.tensordot(mk(2, 3, 4), mk(4, 3, 5), ([1, 2], [1, 0])),
    "kron": lambda L, mk: L.kron(mk(2, 3), mk(4, 5)),
    "cross": lambda L, mk: L.linalg.cross(mk(4, 3), mk(4, 3)),
    "cdist": lambda L, mk: L.cdist(mk(2, 3, 4), mk(2, 5, 4)),
    "inner": lambda L, mk: L.inner(mk(2, 3), mk(4, 3)),
    "vdot": lambda L, mk: L.vdot(mk(3), mk(3)),
    "matrix_power": lambda L, mk: L.matrix_power(mk(2, 3, 3), 3),
    "multi_dot": lambda L, mk: L.linalg.multi_dot([mk(3), mk(3, 4), mk(4, 5)]),
    # linalg
    "inv": lambda L, mk: L.linalg.inv(mk(2, 3, 3, kind="spd")),
    "solve": lambda L, mk: L.linalg.solve(mk(2, 3, 3, kind="spd"), mk(2, 3, 4)),
    "solve_vector": lambda L, mk: L.linalg.solve(mk(2, 3, 3, kind="spd"), mk(3)),
    "solve_right": lambda L, mk: L.linalg.solve(mk(3, 3, kind="spd"), mk(4, 3), left=False),
    "det": lambda L, mk: L.linalg.det(mk(2, 3, 3)),
    "slogdet": lambda L, mk: tuple(L.linalg.slogdet(mk(2, 3, 3))),
    "cholesky": lambda L, mk: L.linalg.cholesky(mk(2, 3, 3, kind="spd")),
    "qr": lambda L, mk: tuple(L.linalg.qr(mk(2, 5, 3))),
    "qr_complete": lambda L, mk: tuple(L.linalg.qr(mk(5, 3), mode="complete")),
    "qr_r": lambda L, mk: tuple(L.linalg.qr(mk(3, 5), mode="r")),
    "svd": lambda L, mk: tuple(L.linalg.svd(mk(2, 5, 3))),
    "svd_reduced": lambda L, mk: tuple(L.linalg.svd(mk(3, 5), full_matrices=False)),
    "svdvals": lambda L, mk: L.linalg.svdvals(mk(2, 5, 3)),
    "eigh": lambda L, mk: tuple(L.linalg.eigh(mk(2, 3, 3, kind="spd"))),
    "eigvalsh": lambda L, mk: L.linalg.eigvalsh(mk(3, 3, kind="spd")),
    "matrix_norm": lambda L, mk: L.linalg.matrix_norm(mk(2, 3, 4)),
    "matrix_norm_nuc": lambda L, mk: L.linalg.matrix_norm(mk(2, 3, 4), "nuc", keepdim=True),
    "matrix_norm_inf": lambda L, mk: L.linalg.matrix_norm(mk(2, 3, 4), float("inf")),
    "pinv": lambda L, mk: L.linalg.pinv(mk(2, 3, 4)),
    "matrix_rank": lambda L, mk: L.linalg.matrix_rank(mk(2, 3, 4)),
    "lstsq": lambda L, mk: L.linalg.lstsq(mk(2, 4, 4, kind="spd"), mk(2, 4, 2)).solution,
    "lstsq_gelsd": lambda L, mk: tuple(L.linalg.lstsq(mk(5, 3), mk(5, 2), driver="gelsd"))[2:],
}

VIEWS = {
    "movedim": lambda L, mk: L.movedim(mk(2, 3, 4), 0, -1),
    "unflatten": lambda L, mk: mk(2, 6).unflatten(1, (2, 3)),
    "broadcast_to": lambda L, mk: L.broadcast_to(mk(3, 1), (2, 3, 4)),
    "swapaxes": lambda L, mk: L.swapaxes(mk(2, 3, 4), 0, 2),
    "tensor_split": lambda L, mk: L.tensor_split(mk(7, 2), 3)[2],
    "hsplit": lambda L, mk: L.hsplit(mk(2, 6), [2])[1],
    "meshgrid": lambda L, mk: L.meshgrid(mk(2), mk(3), indexing="xy")[0],
    "broadcast_tensors": lambda L, mk: L.broadcast_tensors(mk(2, 1), mk(3))[0],
    "atleast_3d": lambda L, mk: L.atleast_3d(mk(3)),
    "einsum_diag": lambda L, mk: L.einsum("ii->i", mk(3, 3)),
    "diagonal": lambda L, mk: L.linalg.diagonal(mk(2, 3, 3)),
}


def _describe(r):
    if isinstance(r, (tuple, list)):
        return [_describe(x) for x in r]
    return tuple(r.shape), str(r.dtype).rsplit(".", 1)[-1]


def _strides(r):
    if isinstance(r, (tuple, list)):
        return [_strides(x) for x in r]
    return tuple(r.stride()) if r.numel() > 1 else None


def _all_meta(r):
    if isinstance(r, (tuple, list)):
        return all(_all_meta(x) for x in r)
    return r.device.type == "meta"


@pytest.mark.parametrize("name", list(CASES) + list(VIEWS))
def test_meta_matches_torch(name):
    fn = CASES.get(name) or VIEWS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = fn(torchplug, _maker(torchplug, "meta"))
        reference = fn(torch, _maker(torch, "cpu"))
        try:
            torch_meta = fn(torch, _maker(torch, "meta"))
        except (NotImplementedError, RuntimeError):
            torch_meta = reference
    assert _all_meta(ours)
    assert _describe(ours) == _describe(reference)
    assert _strides(ours) == _strides(torch_meta)


@pytest.mark.parametrize("name", list(VIEWS))
def test_meta_views_share_storage(name):
    mk = _maker(torchplug, "meta")
    base = {}

    def tracking(*shape, **kw):
        t = mk(*shape, **kw)
        base.setdefault("first", t)
        return t

    out = VIEWS[name](torchplug, tracking)
    assert out._base is not None
    assert any(out._storage is t._storage for t in base.values())


DATA_DEPENDENT = {
    "masked_select": lambda L, mk: L.masked_select(mk(3, 4), mk(3, 4, dtype="bool")),
    "argwhere": lambda L, mk: L.argwhere(mk(3, 4)),
    "repeat_interleave": lambda L, mk: L.repeat_interleave(mk(3, dtype="int64")),
    "repeat_interleave_tensor": lambda L, mk: L.repeat_interleave(mk(3, 4), mk(3, dtype="int64"), dim=0),
}


@pytest.mark.parametrize("name", list(DATA_DEPENDENT))
def test_data_dependent_raise(name):
    with pytest.raises(NotImplementedError):
        DATA_DEPENDENT[name](torchplug, _maker(torchplug, "meta"))


ERRORS = {
    "flip_repeat": lambda L, mk: L.flip(mk(2, 3), (0, 0)),
    "tril_1d": lambda L, mk: L.tril(mk(3)),
    "index_add_dtype": lambda L, mk: L.index_add(mk(3, 4), 0, mk(2, dtype="int64"), mk(2, 4, dtype="float64")),
    "index_add_count": lambda L, mk: L.index_add(mk(3, 4), 0, mk(2, dtype="int64"), mk(3, 4)),
    "index_copy_index": lambda L, mk: L.index_copy(mk(3, 4), 0, mk(2, dtype="int32"), mk(2, 4)),
    "index_fill_value": lambda L, mk: L.index_fill(mk(3, 4), 0, mk(2, dtype="int64"), mk(2)),
    "take_index": lambda L, mk: L.take(mk(3, 4), mk(2, dtype="int32")),
    "masked_scatter_mask": lambda L, mk: mk(3, 4).masked_scatter(mk(3, 4), mk(12)),
    "scatter_reduce_mode": lambda L, mk: mk(3, 4).scatter_reduce(0, mk(2, 4, dtype="int64"), mk(2, 4), "foo"),
    "searchsorted_shape": lambda L, mk: L.searchsorted(mk(2, 3), mk(3, 3)),
    "inv_nonsquare": lambda L, mk: L.linalg.inv(mk(2, 3)),
    "inv_int": lambda L, mk: L.linalg.inv(mk(2, 2, dtype="int64")),
    "det_1d": lambda L, mk: L.linalg.det(mk(3)),
    "solve_shapes": lambda L, mk: L.linalg.solve(mk(3, 3, kind="spd"), mk(2, 2)),
    "solve_dtype": lambda L, mk: L.linalg.solve(mk(3, 3, kind="spd"), mk(3, dtype="float64")),
    "qr_mode": lambda L, mk: L.linalg.qr(mk(3, 2), mode="foo"),
    "svd_1d": lambda L, mk: L.linalg.svd(mk(3)),
    "eigh_uplo": lambda L, mk: L.linalg.eigh(mk(2, 2, kind="spd"), UPLO="X"),
    "lstsq_rows": lambda L, mk: L.linalg.lstsq(mk(3, 2), mk(4, 2)),
    "vdot_size": lambda L, mk: L.vdot(mk(3), mk(4)),
    "einsum_size": lambda L, mk: L.einsum("ij,jk", mk(2, 3), mk(2, 3)),
    "tensordot_size": lambda L, mk: L.tensordot(mk(2, 3), mk(2, 3), ([0], [1])),
    "multi_dot_shapes": lambda L, mk: L.linalg.multi_dot([mk(2, 3), mk(4, 3)]),
    "cross_length": lambda L, mk: L.linalg.cross(mk(3, 2), mk(3, 2)),
    "matrix_norm_ord": lambda L, mk: L.linalg.matrix_norm(mk(3, 3), 3),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_meta_errors_match_cpu(name):
    """Error types and messages are torch cpu's (meta makes the cpu checks)."""
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch, _maker(torch, "cpu"))
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](torchplug, _maker(torchplug, "meta"))
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]
