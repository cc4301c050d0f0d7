"""Tests for torchplug._base.dtype: dtype objects, promotion, casting, default dtype, finfo/iinfo."""
from __future__ import annotations

import copy
import itertools
import pickle
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

_CORE = str(Path(__file__).resolve().parents[1])
if _CORE not in sys.path:
    sys.path.insert(0, _CORE)

from torchplug._base import dtype as D  # noqa: E402

ALL = D.ALL_DTYPES
NAMES = [d.name for d in ALL]
FLOATING = [D.float16, D.bfloat16, D.float32, D.float64]


class FakeTensor:
    """Minimal tensor-like operand for result_type()."""

    def __init__(self, dtype, ndim):
        self.dtype = dtype
        self.ndim = ndim


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    yield
    D.set_default_dtype(D.float32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_default_dtype(torch.float32)


def _torch():
    return pytest.importorskip("torch")


def _t(torch, d):
    return getattr(torch, d.name)


def _tname(t):
    # torchplug has no complex32: where torch yields it (float16 + complex), we yield complex64.
    name = str(t).split(".")[1]
    return "complex64" if name == "complex32" else name


# ------------------------------------------------------------------ dtype objects

EXPECTED_ATTRS = {  # name: (itemsize, is_floating_point, is_complex, is_signed, category)
    "bool": (1, False, False, False, 0), "uint8": (1, False, False, False, 1),
    "int8": (1, False, False, True, 1), "int16": (2, False, False, True, 1),
    "int32": (4, False, False, True, 1), "int64": (8, False, False, True, 1),
    "float16": (2, True, False, True, 2), "bfloat16": (2, True, False, True, 2),
    "float32": (4, True, False, True, 2), "float64": (8, True, False, True, 2),
    "complex64": (8, False, True, True, 3), "complex128": (16, False, True, True, 3),
}


def test_all_dtypes_and_attributes():
    assert NAMES == list(EXPECTED_ATTRS)
    for d in ALL:
        assert (d.itemsize, d.is_floating_point, d.is_complex, d.is_signed, D.category(d)) \
            == EXPECTED_ATTRS[d.name]
        assert d.numpy_dtype.itemsize == d.itemsize
    assert D.bool_.name == "bool"
    assert D.bfloat16.numpy_dtype == np.dtype(ml_dtypes.bfloat16)


def test_attributes_match_torch():
    torch = _torch()
    for d in ALL:
        t = _t(torch, d)
        assert (d.itemsize, d.is_floating_point, d.is_complex, d.is_signed) == \
            (t.itemsize, t.is_floating_point, t.is_complex, t.is_signed), d


def test_repr_str():
    assert repr(D.float32) == "torchplug.float32"
    assert str(D.bool_) == "torchplug.bool"
    for d in ALL:
        assert repr(d) == str(d) == f"torchplug.{d.name}"


def test_singleton_immutable_hashable():
    with pytest.raises(TypeError):
        D.dtype("float32", 4, 2, np.float32)
    with pytest.raises(AttributeError):
        D.float32.name = "x"
    with pytest.raises(AttributeError):
        D.float32.other = 1
    with pytest.raises(AttributeError):
        del D.float32.itemsize
    assert len({d: i for i, d in enumerate(ALL)}) == 12
    assert len(set(ALL)) == 12


def test_pickle_and_copy_preserve_identity():
    for d in ALL:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(d, protocol=proto)) is d
        assert copy.copy(d) is d
        assert copy.deepcopy([d])[0] is d


def test_aliases():
    expected = {"half": D.float16, "float": D.float32, "double": D.float64, "short": D.int16,
                "int": D.int32, "long": D.int64, "cfloat": D.complex64, "cdouble": D.complex128}
    assert D.ALIASES == expected
    for name, d in expected.items():
        assert getattr(D, name) is d
        assert name in D.__all__
    assert "bool_" in D.__all__ and "bool" not in D.__all__


