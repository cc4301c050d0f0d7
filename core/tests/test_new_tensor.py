"""The C fast path for fresh tensors (torchplug._tensor._fastpath) makes the same objects and counter
updates as the Python steps it replaces (skips where it was not built)."""

from __future__ import annotations

import numpy as np
import pytest

from torchplug._tensor import construct as N
from torchplug._runtime.allocator import DeviceAllocator, TrackedStorage
from torchplug._tensor.tensor import Tensor

SLOTS = ("_dtype", "_device", "_keyset", "_base", "_requires_grad", "_grad", "_grad_fn", "_autograd_meta")
COUNTERS = ("cur_b", "cur_n", "peak_b", "peak_n", "tot_b", "tot_n", "lcur_b", "lcur_n", "lpeak_b", "lpeak_n",
            "ltot_b", "ltot_n", "speak_b", "speak_n")


def _fast():
    if not N.ACCELERATED:
        pytest.skip("torchplug._tensor._fastpath was not built (or TORCHPLUG_PURE_PYTHON is set)")
    return N.new_tensor


def _stats() -> object:
    return DeviceAllocator("cpu").stats_for(0)


def _run(make, stats) -> list[Tensor]:
    # small and large (> 1 MiB) buffers, some freed in between, so every counter and peak moves
    kept = []
    for size in (16, 300_000, 10, 2_000_000, 7):
        arr = np.zeros(size, np.float32)
        t = make(arr, "float32", "cpu", 5, stats, arr.nbytes)
        if size != 300_000:
            kept.append(t)
        del t
    return kept


def test_same_objects_and_counters_as_python():
    fast = _fast()
    s_fast, s_py = _stats(), _stats()
    a = _run(fast, s_fast)
    b = _run(N._new_tensor_py, s_py)
    for x, y in zip(a, b):
        assert type(x) is Tensor and type(x._storage) is TrackedStorage
        assert [getattr(x, s) for s in SLOTS] == [getattr(y, s) for s in SLOTS]
        assert x._data.shape == y._data.shape and x._storage.data is x._data
        assert (x._storage.version, x._storage.nbytes, x._storage.device) == (0, x._data.nbytes, "cpu")
        assert x._storage.allocation is s_fast
    assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]
    del a, b, x, y
    assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]
    assert s_fast.cur_n == 0 and s_fast.cur_b == 0


def test_slow_path_goes_through_the_python_class():
    fast = _fast()
    stats = _stats()
    stats.slow = True
    calls = []
    stats.allocator._slow_alloc = lambda st, storage: calls.append(storage)  # type: ignore[method-assign]
    arr = np.zeros(4, np.float32)
    t = fast(arr, "float32", "cpu", 5, stats, arr.nbytes)
    assert calls == [t._storage] and stats.tot_n == 0


def test_tensor_slots_are_checked_at_configure():
    fastpath = pytest.importorskip("torchplug._tensor._fastpath")

    class NotATensor:
        __slots__ = ("_data",)

    with pytest.raises(AttributeError):
        fastpath.configure(NotATensor, TrackedStorage, type(_stats()))
    fastpath.configure(Tensor, TrackedStorage, type(_stats()))  # restore


def test_c_del_gives_bytes_back_like_python():
    _fast()
    stats = _stats()
    arr = np.zeros(300_000, np.float32)  # large pool too
    t = N.new_tensor(arr, "float32", "cpu", 5, stats, arr.nbytes)
    assert (stats.cur_b, stats.cur_n, stats.lcur_b, stats.lcur_n) == (arr.nbytes, 1, arr.nbytes, 1)
    assert TrackedStorage.__del__.__class__.__name__ == "method_descriptor"
    del t
    assert (stats.cur_b, stats.cur_n, stats.lcur_b, stats.lcur_n) == (0, 0, 0, 0)
    assert (stats.peak_b, stats.lpeak_n, stats.tot_n) == (arr.nbytes, 1, 1)


def test_new_view_shares_storage():
    arr = np.zeros(4, np.float32)
    base = N.new_tensor(arr, "float32", "cpu", 5, _stats(), arr.nbytes)
    for make in {N.new_view, N._new_view_py}:
        v = make(arr[1:], "float32", "cpu", 5, base._storage, base)
        assert v._storage is base._storage and v._base is base and v._grad_fn is None and not v._requires_grad


