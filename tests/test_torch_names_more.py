"""Top-level torch names and Tensor methods scripts use (in-place functions, isin, windows, frombuffer, range,
histograms, special functions, LU and Cholesky helpers, matrix_exp, storages, legacy Tensor methods...),
compared with torch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _np(t):
    if hasattr(t, "detach"):
        return np.zeros(tuple(t.shape)) if t.numel() == 0 else np.asarray(t.detach().tolist())
    return np.asarray(t)


def _pair(array, **kw):
    return tp.tensor(array, **kw), torch.tensor(array, **{k: getattr(torch, str(v).split(".")[-1])
                                                          for k, v in kw.items()})


def _close(ours, theirs, rtol=1e-5, atol=1e-6):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)


def _raises_like(fn_ours, fn_theirs, match=None):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value), match=match):
        fn_ours()


RNG = np.random.default_rng(0)
X = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)


# ---- in-place functions ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, args", [
    ("abs_", ()), ("exp_", ()), ("sigmoid_", ()), ("relu_", ()), ("clamp_", (-0.5, 0.5)), ("sqrt_", ()),
    ("fill_", (3.0,)), ("zero_", ()), ("tanh_", ()), ("neg_", ()), ("round_", ()), ("i0_", ()), ("xlogy_", (2.0,)),
    ("clamp_min_", (0.1,)), ("log1p_", ()), ("nan_to_num_", ()), ("frac_", ()), ("rsqrt_", ()),
])
def test_inplace_functions(name, args):
    ours, theirs = _pair(X)
    r_ours, r_theirs = getattr(tp, name)(ours, *args), getattr(torch, name)(theirs, *args)
    assert r_ours is ours
    _close(ours, r_theirs)


def test_inplace_function_names_exist_in_torch():
    from torchplug._ops.pyfuncs.surface import _INPLACE_FUNCTIONS

    assert [n for n in _INPLACE_FUNCTIONS if not hasattr(torch, n)] == []
    assert all(callable(getattr(tp, n)) for n in _INPLACE_FUNCTIONS)


# ---- isin, bilinear, rsub ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("elements, test, kw", [
    ([[1, 2, 3], [4, 5, 6]], [2, 6, 9], {}), ([1.5, 2.0, float("nan")], [2, float("nan")], {}),
    ([1, 2, 3], [3, 1], {"invert": True}), ([1, 2, 3], [], {}), ([1, 2, 3], 2, {}), (3, [1, 2, 3], {}),
])
def test_isin(elements, test, kw):
    def make(mod, v):
        return mod.tensor(v) if isinstance(v, list) else v

    _close(tp.isin(make(tp, elements), make(tp, test), **kw), torch.isin(make(torch, elements), make(torch, test), **kw))


def test_bilinear():
    a, b, w, bias = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 5, 3), (2, 5, 4), (6, 3, 4), (6,)))
    _close(tp.bilinear(tp.tensor(a), tp.tensor(b), tp.tensor(w), tp.tensor(bias)),
           torch.bilinear(torch.tensor(a), torch.tensor(b), torch.tensor(w), torch.tensor(bias)), rtol=1e-4, atol=1e-5)


def test_rsub():
    ours, theirs = _pair(X)
    _close(tp.rsub(ours, ours * 3, alpha=2), torch.rsub(theirs, theirs * 3, alpha=2))
    _close(tp.rsub(ours, 2), torch.rsub(theirs, 2))
    _close(tp.rsub(tp.tensor([1, 2]), 5), torch.rsub(torch.tensor([1, 2]), 5))


# ---- windows ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kw", [
    ("hann_window", {}), ("hamming_window", {}), ("hamming_window", {"alpha": 0.5, "beta": 0.3}),
    ("blackman_window", {}), ("bartlett_window", {}), ("kaiser_window", {}), ("kaiser_window", {"beta": 5.0}),
])
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, kw, length, periodic):
    for dtype in ("float32", "float64"):
        _close(getattr(tp, name)(length, periodic, dtype=getattr(tp, dtype), **kw),
               getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype), **kw), atol=1e-6)


def test_window_errors():
    _raises_like(lambda: tp.hann_window(4, dtype=tp.int64), lambda: torch.hann_window(4, dtype=torch.int64),
                 match="hann_window expects floating point dtypes")
    _raises_like(lambda: tp.bartlett_window(-1), lambda: torch.bartlett_window(-1))


# ---- frombuffer, range, constants ------------------------------------------------------------------------------
def test_frombuffer_shares_memory_like_torch():
    buf_ours, buf_theirs = bytearray(range(16)), bytearray(range(16))
    for kw in ({"dtype": "int32"}, {"dtype": "int16", "offset": 2, "count": 3}, {"dtype": "uint8", "count": 5}):
        dt = kw.pop("dtype")
        _close(tp.frombuffer(buf_ours, dtype=getattr(tp, dt), **kw), torch.frombuffer(buf_theirs, dtype=getattr(torch, dt),
                                                                                      **kw))
    t = tp.frombuffer(buf_ours, dtype=tp.uint8)
    t[0] = 200
    assert buf_ours[0] == 200
    for kw in ({"offset": 16}, {"count": 20}, {"offset": 1}):
        _raises_like(lambda: tp.frombuffer(bytearray(16), dtype=tp.int32, **kw),
                     lambda: torch.frombuffer(bytearray(16), dtype=torch.int32, **kw))
    _raises_like(lambda: tp.frombuffer(bytearray(), dtype=tp.int32), lambda: torch.frombuffer(bytearray(), dtype=torch.int32),
                 match="must not be 0")
    with pytest.warns(UserWarning, match="The given buffer is not writable"):
        assert tp.frombuffer(b"\x01\x00", dtype=tp.int16).tolist() == [1]


@pytest.mark.parametrize("args, kw", [((0, 3), {}), ((1, 2, 0.25), {}), ((5, 1, -2), {}), ((0, 4), {"dtype": "int64"})])
def test_range_is_end_inclusive_and_deprecated(args, kw):
    kw_o = {k: getattr(tp, v) for k, v in kw.items()}
    kw_t = {k: getattr(torch, v) for k, v in kw.items()}
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        ours = tp.range(*args, **kw_o)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.range(*args, **kw_t)
    _close(ours, theirs)


def test_constants_and_aliases():
    assert tp.newaxis is None and torch.newaxis is None
    assert issubclass(tp.OutOfMemoryError, RuntimeError)
    assert tp.GradScaler is tp.amp.GradScaler
    a, b = tp.ones(2, 3), tp.zeros(1, 3)
    _close(tp.row_stack((a, b)), torch.row_stack((torch.ones(2, 3), torch.zeros(1, 3))))


def test_switches():
    before = tp.get_num_interop_threads()
    assert before >= 1
    tp.set_num_interop_threads(3)
    assert tp.get_num_interop_threads() == 3
    tp.set_num_interop_threads(before)
    with pytest.raises(RuntimeError):
        tp.set_num_interop_threads(0)
    assert tp.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    tp.set_warn_always(True)
    assert tp.is_warn_always_enabled()
    tp.set_warn_always(False)
    assert not tp.is_anomaly_enabled()
    tp.set_anomaly_enabled(True, check_nan=False)
    try:
        assert tp.is_anomaly_enabled() and not tp.is_anomaly_check_nan_enabled()
        assert tp.autograd.is_anomaly_enabled()
    finally:
        tp.set_anomaly_enabled(False)
    assert not tp.is_anomaly_enabled() and tp.is_anomaly_check_nan_enabled()


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            tp.set_default_tensor_type(tp.DoubleTensor)
        assert tp.get_default_dtype() == tp.float64 and tp.ones(1).dtype == tp.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tp.set_default_tensor_type("torch.FloatTensor")
        assert tp.get_default_dtype() == tp.float32
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tp.set_default_tensor_type(tp.LongTensor)
    finally:
        tp.set_default_dtype(tp.float32)


def test_autocast_legacy_switches():
    with pytest.warns(DeprecationWarning, match="Please use torch.is_autocast_enabled\\('cpu'\\) instead"):
        assert tp.is_autocast_cpu_enabled() is False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(tp.get_autocast_cpu_dtype()) == "torchplug.bfloat16"
        assert str(tp.get_autocast_gpu_dtype()).endswith("float16")
        assert str(tp.get_autocast_xla_dtype()).endswith(str(torch.get_autocast_xla_dtype()).split(".")[-1])
        assert str(tp.get_autocast_ipu_dtype()).endswith(str(torch.get_autocast_ipu_dtype()).split(".")[-1])
        assert tp.is_autocast_ipu_enabled() is tp.is_autocast_xla_enabled() is False
        tp.set_autocast_cpu_enabled(True)
        try:
            assert tp.is_autocast_enabled("cpu") and tp.is_autocast_cpu_enabled()
        finally:
            tp.set_autocast_cpu_enabled(False)
        tp.set_autocast_cpu_dtype(tp.float16)
        try:
            assert tp.get_autocast_dtype("cpu") == tp.float16
        finally:
            tp.set_autocast_cpu_dtype(tp.bfloat16)
        tp.set_autocast_xla_enabled(True)
        assert tp.is_autocast_xla_enabled()
        tp.set_autocast_xla_enabled(False)


# ---- predicates and splitting ------------------------------------------------------------------------------------
def test_predicates():
    assert tp.is_nonzero(tp.tensor([1.5])) and not tp.is_nonzero(tp.tensor(0))
    for value in ([], [1, 2]):
        _raises_like(lambda: tp.is_nonzero(tp.tensor(value)), lambda: torch.is_nonzero(torch.tensor(value)),
                     match="Boolean value of Tensor with")
    assert tp.is_signed(tp.tensor([1])) and not tp.is_signed(tp.tensor([1], dtype=tp.uint8))
    assert tp.is_same_size(tp.ones(2, 3), tp.zeros(2, 3)) and not tp.is_same_size(tp.ones(2), tp.ones(3))
    assert tp.ones(2).is_same_size(tp.ones(2))
    assert tp.is_inference(tp.ones(1)) is torch.is_inference(torch.ones(1)) is False
    assert tp.get_device(tp.ones(1)) == torch.get_device(torch.ones(1)) == -1
    t = tp.ones(2)
    assert (t.is_sparse, t.is_quantized, t.is_nested, t.is_mkldnn, t.is_inference()) == (False,) * 5
    c = tp.tensor([1 + 0j, 2 + 1j])
    _close(tp.isreal(c), torch.isreal(torch.tensor([1 + 0j, 2 + 1j])))
    _close(tp.ones(3).isreal(), torch.ones(3).isreal())


def test_split_variants():
    ours, theirs = _pair(np.arange(10.0, dtype=np.float32))
    for name, args in (("split_with_sizes", ([3, 7],)), ("unsafe_split", (4,)), ("unsafe_split_with_sizes", ([2, 8],)),
                       ("unsafe_chunk", (3,))):
        got, want = getattr(tp, name)(ours, *args), getattr(torch, name)(theirs, *args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        got = getattr(ours, name)(*args)
        assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    _raises_like(lambda: tp.split_with_sizes(ours, [3, 3]), lambda: torch.split_with_sizes(theirs, [3, 3]))


# ---- histograms -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    {"bins": 4}, {"bins": 5, "range": (-1.0, 1.0)}, {"bins": 3, "density": True}, {"bins": 6, "weight": True},
    {"bins": "edges"}, {"bins": "edges", "density": True},
])
def test_histogram(kw):
    data = RNG.standard_normal(50).astype(np.float32)
    data[:3] = [0.0, 1.0, -1.0]
    kw_o, kw_t = dict(kw), dict(kw)
    if kw.get("bins") == "edges":
        edges = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=np.float32)
        kw_o["bins"], kw_t["bins"] = tp.tensor(edges), torch.tensor(edges)
    if kw.get("weight"):
        w = RNG.uniform(0, 2, 50).astype(np.float32)
        kw_o["weight"], kw_t["weight"] = tp.tensor(w), torch.tensor(w)
    ours, theirs = tp.histogram(tp.tensor(data), **kw_o), torch.histogram(torch.tensor(data), **kw_t)
    _close(ours.hist, theirs.hist, rtol=1e-5, atol=1e-6)
    _close(ours.bin_edges, theirs.bin_edges)
    _close(tp.tensor(data).histogram(**kw_o)[0], theirs[0], rtol=1e-5, atol=1e-6)


def test_histogram_single_value_and_errors():
    _close(tp.histogram(tp.tensor([1.0, 1.0]), 3).bin_edges, torch.histogram(torch.tensor([1.0, 1.0]), 3).bin_edges)
    _raises_like(lambda: tp.histogram(tp.tensor([1, 2]), 3), lambda: torch.histogram(torch.tensor([1, 2]), 3),
                 match='"histogramdd" not implemented for \'Long\'')


def test_histogramdd():
    pts = RNG.standard_normal((40, 2)).astype(np.float32)
    w = RNG.uniform(0, 1, 40).astype(np.float32)
    ours = tp.histogramdd(tp.tensor(pts), [3, 4], weight=tp.tensor(w), density=True)
    theirs = torch.histogramdd(torch.tensor(pts), [3, 4], weight=torch.tensor(w), density=True)
    _close(ours.hist, theirs.hist, rtol=1e-4, atol=1e-6)
    for a, b in zip(ours.bin_edges, theirs.bin_edges):
        _close(a, b)
    ours = tp.histogramdd(tp.tensor(pts), 2, range=[-1.0, 1.0, -2.0, 0.0])
    theirs = torch.histogramdd(torch.tensor(pts), 2, range=[-1.0, 1.0, -2.0, 0.0])
    _close(ours.hist, theirs.hist)


# ---- special functions ------------------------------------------------------------------------------------------------
SPECIAL = np.array([0.0, 0.5, 1.0, 2.5, -1.5, -3.0, 10.0, 100.0, -700.0, float("inf"), float("nan")], dtype=np.float32)


def test_i0_frexp():
    ours, theirs = _pair(SPECIAL)
    _close(tp.i0(ours), torch.i0(theirs), rtol=1e-5)
    _close(ours.i0(), theirs.i0(), rtol=1e-5)
    _close(tp.i0(tp.tensor([1, 2])), torch.i0(torch.tensor([1, 2])))
    m, e = tp.frexp(ours)
    mt, et = torch.frexp(theirs)
    _close(m, mt)
    _close(e, et)
    assert ours.frexp().mantissa.dtype == tp.float32
    _raises_like(lambda: tp.frexp(tp.tensor([1])), lambda: torch.frexp(torch.tensor([1])),
                 match="only supports floating-point dtypes")
    _raises_like(lambda: tp.i0(tp.tensor([1j])), lambda: torch.i0(torch.tensor([1j])))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_polygamma(n):
    values = np.array([0.3, 1.0, 2.5, 7.0, -0.5, -2.5, 0.0, -1.0], dtype=np.float64)
    ours, theirs = _pair(values)
    _close(tp.polygamma(n, ours), torch.polygamma(n, theirs), rtol=1e-7, atol=0)
    _close(ours.polygamma(n), theirs.polygamma(n), rtol=1e-7, atol=0)
    o, t = ours.clone(), theirs.clone()
    o.polygamma_(n)
    t.polygamma_(n)
    _close(o, t, rtol=1e-7, atol=0)
    _raises_like(lambda: tp.polygamma(-1, ours), lambda: torch.polygamma(-1, theirs), match="does not support negative n")


def test_special_gradients_match_torch():
    values = np.array([0.4, 1.3, 2.5, -0.7], dtype=np.float64)
    for fn in (lambda m, x: m.i0(x), lambda m, x: m.polygamma(2, x), lambda m, x: m.mvlgamma(x + 3, 2),
               lambda m, x: m.frexp(x)[0] * 3):
        a, b = tp.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        fn(tp, a).sum().backward()
        fn(torch, b).sum().backward()
        _close(a.grad, b.grad, rtol=1e-6)


def test_mvlgamma():
    ours, theirs = _pair(np.array([2.5, 3.0, 10.0], dtype=np.float32))
    for p in (1, 2, 4):
        _close(tp.mvlgamma(ours, p), torch.mvlgamma(theirs, p), rtol=1e-5)
        _close(ours.mvlgamma(p), theirs.mvlgamma(p), rtol=1e-5)
    o, t = ours.clone(), theirs.clone()
    o.mvlgamma_(3)
    t.mvlgamma_(3)
    _close(o, t, rtol=1e-5)
    _close(tp.mvlgamma(tp.tensor([3, 4]), 2), torch.mvlgamma(torch.tensor([3, 4]), 2), rtol=1e-5)


# ---- linear algebra ----------------------------------------------------------------------------------------------------
def _mats(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("scale", [0.1, 1.0, 20.0])
def test_matrix_exp(scale):
    a = _mats(3, 4, 4) * scale
    _close(tp.matrix_exp(tp.tensor(a)), torch.matrix_exp(torch.tensor(a)), rtol=1e-9, atol=1e-9)
    _close(tp.tensor(a[0], dtype=tp.float32).matrix_exp(), torch.tensor(a[0], dtype=torch.float32).matrix_exp(),
           rtol=1e-4, atol=1e-5)
    x, y = tp.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tp.matrix_exp(x).sum().backward()
    torch.matrix_exp(y).sum().backward()
    _close(x.grad, y.grad, rtol=1e-7, atol=1e-7)


def test_lu_family_matches_torch():
    a = _mats(2, 4, 4)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        lu, piv = tp.lu(tp.tensor(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu_t, piv_t = torch.lu(torch.tensor(a))
        _, _, info = tp.lu(tp.tensor(a), get_infos=True)
        _, _, info_t = torch.lu(torch.tensor(a), get_infos=True)
        _, _, info_zero = tp.lu(tp.zeros(3, 3), get_infos=True)
    _close(lu, lu_t, rtol=1e-10, atol=1e-12)
    _close(piv, piv_t)
    _close(info, info_t)
    assert int(info_zero) == int(torch.linalg.lu_factor_ex(torch.zeros(3, 3)).info) == 1
    for got, want in zip(tp.lu_unpack(lu, piv), torch.lu_unpack(lu_t, piv_t)):
        _close(got, want, rtol=1e-10, atol=1e-12)
    P, L, U = tp.lu_unpack(lu, piv, unpack_pivots=False)
    assert tuple(P.shape) == (0,) and tuple(L.shape) == (2, 4, 4)
    b = _mats(2, 4, 3, seed=2)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        tp.lu_solve(tp.tensor(b), lu, piv)
    warnings.simplefilter("ignore")  # pytest restores the filters after the test
    _close(tp.lu_solve(tp.tensor(b), lu, piv), torch.lu_solve(torch.tensor(b), lu_t, piv_t), rtol=1e-9, atol=1e-10)
    _close(tp.tensor(b).lu_solve(lu, piv), torch.tensor(b).lu_solve(lu_t, piv_t), rtol=1e-9, atol=1e-10)
    rect = _mats(5, 3, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = tp.lu(tp.tensor(rect)), torch.lu(torch.tensor(rect))
    for got, want in zip(tp.lu_unpack(*ours), torch.lu_unpack(*theirs)):
        _close(got, want, rtol=1e-10, atol=1e-12)


def test_cholesky_helpers_and_triangular_solve():
    m = _mats(3, 3)
    spd = m @ m.T + 3 * np.eye(3)
    low = np.linalg.cholesky(spd)
    b = _mats(3, 2, seed=4)
    for upper, factor in ((False, low), (True, low.T)):
        _close(tp.cholesky_solve(tp.tensor(b), tp.tensor(factor), upper),
               torch.cholesky_solve(torch.tensor(b), torch.tensor(factor), upper), rtol=1e-9, atol=1e-10)
        _close(tp.cholesky_inverse(tp.tensor(factor), upper), torch.cholesky_inverse(torch.tensor(factor), upper),
               rtol=1e-9, atol=1e-10)
        _close(tp.tensor(factor).cholesky_inverse(upper), torch.tensor(factor).cholesky_inverse(upper), rtol=1e-9,
               atol=1e-10)
    a = _mats(4, 4, seed=5) + 4 * np.eye(4)
    bb = _mats(4, 2, seed=6)
    for kw in ({}, {"upper": False}, {"transpose": True}, {"unitriangular": True}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = tp.triangular_solve(tp.tensor(bb), tp.tensor(a), **kw)
            theirs = torch.triangular_solve(torch.tensor(bb), torch.tensor(a), **kw)
        _close(ours.solution, theirs.solution, rtol=1e-9, atol=1e-10)
        _close(ours.cloned_coefficient, theirs.cloned_coefficient)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        tp.tensor(bb).triangular_solve(tp.tensor(a))


def test_norms():
    a = _mats(2, 3, 4)
    with pytest.warns(UserWarning, match="at::nuclear_norm is deprecated"):
        tp.nuclear_norm(tp.tensor(a[0]))
    with pytest.warns(UserWarning, match="at::frobenius_norm is deprecated"):
        tp.frobenius_norm(tp.tensor(a), (1, 2))
    warnings.simplefilter("ignore")
    _close(tp.nuclear_norm(tp.tensor(a[0])), torch.nuclear_norm(torch.tensor(a[0])), rtol=1e-10)
    _close(tp.nuclear_norm(tp.tensor(a), (1, 2), keepdim=True), torch.nuclear_norm(torch.tensor(a), (1, 2), keepdim=True),
           rtol=1e-10)
    _close(tp.frobenius_norm(tp.tensor(a), (1, 2)), torch.frobenius_norm(torch.tensor(a), (1, 2)), rtol=1e-12)
    _close(tp.frobenius_norm(tp.tensor(a), 0, True), torch.frobenius_norm(torch.tensor(a), 0, True), rtol=1e-12)
    _close(tp.norm_except_dim(tp.tensor(a), 2, 1), torch.norm_except_dim(torch.tensor(a), 2, 1), rtol=1e-12)
    _close(tp.norm_except_dim(tp.tensor(a), 3, -1), torch.norm_except_dim(torch.tensor(a), 3, -1), rtol=1e-12)
    g = _mats(2, 1, 1, seed=7)
    _close(tp._weight_norm(tp.tensor(a), tp.tensor(g), 0), torch._weight_norm(torch.tensor(a), torch.tensor(g), 0),
           rtol=1e-12)


def test_trapezoid_family():
    y = _mats(3, 5)
    x = np.sort(_mats(5, seed=8))
    for kw_o, kw_t in (({}, {}), ({"dx": 0.5}, {"dx": 0.5}), ({"x": tp.tensor(x)}, {"x": torch.tensor(x)}),
                       ({"dim": 0}, {"dim": 0})):
        _close(tp.cumulative_trapezoid(tp.tensor(y), **kw_o), torch.cumulative_trapezoid(torch.tensor(y), **kw_t),
               rtol=1e-12)
        _close(tp.trapezoid(tp.tensor(y), **kw_o), torch.trapezoid(torch.tensor(y), **kw_t), rtol=1e-12)
    _close(tp.trapz(tp.tensor(y), tp.tensor(x)), torch.trapz(torch.tensor(y), torch.tensor(x)), rtol=1e-12)


# ---- storages -----------------------------------------------------------------------------------------------------------
def test_storages():
    t = tp.tensor([1.0, 2.0, 3.0])[1:]
    ref = torch.tensor([1.0, 2.0, 3.0])[1:]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = t.storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s_ref = ref.storage()
    assert type(s).__name__ == type(s_ref).__name__ == "TypedStorage"
    assert s.tolist() == s_ref.tolist() and len(s) == len(s_ref) and s.size() == s_ref.size()
    assert s.dtype == tp.float32 and s.element_size() == 4 and s.nbytes() == s_ref.nbytes()
    assert t.storage_type() is tp.FloatStorage and ref.storage_type().__name__ == "FloatStorage"
    assert isinstance(s, tp.TypedStorage) and isinstance(t.untyped_storage(), tp.UntypedStorage)
    assert tp.is_storage(s) and tp.is_storage(t.untyped_storage()) and not tp.is_storage(t)
    assert tp.Storage is tp.FloatStorage
    names = ("BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage", "ComplexDoubleStorage",
             "ComplexFloatStorage", "DoubleStorage", "FloatStorage", "HalfStorage", "IntStorage", "LongStorage",
             "ShortStorage")
    assert all(hasattr(torch, n) and issubclass(getattr(tp, n), tp.TypedStorage) for n in names)
    assert tp.LongStorage.__name__ == "LongStorage"


def test_share_memory_and_is_set_to():
    t, ref = tp.ones(3), torch.ones(3)
    assert t.is_shared() is ref.is_shared() is False
    assert t.share_memory_() is t and ref.share_memory_() is ref
    assert t.is_shared() and ref.is_shared()
    assert t.is_set_to(t) and not t.is_set_to(t.clone()) and not t.is_set_to(t[1:])
    assert ref.is_set_to(ref) and not ref.is_set_to(ref[1:])


# ---- legacy and small Tensor methods ------------------------------------------------------------------------------------
def test_tensor_new():
    t = tp.ones(2, dtype=tp.float64)
    for args in ((2, 3), ([1, 2],), ()):
        got, want = t.new(*args), torch.ones(2, dtype=torch.float64).new(*args)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == tp.float64
    assert t.new([1, 2]).tolist() == [1.0, 2.0]
    assert t.new(tp.Size([4])).shape == (4,)
    assert t.new(t).data_ptr() == t.data_ptr()


def test_sum_to_size():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    ours, theirs = _pair(x)
    for size in ((3, 1), (1, 3, 4), (4,), (2, 3, 4), (1,)):
        _close(ours.sum_to_size(size), theirs.sum_to_size(size), rtol=1e-5)
        _close(ours.sum_to_size(*size), theirs.sum_to_size(*size), rtol=1e-5)
    _raises_like(lambda: ours.sum_to_size(5), lambda: theirs.sum_to_size(5), match="is not expandable to size")


def test_chalf_is_refused_clearly():
    with pytest.raises(TypeError, match="complex32 \\(torch.chalf\\) is not supported in torchplug"):
        tp.ones(2).chalf()


def test_apply_map_map2():
    ours, theirs = _pair(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    _close(ours.clone().apply_(lambda v: v * v + 1), theirs.clone().apply_(lambda v: v * v + 1))
    other_o, other_t = _pair(np.array([10.0, 20.0, 30.0], dtype=np.float32))
    _close(ours.clone().map_(other_o, lambda a, b: a - b), theirs.clone().map_(other_t, lambda a, b: a - b))
    _close(ours.clone().map2_(other_o, ours, lambda a, b, c: a + b * c),
           theirs.clone().map2_(other_t, theirs, lambda a, b, c: a + b * c))
    r = ours.clone()
    assert r.apply_(abs) is r


def test_as_strided_variants():
    base = np.arange(12.0, dtype=np.float32)
    ours, theirs = _pair(base)
    src_o, src_t = _pair(-np.ones((2, 2), dtype=np.float32))
    _close(tp.as_strided_scatter(ours, src_o, (2, 2), (3, 1), 1), torch.as_strided_scatter(theirs, src_t, (2, 2), (3, 1), 1))
    _close(ours.as_strided_scatter(src_o, (2, 2), (4, 2)), theirs.as_strided_scatter(src_t, (2, 2), (4, 2)))
    o, t = ours.clone(), theirs.clone()
    assert o.as_strided_((3, 2), (2, 1), 2) is o
    t.as_strided_((3, 2), (2, 1), 2)
    _close(o, t)
    o2, t2 = ours.clone(), theirs.clone()
    tp.as_strided_(o2, (2, 3), (1, 2))
    torch.as_strided_(t2, (2, 3), (1, 2))
    _close(o2, t2)


def test_resize_and_resize_as():
    ours, theirs = _pair(np.arange(6.0, dtype=np.float32))
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        got = ours.resize(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = theirs.resize(2, 3)
        _close(got, want)
        _close(ours.resize_as(tp.ones(3, 2)), theirs.resize_as(torch.ones(3, 2)))
        with pytest.raises(RuntimeError, match="requested resize to 4 \\(4 elements in total\\)"):
            ours.resize(4)
    assert tuple(ours.shape) == (6,)


def test_nonzero_static_ravel_and_more():
    x = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.int64)
    ours, theirs = _pair(x)
    for size, fill in ((2, -1), (5, -1), (4, 9), (0, -1)):
        _close(tp.nonzero_static(ours, size=size, fill_value=fill), torch.nonzero_static(theirs, size=size,
                                                                                        fill_value=fill))
        _close(ours.nonzero_static(size=size), theirs.nonzero_static(size=size))
    _close(tp.ravel(ours.t()), torch.ravel(theirs.t()))
    _close(ours.t().ravel(), theirs.t().ravel())
    assert ours.const_data_ptr() == ours.data_ptr()
    e = ours.new_empty_strided((2, 2), (1, 2))
    assert e.stride() == (1, 2) and e.dtype == tp.int64
    assert ours.new_empty_strided((2,), (1,), dtype=tp.float32).dtype == tp.float32


def test_math_surface_names_exist_in_torch():
    from torchplug._ops.pyfuncs import surface, surface_linalg, surface_tensor

    for module in (surface, surface_linalg, surface_tensor):
        public = [n for n in module.FUNCTIONS if not n.startswith("_")]
        assert [n for n in public if not hasattr(torch, n)] == []
        assert [n for n in module.METHODS if not hasattr(torch.Tensor, n)] == []
    assert math.isclose(float(tp.kaiser_window(3, False)[1]), 1.0)


def test_small_functions():
    assert tp.typename(tp.ones(1)) == torch.typename(torch.ones(1)) == "torch.FloatTensor"
    assert tp.typename(1) == torch.typename(1) == "int"
    assert tp.is_distributed(tp.ones(1)) is torch.is_distributed(torch.ones(1)) is False
    assert tp.is_vulkan_available() is False
    assert (tp.ones(1).is_xla, tp.ones(1).is_ipu, tp.ones(1).is_mtia, tp.ones(1).is_distributed()) == (False,) * 4
    _close(tp.fill(tp.ones(2, 3), 4.5), torch.fill(torch.ones(2, 3), 4.5))
    for idx, shape in (([5, 7, -1, 8], (2, 4)), (11, (3, 2, 2)), ([[0, 3], [5, 6]], 7)):
        got, want = tp.unravel_index(tp.tensor(idx), shape), torch.unravel_index(torch.tensor(idx), shape)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    _raises_like(lambda: tp.unravel_index(tp.tensor([1.0]), (2,)), lambda: torch.unravel_index(torch.tensor([1.0]), (2,)),
                 match="expected 'indices' to be integer dtype")
    _raises_like(lambda: tp.unravel_index(tp.tensor([1]), (2, -4)), lambda: torch.unravel_index(torch.tensor([1]), (2, -4)),
                 match="'shape' cannot have negative values")
    for values, kw in (([1, 2, 3], {}), ([1.5, -2.0], {"N": 4, "increasing": True}), ([True, False], {}),
                       ([1.0, 2.0], {"N": 0}), ([2, 3], {"N": 1})):
        _close(tp.vander(tp.tensor(values), **kw), torch.vander(torch.tensor(values), **kw))
    g, gt = tp.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    x = np.array([-1.0, 2.0, -3.0, -0.5], dtype=np.float32)
    _close(tp.rrelu(tp.tensor(x), training=True, generator=g), torch.rrelu(torch.tensor(x), training=True, generator=gt))
    _close(tp.rrelu(tp.tensor(x)), torch.rrelu(torch.tensor(x)))
    o, t = tp.tensor(x), torch.tensor(x)
    assert tp.rrelu_(o) is o
    torch.rrelu_(t)
    _close(o, t)


@pytest.mark.parametrize("shape, complex_", [((4, 3), False), ((3, 5), False), ((2, 4, 4), False), ((3, 3), True)])
def test_geqrf_orgqr_ormqr(shape, complex_):
    a = _mats(*shape) + (1j * _mats(*shape, seed=9) if complex_ else 0)
    ours, theirs = tp.geqrf(tp.tensor(a)), torch.geqrf(torch.tensor(a))
    _close(ours.a, theirs.a, rtol=1e-9, atol=1e-12)
    _close(ours.tau, theirs.tau, rtol=1e-9, atol=1e-12)
    if shape[-2] >= shape[-1]:
        _close(tp.orgqr(*ours), torch.orgqr(*theirs), rtol=1e-9, atol=1e-12)
        _close(ours.a.orgqr(ours.tau), theirs.a.orgqr(theirs.tau), rtol=1e-9, atol=1e-12)
    other = _mats(*shape[:-1], 2, seed=10)
    other = other + 0j if complex_ else other
    for kw in ({}, {"transpose": True}):
        _close(tp.ormqr(*ours, tp.tensor(other).to(ours.a.dtype), **kw),
               torch.ormqr(*theirs, torch.tensor(other).to(theirs.a.dtype), **kw), rtol=1e-9, atol=1e-12)
    _raises_like(lambda: tp.geqrf(tp.ones(3)), lambda: torch.geqrf(torch.ones(3)), match="at least 2 dimensions")
    _raises_like(lambda: tp.geqrf(tp.ones(2, 2, dtype=tp.int64)), lambda: torch.geqrf(torch.ones(2, 2, dtype=torch.int64)),
                 match='"geqrf_cpu" not implemented for \'Long\'')


def test_untyped_storage_queries():
    a, ref = tp.arange(6.0), torch.arange(6.0)
    s, s_ref = a.untyped_storage(), ref.untyped_storage()
    assert s.data_ptr() == a[2:].untyped_storage().data_ptr() == a.data_ptr()
    assert s.data_ptr() != a.clone().untyped_storage().data_ptr()
    assert len(s) == len(s_ref) == s.size() == s_ref.size() == 24
    assert s.element_size() == s_ref.element_size() == 1


def test_compositions_on_meta():
    def meta(*shape):
        return tp.empty(*shape, device="meta"), torch.empty(*shape, device="meta")

    a, at = meta(2, 3, 3)
    for ours, theirs in ((tp.matrix_exp(a), torch.matrix_exp(at)), (tp.cholesky_inverse(a), torch.cholesky_inverse(at)),
                         (tp.hann_window(5, device="meta"), torch.hann_window(5, device="meta")),
                         (tp.mvlgamma(a + 3, 2), torch.mvlgamma(at + 3, 2))):
        assert ours.device.type == "meta" and tuple(ours.shape) == tuple(theirs.shape)
    x, xt = meta(10)
    _raises_like(lambda: tp.histogram(x, 3), lambda: torch.histogram(xt, 3))


def test_lu_and_triangular_solve_gradients_match_torch():
    a, b = _mats(4, 4), _mats(4, 2, seed=11)
    x, y = tp.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    bx, by = tp.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P, L, U = tp.lu_unpack(*tp.lu(x))
        Pt, Lt, Ut = torch.lu_unpack(*torch.lu(y))
        (L.sum() + U.pow(2).sum() + tp.triangular_solve(bx, x).solution.sum()).backward()
        (Lt.sum() + Ut.pow(2).sum() + torch.triangular_solve(by, y).solution.sum()).backward()
    _close(x.grad, y.grad, rtol=1e-9, atol=1e-10)
    _close(bx.grad, by.grad, rtol=1e-9, atol=1e-10)


def test_inplace_function_refuses_non_tensors():
    _raises_like(lambda: tp.abs_(1), lambda: torch.abs_(1), match="abs_\\(\\): argument 'input' \\(position 1\\) must be Tensor")
    _raises_like(lambda: tp.sigmoid_([1.0]), lambda: torch.sigmoid_([1.0]))


def test_inplace_special_functions_refuse_integer_self():
    for name, args in (("polygamma_", (1,)), ("mvlgamma_", (1,)), ("i0_", ())):
        _raises_like(lambda: getattr(tp.tensor([1, 2]), name)(*args), lambda: getattr(torch.tensor([1, 2]), name)(*args),
                     match="can't be cast to the desired output type")
    with pytest.raises(RuntimeError, match="mvlgamma: result type Long can't be cast to the desired output type Float"):
        tp.tensor([1, 2]).mvlgamma_(1)


def test_version_module_has_torch_version_names():
    # Scripts print torch.version.cuda / __version__ without importing torch.version first.
    ours = {n for n in dir(tp.version) if not n.startswith("_")}
    theirs = {n for n in dir(torch.version) if not n.startswith("_") and n != "Optional"}
    assert theirs <= ours | {"Optional"}
    assert tp.version.__version__ == tp.__version__
    assert tp.version.cuda is None and tp.version.hip is None and tp.version.debug is False
    assert isinstance(tp.version.git_version, str)
