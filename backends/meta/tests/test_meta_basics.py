"""meta backend behaviour that needs no reference implementation (runs without PyTorch)."""

from __future__ import annotations

import time

import pytest

import torchplug
from torchplug._ops.composites import COMPOSITES
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._schemas import expand_table

M = "meta"


def meta(*shape, dtype=torchplug.float32):
    return torchplug.empty(*shape, dtype=dtype, device=M)


# ---- registration ------------------------------------------------------------------------------------
def test_backend_registered():
    from torchplug._runtime.backends import backend_for

    b = backend_for("meta")
    assert b.key_name == "Meta" and not b.has_data and not b.is_host and b.high_priority
    report = {r.name: r for r in torchplug.plugins.report()}
    assert report["meta"].status == "loaded", report["meta"]
    assert report["meta"].distribution == "torchplug-meta"


def _needs_backend_kernel(schema: str, tags: tuple[str, ...]) -> bool:
    name = schema.split("(")[0].removeprefix("aten::")
    if name in COMPOSITES:
        return False
    entry = DISPATCHER.entry("aten::" + name)
    # inplace/out overloads of a functional op get core CompositeExplicitAutograd wrappers
    return "CompositeExplicitAutograd" not in entry.kernels and "CompositeImplicitAutograd" not in entry.kernels


def test_every_primitive_op_has_a_meta_kernel():
    missing = []
    for schema, tags, _ in expand_table():
        name = schema.split("(")[0]
        if _needs_backend_kernel(schema, tags) and "Meta" not in DISPATCHER.entry(name).kernels:
            missing.append(name)
    assert not missing, f"ops without a Meta kernel: {missing}"


def test_every_op_resolves_for_meta():
    from torchplug._dispatch import keys as K

    meta_key = K.KEYS["Meta"]
    for schema, _, _ in expand_table():
        entry = DISPATCHER.entry(schema.split("(")[0])
        reg, why = entry.resolve_key(meta_key, DISPATCHER.fallbacks)
        assert reg is not None, f"{entry.name}: {why}"


# ---- no data -------------------------------------------------------------------------------------------
def test_meta_tensor_has_no_data():
    x = meta(2, 3)
    assert x.is_meta and x.device.type == "meta"
    assert x.data_ptr() == 0
    assert not hasattr(x._data, "__array_interface__")
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        x.tolist()
    with pytest.raises(RuntimeError):  # NotImplementedError is a RuntimeError, like torch's
        x[0].item() if False else meta(1).item()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        x.numpy()
    with pytest.raises(RuntimeError):
        bool(meta(()))
    with pytest.raises(NotImplementedError, match="no data"):
        x.__array__()


def test_repr_has_no_values():
    r = repr(meta(2, 3))
    assert "meta" in r and "(2, 3)" in r


def test_huge_zeros_is_instant_and_allocates_nothing():
    import tracemalloc

    tracemalloc.start()
    t0 = time.perf_counter()
    z = torchplug.zeros(1000, 1000, 1000, device=M)
    o = torchplug.ones(10**6, 10**6, dtype=torchplug.float64, device=M)
    f = torchplug.full((10**5, 10**5), 3, device=M)
    r = torchplug.randn(10**5, 10**5, device=M)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.5
    assert peak < 1_000_000  # bytes; 10**9 floats would be 4 GB
    assert z.shape == (1000, 1000, 1000) and z.stride() == (10**6, 1000, 1)
    assert z.nbytes == 4 * 10**9 and z.untyped_storage().nbytes == 4 * 10**9
    assert o.dtype == torchplug.float64 and f.dtype == torchplug.int64 and r.dtype == torchplug.float32
    assert (z + 1).shape == (1000, 1000, 1000)
    assert z.sum(0).shape == (1000, 1000)


def test_tensor_from_data_keeps_only_shape_and_dtype():
    t = torchplug.tensor([[1, 2, 3], [4, 5, 6]], device=M)
    assert t.shape == (2, 3) and t.dtype == torchplug.int64 and t.is_meta
    t = torchplug.tensor([1.5, 2.5], device=M)
    assert t.dtype == torchplug.float32 and t.stride() == (1,)
    with pytest.raises(NotImplementedError):
        t.tolist()