def test_backend_imported_before_torchplug_keeps_autograd_working():
    # regression: importing a backend's kernels first made the C path's import probe
    # torchplug.__getattr__, loading the autograd plugin while torchplug._tensor.construct was half made
    import subprocess
    import sys

    code = ("import torchplug_cpu.kernels.pointwise\nimport torchplug as T\n"
            "x = T.ones(3, requires_grad=True)\n(x * x).sum().backward()\nprint(x.grad.tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.0, 2.0, 2.0]"


# ---- hostile configurations and sizes: a clean exception, never a write outside an object -------------------
_TENSOR_SLOTS = ("_data", "_dtype", "_device", "_keyset", "_storage", "_base", "_requires_grad", "_grad", "_grad_fn",
                 "_autograd_meta")


def test_configure_refuses_member_descriptors_of_unrelated_classes():
    fastpath = pytest.importorskip("torchplug._tensor._fastpath")

    class Wide:  # slots far past the end of a small object
        __slots__ = tuple(f"pad{i}" for i in range(32)) + _TENSOR_SLOTS

    class Small:
        __slots__ = ()

    for name in _TENSOR_SLOTS:  # Small.<slot> reads as a slot, but of Wide's layout
        setattr(Small, name, Wide.__dict__[name])
    with pytest.raises(TypeError, match="is not a slot of Small's instances"):
        fastpath.configure(Small, TrackedStorage, type(_stats()))
    fastpath.configure(Tensor, TrackedStorage, type(_stats()))  # restore (the failure changed nothing)


def test_a_failed_configure_keeps_the_previous_configuration():
    fast = _fast()
    fastpath = pytest.importorskip("torchplug._tensor._fastpath")

    class Partial:  # its first slots are found before the missing one fails
        __slots__ = ("_grad_fn", "_autograd_meta", "_data")

    with pytest.raises(AttributeError):
        fastpath.configure(Partial, TrackedStorage, type(_stats()))
    arr = np.arange(3, dtype=np.float32)
    t = fast(arr, "float32", "cpu", 5, _stats(), arr.nbytes)
    assert type(t) is Tensor and t._data is arr and t._storage.data is arr and t._grad_fn is None


@pytest.mark.parametrize("nbytes", [-5, 2 ** 63, 2 ** 70, 12.0])
def test_byte_counts_outside_int64_take_the_python_class(nbytes):
    fast = _fast()
    s_fast, s_py = _stats(), _stats()
    arr = np.zeros(3, np.float32)
    a = fast(arr, "float32", "cpu", 5, s_fast, nbytes)
    b = N._new_tensor_py(arr, "float32", "cpu", 5, s_py, nbytes)
    assert a._storage.nbytes == b._storage.nbytes == nbytes
    assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]
    del a, b
    assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]


@pytest.mark.parametrize("start", [2 ** 63 - 5, 2 ** 70, -(2 ** 63)])
def test_counters_past_int64_get_the_python_arithmetic(start):
    fast = _fast()
    s_fast, s_py = _stats(), _stats()
    for s in (s_fast, s_py):
        s.cur_b = s.lcur_b = start
    for size in (4, 2_000_000):  # small and large pools
        arr = np.zeros(size, np.float32)
        a = fast(arr, "float32", "cpu", 5, s_fast, arr.nbytes)
        b = N._new_tensor_py(arr, "float32", "cpu", 5, s_py, arr.nbytes)
        assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]
        del a, b
        assert [getattr(s_fast, c) for c in COUNTERS] == [getattr(s_py, c) for c in COUNTERS]
    assert s_fast.cur_b == start


def test_the_c_del_refuses_storages_of_replaced_classes():
    _fast()
    fastpath = pytest.importorskip("torchplug._tensor._fastpath")
    arr = np.zeros(4, np.float32)
    t = N.new_tensor(arr, "float32", "cpu", 5, _stats(), arr.nbytes)
    old_del = TrackedStorage.__dict__["__del__"]

    class Other(TrackedStorage):
        __slots__ = ()

    fastpath.configure(Tensor, Other, type(_stats()))
    try:  # TrackedStorage's C __del__ now reads Other's offsets: it must check the type first
        with pytest.raises(TypeError, match="not the configured storage class"):
            old_del(t._storage)
    finally:
        fastpath.configure(Tensor, TrackedStorage, type(_stats()))
    assert t._storage.allocation.cur_n == 1
