"""custom_op, infer_schema and the register_* API: behaviour, validation and re-registration."""


import itertools
from typing import Optional, Sequence

import numpy as np
import pytest

import torchplug as torch
from torchplug import Tensor
from torchplug.library import Library, custom_op, get_ctx, infer_schema, register_autograd, register_fake

_ids = itertools.count()



def unique(base: str) -> str:
    return f"tplib::{base}_{next(_ids)}"


def make_sin(ops, **kw):
    @custom_op(unique("sin"), mutates_args=(), **kw)
    def mysin(x: Tensor) -> Tensor:
        return torch.from_numpy(np.sin(x.numpy()))

    ops.append(mysin)
    return mysin


# -- infer_schema ------------------------------------------------------------------------------------------
def f_full(x: Tensor, ys: list[Tensor], n: int = 3, s: Optional[float] = None, *, flag: bool = False) -> tuple[Tensor, Tensor]:
    raise AssertionError


def test_infer_schema_types_defaults_and_kwonly():
    assert infer_schema(f_full, mutates_args=()) == (
        "(Tensor x, Tensor[] ys, SymInt n=3, float? s=None, *, bool flag=False) -> (Tensor, Tensor)"
    )
    assert infer_schema(f_full, mutates_args=["x"], op_name="foo").startswith("foo(Tensor(a0!) x, ")


def test_infer_schema_more_types():
    def g(x: Optional[Tensor], xs: Sequence[Optional[Tensor]], d: torch.dtype, dev: torch.device, t: str,
          ints: list[int], fl: Optional[list[float]]) -> list[Tensor]:
        raise AssertionError

    assert infer_schema(g, mutates_args="unknown") == (
        "(Tensor(a0!)? x, Tensor(a1!)?[] xs, ScalarType d, Device dev, str t, SymInt[] ints, float[]? fl) -> Tensor[]"
    )

    def none_ret(x: Tensor, d: torch.dtype = torch.float32) -> None:
        raise AssertionError

    assert infer_schema(none_ret, mutates_args=()) == "(Tensor x, ScalarType d=float32) -> ()"


def test_infer_schema_matches_torch():
    real = pytest.importorskip("torch")

    def f_t(x: real.Tensor, ys: list[real.Tensor], n: int = 3, s: Optional[float] = None, *, flag: bool = False) -> tuple[real.Tensor, real.Tensor]:
        raise AssertionError

    assert infer_schema(f_full, mutates_args=["x"]) == real.library.infer_schema(f_t, mutates_args=["x"])
    assert infer_schema(f_full, mutates_args="unknown") == real.library.infer_schema(f_t, mutates_args="unknown")


def test_infer_schema_string_annotations():
    ns: dict = {}
    exec("import torchplug as torch\ndef h(x: 'torch.Tensor', k: 'int') -> 'torch.Tensor': ...", ns)
    assert infer_schema(ns["h"], mutates_args=()) == "(Tensor x, SymInt k) -> Tensor"


@pytest.mark.parametrize("fn, message", [
    (lambda x: x, "Parameter x must have a type annotation"),
    ("def f(x: tuple[int, int]) -> Tensor: ...", "We do not support Tuple inputs in schema"),
    ("def f(x: dict) -> Tensor: ...", "Parameter x has unsupported type"),
    ("def f(*xs: Tensor) -> Tensor: ...", "We do not support positional-only args, varargs, or varkwargs"),
    ("def f(x: Tensor): ...", "No return type annotation was provided"),
    ("def f(x: Tensor) -> dict: ...", "Return has unsupported type"),
    ("def f(x: Tensor, y: Tensor = Tensor) -> Tensor: ...", "unsupported default value type"),
])
def test_infer_schema_errors(fn, message):
    if isinstance(fn, str):
        ns = {"Tensor": Tensor}
        exec(fn, ns)
        fn = ns["f"]
    with pytest.raises(ValueError, match="infer_schema\\(func\\): .*" + message.replace("(", "\\(").replace(")", "\\)")):
        infer_schema(fn, mutates_args=())


def test_infer_schema_mutates_args_errors():
    def f(x: Tensor, n: int) -> None: ...

    with pytest.raises(ValueError, match="only Tensors or collections of Tensors can be mutated"):
        infer_schema(f, mutates_args=["n"])
    with pytest.raises(ValueError, match="were not found in the custom op's signature"):
        infer_schema(f, mutates_args=["y"])
    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        infer_schema(f, mutates_args="all")


