"""``load(weights_only=True)``: the security review's reproducers, resource limits, error types, the
environment overrides and the safe-globals API, each checked against torch.load on the same file."""

from __future__ import annotations

import fractions
import io
import os
import pickle
import struct
import tracemalloc
import warnings
import zipfile

import pytest

import torchplug as tp
from torchplug_nn import serialization

from ckpt_craft import (
    BINPERSID, EMPTY_DICT, FALSE, NEWOBJ, NONE, REDUCE, G, I, S, archive, call, f32, pickle_of, storage, tensor, tup,
)

torch = pytest.importorskip("torch")


class Point:
    """A user class: refused by default, loadable once allow-listed."""

    def __init__(self, x, y):
        self.x, self.y = x, y


def make_point(x, y):
    return Point(x, y)


@pytest.fixture(autouse=True)
def _clean_registries():
    tp.serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()
    yield
    tp.serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()


def _refuse_both(buf_factory, match=None, **kwargs):
    """Both loaders refuse the file; torchplug with an UnpicklingError whose message matches."""
    with pytest.raises(Exception):
        torch.load(buf_factory(), **kwargs)
    with pytest.raises(pickle.UnpicklingError, match=match):
        tp.load(buf_factory(), **kwargs)


# ---- the review's reproducers ----------------------------------------------------------------------
def test_issue_reproducer_no_longer_writes_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    S_ = lambda x: b"X" + struct.pack("<I", len(x)) + x.encode()  # noqa: E731 - verbatim from the issue
    pkl = b"\x80\x02ctorchplug._dtype\n_from_name\n" + S_("save") + b"\x85R}" + S_("OVERWRITTEN") + b"\x86R."
    with zipfile.ZipFile("evil.pt", "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*GLOBAL torchplug._dtype._from_name"):
        tp.load("evil.pt")
    with pytest.raises(pickle.UnpicklingError):
        torch.load("evil.pt")
    assert not (tmp_path / "OVERWRITTEN").exists()


@pytest.mark.parametrize("via", ["_from_name", "direct"])
def test_state_changing_calls_are_refused_and_change_nothing(via):
    def fetch(name, module="torchplug"):
        return call(G("torchplug._base.dtype", "_from_name"), S(name)) if via == "_from_name" else G(module, name)

    before_grad, before_dtype = tp.is_grad_enabled(), tp.get_default_dtype()
    _refuse_both(lambda: archive(pickle_of(call(fetch("set_grad_enabled"), FALSE))), "Unsupported global")
    _refuse_both(lambda: archive(pickle_of(call(fetch("set_default_dtype"), G("torch", "float64")))),
                 "Unsupported global")
    assert tp.is_grad_enabled() == before_grad and tp.get_default_dtype() == before_dtype


def _os_system_file(tmp_path, marker):
    """A full (non-weights-only) checkpoint whose unpickling runs ``touch marker``."""
    pkl = pickle_of(call(G("posix", "system"), S(f"touch {marker}")))
    path = tmp_path / "second.pt"
    path.write_bytes(archive(pkl).getvalue())
    return path


def test_nested_load_with_positional_pickle_module_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "PWNED"
    second = _os_system_file(tmp_path, marker)
    for loader in (call(G("torchplug._base.dtype", "_from_name"), S("load")), G("torchplug", "load"), G("torch", "load")):
        outer = pickle_of(call(loader, S(str(second)), NONE, I(1)))
        _refuse_both(lambda: archive(outer), "Unsupported global")
    assert not marker.exists()
    # Called directly, a positional pickle_module turns weights_only off (as in torch) and is then
    # used: an int has no Unpickler, so both fail before unpickling anything.
    with pytest.raises(AttributeError):
        torch.load(second, None, 1)
    with pytest.raises(AttributeError):
        tp.load(second, None, 1)
    assert not marker.exists()


@pytest.mark.parametrize("module,name", [("posix", "system"), ("os", "system"), ("builtins", "eval"),
                                         ("builtins", "exec"), ("subprocess", "call"), ("os", "popen")])
def test_code_execution_globals_are_refused(tmp_path, module, name):
    marker = tmp_path / "PWNED"
    arg = f"__import__('os').system('touch {marker}')" if name in ("eval", "exec") else f"touch {marker}"
    payload = call(G(module, name), S(arg)) if name != "call" else call(G(module, name), tup(S("touch"), S(str(marker))))
    _refuse_both(lambda: archive(pickle_of(payload)))
    assert not marker.exists()
    for mod in (torch, tp):
        mod.serialization.add_safe_globals([getattr(os, name)] if module == "os" else [])
    _refuse_both(lambda: archive(pickle_of(payload)))  # os/posix stay blocked even when allow-listed
    assert not marker.exists()