def test_to_real_to_complex():
    assert D.complex64.to_real() is D.float32
    assert D.complex128.to_real() is D.float64
    assert D.int32.to_real() is D.int32 and D.float16.to_real() is D.float16
    assert D.float32.to_complex() is D.complex64
    assert D.float64.to_complex() is D.complex128
    assert D.bfloat16.to_complex() is D.complex64
    assert D.float16.to_complex() is D.complex64  # torch: complex32 (not supported here)
    assert D.complex128.to_complex() is D.complex128
    for d in (D.bool_, D.uint8, D.int64):
        with pytest.raises(RuntimeError):
            d.to_complex()


def test_to_real_to_complex_match_torch():
    torch = _torch()
    for d in ALL:
        t = _t(torch, d)
        assert d.to_real().name == _tname(t.to_real())
        try:
            expected = _tname(t.to_complex())
        except RuntimeError:
            with pytest.raises(RuntimeError):
                d.to_complex()
        else:
            assert d.to_complex().name == expected


# ------------------------------------------------------------------ numpy interop

def test_from_numpy_dtype_roundtrip():
    for d in ALL:
        assert D.from_numpy_dtype(d.numpy_dtype) is d
        assert D.from_numpy_dtype(d.numpy_dtype.type) is d  # scalar type, e.g. np.float32
    assert D.from_numpy_dtype(np.dtype(np.longlong)) is D.int64
    assert D.from_numpy_dtype("float32") is D.float32
    assert D.from_numpy_dtype(ml_dtypes.bfloat16) is D.bfloat16
    assert D.from_numpy_dtype(np.zeros(2, dtype=bool).dtype) is D.bool_


@pytest.mark.parametrize("bad", [np.uint16, np.uint32, np.uint64, np.dtype("U3"), object,
                                 np.dtype(">f8" if sys.byteorder == "little" else "<f8"),
                                 np.dtype("datetime64[s]"), np.longdouble])
def test_from_numpy_dtype_unsupported(bad):
    with pytest.raises(TypeError) as exc:
        D.from_numpy_dtype(bad)
    msg = str(exc.value)
    assert str(np.dtype(bad)) in msg
    assert "float32" in msg and "bfloat16" in msg and "complex128" in msg


def test_from_numpy_dtype_garbage():
    with pytest.raises(TypeError):
        D.from_numpy_dtype("not a dtype")


# ------------------------------------------------------------------ promote_types

PROMOTE_SPOT = [
    ("uint8", "int8", "int16"), ("uint8", "int16", "int16"), ("uint8", "int64", "int64"),
    ("int8", "int32", "int32"), ("bool", "uint8", "uint8"), ("bool", "float16", "float16"),
    ("bool", "complex128", "complex128"), ("bool", "bool", "bool"),
    ("bfloat16", "float16", "float32"), ("bfloat16", "float32", "float32"),
    ("float16", "float64", "float64"), ("int64", "float16", "float16"),
    ("int64", "bfloat16", "bfloat16"), ("uint8", "float32", "float32"),
    ("int32", "complex64", "complex64"), ("complex64", "float64", "complex128"),
    ("complex64", "float16", "complex64"), ("complex64", "bfloat16", "complex64"),
    ("complex64", "complex128", "complex128"), ("complex128", "float32", "complex128"),
    ("float32", "float32", "float32"), ("int16", "int16", "int16"),
]


@pytest.mark.parametrize("a,b,expected", PROMOTE_SPOT)
def test_promote_types_spot(a, b, expected):
    da, db = getattr(D, a if a != "bool" else "bool_"), getattr(D, b if b != "bool" else "bool_")
    assert D.promote_types(da, db).name == expected
    assert D.promote_types(db, da).name == expected


def test_promote_types_properties():
    for a, b in itertools.product(ALL, ALL):
        p = D.promote_types(a, b)
        assert p is D.promote_types(b, a)
        assert D.category(p) == max(D.category(a), D.category(b))
        assert D.can_cast(a, p) and D.can_cast(b, p)
    with pytest.raises(TypeError):
        D.promote_types(D.float32, "float32")


def test_promote_types_full_table_vs_torch():
    torch = _torch()
    for a, b in itertools.product(ALL, ALL):
        expected = _tname(torch.promote_types(_t(torch, a), _t(torch, b)))
        assert D.promote_types(a, b).name == expected, (a, b)


# ------------------------------------------------------------------ can_cast

