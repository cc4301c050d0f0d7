"""Tensor indexing (__getitem__/__setitem__) compared with real PyTorch: values, shapes, views, errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchplug as tp  # noqa: E402


# ---- index expressions written once for both libraries ------------------------------------------
class T:
    """A tensor index: ``T([0, 1])`` becomes ``lib.tensor([0, 1], dtype=...)`` in each library."""

    def __init__(self, data, dtype="int64"):
        self.data = data
        self.dtype = dtype

    def make(self, lib):
        return lib.tensor(self.data, dtype=getattr(lib, self.dtype))

    def __repr__(self):
        return f"T({self.data!r}, {self.dtype})"


def B(data):
    return T(data, "bool")


def build(lib, index):
    if isinstance(index, T):
        return index.make(lib)
    if isinstance(index, tuple):
        return tuple(build(lib, i) for i in index)
    if isinstance(index, list):
        return [build(lib, i) for i in index]
    return index


def arange(lib, shape, dtype="float32"):
    n = int(np.prod(shape))
    return lib.tensor(np.arange(n).reshape(shape).tolist(), dtype=getattr(lib, dtype))


def run(fn):
    """(result, exception, warning messages) of fn()."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = fn(), None
        except Exception as e:  # noqa: BLE001
            result, error = None, e
    return result, error, [str(w.message).split(" (Triggered internally")[0].replace("torch.", "torchplug.") for w in caught]


def same_error(ours, theirs):
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is None:
        return
    assert type(ours) is type(theirs), (ours, theirs)
    assert str(ours) == str(theirs).replace("torch.", "torchplug."), (ours, theirs)