# -- custom_op --------------------------------------------------------------------------------------------
def test_custom_op_calls_and_is_reachable_under_ops(ops):
    mysin = make_sin(ops)
    x = torch.randn(5)
    expected = np.sin(x.numpy())
    np.testing.assert_allclose(mysin(x).numpy(), expected, rtol=1e-6)
    ns, name = mysin._qualname.split("::")
    assert name in list(getattr(torch.ops, ns))
    np.testing.assert_allclose(getattr(getattr(torch.ops, ns), name)(x).numpy(), expected, rtol=1e-6)
    assert mysin._opoverload is getattr(getattr(torch.ops, ns), name).default
    assert str(mysin._schema) == f"{mysin._qualname}(Tensor x) -> Tensor"
    # provenance: the kernel and the definition site are attributed
    kernels = mysin._opoverload.kernels()
    assert "test_custom_op:make_sin.<locals>.mysin" in kernels["CompositeExplicitAutograd"][0]
    assert "test_custom_op.py" in kernels["CompositeExplicitAutograd"][0]


def test_custom_op_requires_mutates_args_and_a_qualified_name():
    def f(x: Tensor) -> Tensor:
        return x.clone()

    with pytest.raises(TypeError):
        custom_op("tplib::nomut", f)  # mutates_args is required, as in PyTorch
    with pytest.raises(ValueError, match="namespace::op_name"):
        custom_op("nonamespace", f, mutates_args=())


def test_custom_op_kwonly_arguments_and_explicit_schema(ops):
    @custom_op(unique("scale"), mutates_args=(), schema="(Tensor x, *, float alpha=2.0) -> Tensor")
    def scale(x, *, alpha=2.0):
        return x * alpha

    ops.append(scale)
    x = torch.ones(3)
    assert scale(x).tolist() == [2.0, 2.0, 2.0]
    assert scale(x, alpha=3.0).tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(TypeError, match="alpha"):
        scale(x, alpha="no")


def test_schema_disagreeing_with_mutates_args_is_rejected():
    def f(x):
        return None

    with pytest.raises(ValueError, match="Please make these consistent"):
        custom_op(unique("bad"), f, mutates_args=(), schema="(Tensor(a!) x) -> ()")
    with pytest.raises(ValueError, match="must not include the operator name"):
        custom_op(unique("bad"), f, mutates_args=(), schema="bad(Tensor x) -> ()")


def test_wrong_schema_for_function_fails_at_definition():
    def f(x):
        return x

    with pytest.raises(TypeError, match="cannot be called like"):
        custom_op(unique("bad"), f, mutates_args=(), schema="(Tensor x, Tensor y) -> Tensor")


def test_mutating_op_bumps_version_and_runs(ops):
    @custom_op(unique("fill"), mutates_args=["x"])
    def fill_(x: Tensor, v: float) -> None:
        x.numpy()[...] = v

    ops.append(fill_)
    x = torch.zeros(3)
    v0 = x._version
    assert fill_(x, 4.0) is None
    assert x.tolist() == [4.0, 4.0, 4.0] and x._version == v0 + 1


def test_identical_redefinition_is_a_noop_and_conflict_names_both(ops):
    def body(x: Tensor) -> Tensor:
        return x.clone()

    name = unique("dup")
    first = custom_op(name, body, mutates_args=())
    ops.append(first)
    assert custom_op(name, body, mutates_args=()) is first

    def other(x: Tensor, y: Tensor) -> Tensor:
        return x + y

    with pytest.raises(RuntimeError) as info:
        custom_op(name, other, mutates_args=())
    text = str(info.value)
    assert "test_custom_op.py" in text and "body" in text and "other" in text
    assert "(Tensor x) -> Tensor" in text and "(Tensor x, Tensor y) -> Tensor" in text


def test_library_defined_name_conflicts_with_custom_op():
    with Library("tplibdef", "DEF") as lib:
        lib.define("taken(Tensor x) -> Tensor")

        def taken(x: Tensor) -> Tensor:
            return x

        with pytest.raises(RuntimeError, match="already defined by Library"):
            custom_op("tplibdef::taken", taken, mutates_args=())


def test_destroyed_op_says_so(ops):
    mysin = make_sin(ops)
    mysin._destroy()
    with pytest.raises(RuntimeError, match="is not registered"):
        mysin(torch.ones(2))


# -- register_kernel -----------------------------------------------------------------------------------------
def test_register_kernel_per_device_overrides_default(ops):
    mysin = make_sin(ops)

    @mysin.register_kernel("cpu")
    def _(x):
        return torch.full_like(x, 7.0)

    assert mysin(torch.zeros(2)).tolist() == [7.0, 7.0]
    assert "CPU" in mysin._opoverload.kernels()


