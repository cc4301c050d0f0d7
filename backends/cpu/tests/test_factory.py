"""cpu factory kernels against PyTorch: arange, linspace, logspace, eye, randperm."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def vals(t):
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype in (torch.bfloat16,) else t.numpy()
    return t.float().numpy() if t.dtype is tp.bfloat16 else t.numpy()


def check(a, b, rtol=0.0, atol=0.0):
    assert tuple(a.shape) == tuple(b.shape)
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    assert a.stride() == b.stride()
    if rtol or atol:
        np.testing.assert_allclose(vals(a), vals(b), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(vals(a), vals(b))


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


def kw(dtype):
    return ({"dtype": getattr(tp, dtype)}, {"dtype": getattr(torch, dtype)}) if dtype else ({}, {})


# ---- arange ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,dtype", [
    ((5,), None), ((2, 9), None), ((0, 10, 3), None), ((10, 0, -3), None), ((0, 1, 0.1), None), ((1, 0, -0.3), None),
    ((0.5, 5, 1), "int64"), ((-1.5, 2.5), "int64"), ((-1.5, 2.5), "int32"), ((0, 10, 3), "float16"), ((0, 10, 3), "bfloat16"),
    ((0, 5), "float64"), ((-3, 3), "int8"), ((0, 0), None), ((0, 2.5, 0.5), None), ((1e10, 1e10 + 5), "int64"),
    ((0, 1, 1 / 3), "float64"), ((-5, 5, 0.7), "float32"), ((0, 10), "uint8"),
])
def test_arange(args, dtype):
    a, b = kw(dtype)
    check(tp.arange(*args, **a), torch.arange(*args, **b))


def test_arange_default_dtype_and_out():
    check(tp.arange(3.0), torch.arange(3.0))
    check(tp.arange(0, 3, dtype=tp.float32), torch.arange(0, 3, dtype=torch.float32))
    out, out_r = tp.empty(0, dtype=tp.int64), torch.empty(0, dtype=torch.int64)
    tp.arange(4, out=out)
    torch.arange(4, out=out_r)
    check(out, out_r)


def test_arange_errors():
    same_error(lambda: tp.arange(5, 0), lambda: torch.arange(5, 0))
    same_error(lambda: tp.arange(0, 5, -1), lambda: torch.arange(0, 5, -1))
    same_error(lambda: tp.arange(0, 5, 0), lambda: torch.arange(0, 5, 0))
    same_error(lambda: tp.arange(0, 5, 0.5, dtype=tp.int64), lambda: torch.arange(0, 5, 0.5, dtype=torch.int64))
    same_error(lambda: tp.arange(0, 5, dtype=tp.bool), lambda: torch.arange(0, 5, dtype=torch.bool))


# ---- linspace / logspace ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,dtype", [
    ((0, 1, 5), None), ((0, 10, 4), "int64"), ((-3, 10, 7), "int32"), ((0, 1, 1), None), ((0, 1, 0), None),
    ((-1, 1, 11), "float64"), ((3, -2, 6), "float32"), ((0, 1, 2), None), ((1, 100, 50), "float32"), ((0, 1, 5), "uint8"),
])
def test_linspace(args, dtype):
    a, b = kw(dtype)
    # PyTorch's vectorized kernel rounds differently depending on the CPU's vector width: allow an ulp or so.
    exact = dtype is not None and ("int" in dtype)
    check(tp.linspace(*args, **a), torch.linspace(*args, **b), rtol=0 if exact else 1e-6, atol=0 if exact else 1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64"])
def test_linspace_other_dtypes(dtype):
    a, b = kw(dtype)
    check(tp.linspace(0, 1, 7, **a), torch.linspace(0, 1, 7, **b), rtol=1e-2, atol=1e-3)


def test_linspace_errors():
    same_error(lambda: tp.linspace(0, 5, -1), lambda: torch.linspace(0, 5, -1))
    same_error(lambda: tp.linspace(0, 1, 3, dtype=tp.bool), lambda: torch.linspace(0, 1, 3, dtype=torch.bool))


@pytest.mark.parametrize("args,kwargs", [
    ((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((0, 2, 1), {}), ((-2, 2, 9), {}), ((0, 3, 4), {"base": 2.5}),
    ((0, 1, 0), {}),
])
def test_logspace(args, kwargs):
    check(tp.logspace(*args, **kwargs), torch.logspace(*args, **kwargs), rtol=1e-6)
    check(tp.logspace(*args, dtype=tp.float64, **kwargs), torch.logspace(*args, dtype=torch.float64, **kwargs), rtol=1e-12)


def test_logspace_int():
    check(tp.logspace(0, 2, 3, base=2, dtype=tp.int64), torch.logspace(0, 2, 3, base=2, dtype=torch.int64))
    check(tp.logspace(0, 3, 4, dtype=tp.int32), torch.logspace(0, 3, 4, dtype=torch.int32))


# ---- eye ------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args,dtype", [((3,), None), ((2, 3), "int64"), ((3, 2), None), ((0,), None), ((3,), "bool"),
                                        ((1, 0), "float64")])
def test_eye(args, dtype):
    a, b = kw(dtype)
    check(tp.eye(*args, **a), torch.eye(*args, **b))


def test_eye_errors():
    same_error(lambda: tp.eye(-1), lambda: torch.eye(-1))
    same_error(lambda: tp.eye(2, -1), lambda: torch.eye(2, -1))


# ---- randperm -------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,dtype", [(10, None), (0, None), (1, None), (5, "float32"), (100, "int32"), (7, "int16")])
def test_randperm(n, dtype):
    a, b = kw(dtype)
    t, r = tp.randperm(n, **a), torch.randperm(n, **b)
    assert t.shape == r.shape and t.dtype.name == str(r.dtype).removeprefix("torch.") and t.stride() == r.stride()
    np.testing.assert_array_equal(np.sort(t.numpy()), np.arange(n))


def test_randperm_seeded_and_generator():
    tp.manual_seed(3)
    a = tp.randperm(20)
    tp.manual_seed(3)
    b = tp.randperm(20)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g1, g2 = tp.Generator().manual_seed(1), tp.Generator().manual_seed(1)
    np.testing.assert_array_equal(tp.randperm(50, generator=g1).numpy(), tp.randperm(50, generator=g2).numpy())
    assert not np.array_equal(tp.randperm(50, generator=g1).numpy(), np.arange(50))


def test_randperm_errors():
    same_error(lambda: tp.randperm(300, dtype=tp.int8), lambda: torch.randperm(300, dtype=torch.int8))
    with pytest.raises(RuntimeError):
        tp.randperm(-1)
