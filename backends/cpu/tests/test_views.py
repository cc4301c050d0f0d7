"""cpu view kernels against PyTorch: shapes, strides, storage offsets, sharing and errors."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


# ---- helpers ------------------------------------------------------------------------------------------
def pair(shape=(2, 3, 4), dtype="float32"):
    """The same arange data as a torchplug and a torch tensor."""
    arr = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return tp.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def check(a, b):
    """torchplug ``a`` matches torch ``b``: shape, strides, offset, dtype, values."""
    assert tuple(a.shape) == tuple(b.shape)
    assert a.stride() == b.stride(), (a.stride(), b.stride())
    assert a.storage_offset() == b.storage_offset()
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value).replace("torchplug.", "torch.") == str(theirs.value).split("\n")[0]


def shares(view, base):
    """Writes through the view show in the base; the version counter is shared; _base is set."""
    before = base._version
    view.fill_(-7)
    assert base._version == before + 1 and view._version == base._version
    assert (base.numpy() == -7).sum() >= min(view.numel(), 1)


# Non-contiguous inputs: (name, torchplug -> view, torch -> view) transforms applied before the op.
LAYOUTS = {
    "contiguous": (lambda x: x, lambda x: x),
    "transposed": (lambda x: x.transpose(0, 2), lambda x: x.transpose(0, 2)),
    "sliced": (lambda x: x.narrow(2, 1, 2), lambda x: x.narrow(2, 1, 2)),
    "stepped": (lambda x: tp.ops.aten.slice.Tensor(x, 1, 0, None, 2), lambda x: x[:, ::2]),
    "offset": (lambda x: x.select(0, 1), lambda x: x.select(0, 1)),
}


@pytest.fixture(params=list(LAYOUTS))
def layout(request):
    f_tp, f_torch = LAYOUTS[request.param]
    a, b = pair((2, 3, 4))
    return f_tp(a), f_torch(b)


# ---- view ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(6, 4), (-1,), (2, 12), (24,), (4, 3, 2), (1, 24, 1), (2, 3, 4), (-1, 4)])
def test_view_contiguous(shape):
    a, b = pair()
    va, vb = a.view(*shape), b.view(*shape)
    check(va, vb)
    assert va._base is a and va.data_ptr() == a.data_ptr()


@pytest.mark.parametrize("make,shape", [
    (lambda x: x.transpose(0, 1), (3, 1, 2, 4)),
    (lambda x: x.transpose(0, 1), (3, 2, 2, 2)),
    (lambda x: x.permute(2, 0, 1), (4, 6)),
    (lambda x: x.narrow(2, 0, 2), (2, 3, 2, 1)),
    (lambda x: x.narrow(0, 1, 1), (12, 1)),
])
def test_view_non_contiguous(make, shape):
    a, b = pair()
    check(make(a).view(*shape), make(b).view(*shape))


def test_view_size_one_strides():
    a, b = pair((3, 1))
    a, b = a.t(), b.t()
    for shape in [(3,), (1, 3, 1), (3, 1, 1), (1, 1, 3)]:
        check(a.view(*shape), b.view(*shape))


def test_size_one_dims_with_odd_strides():
    # (1, 3).t() is (3, 1) with stride (1, 3): NumPy calls it C-contiguous, PyTorch keeps the odd stride.
    a, b = pair((1, 3))
    a, b = a.t(), b.t()
    for shape in [(3,), (3, 1), (1, 3, 1), (1, 1, 3)]:
        check(a.view(*shape), b.view(*shape))
    for d in range(-3, 3):
        check(a.unsqueeze(d), b.unsqueeze(d))
    c, e = pair((2, 1, 3))
    c, e = c.permute(1, 0, 2), e.permute(1, 0, 2)
    check(c.view(6), e.view(6))
    check(c.view(1, 2, 3, 1), e.view(1, 2, 3, 1))
    check(c.unsqueeze(0), e.unsqueeze(0))


def test_view_stepped_and_empty():
    a, b = pair((6,))
    sa, sb = tp.ops.aten.slice.Tensor(a, 0, 0, None, 2), b[::2]
    check(sa.view(3, 1), sb.view(3, 1))
    check(sa.view(1, 3), sb.view(1, 3))
    ea, eb = pair((0, 2))
    check(ea.view(2, 0), eb.view(2, 0))
    check(ea.view(-1), eb.view(-1))
    check(ea.view(0, 1, 2), eb.view(0, 1, 2))


def test_view_errors():
    a, b = pair()
    same_error(lambda: a.view(5, 5), lambda: b.view(5, 5))
    same_error(lambda: a.view(-1, -1), lambda: b.view(-1, -1))
    same_error(lambda: a.view(-1, 5), lambda: b.view(-1, 5))
    same_error(lambda: a.transpose(0, 1).view(24), lambda: b.transpose(0, 1).view(24))
    ea, eb = pair((0, 2))
    same_error(lambda: ea.view(-1, 0), lambda: eb.view(-1, 0))


def test_view_shares_storage():
    a, _ = pair()
    v = a.view(6, 4)
    v.select(0, 0).fill_(5)
    assert (a.numpy()[0, 0, :4] == 5).all()
    assert a._version == 1 and v._version == 1
    assert v._base is a
    vv = v.view(24)
    assert vv._base is a  # views of views point at the root base
    shares(a.view(4, 6), a)


# ---- permute / transpose / t -------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [(2, 0, 1), (0, 1, 2), (-1, -2, -3), (1, 0, 2)])
def test_permute(layout, dims):
    a, b = layout
    if a.dim() != 3:
        dims = tuple(d for d in range(a.dim()))[::-1]
    check(a.permute(*dims), b.permute(*dims))
    check(tp.permute(a, dims), torch.permute(b, dims))


def test_permute_errors():
    a, b = pair()
    same_error(lambda: a.permute(0, 1), lambda: b.permute(0, 1))
    same_error(lambda: a.permute(0, 1, 1), lambda: b.permute(0, 1, 1))
    same_error(lambda: a.permute(0, 1, 3), lambda: b.permute(0, 1, 3))


@pytest.mark.parametrize("d0,d1", [(0, 1), (0, -1), (2, 2), (-3, 1)])
def test_transpose(layout, d0, d1):
    a, b = layout
    if a.dim() < 3:
        d0, d1 = d0 % 2 if d0 >= 0 else -1, d1 % 2
    check(a.transpose(d0, d1), b.transpose(d0, d1))
    check(tp.transpose(a, d0, d1), torch.transpose(b, d0, d1))


def test_transpose_errors_and_0dim():
    a, b = pair()
    same_error(lambda: a.transpose(0, 3), lambda: b.transpose(0, 3))
    s_a, s_b = tp.tensor(3.0), torch.tensor(3.0)
    check(s_a.transpose(0, -1), s_b.transpose(0, -1))


def test_t():
    for shape in [(2, 3), (4,), ()]:
        a, b = pair(shape)
        check(a.t(), b.t())
        check(tp.t(a), torch.t(b))
    a, b = pair()
    same_error(lambda: a.t(), lambda: b.t())


def test_T_and_mT():
    a, b = pair()
    check(a.mT, b.mT)


# ---- expand ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src,size", [
    ((1, 3), (4, 3)), ((1, 3), (-1, 3)), ((1, 3), (2, 4, 3)), ((3, 1), (3, 5)), ((2, 3), (2, 3)),
    ((), (2, 2)), ((1,), (0,)), ((3, 1), (2, -1, 4)),
])
def test_expand(src, size):
    a, b = pair(src)
    check(a.expand(*size), b.expand(*size))
    check(a.expand(size), b.expand(size))


def test_expand_non_contiguous():
    a, b = pair((3, 1, 4))
    a, b = a.transpose(0, 2), b.transpose(0, 2)
    check(a.expand(4, 5, 3), b.expand(4, 5, 3))
    check(a.expand(2, 4, 5, 3), b.expand(2, 4, 5, 3))
    a2, b2 = pair((1, 3))
    check(a2.narrow(1, 1, 2).expand(4, 2), b2[:, 1:].expand(4, 2))


def test_expand_as_and_writes():
    a, b = pair((1, 3))
    o_a, o_b = pair((5, 3))
    check(a.expand_as(o_a), b.expand_as(o_b))
    e = a.expand(4, 3)
    assert e._base is a and e.data_ptr() == a.data_ptr()


def test_expand_errors():
    a, b = pair((2, 3))
    same_error(lambda: a.expand(3), lambda: b.expand(3))
    same_error(lambda: a.expand(3, 3), lambda: b.expand(3, 3))
    same_error(lambda: a.expand(-1, 2, 3), lambda: b.expand(-1, 2, 3))


# ---- squeeze / unsqueeze ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 3, 1, 2), (1,), (), (2, 3), (1, 1), (0, 1)])
def test_squeeze(shape):
    a, b = pair(shape)
    check(a.squeeze(), b.squeeze())
    for d in range(-len(shape), len(shape)):
        check(a.squeeze(d), b.squeeze(d))
    if len(shape) >= 2:
        check(a.squeeze((0, -1)), b.squeeze((0, -1)))
    check(tp.squeeze(a), torch.squeeze(b))


def test_squeeze_non_contiguous_and_errors():
    a, b = pair((1, 3, 1, 2))
    a, b = a.permute(3, 2, 1, 0), b.permute(3, 2, 1, 0)
    check(a.squeeze(), b.squeeze())
    check(a.squeeze(1), b.squeeze(1))
    same_error(lambda: a.squeeze(4), lambda: b.squeeze(4))
    s_a, s_b = tp.tensor(1.0), torch.tensor(1.0)
    check(s_a.squeeze(0), s_b.squeeze(0))
    check(s_a.squeeze(-1), s_b.squeeze(-1))
    same_error(lambda: s_a.squeeze(1), lambda: s_b.squeeze(1))


@pytest.mark.parametrize("shape", [(2, 3), (3,), (), (0,), (2, 0)])
def test_unsqueeze(shape):
    a, b = pair(shape)
    for d in range(-len(shape) - 1, len(shape) + 1):
        check(a.unsqueeze(d), b.unsqueeze(d))


def test_unsqueeze_non_contiguous(layout):
    a, b = layout
    for d in range(-a.dim() - 1, a.dim() + 1):
        check(a.unsqueeze(d), b.unsqueeze(d))
    same_error(lambda: a.unsqueeze(a.dim() + 1), lambda: b.unsqueeze(b.dim() + 1))


# ---- select / slice / narrow -----------------------------------------------------------------------------------------
def test_select(layout):
    a, b = layout
    for d in range(-a.dim(), a.dim()):
        for i in (0, -1, a.shape[d] - 1):
            check(a.select(d, i), b.select(d, i))
    same_error(lambda: a.select(0, a.shape[0]), lambda: b.select(0, b.shape[0]))
    same_error(lambda: a.select(0, -a.shape[0] - 1), lambda: b.select(0, -b.shape[0] - 1))
    same_error(lambda: a.select(a.dim(), 0), lambda: b.select(b.dim(), 0))


def test_select_0dim_error():
    same_error(lambda: tp.tensor(1.0).select(0, 0), lambda: torch.tensor(1.0).select(0, 0))


def test_select_shares():
    a, _ = pair((3, 4))
    s = a.select(0, 1)
    s.fill_(9)
    assert (a.numpy()[1] == 9).all() and a._version == 1
    assert s._base is a and s.storage_offset() == 4


@pytest.mark.parametrize("start,end,step", [
    (None, None, 1), (1, None, 1), (None, -1, 1), (0, 10, 2), (-3, None, 2), (5, 2, 1), (10, 20, 1), (1, 3, 3),
    (-100, 100, 1), (2, 2, 1),
])
def test_slice(layout, start, end, step):
    a, b = layout
    d = a.dim() - 1
    ra = tp.ops.aten.slice.Tensor(a, d, start, end, step)
    rb = torch.ops.aten.slice.Tensor(b, d, start, end, step)
    check(ra, rb)
    check(tp.ops.aten.slice.Tensor(a, 0, start, end, step), torch.ops.aten.slice.Tensor(b, 0, start, end, step))


def test_slice_errors():
    a, b = pair()
    with pytest.raises(ValueError, match="step must be greater than zero"):
        tp.ops.aten.slice.Tensor(a, 0, 0, 2, 0)
    same_error(lambda: tp.ops.aten.slice.Tensor(a, 3, 0, 2, 1), lambda: torch.ops.aten.slice.Tensor(b, 3, 0, 2, 1))


def test_narrow(layout):
    a, b = layout
    check(a.narrow(0, 0, 1), b.narrow(0, 0, 1))
    check(a.narrow(-1, 1, 1), b.narrow(-1, 1, 1))
    same_error(lambda: a.narrow(0, 0, 10), lambda: b.narrow(0, 0, 10))


# ---- alias / detach ----------------------------------------------------------------------------------------------------
def test_alias_and_detach():
    a, b = pair()
    al = tp.ops.aten.alias(a)
    check(al, torch.ops.aten.alias(b))
    assert al._base is a
    d = a.detach()
    check(d, b.detach())
    assert d._base is None  # like PyTorch: detach is not an autograd view
    assert d.data_ptr() == a.data_ptr()
    d.fill_(3)
    assert (a.numpy() == 3).all() and a._version == d._version == 1


# ---- unfold / diagonal ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim,size,step", [(0, 1, 1), (2, 2, 1), (2, 2, 2), (-1, 4, 1), (1, 0, 1), (1, 3, 5)])
def test_unfold(layout, dim, size, step):
    a, b = layout
    if dim >= a.dim():
        dim = -1
    if size > a.shape[dim]:
        same_error(lambda: a.unfold(dim, size, step), lambda: b.unfold(dim, size, step))
    else:
        check(a.unfold(dim, size, step), b.unfold(dim, size, step))


def test_unfold_errors_and_0dim():
    a, b = pair((2, 3))
    same_error(lambda: a.unfold(1, 4, 1), lambda: b.unfold(1, 4, 1))
    same_error(lambda: a.unfold(1, -1, 1), lambda: b.unfold(1, -1, 1))
    same_error(lambda: a.unfold(1, 2, 0), lambda: b.unfold(1, 2, 0))
    s_a, s_b = tp.tensor(5.0), torch.tensor(5.0)
    check(s_a.unfold(0, 1, 1), s_b.unfold(0, 1, 1))
    same_error(lambda: s_a.unfold(0, 2, 1), lambda: s_b.unfold(0, 2, 1))


@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (1, 2, 0), (0, -1, -2), (5, 0, 1), (-5, 1, 2)])
def test_diagonal(layout, offset, d1, d2):
    a, b = layout
    if a.dim() < 3 and (max(d1, d2) >= a.dim() or min(d1, d2) < -a.dim()):
        return
    check(a.diagonal(offset, d1, d2), b.diagonal(offset, d1, d2))


def test_diagonal_errors_and_writes():
    a, b = pair((3, 3))
    same_error(lambda: a.diagonal(0, 1, 1), lambda: b.diagonal(0, 1, 1))
    same_error(lambda: a.diagonal(0, 0, 2), lambda: b.diagonal(0, 0, 2))
    a.diagonal().fill_(-1)
    b.diagonal().fill_(-1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a._version == 1


# ---- as_strided -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size,stride,offset", [
    ((2, 2), (1, 2), 1), ((3,), (0,), 5), ((2, 3), (3, 1), 0), ((4,), (6,), 0), ((0, 3), (3, 1), 100), ((), (), 23),
])
def test_as_strided(size, stride, offset):
    a, b = pair()
    check(a.as_strided(size, stride, offset), b.as_strided(size, stride, offset))
    check(tp.as_strided(a, size, stride, offset), torch.as_strided(b, size, stride, offset))


def test_as_strided_default_offset_and_base():
    a, b = pair()
    sa, sb = a.select(0, 1), b.select(0, 1)
    check(sa.as_strided((2, 2), (1, 2)), sb.as_strided((2, 2), (1, 2)))
    v = sa.as_strided((3,), (1,))
    assert v._base is a
    v.fill_(100)
    assert (a.numpy().reshape(-1)[12:15] == 100).all() and a._version == 1


@pytest.mark.parametrize("size,stride,offset", [
    ((2, 3), (3, 1), 19), ((25,), (1,), 0), ((2, 3), (-3, 1), 0), ((2, -3), (3, 1), 0), ((2,), (1,), -1),
    ((2,), (1, 2), 0),
])
def test_as_strided_errors(size, stride, offset):
    a, b = pair()
    same_error(lambda: a.as_strided(size, stride, offset), lambda: b.as_strided(size, stride, offset))


def test_as_strided_from_numpy_transposed_root():
    base = np.arange(12.0).reshape(3, 4)
    t = tp.from_numpy(base.T)  # root is F-ordered
    ref = torch.from_numpy(base.T)
    check(t, ref)
    check(t.as_strided((3,), (1,), 2), ref.as_strided((3,), (1,), 2))
    check(t.as_strided((2, 6), (6, 1), 0), ref.as_strided((2, 6), (6, 1), 0))
    same_error(lambda: t.as_strided((13,), (1,), 0), lambda: ref.as_strided((13,), (1,), 0))
    t.as_strided((2,), (1,), 0).fill_(-1)
    assert base[0, 0] == -1 and base[0, 1] == -1  # memory order of the root


def test_as_strided_from_numpy_strided_root():
    big = np.arange(20.0)
    t = tp.from_numpy(big[2:12:2])  # every other element: storage spans 9 elements
    ref = torch.from_numpy(big[2:12:2])
    check(t, ref)
    check(t.as_strided((9,), (1,), 0), ref.as_strided((9,), (1,), 0))
    check(t.select(0, 2), ref.select(0, 2))
    same_error(lambda: t.as_strided((10,), (1,), 0), lambda: ref.as_strided((10,), (1,), 0))


def test_from_numpy_memory_sharing_through_views():
    arr = np.zeros((2, 3), dtype=np.float32)
    t = tp.from_numpy(arr)
    t.t().select(0, 1).fill_(4)
    assert (arr[:, 1] == 4).all()
    arr[0, 0] = 7
    assert t.view(6).numpy()[0] == 7


# ---- view(dtype) ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src,dst", [
    ("float32", "int32"), ("float32", "float64"), ("float32", "int16"), ("float64", "uint8"), ("int64", "float32"),
    ("uint8", "bool"), ("int32", "float32"), ("float32", "float32"), ("int16", "bfloat16"), ("complex64", "float64"),
    ("float32", "complex64"),
])
def test_view_dtype(src, dst):
    a, b = pair((3, 4), src)
    tdst = getattr(torch, dst)
    if dst == "bool":
        a, b = pair((3, 4), "uint8")
        a.fill_(1)
        b.fill_(1)
    ra, rb = a.view(getattr(tp, dst if dst != "bool" else "bool")), b.view(tdst)
    assert tuple(ra.shape) == tuple(rb.shape) and ra.stride() == rb.stride()
    assert ra.storage_offset() == rb.storage_offset()
    ours = ra.numpy()
    theirs = rb.float().numpy() if dst == "bfloat16" else rb.numpy()
    np.testing.assert_array_equal(ours.astype(theirs.dtype) if dst == "bfloat16" else ours, theirs)
    assert ra._base is a


def test_view_dtype_offsets_and_errors():
    a, b = pair((3, 6))
    check(a.narrow(1, 2, 4).view(tp.float64), b[:, 2:6].view(torch.float64))
    check(a.narrow(1, 1, 4).view(tp.int16), b[:, 1:5].view(torch.int16))
    c, d = pair((2, 3))
    same_error(lambda: c.view(tp.float64), lambda: d.view(torch.float64))
    same_error(lambda: tp.tensor(1.0).view(tp.float64), lambda: torch.tensor(1.0).view(torch.float64))
    same_error(lambda: c.t().view(tp.float64), lambda: d.t().view(torch.float64))
    e, f = pair((8,))
    same_error(lambda: e.narrow(0, 1, 6).view(tp.float64), lambda: f[1:7].view(torch.float64))
    g, h = pair((3, 5))
    same_error(lambda: g.narrow(1, 0, 4).view(tp.float64), lambda: h[:, :4].view(torch.float64))


def test_view_dtype_writes_through():
    a = tp.zeros(4, dtype=tp.float32)
    before = a._version
    a.view(tp.int32).fill_(0x3F800000)  # bit pattern of 1.0
    np.testing.assert_array_equal(a.numpy(), np.ones(4, np.float32))
    assert a._version == before + 1


# ---- split / chunk / unbind keep sharing (composites over the direct kernels) ---------------------------------------------------
def test_split_chunk_unbind_share_storage():
    a, b = pair((4, 6))
    for pa, pb in zip(tp.split(a, 4, 1), torch.split(b, 4, 1)):
        check(pa, pb)
        assert pa._base is a
    for pa, pb in zip(a.chunk(3, 0), b.chunk(3, 0)):
        check(pa, pb)
    for pa, pb in zip(a.unbind(1), b.unbind(1)):
        check(pa, pb)
    check(tp.stack([a, a], 1), torch.stack([b, b], 1))
    check(a.flatten(), b.flatten())
    check(a.t().reshape(24), b.t().reshape(24))
    assert a.reshape(24)._base is a


def test_views_bfloat16_and_bool():
    x = tp.zeros(2, 3, dtype=tp.bfloat16)
    v = x.t().unsqueeze(0).expand(2, 3, 2)
    assert v.shape == (2, 3, 2) and v.stride() == (0, 1, 3) and v.dtype is tp.bfloat16
    x.t().select(0, 1).fill_(2.5)
    assert float(x.numpy()[1, 1]) == 2.5
    m = tp.zeros(3, 4, dtype=tp.bool).permute(1, 0).view(tp.uint8)
    assert m.dtype is tp.uint8 and m.stride() == (1, 4)