def same_values(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()


# ---- __getitem__ ------------------------------------------------------------------------------------
BASIC = {
    (): [None, Ellipsis, (), (None, Ellipsis), (Ellipsis, None, None)],
    (5,): [0, 4, -1, -5, slice(None), slice(1, 3), slice(None, None, 2), slice(-2, None), slice(10, 20),
           slice(None, -10), slice(3, 1), slice(1, None, 3), None, Ellipsis, (None, None), (Ellipsis, None),
           (None, Ellipsis), (2, None), (None, 2), (), (slice(None), None)],
    (3, 4): [0, -1, (0, 1), (-1, -1), (slice(None), 1), (1, slice(None)), (slice(1, None), slice(None, None, 2)),
             (Ellipsis, 0), (0, Ellipsis), (Ellipsis, 1, 2), (None, 0, None), (slice(None), None, 0),
             (slice(None), slice(None)), (slice(0, 0), 1), (None, slice(None), None, slice(None), None)],
    (2, 3, 4): [1, (1, 2), (1, 2, 3), (Ellipsis, 3), (0, Ellipsis, 1), (slice(None), 1, slice(None)),
                (None, 0, Ellipsis, None), (slice(None, None, 2), slice(None, None, 2), slice(None, None, 2)),
                (0, None, slice(1, 3), Ellipsis), (Ellipsis, None), (-1, -2, -3)],
    (2, 3, 4, 5): [(0, 1), (Ellipsis, 0, 1), (0, Ellipsis, 4), (slice(None), 0, slice(None), -1),
                   (1, slice(None), None, 2, slice(1, 4, 2)), (None, Ellipsis, None)],
}

ADVANCED = {
    (): [True, False, B(True), B(False), (None, True), (True, Ellipsis, False)],
    (5,): [T([0, 2]), T([4, 4, 0]), T([-1, -5]), T([[0, 1], [2, 3]]), [0, 1], [[0, 1]], [], T([], "int64"),
           B([True, False, True, False, True]), [True, False, True, True, False], T([1], "int32"), T(2), T(-1),
           T(3, "int32"), B(True), B(False), True, False, (True, 0), (T([0, 1]), None), (None, T([1, 2])),
           np.array([0, 3]), range(3), np.int64(2)],
    (3, 4): [T([0, 2]), (T([0, 2]), T([1, 3])), (T([0, 2]), slice(None)), (slice(None), T([0, 3])),
             (T([[0], [2]]), T([1, 3])), B([True, False, True]), B([[True, False, True, False]] * 3),
             (B([True, False, True]), 1), (1, B([True, False, True, True])), (T([0, 1]), 1), (1, T([0, 1])),
             ([0, 2], [1, 3]), [[0, 2], [1, 3]], [0, slice(None)], [0, None], [0, Ellipsis], (Ellipsis, T([0, 0])),
             (None, T([1]), None, T([2])), (True, True), (True, 0, False), (T(1), T([0, 1])),
             (slice(None), [True, False, True, True]), (T([[0, 1], [1, 2]]), Ellipsis)],
    (2, 3, 4): [(T([0, 1]), slice(None), T([1, 2])), (slice(None), T([0, 1]), T([1, 2])),
                (T([0, 1]), 1, T([1, 2])), (0, T([0, 2]), T([1, 3])), (T([1, 0]), T([2, 0]), T([3, 0])),
                (slice(None), T([[0, 1]]), slice(None)), (T([0]), slice(None), slice(1, 3), T([0, 1])),
                (Ellipsis, T([0, 3])), (T([1]), Ellipsis, T([2])), (None, T([0, 1]), None, slice(None), T([1])),
                B([[True, False, True], [False, True, True]]), (B([[True, False, True], [False, True, True]]), 0),
                (B([[True, False, True], [False, True, True]]), slice(1, 3)),
                (slice(None), B([[True, False, True, True]] * 3)), (B([True, False]), T([0, 2]), T([1, 3])),
                (0, slice(None), T([[1, 2], [3, 0]])), (T([0, 1]), slice(None), slice(None), None),
                ([0, 1], slice(None), [1, 2]), (np.array([1, 0]), 2), (T(1), slice(None), T(2)),
                (slice(None, None, 2), T([0, 2]), slice(1, None, 2))],
    (2, 3, 4, 5): [(T([0, 1]), slice(None), T([0, 1]), slice(None)), (slice(None), T([0, 1]), slice(None), T([0, 1])),
                   (T([0, 1]), T([0, 1]), T([0, 1]), T([0, 1])), (Ellipsis, T([[0, 1], [2, 3]])),
                   (0, T([0, 1]), 1, T([1, 2])), (slice(None), T([[0], [1]]), T([[0, 1, 2]]), slice(1, 3)),
                   (B([True, True]), Ellipsis, B([True, False, False, True, False])),
                   (B([[True, False, True], [False, True, True]]), B([[True, False, True, False, False], [False] * 5,
                                                                       [False] * 5, [False, True, False, False, True]])),
                   (B([[True, False, False], [False, False, True]]), slice(None), T([0, 4])),
                   (T([0, 1]), B([[True, False, False, False], [False, False, False, True], [False] * 4])),
                   (T([1, 0]), Ellipsis, B([False, True, False, True, False])),
                   (slice(None), B([[True, False, False, False], [False] * 4, [False, False, True, False]]), None, 1),
                   (None, T([[0], [1]]), None, B([True, False, True]), Ellipsis, T([1, 2]))],
}

ERRORS = {
    (3,): [5, -4, 3, (0, 0), 1.5, "a", (0.5,), slice(None, None, 0), slice(None, None, -1), slice(0.5, 1),
           [0.5], object(), {}, (1, 2.0), T([0.0], "float32"), T(1.0, "float32"), T([1], "int8"), T([1], "int16"),
           T([3]), T([-4]), B([True, False]), np.float64(1), (None, 0, 5), (Ellipsis, 5), [[0.5]], ["a"]],
    (2, 3, 4): [(0, 0, 0, 0), (Ellipsis, 0, 0, 0, 0), (slice(None),) * 4, (0, 5), (0, 1, -5), (None, 0, 5),
                (slice(None), T([0, 5])), (T([0, 5]), 0), B([[True, False]]), (B([True, False, True]),),
                (T([[0, 1]]), T([0, 1, 1])), (0, 1, 2, None, 3)],
    (): [0, -1, (0, Ellipsis), [0], slice(0, 1), (None, 0)],
}


def _cases(table):
    return [(shape, index) for shape, indices in table.items() for index in indices]


def _id(case):
    # no memory addresses in ids (``object()`` cases): pytest-xdist workers must collect the same ids
    return re.sub(r" at 0x[0-9a-fA-F]+", "", f"{case[0]}-{case[1]!r}")


def compare_get(shape, index, dtype="float32"):
    a = arange(torch, shape, dtype)
    t = arange(tp, shape, dtype)
    ref, ref_err, ref_warn = run(lambda: a[build(torch, index)])
    got, got_err, got_warn = run(lambda: t[build(tp, index)])
    same_error(got_err, ref_err)
    assert got_warn == ref_warn
    if ref_err is None:
        same_values(got, ref)
        # a view exactly where PyTorch gives one
        shares = ref.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() and ref.numel() > 0
        if ref.numel() > 0:
            assert (got._storage is t._storage) == shares
    return got


@pytest.mark.parametrize("case", _cases(BASIC), ids=_id)
def test_get_basic(case):
    got = compare_get(*case)
    t_shape = case[0]
    assert got is not None
    if int(np.prod(t_shape)) and got.numel():
        assert got._base is not None or got._storage is not None


@pytest.mark.parametrize("case", _cases(ADVANCED), ids=_id)
def test_get_advanced(case):
    compare_get(*case)


@pytest.mark.parametrize("case", _cases(ERRORS), ids=_id)
def test_get_errors(case):
    compare_get(*case)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float64", "complex64"])
def test_get_dtypes(dtype):
    for index in [1, (slice(None), 0), T([0, 2]), (B([True, False, True]), slice(1, None))]:
        compare_get((3, 4), index, dtype)


# ---- __setitem__ ------------------------------------------------------------------------------------
def _value_variants(lib, shape, dtype):
    """Values to assign to an indexed result of ``shape``."""
    n = int(np.prod(shape))
    dt = getattr(lib, dtype)
    out = [7, 2.5, lib.tensor(9, dtype=dt)]
    out.append(lib.tensor((np.arange(n) + 100).reshape(shape).tolist(), dtype=dt))
    if shape:
        out.append(lib.tensor((np.arange(shape[-1]) + 50).tolist(), dtype=dt))  # broadcast over leading dims
        out.append(lib.tensor((np.arange(n) + 100).reshape((1, 1) + tuple(shape)).tolist(), dtype=dt))  # leading 1s
    return out


def compare_set(shape, index, dtype="float32"):
    a = arange(torch, shape, dtype)
    probe, probe_err, _ = run(lambda: a[build(torch, index)])
    result_shape = tuple(probe.shape) if probe_err is None else ()
    ours_values = _value_variants(tp, result_shape, dtype)
    for k, ref_value in enumerate(_value_variants(torch, result_shape, dtype)):
        a = arange(torch, shape, dtype)
        t = arange(tp, shape, dtype)
        a0, t0 = a._version, t._version

        def set_ref():
            a[build(torch, index)] = ref_value

        def set_ours():
            t[build(tp, index)] = ours_values[k]

        _, ref_err, ref_warn = run(set_ref)
        _, got_err, got_warn = run(set_ours)
        same_error(got_err, ref_err)
        assert got_warn == ref_warn
        if ref_err is None:  # (after an error PyTorch may have written part of the values)
            assert t.tolist() == a.tolist(), (index, ref_value)
            assert t._version - t0 == a._version - a0


@pytest.mark.parametrize("case", _cases(BASIC), ids=_id)
def test_set_basic(case):
    compare_set(*case)


@pytest.mark.parametrize("case", _cases(ADVANCED), ids=_id)
def test_set_advanced(case):
    compare_set(*case)


@pytest.mark.parametrize("case", _cases(ERRORS), ids=_id)
def test_set_errors(case):
    compare_set(*case)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float64", "complex128"])
def test_set_dtypes(dtype):
    for index in [1, (slice(None), 0), T([0, 2]), (B([True, False, True]), slice(1, None))]:
        compare_set((3, 4), index, dtype)


@pytest.mark.parametrize(
    "value",
    [1.5, True, 1 + 0j, 1 + 2j, np.float64(2.5), np.int64(3), np.float32(1), np.bool_(True), "a", None, [1], np.array([1.0])],
    ids=repr,
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "int32", "complex64"])
def test_set_value_types(value, dtype):
    for index in [0, T([0, 1])]:
        a = arange(torch, (3,), dtype)
        t = arange(tp, (3,), dtype)

        def set_ref():
            a[build(torch, index)] = value

        def set_ours():
            t[build(tp, index)] = value

        _, ref_err, _ = run(set_ref)
        _, got_err, _ = run(set_ours)
        same_error(got_err, ref_err)
        assert t.tolist() == a.tolist()


