"""Tensor printing: repr/str compared character for character with real PyTorch's."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchplug as tp  # noqa: E402
from torchplug._tensor import printing as _printing  # noqa: E402
from torchplug._runtime.backends import Backend  # noqa: E402
from torchplug._runtime.registration import register_backend, unregister_backend
from torchplug._tensor.tensor import make_tensor  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.fixture(autouse=True)
def _restore_options():
    yield
    torch.set_printoptions(profile="default", sci_mode=None)
    _printing.set_printoptions(profile="default", sci_mode=None)
    torch.set_default_dtype(torch.float32)
    tp.set_default_dtype(tp.float32)


def both_options(**kwargs):
    torch.set_printoptions(**kwargs)
    _printing.set_printoptions(**kwargs)


def to_tp(a):
    """The same values (and strides, via NumPy) as a torchplug tensor."""
    dt = getattr(tp, str(a.dtype).split(".")[1])
    if a.dtype == torch.bfloat16:
        return tp.tensor(a.float().numpy(), dtype=dt)
    return tp.from_numpy(a.numpy()) if a.dim() else tp.tensor(a.item(), dtype=dt)


def expected(a):
    return repr(a).replace("torch.", "torchplug.")


_SUFFIX_BREAK = re.compile(r",\n *(?=(?:dtype|device|size|requires_grad|grad_fn)=)")


def same_repr(ours, ref):
    """Equal, except where a suffix wrapped differently only because 'torchplug.' is longer than 'torch.'."""
    if ours == ref:
        return True
    if "dtype=" not in ref:
        return False
    return _SUFFIX_BREAK.sub(", ", ours) == _SUFFIX_BREAK.sub(", ", ref)


def check(a):
    t = to_tp(a)
    assert same_repr(repr(t), expected(a))
    assert str(t) == repr(t)


# ---- values -------------------------------------------------------------------------------------
FLOAT_VALUES = [
    [1.0, 2.0, 3.0],
    [1.5, 2.25, -3.125],
    [0.0],
    [-0.0, 0.0],
    [0.0, 0.0, 0.0],
    [float("nan")],
    [float("inf"), float("-inf")],
    [float("nan"), 1.0, float("inf")],
    [float("nan"), 1.5, -float("inf")],
    [1e-5, 1.0],
    [1e-5, 2e-5],
    [1e9],
    [1e8, 1.0],
    [123456789.0],
    [1e10, 1.0, -1.0],
    [0.1, 1000.0],
    [0.1, 100.0],
    [0.001, 0.5],
    [0.0001, 0.5],
    [9.99996, 1.0],
    [99999.5, 0.5],
    [-1e-7, 1.0],
    [1.0, -2.0, 300000.0],
    [3.14159265, -2.71828],
    [-1.0, -2.0],
    [1e-30, 1e30],
    [65504.0, -65504.0],
]


@pytest.mark.parametrize("values", FLOAT_VALUES, ids=[str(v) for v in FLOAT_VALUES])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_values(values, dtype):
    check(torch.tensor(values, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("values", [[1e-300, 1e300], [1e-200], [5e-324, 1.0], [1.7976931348623157e308]])
def test_float64_extreme_exponents(values):
    check(torch.tensor(values, dtype=torch.float64))


INT_VALUES = [[0], [1, 2, 3], [-1, 0, 1], [100, -5], [127, -128], [0, 0], [7]]


@pytest.mark.parametrize("values", INT_VALUES, ids=[str(v) for v in INT_VALUES])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_int_values(values, dtype):
    check(torch.tensor(values, dtype=getattr(torch, dtype)))


def test_int_extremes():
    check(torch.tensor([2**63 - 1, -(2**63)], dtype=torch.int64))
    check(torch.tensor([2**31 - 1, -(2**31)], dtype=torch.int32))
    check(torch.tensor([0, 255, 17], dtype=torch.uint8))


def test_bool():
    check(torch.tensor([True, False, True]))
    check(torch.tensor([[True], [False]]))
    check(torch.tensor(True))
    check(torch.tensor([False, False]))
    check(torch.ones(3000, dtype=torch.bool))


COMPLEX_VALUES = [
    [1 + 2j],
    [1 + 2j, 3 - 4j],
    [1.5 - 0.25j, -2 + 0j],
    [0j, -0.0j],
    [complex("nan+1j"), complex("1+infj")],
    [1e-5 + 1j, 1e5 - 3j],
    [1 - 1e-7j, 2 + 3j],
    [-1.5 - 2.5j],
]


@pytest.mark.parametrize("values", COMPLEX_VALUES, ids=[str(v) for v in COMPLEX_VALUES])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_values(values, dtype):
    check(torch.tensor(values, dtype=getattr(torch, dtype)))


# ---- shapes: 0-dim, empty, nd, wrapping, summarization -------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_dim(dtype):
    value = {"bool": True, "complex64": 1.5 - 2j, "complex128": -3 + 0.5j}.get(dtype, 3.14)
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        value = -3 if dtype != "uint8" else 3
    check(torch.tensor(value, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("value", [3.14, 0.0, -0.0, 1e-8, 1e10, float("nan"), float("-inf"), 2.0, -7.0])
def test_zero_dim_floats(value):
    check(torch.tensor(value))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (2, 0, 4), (0, 0)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(shape, dtype):
    check(torch.empty(shape, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (2, 1, 3, 2), (1, 1, 1), (3, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_nd(shape, dtype):
    g = torch.Generator().manual_seed(hash((shape, dtype)) % 1000)
    values = torch.randn(shape, generator=g, dtype=torch.float64) * 10
    if dtype == "bool":
        a = values > 0
    elif dtype.startswith("complex"):
        a = torch.complex(values, -values * 0.5).to(getattr(torch, dtype))
    else:
        a = values.to(getattr(torch, dtype))
    check(a)


@pytest.mark.parametrize("n", [10, 20, 30, 50, 100, 333])
def test_line_wrapping(n):
    check(torch.arange(n, dtype=torch.float32) * 1.5 - 40)
    check(torch.arange(n))
    check(torch.arange(n).reshape(1, n))
    check(torch.linspace(-1, 1, n, dtype=torch.float64).reshape(1, 1, n))


def test_wrapping_complex_and_sci():
    check(torch.complex(torch.arange(40.0), -torch.arange(40.0) / 3))
    check(torch.logspace(-10, 10, 40))
    check(torch.logspace(-10, 10, 40).reshape(4, 10))


@pytest.mark.parametrize(
    "shape", [(1001,), (2000,), (100, 100), (3, 1000), (1000, 3), (20, 20, 20), (7, 7, 7, 7), (6, 200), (1, 1001)]
)
def test_summarization(shape):
    n = math.prod(shape)
    check(torch.arange(n).reshape(shape))
    check((torch.arange(n, dtype=torch.float64).reshape(shape) - n / 2) / 7)
    check((torch.arange(n).reshape(shape) % 3) == 0)


def test_summarization_formatter_uses_only_shown_values():
    a = torch.ones(2000)
    a[1000] = 1e-9  # hidden by the summary: must not switch to sci mode
    check(a)
    a[0] = 1e-9
    check(a)
    check(torch.complex(torch.arange(2000.0), torch.arange(2000.0) * -2))


def test_random_matrices():
    g = torch.Generator().manual_seed(0)
    for shape in [(4, 4), (3, 5, 7), (10, 20), (50, 50)]:
        check(torch.randn(shape, generator=g))
        check(torch.randn(shape, generator=g, dtype=torch.float64) * 1e6)
        check(torch.randint(-1000, 1000, shape, generator=g))


def test_non_contiguous():
    a = torch.arange(12.0).reshape(3, 4)
    t = tp.from_numpy(np.arange(12.0, dtype=np.float32).reshape(3, 4).T)
    assert repr(t) == expected(a.t())
    t = tp.from_numpy(np.arange(12.0, dtype=np.float32).reshape(3, 4)[:, ::2])
    assert repr(t) == expected(a[:, ::2])


# ---- dtype suffix rules -------------------------------------------------------------------------
def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    tp.set_default_dtype(tp.float64)
    for dtype in DTYPES:
        check(torch.tensor([1, 2], dtype=getattr(torch, dtype)))
        check(torch.empty(0, dtype=getattr(torch, dtype)))


# ---- print options ------------------------------------------------------------------------------
OPTIONS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(threshold=5),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(edgeitems=1),
    dict(linewidth=40),
    dict(linewidth=10),
    dict(linewidth=200),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_printoptions(options):
    both_options(**options)
    check(torch.tensor([1.123456789, -22.5, 3e-3]))
    check(torch.tensor([1.0, 2.0]))
    check(torch.tensor([1e-6, 1e6]))
    check(torch.arange(12).reshape(3, 4))
    check(torch.arange(2000.0).reshape(40, 50) / 3)
    check(torch.arange(20))
    check(torch.tensor(2.5))
    check(torch.tensor([1 + 1j, 2.5 - 3j]))
    check(torch.empty(0, 2))


def test_get_and_context_manager():
    assert _printing.get_printoptions() == torch._tensor_str.get_printoptions()
    with _printing.printoptions(precision=2, linewidth=20):
        assert _printing.get_printoptions()["precision"] == 2
        torch.set_printoptions(precision=2, linewidth=20)
        check(torch.arange(10.0) / 3)
        torch.set_printoptions(profile="default")
    assert _printing.get_printoptions() == torch._tensor_str.get_printoptions()
    assert tp.set_printoptions is _printing.set_printoptions


def test_sci_mode_reset_by_omission():
    both_options(sci_mode=True)
    both_options(precision=3)  # sci_mode omitted: back to automatic
    assert _printing.get_printoptions()["sci_mode"] is None
    check(torch.tensor([1.0, 2.5]))


def test_bad_profile():
    with pytest.raises(ValueError):
        _printing.set_printoptions(profile="nope")


# ---- autograd suffixes, subclasses ----------------------------------------------------------------
class _FakeNode:
    def name(self):
        return "AddBackward0"


def test_requires_grad_and_grad_fn():
    t = tp.tensor([1.0, 2.0])
    t._requires_grad = True
    assert repr(t) == expected(torch.tensor([1.0, 2.0], requires_grad=True))
    u = tp.tensor([2.0, 3.0])
    u._requires_grad = True
    u._grad_fn = _FakeNode()
    assert repr(u) == expected(torch.tensor([1.0, 2.0], requires_grad=True) + 1)
    big = tp.from_numpy(np.arange(18.0, dtype=np.float32).reshape(2, 9) * 1000.5)
    big._requires_grad = True
    big._grad_fn = _FakeNode()
    a = torch.arange(18.0).reshape(2, 9) * 1000.5
    assert repr(big) == expected(a.requires_grad_() + 0)


def test_suffix_wrapping_dtype():
    for n in range(8, 16):
        check(torch.arange(n, dtype=torch.int32) * 1001)
        check(torch.arange(n, dtype=torch.float64) / 7)


def test_subclass_prefix():
    ours = type("MyTensor", (tp.Tensor,), {})
    theirs = type("MyTensor", (torch.Tensor,), {})
    t = tp.tensor([1.0, 2.0])
    t.__class__ = ours
    ref = torch.Tensor._make_subclass(theirs, torch.tensor([1.0, 2.0]))
    assert repr(t) == expected(ref)


# ---- devices without data, non-cpu devices ----------------------------------------------------------
class _ShapeOnly:
    def __init__(self, shape, itemsize):
        self.shape = tuple(shape)
        strides, acc = [], itemsize
        for s in reversed(self.shape):
            strides.insert(0, acc)
            acc *= max(s, 1)
        self.strides = tuple(strides)
        self.nbytes = math.prod(self.shape) * itemsize


@pytest.fixture
def fake_devices():
    def no_host(t):
        raise RuntimeError("no data")

    shape_only = Backend("fakemeta", "FakeMeta", from_host=no_host, to_host=no_host, storage_offset=lambda t: 0,
                         has_data=False)
    with_data = Backend("fakedev", "FakeDev", from_host=no_host, to_host=lambda t: t._data,
                        storage_offset=lambda t: 0, has_data=True)
    register_backend(shape_only)
    register_backend(with_data)
    try:
        yield tp.device("fakemeta"), tp.device("fakedev:0")
    finally:
        unregister_backend("fakemeta")
        unregister_backend("fakedev")


@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (5,), (0, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_shape_only_device(fake_devices, shape, dtype):
    dev, _ = fake_devices
    tdt = getattr(tp, dtype)
    t = make_tensor(_ShapeOnly(shape, tdt.itemsize), tdt, dev, 0)
    ref = torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    assert repr(t) == expected(ref).replace("'meta'", "'fakemeta'")


def test_non_host_device_suffix(fake_devices):
    _, dev = fake_devices
    t = make_tensor(np.array([1.0, 2.0], dtype=np.float32), tp.float32, dev, 0)
    assert repr(t) == "tensor([1., 2.], device='fakedev:0')"
    t = make_tensor(np.array([1, 2], dtype=np.int32), tp.int32, dev, 0)
    assert repr(t) == "tensor([1, 2], device='fakedev:0', dtype=torchplug.int32)"
    t = make_tensor(np.arange(6, dtype=np.float64).reshape(2, 3) * 1000.25, tp.float64, dev, 0)
    assert repr(t) == (
        "tensor([[   0.0000, 1000.2500, 2000.5000],\n"
        "        [3000.7500, 4001.0000, 5001.2500]], device='fakedev:0',\n"
        "       dtype=torchplug.float64)"
    )


def test_real_meta():
    try:
        m = tp.empty(2, 3, device="meta")
    except Exception:
        pytest.skip("meta backend not installed")
    assert repr(m) == "tensor(..., device='meta', size=(2, 3))"
    m = tp.empty(4, dtype=tp.int64, device="meta")
    assert repr(m) == expected(torch.empty(4, dtype=torch.int64, device="meta"))


# ---- randomized differential sweep -----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(40))
def test_random_sweep(seed):
    g = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(rng.integers(1, 12)) for _ in range(ndim))
    scale = float(10.0 ** rng.integers(-6, 10))
    dtype = DTYPES[seed % len(DTYPES)]
    values = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    if seed % 3 == 0:
        values = values.round()
    if seed % 5 == 0 and values.numel() > 1:
        values.view(-1)[0] = float("nan")
    if dtype == "bool":
        a = values > 0
    elif dtype.startswith("complex"):
        a = torch.complex(values, values.flip(-1) if ndim else values).to(getattr(torch, dtype))
    elif dtype in ("uint8", "int8", "int16", "int32", "int64"):
        a = torch.nan_to_num(values).clamp(-100, 100).to(getattr(torch, dtype))
    else:
        a = values.to(getattr(torch, dtype))
    options = [dict(), dict(threshold=20), dict(linewidth=50, precision=3), dict(threshold=10, edgeitems=1)]
    both_options(**options[seed % 4])
    check(a)