def test_can_cast_spot():
    assert D.can_cast(D.int64, D.float16)
    assert D.can_cast(D.float64, D.float16)
    assert D.can_cast(D.bool_, D.int8) and D.can_cast(D.bool_, D.bool_)
    assert D.can_cast(D.float32, D.complex64) and D.can_cast(D.int64, D.uint8)
    assert not D.can_cast(D.float32, D.int64)
    assert not D.can_cast(D.complex64, D.float64)
    assert not D.can_cast(D.int8, D.bool_)
    assert not D.can_cast(D.float16, D.bool_)
    assert not D.can_cast(D.complex128, D.bool_)


def test_can_cast_full_table_vs_torch():
    torch = _torch()
    for a, b in itertools.product(ALL, ALL):
        assert D.can_cast(a, b) == torch.can_cast(_t(torch, a), _t(torch, b)), (a, b)


# ------------------------------------------------------------------ result_type

def _fake(kind, x):
    if kind == "scalar":
        return x
    return FakeTensor(x, 1 if kind == "dim" else 0)


def _real(torch, kind, x):
    if kind == "scalar":
        return x
    return torch.ones(2 if kind == "dim" else (), dtype=_t(torch, x))


OPERANDS = ([("dim", d) for d in ALL] + [("zero", d) for d in ALL]
            + [("scalar", v) for v in (True, 3, 2.5, 1 + 2j)])


def _rt(*ops):
    return D.result_type(*(_fake(k, x) for k, x in ops))


TRICKY = [  # (operands, default dtype, expected)
    ([("dim", D.int32), ("scalar", 2.5)], D.float32, D.float32),
    ([("dim", D.int32), ("scalar", 2.5)], D.float64, D.float64),
    ([("dim", D.int32), ("scalar", 2.5)], D.bfloat16, D.bfloat16),
    ([("dim", D.int32), ("zero", D.float64)], D.float32, D.float64),
    ([("dim", D.float16), ("zero", D.float64)], D.float32, D.float16),
    ([("dim", D.uint8), ("scalar", 1000)], D.float32, D.uint8),
    ([("dim", D.bool_), ("scalar", 3)], D.float32, D.int64),
    ([("dim", D.bool_), ("scalar", True)], D.float32, D.bool_),
    ([("dim", D.float32), ("scalar", 1j)], D.float32, D.complex64),
    ([("dim", D.float64), ("scalar", 1j)], D.float32, D.complex128),
    ([("dim", D.float32), ("scalar", 1j)], D.float64, D.complex64),
    ([("dim", D.int32), ("scalar", 1j)], D.float64, D.complex128),
    ([("dim", D.int32), ("zero", D.complex128)], D.float32, D.complex128),
    ([("dim", D.float32), ("zero", D.complex128)], D.float32, D.complex64),
    ([("dim", D.bfloat16), ("zero", D.complex128)], D.float32, D.complex64),
    ([("dim", D.int8), ("zero", D.int64)], D.float32, D.int8),
    ([("dim", D.int8), ("dim", D.uint8)], D.float32, D.int16),
    ([("zero", D.int8), ("scalar", 2.5)], D.float32, D.float32),
    ([("zero", D.float16), ("scalar", 2.5)], D.float64, D.float16),
    ([("zero", D.bool_), ("scalar", 7)], D.float32, D.int64),
    ([("zero", D.uint8), ("zero", D.int8)], D.float32, D.int16),
    ([("scalar", 1), ("scalar", 2.0)], D.float64, D.float64),
    ([("scalar", True), ("scalar", 1j)], D.float32, D.complex64),
    ([("scalar", 5)], D.float32, D.int64),
    ([("dim", D.uint8)], D.float32, D.uint8),
    # three or more operands (as used by ternary ops)
    ([("dim", D.int16), ("zero", D.float64), ("scalar", 1j)], D.float32, D.complex128),
    ([("dim", D.float16), ("zero", D.float64), ("scalar", 1j)], D.float32, D.complex64),
    ([("dim", D.uint8), ("dim", D.int8), ("scalar", 1.0)], D.float32, D.float32),
    ([("dim", D.bool_), ("zero", D.int32), ("scalar", 2)], D.float32, D.int32),
    ([("dim", D.bool_), ("zero", D.bool_), ("scalar", 2)], D.float32, D.int64),
    ([("dim", D.int32), ("dim", D.int64), ("zero", D.float16), ("scalar", 2.0)],
     D.float64, D.float16),
]