# ---- views --------------------------------------------------------------------------------------------
def test_views_share_storage_and_track_base():
    x = meta(4, 6)
    v = x[1]
    assert v.shape == (6,) and v.stride() == (1,) and v.storage_offset() == 6
    assert v.untyped_storage() is x.untyped_storage()
    assert v._base is x
    w = v.view(2, 3)
    assert w._base is x and w.storage_offset() == 6 and w.stride() == (3, 1)
    t = x.t()
    assert t.shape == (6, 4) and t.stride() == (1, 6) and not t.is_contiguous()
    s = torchplug.ops.aten.slice.Tensor(x, 1, 1, 6, 2)
    assert s.shape == (4, 3) and s.stride() == (6, 2) and s.storage_offset() == 1
    a = x.as_strided((2, 2), (1, 2), 3)
    assert a.storage_offset() == 3 and a.stride() == (1, 2) and a._base is x
    d = torchplug.ops.aten.diagonal.default(x, 1)
    assert d.shape == (4,) and d.stride() == (7,) and d.storage_offset() == 1
    e = meta(3, 1).expand(3, 5)
    assert e.stride() == (1, 0)
    u = x.unsqueeze(1)
    assert u.shape == (4, 1, 6) and u.stride() == (6, 6, 1)
    assert x.unfold(1, 2, 2).stride() == (6, 2, 1)


def test_in_place_bumps_shared_version():
    x = meta(4, 6)
    v = x[1]
    before = x._version
    v.add_(1)
    assert x._version == before + 1 and v._version == x._version
    x.uniform_()
    assert x._version == before + 2


def test_view_dtype():
    x = meta(2, 4)
    h = x.view(torchplug.float16)
    assert h.shape == (2, 8) and h.stride() == (8, 1) and h.dtype == torchplug.float16
    b = meta(2, 4, dtype=torchplug.uint8).view(torchplug.int32)
    assert b.shape == (2, 1) and b.stride() == (1, 1)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        meta(2, 3).view(torchplug.float64)
    with pytest.raises(RuntimeError, match="stride"):
        x.t().view(torchplug.float16)


def test_reshape_of_noncontiguous_copies():
    x = meta(3, 4).t()
    r = x.reshape(12)
    assert r.shape == (12,) and r.stride() == (1,)
    assert r.untyped_storage() is not x.untyped_storage()


# ---- copies, devices ------------------------------------------------------------------------------------
def test_copy_into_meta_checks_broadcast_only():
    x = meta(2, 3)
    assert x.copy_(meta(3)) is x
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        meta(3).copy_(x)


def test_fill_and_zero_return_self():
    x = meta(2, 3)
    assert x.fill_(1.5) is x and x.zero_() is x
    with pytest.raises(RuntimeError, match="0-dimension"):
        x.fill_(meta(2))


def test_clone_and_to_keep_layout():
    x = meta(3, 4).t()
    c = x.clone(memory_format="preserve_format")
    assert c.stride() == (1, 4) and c.untyped_storage() is not x.untyped_storage()
    assert x.clone().stride() == (1, 4)  # preserve_format by default, as PyTorch's clone
    assert x.contiguous().stride() == (3, 1)
    d = x.to(torchplug.float64)
    assert d.dtype == torchplug.float64 and d.stride() == (1, 4)
    assert x.to("meta") is x


def test_meta_to_cpu_raises():
    x = meta(2)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        x.cpu()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x.to("cpu")


def _cpu_works() -> bool:
    try:
        t = torchplug.tensor([1.0, 2.0])
        return t.device.type == "cpu" and t.tolist() == [1.0, 2.0]
    except Exception:  # the cpu backend is still being written
        return False


@pytest.mark.skipif(not _cpu_works(), reason="cpu backend cannot make tensors yet")
def test_cpu_to_meta():
    x = torchplug.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = x.to("meta")
    assert m.is_meta and m.shape == (2, 3) and m.dtype == torchplug.float32
    assert x.to(device="meta", dtype=torchplug.float64).dtype == torchplug.float64
    with pytest.raises(NotImplementedError):
        x.copy_(m)


@pytest.mark.skipif(not _cpu_works(), reason="cpu backend cannot make tensors yet")
def test_mixed_cpu_and_meta_dispatch_to_meta():
    # 0-dim cpu tensors act as scalars on any device; ops PyTorch does not device-check dispatch to meta
    s = torchplug.tensor(2.0)
    m = meta(2, 1)
    for out in (s + m, m + s, torchplug.mul(s, m), torchplug.where(meta(2, 3, dtype=torchplug.bool), s, 0.0)):
        assert out.is_meta and out.shape in ((2, 1), (2, 3))
    assert torchplug.mm(meta(2, 3), torchplug.ones(3, 4)).is_meta