def _peak_during(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - returned for the caller to check
            return tracemalloc.get_traced_memory()[1], exc
        return tracemalloc.get_traced_memory()[1], None
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["list", "tuple", "dict", "set", "frozenset"])
def test_builtin_iterables_of_range_are_refused_without_allocating(name):
    body = call(G("builtins", name), call(G("builtins", "range"), I(30_000_000)))
    buf = archive(pickle_of(body))
    peak, exc = _peak_during(lambda: tp.load(buf))
    assert isinstance(exc, pickle.UnpicklingError) and "Unsupported global" in str(exc)
    assert peak < 4 << 20
    with pytest.raises(pickle.UnpicklingError):
        torch.load(archive(pickle_of(body)))


def test_decompression_bomb_record_is_refused_before_reading():
    # 64 MiB of zeros deflate to ~64 KiB; the pickle declares 4 floats for that record.
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("archive/data.pkl", pickle_of(tensor(storage("FloatStorage", "0", 4), 0, [4], [1])))
        zf.writestr("archive/data/0", bytes(64 << 20))
        zf.writestr("archive/version", "3\n")
    blob = zbuf.getvalue()
    assert len(blob) < 1 << 20
    peak, exc = _peak_during(lambda: tp.load(io.BytesIO(blob)))
    assert isinstance(exc, RuntimeError) and str(exc).startswith("record size (67108864 bytes) does not match")
    assert peak < 8 << 20  # nothing near the 64 MiB record was inflated
    with pytest.raises(RuntimeError, match="record size"):
        torch.load(io.BytesIO(blob))


def test_declared_size_larger_than_record_is_refused_before_allocating():
    buf = archive(pickle_of(tensor(storage("DoubleStorage", "0", 2**31), 0, [1], [1])), {"0": bytes(8)})
    peak, exc = _peak_during(lambda: tp.load(buf))
    assert isinstance(exc, RuntimeError) and "17179869184 bytes" in str(exc)
    assert peak < 4 << 20


def test_one_key_two_dtypes_is_refused():
    body = tup(tensor(storage("FloatStorage", "0", 4), 0, [4], [1]), tensor(storage("IntStorage", "0", 4), 0, [4], [1]))
    with pytest.raises(RuntimeError, match="referenced as torchplug.float32 and as torchplug.int32"):
        tp.load(archive(pickle_of(body), {"0": f32(1, 2, 3, 4)}))


_BAD_PIDS = {
    "int_pid": I(3) + BINPERSID,
    "short_tuple": tup(S("storage"), G("torch", "FloatStorage"), S("0")) + BINPERSID,
    "long_tuple": tup(S("storage"), G("torch", "FloatStorage"), S("0"), S("cpu"), I(4), I(5)) + BINPERSID,
    "negative_int_key": tup(S("storage"), G("torch", "FloatStorage"), b"J\xff\xff\xff\xff", S("cpu"), I(4)) + BINPERSID,
    "empty_key": tup(S("storage"), G("torch", "FloatStorage"), S(""), S("cpu"), I(4)) + BINPERSID,
    "negative_numel": tup(S("storage"), G("torch", "FloatStorage"), S("0"), S("cpu"), b"J\xff\xff\xff\xff") + BINPERSID,
    "bool_numel": tup(S("storage"), G("torch", "FloatStorage"), S("0"), S("cpu"), b"\x88") + BINPERSID,
    "str_numel": tup(S("storage"), G("torch", "FloatStorage"), S("0"), S("cpu"), S("4")) + BINPERSID,
    "dtype_as_storage_type": tup(S("storage"), G("torch", "float32"), S("0"), S("cpu"), I(4)) + BINPERSID,
    "int_location": tup(S("storage"), G("torch", "FloatStorage"), S("0"), I(0), I(4)) + BINPERSID,
    "unknown_location": tup(S("storage"), G("torch", "FloatStorage"), S("0"), S("nowhere"), I(4)) + BINPERSID,
    "missing_record": tup(S("storage"), G("torch", "FloatStorage"), S("7"), S("cpu"), I(4)) + BINPERSID,
    "storage_as_size": call(G("torch._utils", "_rebuild_tensor_v2"), storage("FloatStorage", "0", 4), I(0),
                            storage("FloatStorage", "0", 4), tup(I(1)), FALSE, call(G("collections", "OrderedDict"))),
    "float_offset": call(G("torch._utils", "_rebuild_tensor_v2"), storage("FloatStorage", "0", 4), b"G" + bytes(8),
                         tup(I(1)), tup(I(1)), FALSE, call(G("collections", "OrderedDict"))),
    "size_stride_lengths": tensor(storage("FloatStorage", "0", 4), 0, [2, 2], [1]),
    "negative_size": call(G("torch._utils", "_rebuild_tensor_v2"), storage("FloatStorage", "0", 4), I(0),
                          tup(b"J\xff\xff\xff\xff"), tup(I(1)), FALSE, call(G("collections", "OrderedDict"))),
}


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", sorted(_BAD_PIDS))
def test_malformed_storage_references_raise_unpickling_or_runtime_errors(name, weights_only):
    buf = archive(pickle_of(_BAD_PIDS[name]), {"0": f32(1, 2, 3, 4)})
    with pytest.raises(Exception) as info:
        tp.load(buf, weights_only=weights_only)
    assert type(info.value) in (pickle.UnpicklingError, RuntimeError), repr(info.value)
    with pytest.raises(Exception):
        torch.load(archive(pickle_of(_BAD_PIDS[name]), {"0": f32(1, 2, 3, 4)}), weights_only=weights_only)