@pytest.mark.parametrize("ops,default,expected", TRICKY)
def test_result_type_tricky(ops, default, expected):
    D.set_default_dtype(default)
    assert _rt(*ops) is expected
    assert _rt(*reversed(ops)) is expected


@pytest.mark.parametrize("ops,default,expected", [c for c in TRICKY if len(c[0]) == 2])
def test_result_type_tricky_vs_torch(ops, default, expected):
    torch = _torch()
    torch.set_default_dtype(_t(torch, default))
    assert _tname(torch.result_type(*(_real(torch, k, x) for k, x in ops))) == expected.name


@pytest.mark.parametrize("default", FLOATING, ids=lambda d: d.name)
def test_result_type_all_pairs_vs_torch(default):
    torch = _torch()
    torch.set_default_dtype(_t(torch, default))
    D.set_default_dtype(default)
    for a, b in itertools.product(OPERANDS, OPERANDS):
        expected = _tname(torch.result_type(_real(torch, *a), _real(torch, *b)))
        assert _rt(a, b).name == expected, (a, b, default)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_result_type_tensor_triples_vs_torch():
    # torch.result_type takes two operands; addcmul promotes all three inputs
    # with the same ResultTypeState, and meta tensors make it cheap and
    # independent of kernel dtype support.
    torch = _torch()
    ops = [("dim", d) for d in ALL] + [("zero", d) for d in ALL]
    rng = np.random.default_rng(0)
    triples = [tuple(ops[i] for i in rng.integers(0, len(ops), 3)) for _ in range(3000)]
    checked = 0
    for trip in triples:
        real = [torch.empty(2 if k == "dim" else (), dtype=_t(torch, d), device="meta")
                for k, d in trip]
        try:
            expected = _tname(torch.addcmul(*real).dtype)
        except RuntimeError:
            continue
        assert _rt(*trip).name == expected, trip
        checked += 1
    assert checked > 2000


def test_result_type_ndim_classes():
    # Any ndim > 0 counts as "dimensioned".
    assert D.result_type(FakeTensor(D.int8, 3), FakeTensor(D.int64, 0)) is D.int8
    assert D.result_type(FakeTensor(D.int8, 0), FakeTensor(D.int64, 0)) is D.int64


def test_result_type_numpy_scalars():
    t = FakeTensor(D.uint8, 1)
    assert D.result_type(t, np.float64(1.5)) is D.float32
    assert D.result_type(t, np.int64(300)) is D.uint8
    assert D.result_type(FakeTensor(D.int32, 0), np.bool_(True)) is D.int32
    assert D.result_type(t, np.complex128(1j)) is D.complex64


def test_result_type_errors():
    with pytest.raises(TypeError):
        D.result_type()
    with pytest.raises(TypeError):
        D.result_type(FakeTensor(D.int8, 1), "x")
    with pytest.raises(TypeError):
        D.result_type(FakeTensor(D.int8, 1), None)
    with pytest.raises(TypeError):
        D._result_type_parts((D.int8,), (), (str,))


def test_result_type_parts_and_cache_follow_default():
    assert D._result_type_parts((D.int32,), (), (float,)) is D.float32
    assert D._result_type_parts((), (D.int32,), (complex,)) is D.complex64
    D.set_default_dtype(D.float64)
    assert D._result_type_parts((D.int32,), (), (float,)) is D.float64
    assert D._result_type_parts((), (D.int32,), (complex,)) is D.complex128
    D.set_default_dtype(D.float32)
    assert D._result_type_parts((D.int32,), (), (float,)) is D.float32
    assert D._result_type_parts((D.float16, D.bfloat16), (D.float64,), (int, bool)) is D.float32


# ------------------------------------------------------------------ default dtype

def test_default_dtype():
    assert D.get_default_dtype() is D.float32
    assert D.get_default_complex_dtype() is D.complex64
    for d, c in [(D.float64, D.complex128), (D.float16, D.complex64),
                 (D.bfloat16, D.complex64), (D.float32, D.complex64)]:
        assert D.set_default_dtype(d) is None
        assert D.get_default_dtype() is d
        assert D.get_default_complex_dtype() is c