@pytest.mark.skipif(not _cpu_works(), reason="cpu backend cannot make tensors yet")
def test_mixed_cpu_and_meta_tensors_raise_like_torch():
    # PyTorch's same-device check (torch._prims_common.check_same_device): the first device wins
    c = torchplug.tensor([[1.0, 2.0, 3.0]])
    m = meta(2, 1)
    for fn, first in ((lambda: c + m, "cpu"), (lambda: m + c, "meta"), (lambda: torchplug.cat([meta(1, 3), c]), "meta"),
                      (lambda: torchplug.where(meta(2, 3, dtype=torchplug.bool), c, 0.0), "meta")):
        other = "meta" if first == "cpu" else "cpu"
        with pytest.raises(RuntimeError, match=f"^Tensor on device {other} is not on the expected device {first}!$"):
            fn()


def test_mixed_dispatch_selects_meta_kernel():
    from torchplug._runtime.backends import backend_for
    from torchplug._dispatch import keys as K

    ks = backend_for("cpu").keyset | backend_for("meta").keyset
    names = K.keyset_names(ks & K.BACKEND_BAND)
    assert names[0] == "Meta"


# ---- factories and random ----------------------------------------------------------------------------------
def test_factories():
    assert torchplug.arange(10, device=M).shape == (10,)
    assert torchplug.arange(0, 1, 0.1, device=M).shape == (10,)
    assert torchplug.arange(10, 0, -3, device=M).shape == (4,)
    assert torchplug.linspace(0, 1, 7, device=M).shape == (7,)
    assert torchplug.logspace(0, 1, 7, device=M).dtype == torchplug.float32
    assert torchplug.eye(3, 5, device=M).stride() == (5, 1)
    assert torchplug.randperm(9, device=M).dtype == torchplug.int64
    s = torchplug.empty_strided((2, 3), (1, 2), device=M)
    assert s.stride() == (1, 2) and s.untyped_storage().nbytes == 24
    assert torchplug.randint(0, 5, (3, 4), device=M).dtype == torchplug.int64


def test_data_dependent_ops_raise():
    x = meta(2, 3)
    with pytest.raises(NotImplementedError, match="nonzero"):
        torchplug.nonzero(x)
    with pytest.raises(NotImplementedError, match="boolean mask"):
        torchplug.ops.aten.index.Tensor(x, [meta(2, 3, dtype=torchplug.bool)])


def test_broadcast_error_message():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                                           r"non-singleton dimension 1"):
        meta(4, 2) + meta(4, 3)


def test_mean_of_ints_errors_and_sum_promotes():
    i = meta(2, 3, dtype=torchplug.int32)
    assert i.sum().dtype == torchplug.int64
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        i.mean()
    v, idx = meta(2, 3).max(1)
    assert v.shape == (2,) and idx.dtype == torchplug.int64


def test_deepcopy_and_pickle_keep_metadata():
    import copy
    import pickle

    x = meta(2, 3, dtype=torchplug.float64)
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert y.is_meta and y.shape == (2, 3) and y.dtype == torchplug.float64
        assert y.untyped_storage() is not x.untyped_storage()


@pytest.mark.skipif(not _cpu_works(), reason="cpu backend cannot make tensors yet")
def test_cpu_scalar_does_not_win_promotion():
    # a 0-dim host tensor takes part like a scalar: float32 meta + float64 cpu scalar stays float32
    out = meta(2, 3) + torchplug.tensor(1.0, dtype=torchplug.float64)
    assert out.is_meta and out.dtype == torchplug.float32 and out.stride() == (3, 1)


def test_payload_is_metadata_only():
    from torchplug_meta._payload import MetaArray

    x = meta(4, 6)[1:, ::2]
    p = x._data
    assert isinstance(p, MetaArray) and p.shape == (3, 3) and p.strides == (24, 8) and p.offset == 6
    assert p.ndim == 2 and p.size == 9 and p.data_ptr == 0
    assert set(MetaArray.__slots__) == {"shape", "strides", "dtype", "offset", "nbytes"}
    assert "offset=6" in repr(p)