# ---- weights_only, pickle_module and the environment -------------------------------------------------
def _fraction_file():
    """A harmless file outside the allow-list (a fractions.Fraction), loadable only with weights_only=False."""
    return archive(pickle_of(call(G("fractions", "Fraction"), S("1/3"))))


def _both(fn):
    """(torch's outcome, torchplug's outcome): the value or the exception type."""
    out = []
    for mod in (torch, tp):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(mod))
        except Exception as exc:  # noqa: BLE001 - outcomes are compared
            out.append(type(exc))
    return out


@pytest.mark.parametrize("value", ["1", "y", "yes", "true", "TRUE", "Yes"])
def test_force_weights_only_env_overrides_an_explicit_false(monkeypatch, value):
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", value)
    assert _both(lambda m: m.load(_fraction_file(), weights_only=False)) == [pickle.UnpicklingError] * 2
    assert _both(lambda m: m.load(_fraction_file(), pickle_module=pickle)) == [RuntimeError] * 2


@pytest.mark.parametrize("value", ["1", "yes", "True"])
def test_force_no_weights_only_env_applies_only_when_not_passed(monkeypatch, value):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", value)
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        assert tp.load(_fraction_file()) == fractions.Fraction(1, 3)
    assert _both(lambda m: m.load(_fraction_file())) == [fractions.Fraction(1, 3)] * 2
    assert _both(lambda m: m.load(_fraction_file(), weights_only=True)) == [pickle.UnpicklingError] * 2


@pytest.mark.parametrize("value", ["0", "no", "false", "", "on"])
def test_env_values_that_are_not_true_change_nothing(monkeypatch, value):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", value)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", value)
    assert _both(lambda m: m.load(_fraction_file())) == [pickle.UnpicklingError] * 2
    assert _both(lambda m: m.load(_fraction_file(), weights_only=False)) == [fractions.Fraction(1, 3)] * 2


