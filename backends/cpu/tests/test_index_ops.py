"""cpu joining and indexing kernels against PyTorch: cat, gather/scatter, index_select, nonzero, index, index_put."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def pair(shape=(2, 3), dtype="float32"):
    arr = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    return tp.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def T(data, dtype=None):
    """The same literal as (torchplug, torch) tensors."""
    return (tp.tensor(data, dtype=getattr(tp, dtype) if dtype else None),
            torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None))


def check(a, b, strides=True):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    if strides:
        assert a.stride() == b.stride(), (a.stride(), b.stride())
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


# ---- cat ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_dims(dim):
    a, b = pair((2, 3))
    c, d = pair((2, 3))
    check(tp.cat([a, c], dim), torch.cat([b, d], dim))
    check(tp.cat((a, c, a), dim=dim), torch.cat((b, d, b), dim=dim))
    check(tp.cat([a], dim), torch.cat([b], dim))


def test_cat_non_contiguous_and_mixed_sizes():
    a, b = pair((2, 3))
    c, d = pair((3, 2))
    check(tp.cat([a.t(), c], 0), torch.cat([b.t(), d], 0))
    check(tp.cat([a, c.t().narrow(1, 0, 1)], 1), torch.cat([b, d.t()[:, :1]], 1))
    check(tp.cat([tp.ones(2, 0), a], 1), torch.cat([torch.ones(2, 0), b], 1))


def test_cat_promotion():
    parts = [([1, 2], "int64"), ([True], "bool"), ([1.5], "float16")]
    ours = tp.cat([tp.tensor(v, dtype=getattr(tp, d)) for v, d in parts])
    theirs = torch.cat([torch.tensor(v, dtype=getattr(torch, d)) for v, d in parts])
    check(ours, theirs)
    check(tp.cat([tp.ones(2, dtype=tp.int8), tp.ones(1, dtype=tp.uint8)]),
          torch.cat([torch.ones(2, dtype=torch.int8), torch.ones(1, dtype=torch.uint8)]))
    check(tp.cat([tp.ones(1, dtype=tp.int32), tp.tensor([2.5], dtype=tp.float64)]),
          torch.cat([torch.ones(1, dtype=torch.int32), torch.tensor([2.5], dtype=torch.float64)]))


def test_cat_legacy_empty():
    a, b = pair((2, 2))
    check(tp.cat([a, tp.ones(0)], 1), torch.cat([b, torch.ones(0)], 1))
    check(tp.cat([tp.ones(0), a.int()], 1), torch.cat([torch.ones(0), b.int()], 1))
    check(tp.cat([tp.ones(0), tp.ones(0)]), torch.cat([torch.ones(0), torch.ones(0)]))
    check(tp.cat([tp.ones(0, dtype=tp.int32), tp.ones(0, dtype=tp.int8)]),
          torch.cat([torch.ones(0, dtype=torch.int32), torch.ones(0, dtype=torch.int8)]))


def test_cat_errors():
    from torchplug_cpu.kernels.index import cat as cat_kernel

    same_error(lambda: cat_kernel([], 0), lambda: torch.cat([]))  # the public call fails earlier, in dispatch
    with pytest.raises((RuntimeError, ValueError)):
        tp.cat([])
    same_error(lambda: tp.cat([tp.ones(2, 2), tp.ones(3, 3)], 1), lambda: torch.cat([torch.ones(2, 2), torch.ones(3, 3)], 1))
    same_error(lambda: tp.cat([tp.ones(2, 2), tp.ones(3)], 1), lambda: torch.cat([torch.ones(2, 2), torch.ones(3)], 1))
    same_error(lambda: tp.cat([tp.ones(2, 2), tp.ones(2, 2)], 2), lambda: torch.cat([torch.ones(2, 2), torch.ones(2, 2)], 2))
    same_error(lambda: tp.cat([tp.ones(2, 2), tp.ones(2, 2)], -3), lambda: torch.cat([torch.ones(2, 2), torch.ones(2, 2)], -3))
    same_error(lambda: tp.cat([tp.tensor(1.0), tp.tensor(2.0)]), lambda: torch.cat([torch.tensor(1.0), torch.tensor(2.0)]))
    same_error(lambda: tp.cat([tp.ones(2, 0), tp.ones(3, 2)]), lambda: torch.cat([torch.ones(2, 0), torch.ones(3, 2)]))


def test_cat_out_and_stack():
    out, out_r = tp.empty(4, 2), torch.empty(4, 2)
    a, b = pair((2, 2))
    tp.cat([a, a], out=out)
    torch.cat([b, b], out=out_r)
    check(out, out_r)
    check(tp.stack([a, a], -1), torch.stack([b, b], -1))
    check(tp.concat([a, a], 1), torch.concat([b, b], 1))


# ---- gather -------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_gather(idx_dtype):
    x, xr = pair((2, 3))
    i, ir = T([[0, 0], [1, 0]], idx_dtype)
    check(tp.gather(x, 1, i), torch.gather(xr, 1, ir))
    check(x.gather(-1, i), xr.gather(-1, ir))
    i, ir = T([[0, 1, 1], [1, 0, 0], [0, 0, 1]], idx_dtype)
    check(tp.gather(x.t(), 1, i.narrow(1, 0, 2)), torch.gather(xr.t(), 1, ir[:, :2]))
    i, ir = T([[1, 0, 1]], idx_dtype)
    check(tp.gather(x, 0, i), torch.gather(xr, 0, ir))


def test_gather_edge_cases():
    check(tp.gather(tp.tensor(5.0), 0, tp.tensor(0)), torch.gather(torch.tensor(5.0), 0, torch.tensor(0)))
    x, xr = pair((2, 3))
    check(tp.gather(x, 1, tp.zeros(2, 0, dtype=tp.int64)), torch.gather(xr, 1, torch.zeros(2, 0, dtype=torch.int64)), strides=False)


def test_gather_errors():
    x, xr = pair((2, 3))
    cases = [
        (1, [[0, 5], [1, 0]], "int64"), (1, [[0, -1], [1, 0]], "int64"), (1, [0, 1], "int64"), (0, [[0, 1, 1, 0]], "int64"),
        (1, [[0], [1], [0]], "int64"), (2, [[0], [1]], "int64"), (1, [[0]], "int16"), (1, [[0.0]], "float32"),
    ]
    for dim, idx, dt in cases:
        i, ir = T(idx, dt)
        same_error(lambda: tp.gather(x, dim, i), lambda: torch.gather(xr, dim, ir))


# ---- scatter / scatter_add -------------------------------------------------------------------------------------------------
def test_scatter_src_value_add():
    z, zr = tp.zeros(2, 3), torch.zeros(2, 3)
    i, ir = T([[0], [2]])
    s, sr = T([[1.0], [2.0]])
    check(tp.scatter(z, 1, i, s), torch.scatter(zr, 1, ir, sr))
    check(z.scatter(1, i, 2.5), zr.scatter(1, ir, 2.5))
    check(tp.zeros(2, 3, dtype=tp.int64).scatter(1, i, 2.5), torch.zeros(2, 3, dtype=torch.int64).scatter(1, ir, 2.5))
    i2, ir2 = T([[0, 0, 1], [0, 1, 1]], "int32")
    check(tp.scatter_add(z, 0, i2, tp.ones(2, 3)), torch.scatter_add(zr, 0, ir2, torch.ones(2, 3)))
    check(z.scatter_add(0, i2, tp.ones(2, 3)), zr.scatter_add(0, ir2, torch.ones(2, 3)))
    assert (z.numpy() == 0).all()  # out of place


def test_scatter_inplace_variants():
    z, zr = tp.zeros(3, 4), torch.zeros(3, 4)
    v0 = z._version
    i, ir = T([[0, 1, 2], [2, 1, 0]])
    src, srcr = pair((2, 4))
    out = z.scatter_(0, i, src)
    zr.scatter_(0, ir, srcr)
    assert out is z and z._version == v0 + 1
    check(z, zr)
    z.scatter_(1, i, 7.0)
    zr.scatter_(1, ir, 7.0)
    check(z, zr)
    z.scatter_add_(0, i, src)
    zr.scatter_add_(0, ir, srcr)
    check(z, zr)
    # duplicate indices accumulate
    acc, accr = tp.zeros(3), torch.zeros(3)
    j, jr = T([0, 0, 2, 0])
    acc.scatter_add_(0, j, tp.ones(4))
    accr.scatter_add_(0, jr, torch.ones(4))
    check(acc, accr)


def test_scatter_into_views():
    base, baser = tp.zeros(4, 3), torch.zeros(4, 3)
    i, ir = T([[0, 2]])
    base.t().narrow(0, 1, 1).scatter_(1, i, tp.ones(1, 2))
    baser.t()[1:2].scatter_(1, ir, torch.ones(1, 2))
    check(base, baser)


def test_scatter_errors():
    z, zr = tp.zeros(2, 3), torch.zeros(2, 3)
    cases = [
        ([[0], [2]], [[1], [2]], 1), ([[0], [3]], [[1.0], [2.0]], 1), ([[0, 1, 2, 0]], [[1.0, 2.0]], 1),
        ([[0], [1], [2]], [[1.0], [1.0], [1.0]], 1), ([0, 0, 1], [[1.0, 1.0, 1.0]], 0), ([[0, 0, 1]], [[1.0, 1.0, 1.0]], 2),
    ]
    for idx, src, dim in cases:
        i, ir = T(idx)
        s, sr = T(src)
        same_error(lambda: z.scatter(dim, i, s), lambda: zr.scatter(dim, ir, sr))
    i, ir = T([[0]], "int16")
    same_error(lambda: z.scatter_(1, i, 1.0), lambda: zr.scatter_(1, ir, 1.0))
    same_error(lambda: z.scatter_add_(1, i, tp.ones(1, 1)), lambda: zr.scatter_add_(1, ir, torch.ones(1, 1)))
    i, ir = T([[0, 0, 1]])
    same_error(lambda: z.scatter_add(0, i, tp.ones(2, 3, dtype=tp.float64)),
               lambda: zr.scatter_add(0, ir, torch.ones(2, 3, dtype=torch.float64)))
    same_error(lambda: z.scatter_(1, tp.zeros(2, 3, dtype=tp.int64), tp.ones(2, 2)),
               lambda: zr.scatter_(1, torch.zeros(2, 3, dtype=torch.int64), torch.ones(2, 2)))


# ---- index_select ------------------------------------------------------------------------------------------------------------
def test_index_select():
    x, xr = pair((2, 3))
    for idx, dt in [([2, 0, 2], "int64"), ([1], "int32"), ([], "int64")]:
        i, ir = T(idx, dt)
        check(tp.index_select(x, 1, i), torch.index_select(xr, 1, ir))
        check(x.index_select(0, i.clamp(0, 1) if len(idx) else i), xr.index_select(0, ir.clamp(0, 1) if len(idx) else ir))
    check(tp.index_select(x, 1, tp.tensor(1)), torch.index_select(xr, 1, torch.tensor(1)))
    check(tp.index_select(x.t(), 0, tp.tensor([0, 2])), torch.index_select(xr.t(), 0, torch.tensor([0, 2])))
    check(tp.index_select(tp.tensor(3.0), 0, tp.tensor([0])), torch.index_select(torch.tensor(3.0), 0, torch.tensor([0])))


def test_index_select_errors():
    x, xr = pair((2, 3))
    for idx, dt in [([2, 0, 3], "int64"), ([-1], "int64"), ([[1]], "int64"), ([1.0], "float32")]:
        i, ir = T(idx, dt)
        same_error(lambda: tp.index_select(x, 1, i), lambda: torch.index_select(xr, 1, ir))


# ---- nonzero ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [[[0, 1], [2, 0]], 5, 0, [0.0, 0.5, -1.0], [[True, False, True]], [[[0, 1], [1, 1]], [[0, 0], [1, 0]]]])
def test_nonzero(data):
    a, b = T(data)
    check(tp.nonzero(a), torch.nonzero(b))
    check(a.nonzero(), b.nonzero())
    for pa, pb in zip(tp.nonzero(a, as_tuple=True), torch.nonzero(b, as_tuple=True)):
        check(pa, pb, strides=False)


def test_nonzero_empty_and_views():
    check(tp.nonzero(tp.zeros(2, 0)), torch.nonzero(torch.zeros(2, 0)))
    check(tp.nonzero(tp.zeros(3)), torch.nonzero(torch.zeros(3)))
    x, xr = pair((3, 4))
    check(tp.nonzero(x.t()), torch.nonzero(xr.t()))


# ---- index.Tensor ----------------------------------------------------------------------------------------------------------------
def aten_index(x, idx):
    return tp.ops.aten.index.Tensor(x, idx)


def torch_index(x, idx):
    return torch.ops.aten.index.Tensor(x, idx)


def both(spec):
    """Index lists for both libraries from a spec: None, or (data, dtype)."""
    ours, theirs = [], []
    for s in spec:
        if s is None:
            ours.append(None)
            theirs.append(None)
        else:
            a, b = T(*s)
            ours.append(a)
            theirs.append(b)
    return ours, theirs


INDEX_CASES = [
    [([1, 0], "int64")],
    [None, ([1, 0], "int64")],
    [([True, False], "bool")],
    [([[True, False, True], [False, False, True]], "bool")],
    [([-2], "int64")],
    [([0, 1], "int32"), ([2, 0], "int64")],
    [([[0], [1]], "int64"), ([0, 2], "int64")],
]
INDEX3_CASES = [
    [([0, 1], "int64"), None, ([0, 1], "int64")],  # separated advanced indices: advanced dims go first
    [None, ([0, 1], "int64"), ([[0], [1]], "int64")],
    [([1], "int64"), ([True, False, True], "bool")],
    [None, ([[True, False, True, False]] * 3, "bool")],
    [([[0, 1]], "int64"), None, ([2], "int64")],
]


@pytest.mark.parametrize("spec", INDEX_CASES)
def test_index_2d(spec):
    x, xr = pair((2, 3))
    ours, theirs = both(spec)
    check(aten_index(x, ours), torch_index(xr, theirs))
    check(aten_index(x.t().t(), ours), torch_index(xr, theirs))


@pytest.mark.parametrize("spec", INDEX3_CASES)
def test_index_3d(spec):
    x, xr = pair((2, 3, 4))
    ours, theirs = both(spec)
    check(aten_index(x, ours), torch_index(xr, theirs))
    y, yr = x.permute(0, 1, 2), xr.permute(0, 1, 2)
    check(aten_index(y, ours), torch_index(yr, theirs))


def test_index_result_is_a_copy():
    x, _ = pair((2, 3))
    r = aten_index(x, [None, tp.tensor([0, 1])])
    r.fill_(-1)
    assert (x.numpy() >= 0).all() and r._base is None


def test_index_uint8_mask_warns():
    x, xr = pair((2, 3))
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        ours = aten_index(x, [tp.tensor([1, 0], dtype=tp.uint8)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_index(xr, [torch.tensor([1, 0], dtype=torch.uint8)])
    check(ours, theirs)


def test_index_errors():
    x, xr = pair((2, 3))
    for spec in [
        [([True, False, True], "bool")], [([3], "int64")], [None, ([3], "int64")], [([1.0], "float32")],
        [([0], "int64"), ([0], "int64"), ([0], "int64")], [([0, 1], "int64"), ([0, 1, 2], "int64")], [],
    ]:
        ours, theirs = both(spec)
        same_error(lambda: aten_index(x, ours), lambda: torch_index(xr, theirs))
    same_error(lambda: aten_index(tp.tensor(5.0), [tp.tensor(True)]), lambda: torch_index(torch.tensor(5.0), [torch.tensor(True)]))


# ---- index_put --------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,values,accumulate", [
    ([([0, 0], "int64")], (1.0,), True),
    ([([0, 0], "int64"), ([1, 1], "int64")], ([1.0, 2.0],), True),
    ([([0, 0], "int64")], ([1.0, 2.0, 3.0],), False),
    ([([-1], "int64")], (2.0,), True),
    ([None, ([-1, 0], "int64")], ([7.0, 8.0],), False),
    ([([[False, False, False], [True, True, True]], "bool")], ([7.0, 8.0, 9.0],), False),
    ([([True, False], "bool")], (5.0,), True),
    ([([1, 0], "int32")], ([[1.0], [2.0]],), False),
])
def test_index_put(spec, values, accumulate):
    x, xr = pair((2, 3))
    ours, theirs = both(spec)
    v, vr = T(*values)
    check(x.index_put(ours, v, accumulate), torch.ops.aten.index_put(xr, theirs, vr, accumulate))
    assert (x.numpy() == np.arange(6).reshape(2, 3)).all()  # out of place
    v0 = x._version
    r = x.index_put_(ours, v, accumulate)
    torch.ops.aten.index_put_(xr, theirs, vr, accumulate)
    assert r is x and x._version == v0 + 1
    check(x, xr)


def test_index_put_into_view_and_duplicates():
    base, baser = tp.zeros(3, 4), torch.zeros(3, 4)
    view, viewr = base.t(), baser.t()
    i, ir = T([0, 0, 3])
    view.index_put_([i], tp.ones(3), accumulate=True)
    viewr.index_put_([ir], torch.ones(3), accumulate=True)
    check(base, baser)
    assert base._version == view._version


def test_index_put_errors():
    x, xr = pair((2, 3))
    for spec, values in [
        ([([0, 0], "int64")], ([1.0, 2.0],)),
        ([([0, 0], "int64")], ([1.0, 2.0, 3.0], "float64")),
        ([([0, 0], "int64")], ([1, 2, 3], "int64")),
        ([([0, 5], "int64")], ([1.0],)),
        ([([0, 1], "int64")], ([[1.0, 1.0], [1.0, 1.0]],)),
        ([([[False, False, False], [True, True, True]], "bool")], ([7.0, 8.0],)),
        ([([0], "int64"), ([1.0], "float32")], ([7.0],)),
    ]:
        ours, theirs = both(spec)
        v, vr = T(*values)
        same_error(lambda: x.index_put(ours, v), lambda: torch.ops.aten.index_put(xr, theirs, vr))