@pytest.mark.parametrize("bad", [D.int32, D.bool_, D.uint8, D.complex64, D.complex128,
                                 "float32", float, None])
def test_set_default_dtype_rejects(bad):
    D.set_default_dtype(D.float64)
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        D.set_default_dtype(bad)
    assert D.get_default_dtype() is D.float64  # unchanged on error


def test_set_default_dtype_error_type_matches_torch():
    torch = _torch()
    for d in (D.int32, D.complex64, D.bool_):
        with pytest.raises(TypeError):
            torch.set_default_dtype(_t(torch, d))


# ------------------------------------------------------------------ finfo / iinfo

FINFO_FIELDS = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")


def test_finfo_values():
    f = D.finfo(D.float32)
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype) == \
        (32, 2.0 ** -23, 3.4028234663852886e38, -3.4028234663852886e38, 2.0 ** -126, 2.0 ** -126,
         1e-06, "float32")
    b = D.finfo(D.bfloat16)
    assert (b.bits, b.eps, b.resolution, b.tiny, b.dtype) == \
        (16, 2.0 ** -7, 0.01, 2.0 ** -126, "bfloat16")
    h = D.finfo(D.half)
    assert (h.bits, h.max, h.eps, h.resolution) == (16, 65504.0, 2.0 ** -10, 0.001)
    assert D.finfo(D.float64).eps == np.finfo(np.float64).eps
    assert D.finfo(D.complex64).dtype == "float32"
    assert D.finfo(D.complex128).dtype == "float64"
    assert all(type(getattr(f, k)) is float for k in FINFO_FIELDS[1:-1])
    assert "float32" in repr(f)


def test_finfo_default():
    assert D.finfo().dtype == "float32"
    assert D.finfo(None).dtype == "float32"
    D.set_default_dtype(D.float64)
    assert D.finfo().dtype == "float64"


@pytest.mark.parametrize("bad", [D.bool_, D.uint8, D.int64, "float32", np.float32])
def test_finfo_rejects(bad):
    with pytest.raises(TypeError):
        D.finfo(bad)


def test_iinfo_values():
    assert [(D.iinfo(d).bits, D.iinfo(d).min, D.iinfo(d).max, D.iinfo(d).dtype)
            for d in (D.uint8, D.int8, D.int16, D.int32, D.int64)] == [
        (8, 0, 255, "uint8"), (8, -128, 127, "int8"), (16, -32768, 32767, "int16"),
        (32, -2 ** 31, 2 ** 31 - 1, "int32"), (64, -2 ** 63, 2 ** 63 - 1, "int64")]
    assert type(D.iinfo(D.int64).max) is int
    assert repr(D.iinfo(D.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"


@pytest.mark.parametrize("bad", [D.bool_, D.float32, D.bfloat16, D.complex64, "int32", None])
def test_iinfo_rejects(bad):
    with pytest.raises(TypeError):
        D.iinfo(bad)


def test_finfo_iinfo_vs_torch():
    torch = _torch()
    for d in ALL:
        t = _t(torch, d)
        if d.is_floating_point or d.is_complex:
            ours, theirs = D.finfo(d), torch.finfo(t)
            for k in FINFO_FIELDS:
                assert getattr(ours, k) == getattr(theirs, k), (d, k)
            with pytest.raises(TypeError):
                torch.iinfo(t)
            with pytest.raises(TypeError):
                D.iinfo(d)
        elif d is D.bool_:
            for fn, tfn in ((D.finfo, torch.finfo), (D.iinfo, torch.iinfo)):
                with pytest.raises(TypeError):
                    tfn(t)
                with pytest.raises(TypeError):
                    fn(d)
        else:
            ours, theirs = D.iinfo(d), torch.iinfo(t)
            for k in ("bits", "max", "min", "dtype"):
                assert getattr(ours, k) == getattr(theirs, k), (d, k)
            with pytest.raises(TypeError):
                torch.finfo(t)
            with pytest.raises(TypeError):
                D.finfo(d)