def test_register_kernel_validation_and_conflicts(ops):
    mysin = make_sin(ops)
    with pytest.raises(TypeError, match="cannot be called like"):
        mysin.register_kernel("cpu", lambda x, y: x)
    with pytest.raises(ValueError, match="Unknown device type 'nosuchdev'"):
        mysin.register_kernel("nosuchdev", lambda x: x)

    def k1(x):
        return x.clone()

    def k2(x):
        return x.clone()

    mysin.register_kernel("cpu", k1)
    mysin.register_kernel("cpu", k1)  # identical: no-op
    with pytest.raises(RuntimeError, match="already has a kernel for device type 'cpu'.*k1.*k2"):
        mysin.register_kernel("cpu", k2)
    mysin.register_kernel("cpu", k2, allow_override=True)


def test_kernel_for_a_device_without_backend_is_kept(ops, monkeypatch):
    from torchplug._library import custom_ops

    # a device type we can name (like 'cuda' on a machine without it) but no backend registers
    monkeypatch.setitem(custom_ops._WELL_KNOWN_KEYS, "tpdev", "TPDev")
    mysin = make_sin(ops)
    mysin.register_kernel("tpdev", lambda x: x.clone())
    assert "TPDev" in mysin._opoverload.kernels()  # waiting under its key for the backend
    assert mysin(torch.zeros(1)).tolist() == [0.0]  # other devices unaffected
    entry = mysin._entry
    mysin._destroy()
    assert not entry.kernels.get("TPDev")  # removed with the op


def test_functional_register_kernel_and_autocast(ops):
    from torchplug.library import register_autocast, register_kernel

    mysin = make_sin(ops)

    @register_kernel(mysin._qualname, "cpu")
    def _(x):
        return x + 100

    assert mysin(torch.zeros(1)).tolist() == [100.0]
    register_autocast(mysin._opoverload, "cpu", torch.float64)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert mysin(torch.zeros(1)).dtype == torch.float64
    with pytest.raises(TypeError, match="Expected a custom op"):
        register_kernel(42, "cpu", lambda x: x)


# -- register_fake / meta / memory_estimate / get_ctx -----------------------------------------------------------
def test_op_without_fake_fails_on_meta_with_instructions(ops):
    mysin = make_sin(ops)
    with pytest.raises(RuntimeError, match="no fake impl registered.*register_fake"):
        mysin(torch.empty(2, device="meta"))


