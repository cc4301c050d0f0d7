"""cpu allocation, copy_ and fill_ kernels against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def to_torch(t):
    if t.dtype is tp.bfloat16:
        return torch.from_numpy(t.float().numpy().copy()).to(torch.bfloat16)
    return torch.from_numpy(np.array(t.numpy()))


def values(t):
    """Comparable NumPy values of a torchplug or torch tensor."""
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return t.float().numpy() if t.dtype is tp.bfloat16 else t.numpy()


def check(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.stride() == b.stride(), (a.stride(), b.stride())
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(values(a), values(b))


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value).replace("torchplug.", "torch.") == str(theirs.value).split("\n")[0]


# ---- empty / empty_strided -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(dtype):
    t = tp.empty(2, 3, dtype=getattr(tp, dtype))
    r = torch.empty(2, 3, dtype=getattr(torch, dtype))
    assert t.shape == r.shape and t.stride() == r.stride() and t.dtype.name == dtype
    assert t._base is None and t._version == 0 and t.storage_offset() == 0


def test_empty_shapes_and_errors():
    for shape in [(), (0,), (2, 0, 3), (1, 1)]:
        t, r = tp.empty(shape), torch.empty(shape)
        assert t.shape == r.shape and t.stride() == r.stride() and t.dtype is tp.float32
    same_error(lambda: tp.ops.aten.empty.memory_format([2, -1]), lambda: torch.ops.aten.empty.memory_format([2, -1]))


@pytest.mark.parametrize("size,stride", [
    ((2, 3), (1, 2)), ((2, 3), (0, 0)), ((2, 3), (3, 1)), ((2, 0), (5, 0)), ((4,), (3,)), ((), ()), ((2, 3), (1, 5)),
])
def test_empty_strided(size, stride):
    t = tp.empty_strided(size, stride)
    r = torch.empty_strided(size, stride)
    assert t.shape == r.shape and t.stride() == r.stride() and t.storage_offset() == 0
    assert t.untyped_storage().nbytes == r.untyped_storage().nbytes()
    assert t._base is None
    t.fill_(2)
    assert (t.numpy() == 2).all()


def test_empty_strided_errors():
    same_error(lambda: tp.empty_strided((2, 3), (-1, 0)), lambda: torch.empty_strided((2, 3), (-1, 0)))
    same_error(lambda: tp.empty_strided((2, 3), (1,)), lambda: torch.empty_strided((2, 3), (1,)))


def test_empty_strided_as_strided_roundtrip():
    t = tp.empty_strided((2, 3), (1, 2), dtype=tp.int64)
    t.copy_(tp.tensor([[1, 2, 3], [4, 5, 6]]))
    r = torch.empty_strided((2, 3), (1, 2), dtype=torch.int64)
    r.copy_(torch.tensor([[1, 2, 3], [4, 5, 6]]))
    check(t, r)
    check(t.as_strided((6,), (1,), 0), r.as_strided((6,), (1,), 0))


# ---- copy_ --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"])
def test_copy_casts(src, dst):
    data = np.array([[0, 1.75, -2.5], [3.25, 100.5, -0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_src = torch.from_numpy(data).to(getattr(torch, src)) if src != "bool" else torch.from_numpy(data != 0)
        ours_src = tp.from_numpy(data).to(getattr(tp, src)) if src != "bool" else tp.from_numpy(data != 0)
        if "int" in dst and src.startswith(("float", "bfloat", "complex")):
            ref_src, ours_src = ref_src.abs(), ours_src.abs()  # negative float -> unsigned is undefined
        r = torch.empty(2, 3, dtype=getattr(torch, dst)).copy_(ref_src)
        t = tp.empty(2, 3, dtype=getattr(tp, dst)).copy_(ours_src)
    check(t, r)


def test_copy_broadcast_and_layouts():
    src_np = np.arange(3, dtype=np.float32)
    t = tp.zeros(4, 3).copy_(tp.from_numpy(src_np))
    r = torch.zeros(4, 3).copy_(torch.from_numpy(src_np))
    check(t, r)
    # non-contiguous destination and source
    t = tp.zeros(3, 4)
    r = torch.zeros(3, 4)
    s_t = tp.arange(12.0).view(4, 3)
    s_r = torch.arange(12.0).view(4, 3)
    t.t().copy_(s_t)
    r.t().copy_(s_r)
    check(t, r)
    t.narrow(1, 1, 2).copy_(s_t.t().narrow(1, 0, 2))
    r.narrow(1, 1, 2).copy_(s_r.t().narrow(1, 0, 2))
    check(t, r)
    # 0-dim source
    check(tp.zeros(2, 2).copy_(tp.tensor(5)), torch.zeros(2, 2).copy_(torch.tensor(5)))
    check(tp.zeros(2).copy_(5), torch.zeros(2).copy_(5))


def test_copy_errors():
    same_error(lambda: tp.empty(2, 3).copy_(tp.ones(4)), lambda: torch.empty(2, 3).copy_(torch.ones(4)))
    same_error(lambda: tp.empty(3).copy_(tp.ones(1, 3)), lambda: torch.empty(3).copy_(torch.ones(1, 3)))
    same_error(lambda: tp.empty(3).copy_(tp.ones(2, 3)), lambda: torch.empty(3).copy_(torch.ones(2, 3)))
    same_error(lambda: tp.zeros(1).expand(3).copy_(tp.ones(3)), lambda: torch.zeros(1).expand(3).copy_(torch.ones(3)))
    y, z = tp.arange(5.0), torch.arange(5.0)
    same_error(lambda: y.narrow(0, 1, 4).copy_(y.narrow(0, 0, 4)), lambda: z[1:].copy_(z[:-1]))


def test_copy_overlap_allowed_cases():
    a = tp.arange(4.0)
    a.copy_(a)
    np.testing.assert_array_equal(a.numpy(), np.arange(4.0))
    a.narrow(0, 0, 2).copy_(a.narrow(0, 2, 2))  # same storage, disjoint ranges
    np.testing.assert_array_equal(a.numpy(), [2, 3, 2, 3])
    m = tp.arange(4.0).view(2, 2)
    m.t().copy_(m)  # full overlap: NumPy buffers, the result is the transpose
    np.testing.assert_array_equal(m.numpy(), [[0, 2], [1, 3]])


def test_copy_complex_to_real_warns():
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        t = tp.zeros(2).copy_(tp.tensor([1 + 2j, 3 - 1j]))
    np.testing.assert_array_equal(t.numpy(), [1, 3])


def test_copy_version_and_view_writes():
    base = tp.zeros(2, 3)
    v0 = base._version
    row = base.select(0, 1)
    row.copy_(tp.tensor([1.0, 2.0, 3.0]))
    assert base._version == row._version == v0 + 1
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0], [1, 2, 3]])


def test_copy_from_numpy_shares():
    arr = np.zeros(3)
    t = tp.from_numpy(arr)
    t.copy_(tp.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(arr, [1, 2, 3])


def test_clone_and_to_use_copy():
    # clone()/to() keep a dense permuted layout (preserve_format), as torch does
    a = tp.arange(6).view(2, 3).t()
    r = torch.arange(6).view(2, 3).t()
    c = a.clone()
    assert c.stride() == r.clone().stride() == (1, 3) and c._base is None and c._version == 0
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    d = a.to(tp.float64)
    assert d.dtype is tp.float64 and d.stride() == r.to(torch.float64).stride()
    assert a.clone(memory_format=tp.contiguous_format).stride() == (2, 1)
    sliced = tp.arange(12.0).reshape(3, 4)[:, ::2]
    assert sliced.clone().stride() == torch.arange(12.0).reshape(3, 4)[:, ::2].clone().stride()
    check(a.contiguous(), r.contiguous())


def test_copy_from_meta_raises():
    pytest.importorskip("torchplug_meta")
    m = tp.empty(3, device="meta")
    with pytest.raises(Exception):
        tp.empty(3).copy_(m)


# ---- fill_ -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("value", [0, 1, 2.7, -2.7, True, 1e300, 2**40, -1, 300, -255, -256, float("inf"), float("nan"),
                                   1 + 2j, 1 + 0j])
def test_fill_scalar(dtype, value):
    if isinstance(value, float) and value != value and dtype in ("uint8", "int8", "int16", "int32", "int64"):
        return  # NaN -> int is undefined behaviour in PyTorch
    if isinstance(value, float) and abs(value) == float("inf") and dtype in ("uint8", "int8", "int16", "int32", "int64"):
        return
    if dtype == "uint8" and isinstance(value, float) and value < 0:
        return  # negative float -> unsigned is undefined
    tdt, rdt = getattr(tp, dtype), getattr(torch, dtype)
    try:
        r = torch.zeros(3, dtype=rdt).fill_(value)
    except Exception as e:
        with pytest.raises(type(e)) as ours:
            tp.zeros(3, dtype=tdt).fill_(value)
        assert str(ours.value) == str(e).split("\n")[0]
        return
    t = tp.zeros(3, dtype=tdt).fill_(value)
    check(t, r)


def test_fill_huge_int():
    same_error(lambda: tp.zeros(1).fill_(2**70), lambda: torch.zeros(1).fill_(2**70))


def test_fill_tensor():
    check(tp.zeros(3, dtype=tp.int32).fill_(tp.tensor(2.5)), torch.zeros(3, dtype=torch.int32).fill_(torch.tensor(2.5)))
    check(tp.zeros(2, dtype=tp.int8).fill_(tp.tensor(300)), torch.zeros(2, dtype=torch.int8).fill_(torch.tensor(300)))
    check(tp.zeros(2).fill_(tp.tensor(3)), torch.zeros(2).fill_(torch.tensor(3)))
    same_error(lambda: tp.zeros(3).fill_(tp.ones(2)), lambda: torch.zeros(3).fill_(torch.ones(2)))
    same_error(lambda: tp.zeros(3).fill_(tp.ones(1)), lambda: torch.zeros(3).fill_(torch.ones(1)))


def test_fill_views_and_versions():
    base = tp.zeros(3, 4)
    v0 = base._version
    base.t().narrow(0, 1, 2).fill_(7)
    ref = torch.zeros(3, 4)
    ref.t()[1:3].fill_(7)
    check(base, ref)
    assert base._version == v0 + 1
    check(tp.zeros(1).expand(3).fill_(1), torch.zeros(1).expand(3).fill_(1))  # PyTorch allows this one


def test_zero_and_factories_over_fill():
    check(tp.full((2, 2), 3), torch.full((2, 2), 3))
    check(tp.full((2,), True), torch.full((2,), True))
    check(tp.ones(2, 3, dtype=tp.int8), torch.ones(2, 3, dtype=torch.int8))
    t = tp.ones(3)
    t.zero_()
    np.testing.assert_array_equal(t.numpy(), np.zeros(3))
