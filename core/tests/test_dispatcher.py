"""Dispatcher semantics: definitions, kernels, alias keys, fallthrough, fallbacks, redispatch, TLS."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import torchplug
from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, RegistrationError
from torchplug._dispatch.tls import exclude_keys, include_keys, tls
from torchplug.library import Library, fallthrough_kernel, get_kernel


@pytest.fixture
def lib():
    with Library("disptest", "DEF") as library:
        yield library
    assert not any(name.startswith("disptest::") for name in DISPATCHER.ops)


def cpu(values):
    return torchplug.tensor(values, dtype=torchplug.float32)


def test_define_and_call_composite(lib):
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    out = torchplug.ops.disptest.twice(cpu([1.0, 2.0]))
    assert out.tolist() == [2.0, 4.0]
    assert torchplug.ops.disptest.twice.default(cpu([3.0])).tolist() == [6.0]
    assert "twice" in list(torchplug.ops.disptest)


def test_identical_redefinition_is_noop_conflicting_one_names_both(lib):
    lib.define("f(Tensor x) -> Tensor")
    with Library("disptest", "FRAGMENT") as frag:
        frag.define("f(Tensor x) -> Tensor")  # identical: fine
        with pytest.raises(RegistrationError, match=r"already defined by Library\('disptest', 'DEF'\).*FRAGMENT"):
            frag.define("f(Tensor x, int y) -> Tensor")
    assert "disptest::f" in DISPATCHER.ops  # the DEF library still holds it


def test_second_def_library_for_namespace_is_rejected(lib):
    with pytest.raises(RegistrationError, match="Only one Library of kind 'DEF'"):
        Library("disptest", "DEF")


def test_conflicting_kernels_raise_and_override_shadows_until_closed(lib):
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x + 1, "CPU")
    with pytest.raises(RegistrationError, match=r"already registered by Library\('disptest', 'DEF'\)"):
        with Library("disptest", "IMPL") as other:
            other.impl("g", lambda x: x + 2, "CPU")
    with Library("disptest", "IMPL") as other:
        other.impl("g", lambda x: x + 100, "CPU", allow_override=True)
        assert torchplug.ops.disptest.g(cpu([0.0])).tolist() == [100.0]
    # closing the overriding library restores the original kernel (and the cache is refreshed)
    assert torchplug.ops.disptest.g(cpu([0.0])).tolist() == [1.0]


def test_same_kernel_twice_is_idempotent(lib):
    lib.define("h(Tensor x) -> Tensor")

    def k(x):
        return x

    lib.impl("h", k, "CPU")
    lib.impl("h", k, "CPU")
    assert len(DISPATCHER.entry("disptest::h").kernels["CPU"]) == 1


def test_direct_kernel_beats_composite_explicit_beats_implicit(lib):
    lib.define("p(Tensor x) -> Tensor")
    lib.impl("p", lambda x: x + 1, "CompositeImplicitAutograd")
    assert torchplug.ops.disptest.p(cpu([0.0])).tolist() == [1.0]
    lib.impl("p", lambda x: x + 2, "CompositeExplicitAutograd")
    assert torchplug.ops.disptest.p(cpu([0.0])).tolist() == [2.0]
    lib.impl("p", lambda x: x + 3, "CPU")
    assert torchplug.ops.disptest.p(cpu([0.0])).tolist() == [3.0]


def test_missing_kernel_is_not_implemented_error_naming_op_and_key(lib):
    lib.define("m(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match=r"Could not run 'disptest::m' with arguments from the 'CPU' backend"):
        torchplug.ops.disptest.m(cpu([1.0]))


def test_schema_argument_errors_name_op_argument_and_type(lib):
    lib.define("s(Tensor x, int n, *, float scale=1.0) -> Tensor")
    lib.impl("s", lambda x, n, scale: x * n * scale, "CPU")
    op = torchplug.ops.disptest.s
    assert op(cpu([1.0]), 2, scale=1.5).tolist() == [3.0]
    with pytest.raises(TypeError, match=r"argument 'n' \(position 2\) must be int, not float"):
        op(cpu([1.0]), 2.5)
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be Tensor, not list"):
        op([1.0], 2)
    with pytest.raises(TypeError, match="scale"):
        op(cpu([1.0]), 2, scale="big")
    with pytest.raises(TypeError):
        op(cpu([1.0]))  # missing argument: CPython's own binding error


def test_kernel_signature_checked_at_registration(lib):
    lib.define("r(Tensor x, int n) -> Tensor")
    with pytest.raises(TypeError, match=r"cannot be called with the schema's 2 positional arguments"):
        lib.impl("r", lambda x: x, "CPU")


def test_fallthrough_skips_key_and_with_keyset_redispatch(lib):
    lib.define("q(Tensor x) -> Tensor")
    calls = []
    lib.impl("q", lambda x: x + 1, "CPU")

    def python_key_kernel(ks, x):
        calls.append(K.keyset_names(ks)[0])
        return torchplug.ops.disptest.q.default.redispatch(ks & K.below(K.PYTHON_BIT), x) * 10

    lib.impl("q", python_key_kernel, "Python", with_keyset=True)
    x = cpu([1.0])
    assert torchplug.ops.disptest.q(x).tolist() == [2.0]  # Python key not in the key set
    with include_keys(["Python"]):
        assert torchplug.ops.disptest.q(x).tolist() == [20.0]
        with exclude_keys(["Python"]):
            assert torchplug.ops.disptest.q(x).tolist() == [2.0]
    assert calls == ["Python"]
    with Library("disptest", "IMPL") as other:
        other.impl("q", fallthrough_kernel, "Python", allow_override=True)
        with include_keys(["Python"]):
            assert torchplug.ops.disptest.q(x).tolist() == [2.0]


def test_boxed_fallback_sees_every_op(lib):
    seen = []

    def logging_fallback(ks, op, *args):
        seen.append(op.name())
        return op.redispatch(ks & K.below(K.PYTHON_BIT), *args)

    with Library("_", "IMPL") as fb:
        fb.fallback(logging_fallback, "Python", with_keyset=True)
        with include_keys(["Python"]):
            out = cpu([1.0, 2.0]) + cpu([3.0, 4.0])
        assert out.tolist() == [4.0, 6.0]
    assert "aten::add.Tensor" in seen
    # closed: the fallback is gone
    seen.clear()
    with include_keys(["Python"]):
        cpu([1.0]) + cpu([1.0])
    assert seen == []


def test_tls_is_thread_local():
    results = {}

    def worker():
        results["mask"] = tls.mask
        results["include"] = tls.include

    with include_keys(["Python"]):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert tls.include & (1 << K.PYTHON_BIT)
    assert not results["include"] & (1 << K.PYTHON_BIT)


def test_concurrent_registration_is_safe(lib):
    lib.define("c(Tensor x) -> Tensor")
    errors = []
    libs = []

    def register(i):
        try:
            sub = Library("disptest", "FRAGMENT")
            sub.define(f"c{i}(Tensor x) -> Tensor")
            sub.impl(f"c{i}", lambda x, i=i: x + i, "CPU")
            libs.append(sub)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=register, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert getattr(torchplug.ops.disptest, "c7")(cpu([0.0])).tolist() == [7.0]
    for sub in libs:
        sub.close()


def test_alias_key_autograd_fills_every_autograd_key(lib):
    lib.define("a(Tensor x) -> Tensor")
    lib.impl("a", lambda x: x, "Autograd")
    entry = DISPATCHER.entry("disptest::a")
    reg, why = entry.resolve_key(K.KEYS["AutogradCPU"], DISPATCHER.fallbacks)
    assert why == "Autograd" and reg is not None


def test_backend_select_routes_factories_by_device(lib):
    lib.define("make(int n, *, Device? device=None) -> Tensor", tags=("factory",))
    from torchplug._ops.core_kernels import backend_select_kernel

    lib.impl("make", backend_select_kernel(DISPATCHER.entry("disptest::make")), "BackendSelect", with_keyset=True)
    lib.impl("make", lambda n, device: torchplug.full((n,), 7.0, device=device), "CPU")
    out = torchplug.ops.disptest.make(3)
    assert out.tolist() == [7.0, 7.0, 7.0] and out.device.type == "cpu"


def test_explain_shows_keyset_and_kernel():
    a, b = cpu([1.0]), cpu([2.0])
    report = torchplug.explain("add", a, b)
    text = str(report)
    assert report.chosen_key == "CPU"
    assert "CPU" in report.keyset and "ADInplaceOrView: fallthrough" in text
    assert "registered by plugin 'cpu'" in text


def test_get_kernel_and_kernels_introspection():
    kernel = get_kernel(torchplug.ops.aten.add.Tensor, "CPU")
    assert kernel(cpu([1.0]), cpu([2.0]), 1).tolist() == [3.0]
    kernels = torchplug.ops.aten.add.Tensor.kernels()
    assert "CPU" in kernels and "torchplug_cpu" in kernels["CPU"][0]


def test_ops_namespace_lists_all_ops_and_overloads():
    assert "add" in list(torchplug.ops.aten)
    assert set(torchplug.ops.aten.add.overloads()) >= {"Tensor", "out"}
    with pytest.raises(AttributeError, match="has no operator"):
        torchplug.ops.aten.definitely_not_an_op
    with pytest.raises(AttributeError, match="has no overload"):
        torchplug.ops.aten.add.nope
    assert "aten::add.Tensor" in torchplug.list_ops("aten")


def test_cache_is_a_dict_hit_after_first_call():
    entry = DISPATCHER.entry("aten::add.Tensor")
    a = cpu([1.0])
    a + a
    ks = (a._keyset | tls.include) & tls.mask
    assert ks in entry.cache


def test_version_counter_bumped_once_per_inplace_op():
    a = torchplug.tensor(np.zeros(3, dtype=np.float32))
    v = a._version
    a.add_(1)
    assert a._version == v + 1
    a.copy_(cpu([1.0, 2.0, 3.0]))
    assert a._version == v + 2


def test_op_overload_names_print_as_torchs():
    import torchplug

    overload, packet = torchplug.ops.aten.mm.default, torchplug.ops.aten.add
    assert (str(overload), repr(overload), overload.__name__) == (
        "aten.mm.default", "<OpOverload(op='aten.mm', overload='default')>", "mm.default")
    assert (str(packet), repr(packet), packet.__name__, packet._qualified_op_name) == (
        "aten.add", "<OpOverloadPacket(op='aten.add')>", "add", "aten::add")
    assert torchplug.ops.aten.add.Tensor._overloadname == "Tensor"
    torch = pytest.importorskip("torch")
    assert str(torch.ops.aten.mm.default) == str(overload) and repr(torch.ops.aten.add) == repr(packet)