def test_fake_kernel_runs_on_meta_and_in_memory_estimate(ops):
    @custom_op(unique("double"), mutates_args=())
    def double(x: Tensor) -> Tensor:
        return torch.cat([x, x])

    ops.append(double)

    @double.register_fake
    def _(x):
        return x.new_empty((2 * x.shape[0],) + tuple(x.shape[1:]))

    out = double(torch.empty(3, 4, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (6, 4)
    del out
    # the estimate counts every meta tensor alive, other tests' leftovers too: measure above what is alive now
    alive = torch.get_device_module("meta").memory_allocated()
    peak = torch.utils.memory_estimate(lambda t: double(t), torch.empty(1000, dtype=torch.float32))
    assert peak - alive == 1000 * 4 + 2000 * 4


def test_register_fake_validation_and_conflict(ops):
    mysin = make_sin(ops)
    with pytest.raises(TypeError, match="fake kernel"):
        mysin.register_fake(lambda: None)

    def fake1(x):
        return torch.empty_like(x)

    def fake2(x):
        return torch.empty_like(x)

    mysin.register_fake(fake1)
    mysin.register_fake(fake1)
    with pytest.raises(RuntimeError, match="already has a fake kernel.*fake1.*fake2"):
        register_fake(mysin, fake2)
    register_fake(mysin, fake2, allow_override=True)
    assert mysin._fake_fn is fake2


def test_get_ctx_dynamic_size(ops):
    @custom_op(unique("nonzero"), mutates_args=())
    def nz(x: Tensor) -> Tensor:
        return torch.from_numpy(np.stack(np.nonzero(x.numpy()), axis=1).astype(np.int64))

    ops.append(nz)

    @nz.register_fake
    def _(x):
        n = get_ctx().new_dynamic_size(max=x.numel())
        return x.new_empty((n, x.dim()), dtype=torch.int64)

    out = nz(torch.empty(3, 4, device="meta"))
    assert tuple(out.shape) == (12, 2)  # the declared upper bound: memory estimates are worst-case
    with pytest.raises(RuntimeError, match="can only be called inside a fake kernel"):
        get_ctx()


def test_get_ctx_rejects_negative_min(ops):
    @custom_op(unique("neg"), mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    ops.append(f)
    f.register_fake(lambda x: x.new_empty((get_ctx().new_dynamic_size(min=-1),)))
    with pytest.raises(ValueError, match="expected min to be greater than or equal to 0"):
        f(torch.empty(2, device="meta"))


# -- register_autograd -------------------------------------------------------------------------------------------
def _sin_autograd(op):
    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    op.register_autograd(backward, setup_context=setup)


def test_register_autograd_gradients(ops):
    mysin = make_sin(ops)
    _sin_autograd(mysin)
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    y = mysin(x)
    assert type(y.grad_fn).__name__.startswith("GeneratedBackwardFor_tplib_sin_")
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()))
    assert torch.autograd.gradcheck(mysin, (x,))


def test_backward_without_formula_raises(ops):
    mysin = make_sin(ops)
    x = torch.randn(2, requires_grad=True)
    y = mysin(x)
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()


def test_register_autograd_validation(ops):
    mysin = make_sin(ops)
    with pytest.raises(TypeError, match="must accept \\(ctx, \\*grads\\)"):
        mysin.register_autograd(lambda ctx: None)
    with pytest.raises(TypeError, match="setup_context"):
        mysin.register_autograd(lambda ctx, g: g, setup_context=lambda a, b: None)

    @custom_op(unique("inplace"), mutates_args=["x"])
    def inc(x: Tensor) -> None:
        x.numpy()[...] += 1

    ops.append(inc)
    with pytest.raises(RuntimeError, match="non-functional operator"):
        inc.register_autograd(lambda ctx, g: g)


def test_register_autograd_conflict_and_keyword_only_inputs(ops):
    @custom_op(unique("mul"), mutates_args=())
    def mul(x: Tensor, *, k: float) -> Tensor:
        return x * k

    ops.append(mul)
    seen = {}

    def setup(ctx, inputs, keyword_only_inputs, output):
        seen.update(keyword_only_inputs)
        ctx.k = keyword_only_inputs["k"]

    def backward(ctx, grad):
        return (grad * ctx.k,)

    register_autograd(mul, backward, setup_context=setup)
    register_autograd(mul, backward, setup_context=setup)  # identical: no-op
    with pytest.raises(RuntimeError, match="already has a autograd formula"):
        mul.register_autograd(lambda ctx, g: (g,), setup_context=setup)
    x = torch.ones(3, requires_grad=True)
    mul(x, k=5.0).sum().backward()
    assert seen == {"k": 5.0} and x.grad.tolist() == [5.0, 5.0, 5.0]


def test_backward_returning_wrong_count(ops):
    mysin = make_sin(ops)
    mysin.register_autograd(lambda ctx, g: (g, g))
    x = torch.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned 2 gradient\\(s\\).*1 positional input"):
        mysin(x).sum().backward()


def test_mutable_op_with_grad_inputs_explains(ops):
    @custom_op(unique("addto"), mutates_args=["out"])
    def addto(out: Tensor, x: Tensor) -> None:
        out.numpy()[...] += x.numpy()

    ops.append(addto)
    with pytest.raises(RuntimeError, match="autograd through mutable custom ops is not supported"):
        addto(torch.zeros(2), torch.ones(2, requires_grad=True))
    buf = torch.zeros(2)
    with torch.no_grad():
        addto(buf, torch.ones(2, requires_grad=True))
    assert buf.tolist() == [1.0, 1.0]


# -- register_autocast --------------------------------------------------------------------------------------------
def test_register_autocast_casts_inside_region_only(ops):
    @custom_op(unique("ident"), mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x.clone()

    ops.append(ident)
    ident.register_autocast("cpu", torch.bfloat16)
    x = torch.randn(3, dtype=torch.float64)
    assert ident(x).dtype == torch.float64
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert ident(x).dtype == torch.bfloat16
        assert ident(torch.arange(3)).dtype == torch.int64  # integers are never cast
    with pytest.raises(ValueError, match="floating-point dtype"):
        ident.register_autocast("cpu", torch.int32)
    with pytest.raises(RuntimeError, match="already casts to"):
        ident.register_autocast("cpu", torch.float16)


# -- the functional API on Library-defined ops ----------------------------------------------------------------------
def test_register_fake_and_autograd_on_library_op():
    with Library("tplibfn", "DEF") as lib:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
        register_fake("tplibfn::twice", lambda x: torch.empty_like(x), lib=lib)
        register_autograd("tplibfn::twice", lambda ctx, g: g * 2, lib=lib)
        x = torch.ones(3, requires_grad=True)
        torch.ops.tplibfn.twice(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        assert tuple(torch.ops.tplibfn.twice(torch.empty(4, device="meta")).shape) == (4,)
    from torchplug._library.custom_ops import lookup_custom_op

    assert lookup_custom_op("tplibfn::twice") is None  # closed with the library


# -- OpLibrary: declared at import, installed by a plugin hook ---------------------------------------------------------
def test_op_library_installs_from_a_plugin_and_unloads():
    from torchplug.hookspecs import hookimpl
    from torchplug.library import OpLibrary
    from torchplug.plugins import load_plugin, unload_plugin

    lib = OpLibrary("tplugops")

    @lib.custom_op("tplugops::cube", mutates_args=())
    def cube(x: Tensor) -> Tensor:
        return x * x * x

    cube.register_fake(lambda x: torch.empty_like(x))
    assert "tplugops::cube" not in torch.list_ops("tplugops")  # declaring registers nothing
    with pytest.raises(RuntimeError, match="is not registered"):
        cube(torch.ones(1))

    class Plugin:
        @hookimpl
        def torchplug_register_ops(self, ctx):
            lib.register(ctx)

    record = load_plugin(Plugin(), "tplugops_plugin", distribution="tplugops-dist")
    try:
        assert record.status == "loaded", record.reason
        assert cube(torch.full((2,), 2.0)).tolist() == [8.0, 8.0]
        assert torch.ops.tplugops.cube(torch.full((1,), 3.0)).tolist() == [27.0]
        assert "plugin 'tplugops_plugin'" in torch.ops.tplugops.cube.default._entry.defined_by
        from torchplug.__main__ import doctor_report

        assert "tplugops::cube" in doctor_report() and "tplugops_plugin" in doctor_report()
    finally:
        unload_plugin("tplugops_plugin")
    assert list(torch.ops.tplugops) == []
    with pytest.raises(RuntimeError, match="is not registered"):
        cube(torch.ones(1))


def test_op_library_conflicting_declaration():
    from torchplug.library import OpLibrary

    lib = OpLibrary("tplugdup")

    def a(x: Tensor) -> Tensor:
        return x

    def b(x: Tensor, y: Tensor) -> Tensor:
        return x

    first = lib.custom_op("tplugdup::f", a, mutates_args=())
    assert lib.custom_op("tplugdup::f", a, mutates_args=()) is first
    with pytest.raises(RuntimeError, match="already defined"):
        lib.custom_op("tplugdup::f", b, mutates_args=())
    with pytest.raises(ValueError, match="another namespace"):
        lib.custom_op("other::f", a, mutates_args=())


def test_broken_op_plugin_never_breaks_torchplug():
    from torchplug.hookspecs import hookimpl
    from torchplug.library import OpLibrary
    from torchplug.plugins import load_plugin, unload_plugin

    lib = OpLibrary("tplugbroken")

    @lib.custom_op("tplugbroken::ok", mutates_args=())
    def ok(x: Tensor) -> Tensor:
        return x.clone()

    class Plugin:
        @hookimpl
        def torchplug_register_ops(self, ctx):
            lib.register(ctx)
            raise ValueError("boom")

    record = load_plugin(Plugin(), "tplugbroken_plugin")
    try:
        assert record.status == "failed" and "boom" in record.reason
        assert list(torch.ops.tplugbroken) == []  # undone with the plugin
        assert torch.neg(torch.ones(1)).tolist() == [-1.0]
    finally:
        unload_plugin("tplugbroken_plugin")


def test_custom_op_matches_torch_custom_op_behaviour(ops):
    real = pytest.importorskip("torch")
    mysin = make_sin(ops)
    _sin_autograd(mysin)

    @real.library.custom_op("tplibref::sin", mutates_args=())
    def ref(x: real.Tensor) -> real.Tensor:
        return real.from_numpy(np.sin(x.numpy(force=True)))

    ref.register_autograd(lambda ctx, g: g * ctx.x.cos(),
                          setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    data = np.random.default_rng(0).standard_normal(5)
    x = torch.tensor(data, requires_grad=True)
    xr = real.tensor(data, requires_grad=True)
    mysin(x).sum().backward()
    ref(xr).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy())