@pytest.mark.parametrize(
    "index, value_shape",
    [(0, (2, 3)), (0, (2,)), (slice(None), (4,)), (T([0, 1]), (3,)), (T([0, 1]), (2, 1)), ((T([0, 1]), 0), (3,))],
)
def test_set_shape_errors(index, value_shape):
    a = arange(torch, (3, 3))
    t = arange(tp, (3, 3))

    def set_ref():
        a[build(torch, index)] = torch.ones(value_shape)

    def set_ours():
        t[build(tp, index)] = tp.ones(value_shape)

    _, ref_err, _ = run(set_ref)
    _, got_err, _ = run(set_ours)
    same_error(got_err, ref_err)


def test_set_dtype_mismatch_advanced():
    a, t = torch.zeros(3), tp.zeros(3)
    _, ref_err, _ = run(lambda: a.__setitem__(torch.tensor([0, 1]), torch.tensor([1, 2])))
    _, got_err, _ = run(lambda: t.__setitem__(tp.tensor([0, 1]), tp.tensor([1, 2])))
    same_error(got_err, ref_err)
    # basic indexing casts
    t[0:2] = tp.tensor([1, 2])
    assert t.tolist() == [1.0, 2.0, 0.0]


def test_set_duplicate_indices():
    t = tp.zeros(3)
    t[[0, 0]] = tp.tensor([1.0, 1.0])
    assert t.tolist() == [1.0, 0.0, 0.0]