def test_both_env_overrides_at_once_is_an_error(monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert _both(lambda m: m.load(_fraction_file())) == [RuntimeError] * 2
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD`"):
        tp.load(_fraction_file())


def test_pickle_module_semantics_match_torch():
    # a pickle_module without weights_only means weights_only=False
    assert _both(lambda m: m.load(_fraction_file(), None, pickle)) == [fractions.Fraction(1, 3)] * 2
    # both at once is refused
    assert _both(lambda m: m.load(_fraction_file(), pickle_module=pickle, weights_only=True)) == [RuntimeError] * 2
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        tp.load(_fraction_file(), pickle_module=pickle, weights_only=True)
    # pickle_load_args only apply without weights_only
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        tp.load(archive(pickle_of(I(1))), encoding="latin1")


# ---- the safe-globals API ---------------------------------------------------------------------------
def _point_file(saver):
    buf = io.BytesIO()
    saver({"p": Point(1, 2.5)}, buf)
    buf.seek(0)
    return buf.getvalue()


@pytest.mark.parametrize("saver", ["torch", "torchplug"])
def test_user_class_needs_allow_listing_in_both(saver):
    blob = _point_file(torch.save if saver == "torch" else tp.save)
    name = f"{Point.__module__}.Point"
    assert _both(lambda m: m.load(io.BytesIO(blob))) == [pickle.UnpicklingError] * 2
    assert torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == [name]
    assert tp.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == [name]
    with pytest.raises(pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {name} was not an allowed global"):
        tp.load(io.BytesIO(blob))
    for mod in (torch, tp):
        with mod.serialization.safe_globals([Point]):
            assert mod.serialization.get_safe_globals() == [Point]
            assert mod.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []
            p = mod.load(io.BytesIO(blob))["p"]
            assert isinstance(p, Point) and (p.x, p.y) == (1, 2.5)
        assert mod.serialization.get_safe_globals() == []
    assert _both(lambda m: m.load(io.BytesIO(blob))) == [pickle.UnpicklingError] * 2


def test_add_get_clear_and_tuple_entries_match_torch():
    body = pickle_of(call(G("my.module", "make"), I(3), I(4)))
    for mod in (torch, tp):
        with pytest.raises(pickle.UnpicklingError):
            mod.load(archive(body))
        mod.serialization.add_safe_globals([(make_point, "my.module.make")])
        mod.serialization.add_safe_globals([(make_point, "my.module.make")])  # a set: no duplicate
        assert mod.serialization.get_safe_globals() == [(make_point, "my.module.make")]
        p = mod.load(archive(body))
        assert (p.x, p.y) == (3, 4)
        mod.serialization.clear_safe_globals()
        assert mod.serialization.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError):
            mod.load(archive(body))


def test_safe_globals_exit_removes_entries_added_before_it_like_torch():
    for mod in (torch, tp):
        mod.serialization.add_safe_globals([Point])
        with mod.serialization.safe_globals([Point, make_point]):
            assert set(mod.serialization.get_safe_globals()) == {Point, make_point}
        assert mod.serialization.get_safe_globals() == []


def test_user_allowed_class_is_instantiated_and_built():
    # NEWOBJ + BUILD of an allow-listed class (how protocol 2 pickles a plain object)
    body = pickle_of(G(Point.__module__, "Point") + tup() + NEWOBJ + EMPTY_DICT + S("x") + I(5) + b"s" + b"b")
    for mod in (torch, tp):
        with pytest.raises(pickle.UnpicklingError):
            mod.load(archive(body))
        with mod.serialization.safe_globals([Point]):
            p = mod.load(archive(body))
        assert isinstance(p, Point) and p.x == 5


def test_malformed_safe_global_entries():
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        tp.serialization.add_safe_globals([(Point,)])
    with pytest.raises(TypeError, match="Expected second item in tuple to be str"):
        tp.serialization.add_safe_globals([(Point, 3)])
    assert tp.serialization.get_safe_globals() == []
    # torch accepts them here and fails at the next load, with the same exception types
    torch.serialization.add_safe_globals([(Point,)])
    with pytest.raises(ValueError):
        torch.load(archive(pickle_of(G("my.module", "make"))))


def test_get_unsafe_globals_lists_every_refused_global_and_rejects_non_checkpoints():
    body = pickle_of(tup(call(G("posix", "system"), S("true")), G("builtins", "list"), G("torch", "float32"),
                         tensor(storage("FloatStorage", "0", 1), 0, [1], [1])))
    blob = archive(body, {"0": f32(1)}).getvalue()
    expected = ["builtins.list", "posix.system"]
    assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob))) == expected
    assert tp.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == expected
    for mod in (torch, tp):
        with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
            mod.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"not a zip file at all"))


def test_public_names_are_exported_like_torch():
    for name in ("add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
                 "get_unsafe_globals_in_checkpoint", "save", "load"):
        assert hasattr(torch.serialization, name) and getattr(tp.serialization, name) is getattr(serialization, name)
        assert name in serialization.__all__
    assert tp.save is serialization.save and tp.load is serialization.load
    import torchplug.serialization as public

    assert public.safe_globals is serialization.safe_globals


def test_reduce_needs_a_tuple_of_arguments():
    with pytest.raises(Exception):
        torch.load(archive(pickle_of(G("torch", "Size") + S("ab") + REDUCE)))
    with pytest.raises(pickle.UnpicklingError, match="REDUCE arguments must be a tuple"):
        tp.load(archive(pickle_of(G("torch", "Size") + S("ab") + REDUCE)))


def test_torch_dtypes_torchplug_lacks_are_safe_but_unsupported():
    buf = io.BytesIO()
    torch.save({"u": torch.zeros(3, dtype=torch.uint16)}, buf)
    blob = buf.getvalue()
    assert tp.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []
    assert torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []
    with pytest.raises(RuntimeError, match="uses torch.uint16, which PyTorch allows in weights-only loads but torchplug does not"):
        tp.load(io.BytesIO(blob))


def test_torchscript_archives_are_refused_with_the_reason():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scripted = torch.jit.script(torch.nn.Linear(2, 2))
        buf = io.BytesIO()
        torch.jit.save(scripted, buf)
    with pytest.raises(RuntimeError, match="Cannot use ``weights_only=True`` with TorchScript archives"):
        tp.load(io.BytesIO(buf.getvalue()))
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        tp.load(io.BytesIO(buf.getvalue()), weights_only=False)
