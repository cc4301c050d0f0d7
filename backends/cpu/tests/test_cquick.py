"""The C fast paths of add, mul, relu and sum (torchplug_cpu._cquick) give what their Python kernels give, and
hand every other call to them (skips where not built)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import torchplug as torch
from torchplug._dispatch.dispatcher import DISPATCHER, describe_callable

from torchplug_cpu import _common as C
from torchplug_cpu import _parallel as P

SANITIZED = os.environ.get("TORCHPLUG_EXPECT_SANITIZED") == "1"
cq = C.cquick
pytestmark = pytest.mark.skipif(cq is None, reason="torchplug_cpu._cquick was not built (or TORCHPLUG_PURE_PYTHON is set)")


def _kernel(op):
    return DISPATCHER.entry(op).kernels["CPU"][0].fn


def _same(a, b):
    assert type(a) is type(b) is torch.Tensor
    assert a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    assert a._keyset == b._keyset and not a.requires_grad
    # the same bits: signs of zeros and NaNs included
    assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool, torch.float16, torch.bfloat16,
          torch.complex64, torch.uint8]


def _values(dtype, shape=(16,), seed=0):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(np.asarray(rng.standard_normal(shape) * 4, np.float64)).clone()
    return x.to(dtype)


def test_registered_as_c_kernels_that_describe_the_python_ones():
    for op, py in (("aten::add.Tensor", "pointwise:add"), ("aten::mul", "pointwise:mul"),
                   ("aten::relu", "pointwise:_same_unary.<locals>.kernel"), ("aten::sum", "reduction:reduce_sum")):
        k = _kernel(op)
        assert type(k).__module__ == "torchplug_cpu._cquick"
        assert describe_callable(k) == describe_callable(k.fallback) == "torchplug_cpu.kernels." + py


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["aten::add.Tensor", "aten::mul"])
def test_binary_same_as_python(op, dtype):
    k = _kernel(op)
    py = k.fallback
    extra = (1,) if op == "aten::add.Tensor" else ()
    a, b = _values(dtype, seed=1), _values(dtype, seed=2)
    cases = [(a, b), (a, _values(dtype, (1,), 3)), (_values(dtype, (4, 1), 4), _values(dtype, (1, 4), 5)),
             (_values(dtype, (), 6), _values(dtype, (), 7)), (a, _values(torch.float64 if dtype != torch.float64 else torch.float32)),
             (a.reshape(4, 4).t(), b.reshape(4, 4)), (a, 2), (a, 2.5), (a, True), (3, a), (a, -(2 ** 70))]
    for x, y in cases:
        try:
            want = py(x, y, *extra)
        except Exception as e:  # noqa: BLE001 - the C path must raise the same
            with pytest.raises(type(e), match=None):
                k(x, y, *extra)
            continue
        _same(k(x, y, *extra), want)


def test_add_alpha_and_keywords_go_to_python():
    k = _kernel("aten::add.Tensor")
    a, b = _values(torch.float32), _values(torch.float32, seed=3)
    for alpha in (2, 1.0, 0):
        _same(k(a, b, alpha), k.fallback(a, b, alpha))
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        k(a, b, True)  # True == 1, but not the int 1: the Python kernel's check
    _same(k(a, b, alpha=1), k.fallback(a, b, 1))
    _same(k(a, b), k.fallback(a, b))


def test_binary_errors_are_the_python_kernels():
    k = _kernel("aten::add.Tensor")
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\)"):
        k(torch.ones(3), torch.ones(2), 1)
    a8 = torch.ones(2).to(torch.float8_e4m3fn)
    with pytest.raises(NotImplementedError, match="add_stub"):
        k(a8, a8, 1)


def test_large_operands_take_the_threaded_python_path(monkeypatch):
    calls = []
    real = P.binary

    def spy(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(P, "binary", spy)
    n = P.MIN_ITEMS
    a = torch.ones(n)
    _same(_kernel("aten::mul")(a, a), torch.ones(n))
    if P.threads() >= 2:
        assert calls == [np.multiply]


def test_float_overflow_is_silent_like_pytorch():
    big = torch.full((4,), 3e38)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = _kernel("aten::mul")(big, big)
        s = _kernel("aten::sum")(big, None, False, None)
    assert np.isinf(r.numpy()).all() and np.isinf(s.numpy())
    assert np.geterr()["over"] == "warn"  # the error state is back


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_same_as_python(dtype):
    k = _kernel("aten::relu")
    x = torch.tensor([-0.0, 0.0, float("nan"), -1.5, 2.0, -float("inf")]) if dtype.is_floating_point else _values(dtype)
    cases = [_values(dtype), x.to(dtype), _values(dtype, (4, 4)).t(), _values(dtype, ()), _values(dtype, (0,))]
    for t in cases:
        try:
            want = k.fallback(t)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e), match=str(e)[:30].replace("(", r"\(").replace(")", r"\)")):
                k(t)
            continue
        _same(k(t), want)


def test_relu_keeps_negative_zero_and_nan():
    r = _kernel("aten::relu")(torch.tensor([-0.0, float("nan"), -3.0, 4.0]))
    v = r.numpy()
    assert np.signbit(v[0]) and np.isnan(v[1]) and v[2] == 0 and not np.signbit(v[2]) and v[3] == 4


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_same_as_python(dtype):
    k = _kernel("aten::sum")
    x = _values(dtype, (4, 4))
    for args in [(None, False, None), ((0,), False, None), ((1,), True, None), (None, True, None),
                 (None, False, torch.float64)]:
        for t in (x, x.t(), _values(dtype, ()), _values(dtype, (0,))):
            try:
                want = k.fallback(t, *args)
            except Exception as e:  # noqa: BLE001
                with pytest.raises(type(e)):
                    k(t, *args)
                continue
            _same(k(t, *args), want)


def test_no_reference_leaks():
    a, b = _values(torch.float32), _values(torch.float32, seed=1)
    ks = [_kernel(op) for op in ("aten::add.Tensor", "aten::mul", "aten::relu", "aten::sum")]
    calls = [lambda: ks[0](a, b, 1), lambda: ks[1](a, 2.0), lambda: ks[2](a), lambda: ks[3](a, None, False, None)]
    for call in calls:
        call()
    before = [sys.getrefcount(o) for o in (a, b, a._data, b._data, a._dtype)]
    for _ in range(200):
        for call in calls:
            call()
    assert [sys.getrefcount(o) for o in (a, b, a._data, b._data, a._dtype)] == before


def test_constructors_and_configure_check_their_arguments():
    with pytest.raises(TypeError):
        cq.Binary(np.add, 3)
    with pytest.raises(TypeError):
        cq.Relu(None)
    with pytest.raises(TypeError):
        cq.Sum(np.add.reduce)
    with pytest.raises(TypeError):
        cq.configure(1, 2, 3)
    with pytest.raises(TypeError, match="ContextVar"):
        cq.configure(torch.Tensor, np.ndarray, {}, {}, object(), None, np.empty_like, np.asarray, np.empty, torch.float32,
                     torch.float64, torch.int64, frozenset(), 10)
    with pytest.raises(ValueError, match="min_items"):
        cq.configure(torch.Tensor, np.ndarray, {}, {}, *C.ERRSTATE, np.empty_like, np.asarray, np.empty, torch.float32,
                     torch.float64, torch.int64, frozenset(), 0)
    # the failed calls left the configuration alone
    _same(_kernel("aten::mul")(torch.ones(2), torch.ones(2)), torch.ones(2))


def test_a_standalone_kernel_falls_back_to_its_python_function():
    seen = []

    def fallback(*args, **kwargs):
        seen.append((args, kwargs))
        return "python"

    k = cq.Binary(np.subtract, fallback)
    a = torch.ones(2)
    _same(k(a, a), torch.zeros(2))
    assert k(a, a, 1) == "python" and k(a, b=a) == "python" and k(a, "x") == "python"
    assert len(seen) == 3
    assert k.__name__ == "fallback" and repr(k).startswith("<torchplug_cpu._cquick.Binary kernel")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_gives_numpys_bits(dtype):
    # the C loop repeats NumPy's pairwise summation: the same bits for every length and split
    k = _kernel("aten::sum")
    rng = np.random.default_rng(0)
    lengths = [*range(0, 300), 1000, 1023, 4096, 10000, P.MIN_ITEMS - 1]
    for n in lengths:
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)).astype(dtype)
        if n % 7 == 3:
            x[rng.integers(0, n)] = rng.choice([np.inf, -np.inf, np.nan, -0.0])
        got = k(torch.from_numpy(x), None, False, None).numpy()
        want = np.add.reduce(x, axis=None, dtype=x.dtype)
        assert got.dtype == want.dtype and got.tobytes() == np.asarray(want).tobytes(), n
    for special in ([-0.0], [-0.0, -0.0], [], [1e30, 1.0, -1e30], [3e38, 3e38]):
        x = np.array(special, dtype)
        got = k(torch.from_numpy(x), None, False, None).numpy()
        with np.errstate(all="ignore"):
            want = np.add.reduce(x, axis=None, dtype=x.dtype)
        assert got.tobytes() == np.asarray(want).tobytes()