# ---- views, storage and version counter -----------------------------------------------------------
def test_views_share_storage():
    t = arange(tp, (3, 4))
    t[0][1] = 5
    assert t[0, 1].item() == 5
    row = t[1]
    row[:] = -1
    assert t.tolist()[1] == [-1.0] * 4
    col = t[:, 2]
    col.fill_(7) if hasattr(col, "fill_") else tp.ops.aten.fill_(col, 7)
    assert [r[2] for r in t.tolist()] == [7.0] * 3
    v = t[None, ..., ::2]
    assert v._storage is t._storage
    v[0, 2, 0] = 42
    assert t.tolist()[2][0] == 42
    assert t[...]._storage is t._storage and t[...] is not t
    assert t[:]._storage is t._storage and t[:] is not t


def test_advanced_get_is_a_copy():
    t = arange(tp, (3, 4))
    c = t[[0, 1]]
    assert c._storage is not t._storage
    c[0, 0] = 100
    assert t.tolist()[0][0] == 0


def test_version_counter():
    t = arange(tp, (3, 4))
    v = t[0]
    start = t._version
    t[0, 0] = 1
    assert t._version == start + 1 == v._version
    t[1] = tp.ones(4)
    assert t._version == start + 2
    t[[0, 2]] = 3.0
    assert t._version == start + 3
    t[tp.tensor([True, False, True])] = tp.zeros(2, 4)
    assert t._version == start + 4
    t[False] = 5
    assert t._version == start + 4
    v[1] = 9
    assert t._version == start + 5
    _ = t[0], t[[0]], t[t > 100] if hasattr(t, "__gt__") else None
    assert t._version == start + 5


def test_meta_indexing():
    try:
        m = tp.empty(2, 3, 4, device="meta")
    except Exception:
        pytest.skip("meta backend not installed")
    ref = torch.empty(2, 3, 4, device="meta")
    for index in [0, (slice(None), 1), (None, Ellipsis, 2), (T([0, 1]), slice(None), T([1, 2]))]:
        if isinstance(index, tuple):
            ours = m[tuple(i.make(tp).to("meta") if isinstance(i, T) else i for i in index)]
            theirs = ref[tuple(i.make(torch).to("meta") if isinstance(i, T) else i for i in index)]
        else:
            ours, theirs = m[index], ref[index]
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.device.type == "meta"


# ---- messages that come from the cpu index kernels ------------------------------------------------
KERNEL_CASES = [
    ((2, 3, 4, 5), (B([True, True]), Ellipsis, B([True, False, False, True, True]))),  # mask broadcast message
]


@pytest.mark.parametrize("case", KERNEL_CASES, ids=_id)
def test_kernel_mask_broadcast_message(case):
    compare_get(*case)


def test_set_uint8_mask():
    compare_set((5,), T([1, 0, 1, 0, 0], "uint8"))


def test_sequence_warning_points_at_caller():
    t = arange(tp, (3, 4))
    with pytest.warns(UserWarning, match="non-tuple sequence") as record:
        t[[0, slice(None)]]
    assert record[0].filename == __file__
