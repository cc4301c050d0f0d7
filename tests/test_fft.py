"""torchplug.fft against the installed PyTorch: values in float32/float64 and complex, result dtypes, shapes
and strides, ``norm``/``n``/``s``/``dim`` handling, ``out=``, the lazy conjugate of inverse real transforms,
gradients (torch's gradients and finite-difference gradcheck), errors, and the emulated cuda backend.

The conformance suite (``torchplug/testing/opinfos/fft.py``) runs the same functions on every backend;
these tests cover what it does not: autograd, laziness, the import forms and edge cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(17)
REAL_IN = ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn", "ifftn", "rfftn", "ihfftn")
COMPLEX_IN = ("fft", "ifft", "irfft", "hfft", "fft2", "ifft2", "irfft2", "hfft2", "fftn", "ifftn", "irfftn", "hfftn")
NORMS = (None, "backward", "ortho", "forward")


def _real(shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _complex(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _check(a, b, rtol, atol):
    assert _name(a.dtype) == _name(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    assert a.stride() == b.stride()
    assert a.is_conj() == b.is_conj()
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(), b.detach().resolve_conj().numpy(),
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", REAL_IN)
def test_real_input_matches_torch(name, norm):
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        x = _real((3, 4, 6), dtype)
        _check(getattr(tp.fft, name)(tp.tensor(x), norm=norm), getattr(torch.fft, name)(torch.tensor(x), norm=norm),
               tol, tol)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", COMPLEX_IN)
def test_complex_input_matches_torch(name, norm):
    for dtype, tol in ((np.complex128, 1e-10), (np.complex64, 2e-5)):
        x = _complex((3, 4, 5), dtype)
        _check(getattr(tp.fft, name)(tp.tensor(x), norm=norm), getattr(torch.fft, name)(torch.tensor(x), norm=norm),
               tol, tol)


@pytest.mark.parametrize("kwargs", [{"n": 3}, {"n": 11, "dim": 0}, {"dim": -2, "norm": "ortho"}])
@pytest.mark.parametrize("name", ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
def test_one_dim_n_and_dim(name, kwargs):
    x = _complex((5, 6)) if name in ("irfft", "hfft") else _real((5, 6))
    _check(getattr(tp.fft, name)(tp.tensor(x), **kwargs), getattr(torch.fft, name)(torch.tensor(x), **kwargs),
           1e-10, 1e-10)


@pytest.mark.parametrize("kwargs", [{"s": (4, 9)}, {"s": (3, -1), "dim": (2, 0)}, {"dim": (0, 2)}, {"dim": 1},
                                    {"s": (2, 3, 4)}])
@pytest.mark.parametrize("name", ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"))
def test_n_dim_s_and_dim(name, kwargs):
    x = _complex((3, 5, 6)) if name in ("irfftn", "hfftn") else _real((3, 5, 6))
    # a transposed input: results follow PyTorch's layout rule for the batch dims
    _check(getattr(tp.fft, name)(tp.tensor(x).transpose(0, 2), **kwargs),
           getattr(torch.fft, name)(torch.tensor(x).transpose(0, 2), **kwargs), 1e-10, 1e-10)


def test_dtype_rules():
    ints = np.arange(8)
    for name in ("fft", "rfft", "ihfft", "fftn"):
        a, b = getattr(tp.fft, name)(tp.tensor(ints)), getattr(torch.fft, name)(torch.tensor(ints))
        assert _name(a.dtype) == _name(b.dtype) == "complex64"
    assert _name(tp.fft.irfft(tp.tensor(ints)).dtype) == "float32"  # real input of a c2r is made complex
    tp.set_default_dtype(tp.float64)
    try:
        assert _name(tp.fft.fft(tp.tensor(ints)).dtype) == "complex128"
    finally:
        tp.set_default_dtype(tp.float32)
    for dt in ("float16", "bfloat16"):
        for name in ("fft", "rfft", "irfft", "fftn"):
            with pytest.raises(RuntimeError) as ours:
                getattr(tp.fft, name)(tp.ones(4, dtype=getattr(tp, dt)))
            with pytest.raises(RuntimeError) as theirs:
                getattr(torch.fft, name)(torch.ones(4, dtype=getattr(torch, dt)))
            assert str(ours.value) == str(theirs.value)


def test_inverse_real_transforms_are_lazy_conjugates_like_torch():
    x = _real((4, 6))
    for name in ("ifft", "ihfft", "ihfftn"):
        a, b = getattr(tp.fft, name)(tp.tensor(x), dim=1), getattr(torch.fft, name)(torch.tensor(x), dim=1)
        assert a.is_conj() and b.is_conj()
        _check(a, b, 1e-12, 1e-12)


@pytest.mark.parametrize("name,data", [("fft", "real"), ("ifft", "real"), ("fft", "complex"), ("rfft", "real"),
                                       ("irfft", "complex"), ("hfft", "complex"), ("ihfft", "real"),
                                       ("fft2", "real"), ("rfftn", "real"), ("irfftn", "complex"),
                                       ("hfftn", "complex"), ("ihfft2", "real")])
def test_out(name, data):
    x = _real((3, 6)) if data == "real" else _complex((3, 6))
    expected = getattr(torch.fft, name)(torch.tensor(x))
    out_dtype = expected.dtype
    out_a = tp.empty(0, dtype=getattr(tp, _name(out_dtype)))
    out_b = torch.empty(0, dtype=out_dtype)
    ra = getattr(tp.fft, name)(tp.tensor(x), out=out_a)
    rb = getattr(torch.fft, name)(torch.tensor(x), out=out_b)
    assert ra is out_a and rb is out_b
    np.testing.assert_allclose(out_a.numpy(), out_b.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,data,out_dtype", [("fft", "real", "float64"), ("rfft", "real", "float32"),
                                                 ("irfft", "complex", "complex128"), ("fftn", "complex", "int64"),
                                                 ("hfftn", "complex", "complex64")])
def test_out_of_the_wrong_kind_raises_like_torch(name, data, out_dtype):
    x = _real((3, 6)) if data == "real" else _complex((3, 6))
    with pytest.raises(RuntimeError) as ours:
        getattr(tp.fft, name)(tp.tensor(x), out=tp.empty(0, dtype=getattr(tp, out_dtype)))
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.fft, name)(torch.tensor(x), out=torch.empty(0, dtype=getattr(torch, out_dtype)))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda m, x: m.fft.fft(x, norm="bogus"),
    lambda m, x: m.fft.fft(x, n=0),
    lambda m, x: m.fft.fft(x, dim=3),
    lambda m, x: m.fft.fft(x[0, 0]),
    lambda m, x: m.fft.rfft(x.to(m.complex64)),
    lambda m, x: m.fft.rfftn(x.to(m.complex64)),
    lambda m, x: m.fft.irfft(x[:, :1]),
    lambda m, x: m.fft.fftn(x, dim=(0, 0)),
    lambda m, x: m.fft.fftn(x, s=(2, 2), dim=(0,)),
    lambda m, x: m.fft.fftn(x, s=(2, 2, 2)),
    lambda m, x: m.fft.fftn(x, s=(0, 2)),
    lambda m, x: m.fft.rfftn(x[0, 0]),
    lambda m, x: m.fft.ihfftn(x[0, 0]),
    lambda m, x: m.fft.irfftn(x[0, 0]),
    lambda m, x: m.fft.fftfreq(4, dtype=m.int64),
], ids=["norm", "n0", "dim", "0d", "rfft_complex", "rfftn_complex", "irfft_one_point", "dup_dims", "s_dim_len",
        "s_too_long", "s_zero", "rfftn_0d", "ihfftn_0d", "irfftn_0d", "fftfreq_int"])
def test_errors_match_torch(call):
    x = _real((3, 4))
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(x))
    with pytest.raises(type(theirs.value)) as ours:
        call(tp, tp.tensor(x))
    assert str(ours.value) == str(theirs.value)


def test_zero_dim_fftn_transforms_nothing():
    a, b = tp.fft.fftn(tp.tensor(2.5)), torch.fft.fftn(torch.tensor(2.5))
    assert _name(a.dtype) == _name(b.dtype) and a.shape == () and complex(a.item()) == complex(b.item())


# ---- helpers ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, (1, -1), [-2]])
@pytest.mark.parametrize("name", ("fftshift", "ifftshift"))
def test_shifts(name, dim):
    x = np.arange(60).reshape(3, 4, 5)
    a, b = getattr(tp.fft, name)(tp.tensor(x), dim=dim), getattr(torch.fft, name)(torch.tensor(x), dim=dim)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("n,d", [(1, 1.0), (8, 1.0), (9, 0.1), (10, 2)])
@pytest.mark.parametrize("name", ("fftfreq", "rfftfreq"))
def test_frequencies(name, n, d):
    for dtype in ("float32", "float64"):
        a = getattr(tp.fft, name)(n, d, dtype=getattr(tp, dtype))
        b = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        assert _name(a.dtype) == _name(b.dtype)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    a, b = getattr(tp.fft, name)(n, d), getattr(torch.fft, name)(n, d)
    assert _name(a.dtype) == _name(b.dtype) == "float32"
    out_a, out_b = tp.empty(3, dtype=tp.float64), torch.empty(3, dtype=torch.float64)
    with pytest.warns(UserWarning) if (n // 2 + 1 if name == "rfftfreq" else n) != 3 else _no_warning():
        getattr(tp.fft, name)(n, d, out=out_a)
    with pytest.warns(UserWarning) if (n // 2 + 1 if name == "rfftfreq" else n) != 3 else _no_warning():
        getattr(torch.fft, name)(n, d, out=out_b)
    np.testing.assert_allclose(out_a.numpy(), out_b.numpy())
    assert getattr(tp.fft, name)(n, requires_grad=True).requires_grad


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# ---- gradients -------------------------------------------------------------------------------------------
def _grads(module, name, x, weights, kwargs):
    t = module.tensor(x, requires_grad=True)
    r = getattr(module.fft, name)(t, **kwargs)
    w = module.tensor(weights)
    loss = (r * w).real.sum() if r.is_complex() else (r * w).sum()
    loss.backward()
    return t.grad.resolve_conj().numpy()


GRAD_CASES = [
    ("fft", "real", {}), ("fft", "complex", {"n": 7}), ("ifft", "real", {"norm": "ortho"}),
    ("ifft", "complex", {"dim": 0}), ("rfft", "real", {}), ("rfft", "real", {"n": 9, "norm": "forward"}),
    ("irfft", "complex", {}), ("irfft", "complex", {"n": 7, "norm": "ortho"}), ("hfft", "complex", {"n": 8}),
    ("ihfft", "real", {}), ("fft2", "real", {"s": (3, 5)}), ("ifftn", "complex", {"norm": "forward"}),
    ("rfftn", "real", {"dim": (0, 2)}), ("irfftn", "complex", {"s": (4, 6)}), ("hfftn", "complex", {}),
    ("ihfftn", "real", {"norm": "ortho"}), ("irfft2", "complex", {"s": (3, 5)}), ("ihfft2", "real", {}),
]


@pytest.mark.parametrize("name,data,kwargs", GRAD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_gradients_match_torch(name, data, kwargs):
    x = _real((3, 4, 6)) if data == "real" else _complex((3, 4, 6))
    shape = tuple(getattr(torch.fft, name)(torch.tensor(x), **kwargs).shape)
    weights = _complex(shape) if name in ("fft", "ifft", "rfft", "ihfft", "fft2", "ifftn", "rfftn", "ihfftn",
                                          "ihfft2") else _real(shape)
    np.testing.assert_allclose(_grads(tp, name, x, weights, kwargs), _grads(torch, name, x, weights, kwargs),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("op,data,args", [
    ("_fft_c2c", "complex", ([0, 2], 1, True)),
    ("_fft_c2c", "complex", ([1], 2, False)),
    ("_fft_r2c", "real", ([1, 2], 0, True)),
    ("_fft_r2c", "real", ([2], 1, False)),
    ("_fft_c2r", "complex", ([0, 2], 2, 5)),
    ("_fft_c2r", "complex", ([2], 0, 4)),
])
def test_primitives_pass_gradcheck(op, data, args):
    x = _real((2, 3, 3)) if data == "real" else _complex((2, 3, 3))
    t = tp.tensor(x, requires_grad=True)
    assert tp.autograd.gradcheck(lambda v: getattr(tp.ops.aten, op)(v, *args), (t,))
    # and second order: every backward formula is made of the differentiable primitives
    assert tp.autograd.gradgradcheck(lambda v: getattr(tp.ops.aten, op)(v, *args), (t,))


# ---- import forms and other backends -----------------------------------------------------------------------
def test_import_forms():
    import importlib

    module = importlib.import_module("torchplug.fft")
    assert module is tp.fft
    from torchplug.fft import fftn, rfft  # noqa: F401

    assert set(tp.fft.__all__) <= set(dir(torch.fft))


def test_meta_shapes_dtypes_and_strides_match_torch():
    for name in REAL_IN:
        a = getattr(tp.fft, name)(tp.empty(3, 4, 6, device="meta").transpose(0, 1))
        b = getattr(torch.fft, name)(torch.empty(3, 4, 6, device="meta").transpose(0, 1))
        assert (tuple(a.shape), a.stride(), _name(a.dtype)) == (tuple(b.shape), b.stride(), _name(b.dtype)), name


def test_an_empty_batch_gives_an_empty_spectrum():
    # torch's cpu (MKL) kernels refuse a zero-length batch; its meta kernels give the shapes used here
    for name, x in (("fft", tp.randn(0, 4)), ("rfft", tp.randn(0, 4)), ("irfft", tp.randn(0, 4, dtype=tp.complex64))):
        a = getattr(tp.fft, name)(x)
        b = getattr(torch.fft, name)(torch.empty(tuple(x.shape), dtype=getattr(torch, _name(x.dtype)), device="meta"))
        assert (tuple(a.shape), _name(a.dtype)) == (tuple(b.shape), _name(b.dtype)) and a.numel() == 0


@pytest.mark.parametrize("call", [
    lambda m, x: m.fft.fft(x, norm=1),
    lambda m, x: m.fft.fft(x, n=2.5),
    lambda m, x: m.fft.ifft(x, n=True),
    lambda m, x: m.fft.rfft(x, dim=0.5),
    lambda m, x: m.fft.fftn(x, s=2.5),
    lambda m, x: m.fft.ihfftn(x, dim=(0.5,)),
    lambda m, x: m.fft.fft2(x.reshape(2, 2), s=[1.5, 2]),
    lambda m, x: m.fft.fftshift(x, dim=0.5),
    lambda m, x: m.fft.fftfreq(4.5),
    lambda m, x: m.fft.rfftfreq(4, d="a"),
], ids=["norm", "n_float", "n_bool", "dim_float", "s_float", "dim_tuple", "s_list", "shift_dim", "freq_n", "freq_d"])
def test_argument_types_are_checked_like_torch(call):
    with pytest.raises(TypeError) as theirs:
        call(torch, torch.ones(4))
    with pytest.raises(TypeError) as ours:
        call(tp, tp.ones(4))
    assert str(ours.value) == str(theirs.value)


def test_autocast_runs_the_float32_list_in_float32_like_torch():
    # fft_fft & co. are aten ops on PyTorch's cpu autocast float32 list: half inputs are cast, not refused;
    # the hermitian n-d transforms are not on it and refuse them as outside autocast
    x = _real((4, 4)).astype(np.float32)
    results = []
    for m in (tp, torch):
        with m.autocast("cpu", dtype=m.bfloat16):
            a = m.fft.fft(m.tensor(x).to(m.bfloat16))
            b = m.fft.rfft2(m.tensor(x).to(m.float16))
            with pytest.raises(RuntimeError, match="Unsupported dtype BFloat16"):
                m.fft.ihfftn(m.tensor(x).to(m.bfloat16))
        results.append((_name(a.dtype), _name(b.dtype), a.resolve_conj().numpy(), b.numpy()))
    assert results[0][:2] == results[1][:2] == ("complex64", "complex64")
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-5, atol=1e-5)
    assert tp.ops.aten.fft_fft is not None and tp.ops.aten._fft_c2c is not None
