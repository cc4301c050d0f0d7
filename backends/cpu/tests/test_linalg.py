"""cpu matrix-product kernels against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def pair(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed + len(shape))
    if dtype.startswith("int") or dtype == "uint8":
        arr = rng.integers(-5 if dtype != "uint8" else 0, 6, size=shape)
    else:
        arr = rng.standard_normal(shape)
    if dtype == "bfloat16":
        return tp.from_numpy(arr.astype(np.float32)).to(tp.bfloat16), torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    arr = arr.astype(dtype)
    return tp.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def vals(t):
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()
    return t.float().numpy() if t.dtype in (tp.bfloat16, tp.float16) else t.numpy()


def check(a, b, rtol=1e-5, atol=1e-5):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    if a.numel():
        assert a.stride() == b.stride()
    np.testing.assert_allclose(vals(a), vals(b), rtol=rtol, atol=atol)


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


TOL = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-5, "float64": 1e-12, "int64": 0, "int32": 0, "complex64": 1e-5,
       "uint8": 0, "int8": 0}


# ---- mm ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(TOL))
def test_mm_dtypes(dtype):
    a, b = pair((3, 4), dtype)
    c, d = pair((4, 5), dtype, seed=1)
    if dtype == "complex64":
        a, b = a.to(tp.complex64), b.to(torch.complex64)
    if dtype in ("uint8", "int8"):
        # small values: no overflow differences
        check(tp.mm(a, c), torch.mm(b, d), rtol=0, atol=0)
        return
    check(tp.mm(a, c), torch.mm(b, d), rtol=TOL[dtype], atol=TOL[dtype] * 10)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_mm_non_contiguous(ta, tb):
    a, b = pair((4, 3) if ta else (3, 4))
    c, d = pair((5, 4) if tb else (4, 5), seed=3)
    if ta:
        a, b = a.t(), b.t()
    if tb:
        c, d = c.t(), d.t()
    check(a.mm(c), b.mm(d))
    check(a @ c, b @ d)


def test_mm_empty_and_strided():
    check(tp.mm(tp.ones(0, 3), tp.ones(3, 2)), torch.mm(torch.ones(0, 3), torch.ones(3, 2)))
    check(tp.mm(tp.ones(2, 0), tp.ones(0, 2)), torch.mm(torch.ones(2, 0), torch.ones(0, 2)))
    a, b = pair((6, 4))
    sa = tp.ops.aten.slice.Tensor(a, 0, 0, None, 2)
    check(tp.mm(sa, a.t()), torch.mm(b[::2], b.t()))


def test_mm_errors():
    same_error(lambda: tp.mm(tp.ones(2, 3), tp.ones(4, 5)), lambda: torch.mm(torch.ones(2, 3), torch.ones(4, 5)))
    same_error(lambda: tp.mm(tp.ones(2, 3), tp.ones(3)), lambda: torch.mm(torch.ones(2, 3), torch.ones(3)))
    same_error(lambda: tp.mm(tp.ones(3), tp.ones(2, 3)), lambda: torch.mm(torch.ones(3), torch.ones(2, 3)))
    for dt in ["float64", "int64", "int32", "int16", "int8", "uint8", "bool", "float16", "bfloat16", "complex64"]:
        same_error(lambda: tp.mm(tp.ones(2, 3), tp.ones(3, 2, dtype=getattr(tp, dt))),
                   lambda: torch.mm(torch.ones(2, 3), torch.ones(3, 2, dtype=getattr(torch, dt))))
    same_error(lambda: tp.mm(tp.ones(2, 3, dtype=tp.bool), tp.ones(3, 2, dtype=tp.bool)),
               lambda: torch.mm(torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 2, dtype=torch.bool)))


# ---- bmm / mv / dot -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bfloat16"])
def test_bmm(dtype):
    a, b = pair((2, 3, 4), dtype)
    c, d = pair((2, 4, 5), dtype, seed=5)
    check(tp.bmm(a, c), torch.bmm(b, d), rtol=TOL[dtype], atol=TOL[dtype] * 10)
    check(tp.bmm(a.transpose(1, 2).transpose(1, 2), c.permute(0, 2, 1).permute(0, 2, 1)),
          torch.bmm(b, d), rtol=TOL[dtype], atol=TOL[dtype] * 10)
    check(a.bmm(c), b.bmm(d), rtol=TOL[dtype], atol=TOL[dtype] * 10)


def test_bmm_errors():
    same_error(lambda: tp.bmm(tp.ones(2, 3), tp.ones(2, 3, 4)), lambda: torch.bmm(torch.ones(2, 3), torch.ones(2, 3, 4)))
    same_error(lambda: tp.bmm(tp.ones(2, 2, 3), tp.ones(3, 5)), lambda: torch.bmm(torch.ones(2, 2, 3), torch.ones(3, 5)))
    same_error(lambda: tp.bmm(tp.ones(2, 2, 3), tp.ones(2, 4, 5)), lambda: torch.bmm(torch.ones(2, 2, 3), torch.ones(2, 4, 5)))
    same_error(lambda: tp.bmm(tp.ones(2, 2, 3), tp.ones(3, 3, 5)), lambda: torch.bmm(torch.ones(2, 2, 3), torch.ones(3, 3, 5)))
    same_error(lambda: tp.bmm(tp.ones(2, 2, 3), tp.ones(2, 3, 5, dtype=tp.float64)),
               lambda: torch.bmm(torch.ones(2, 2, 3), torch.ones(2, 3, 5, dtype=torch.float64)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_mv_dot(dtype):
    a, b = pair((3, 4), dtype)
    v, w = pair((4,), dtype, seed=7)
    check(tp.mv(a, v), torch.mv(b, w))
    check(tp.mv(a.t().contiguous().t(), v), torch.mv(b, w))
    check(tp.dot(v, v), torch.dot(w, w))
    check(v.dot(v), w.dot(w))
    x, y = pair((8,), dtype)
    sx = tp.ops.aten.slice.Tensor(x, 0, 0, None, 2)
    check(tp.dot(sx, v), torch.dot(y[::2], w))


def test_mv_dot_errors():
    same_error(lambda: tp.mv(tp.ones(2, 3), tp.ones(4)), lambda: torch.mv(torch.ones(2, 3), torch.ones(4)))
    same_error(lambda: tp.mv(tp.ones(2, 3), tp.ones(3, 1)), lambda: torch.mv(torch.ones(2, 3), torch.ones(3, 1)))
    same_error(lambda: tp.mv(tp.ones(3), tp.ones(3)), lambda: torch.mv(torch.ones(3), torch.ones(3)))
    same_error(lambda: tp.mv(tp.ones(2, 3), tp.ones(3, dtype=tp.float64)),
               lambda: torch.mv(torch.ones(2, 3), torch.ones(3, dtype=torch.float64)))
    same_error(lambda: tp.dot(tp.ones(2, 3), tp.ones(2, 3)), lambda: torch.dot(torch.ones(2, 3), torch.ones(2, 3)))
    same_error(lambda: tp.dot(tp.ones(3), tp.ones(4)), lambda: torch.dot(torch.ones(3), torch.ones(4)))
    same_error(lambda: tp.dot(tp.ones(3), tp.ones(3, dtype=tp.float64)),
               lambda: torch.dot(torch.ones(3), torch.ones(3, dtype=torch.float64)))
    same_error(lambda: tp.dot(tp.ones(3, dtype=tp.bool), tp.ones(3, dtype=tp.bool)),
               lambda: torch.dot(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)))


def test_dot_int_and_complex():
    check(tp.dot(tp.ones(3, dtype=tp.int32), tp.ones(3, dtype=tp.int32)),
          torch.dot(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32)))
    z = tp.tensor([1 + 1j, 2 - 1j], dtype=tp.complex64)
    zr = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
    check(tp.dot(z, z), torch.dot(zr, zr))


# ---- addmm -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias_shape", [(2, 3), (3,), (1, 3), (2, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (2, 3), (0, 1), (0.5, -1.5)])
def test_addmm(bias_shape, beta, alpha):
    s, sr = pair(bias_shape, seed=11)
    a, b = pair((2, 4))
    c, d = pair((4, 3), seed=2)
    check(tp.addmm(s, a, c, beta=beta, alpha=alpha), torch.addmm(sr, b, d, beta=beta, alpha=alpha))


def test_addmm_beta_zero_ignores_nan_and_int():
    check(tp.addmm(tp.full((2, 3), float("nan")), tp.ones(2, 3), tp.ones(3, 3), beta=0),
          torch.addmm(torch.full((2, 3), float("nan")), torch.ones(2, 3), torch.ones(3, 3), beta=0))
    args_tp = (tp.ones(3, dtype=tp.int64), tp.ones(2, 3, dtype=tp.int64), tp.ones(3, 3, dtype=tp.int64))
    args_t = (torch.ones(3, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64), torch.ones(3, 3, dtype=torch.int64))
    check(tp.addmm(*args_tp, beta=0.5), torch.addmm(*args_t, beta=0.5))
    check(tp.addmm(*args_tp, beta=2, alpha=3), torch.addmm(*args_t, beta=2, alpha=3))


def test_addmm_inplace_and_errors():
    s, sr = pair((2, 3))
    v0 = s._version
    out = s.addmm_(tp.ones(2, 4), tp.ones(4, 3), alpha=2)
    sr.addmm_(torch.ones(2, 4), torch.ones(4, 3), alpha=2)
    assert out is s and s._version == v0 + 1
    check(s, sr)
    same_error(lambda: tp.ones(3).addmm_(tp.ones(2, 3), tp.ones(3, 3)), lambda: torch.ones(3).addmm_(torch.ones(2, 3), torch.ones(3, 3)))
    same_error(lambda: tp.addmm(tp.ones(4), tp.ones(2, 3), tp.ones(3, 3)), lambda: torch.addmm(torch.ones(4), torch.ones(2, 3), torch.ones(3, 3)))
    same_error(lambda: tp.addmm(tp.ones(3, dtype=tp.float64), tp.ones(2, 3), tp.ones(3, 3)),
               lambda: torch.addmm(torch.ones(3, dtype=torch.float64), torch.ones(2, 3), torch.ones(3, 3)))
    same_error(lambda: tp.addmm(tp.ones(2, 3), tp.ones(2, 3), tp.ones(4, 3)), lambda: torch.addmm(torch.ones(2, 3), torch.ones(2, 3), torch.ones(4, 3)))


def test_mm_out():
    out, out_r = tp.empty(2, 2), torch.empty(2, 2)
    tp.mm(tp.ones(2, 3), tp.ones(3, 2), out=out)
    torch.mm(torch.ones(2, 3), torch.ones(3, 2), out=out_r)
    check(out, out_r)


# ---- matmul (the composite over these kernels) -------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
])
def test_matmul_shapes(sa, sb):
    a, b = pair(sa)
    c, d = pair(sb, seed=9)
    check(tp.matmul(a, c), torch.matmul(b, d))
    check(a @ c, b @ d)


def test_matmul_errors():
    same_error(lambda: tp.matmul(tp.ones(3), tp.ones(4)), lambda: torch.matmul(torch.ones(3), torch.ones(4)))
    same_error(lambda: tp.matmul(tp.ones(2, 3), tp.ones(4)), lambda: torch.matmul(torch.ones(2, 3), torch.ones(4)))
    same_error(lambda: tp.matmul(tp.ones(5, 2, 3), tp.ones(4, 5)), lambda: torch.matmul(torch.ones(5, 2, 3), torch.ones(4, 5)))
    same_error(lambda: tp.matmul(tp.ones(5, 2, 3), tp.ones(3, 5, dtype=tp.float64)),
               lambda: torch.matmul(torch.ones(5, 2, 3), torch.ones(3, 5, dtype=torch.float64)))
