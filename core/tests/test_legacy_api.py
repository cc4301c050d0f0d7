"""Legacy and convenience API that tutorials still use: typed constructors, Tensor.type(),
torch.compile/compiler/jit (eager), float8 dtypes."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import torchplug as torch
from torchplug import _compile
from torchplug._tensor.legacy_types import TENSOR_TYPE_NAMES


@pytest.fixture
def real():
    return pytest.importorskip("torch")


# ---- typed constructors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(TENSOR_TYPE_NAMES))
def test_typed_constructor_dtypes_and_isinstance(real, name):
    ours, theirs = getattr(torch, name), getattr(real, name)
    assert ours.dtype.name == theirs.dtype.__repr__().removeprefix("torch.")
    assert ours.is_cuda is theirs.is_cuda is False and ours.is_sparse is theirs.is_sparse is False
    for dtype_name in ("float32", "float64", "int64", "bool", "uint8"):
        t_ours = torch.zeros(2, dtype=getattr(torch, dtype_name))
        t_theirs = real.zeros(2, dtype=getattr(real, dtype_name))
        assert isinstance(t_ours, ours) == isinstance(t_theirs, theirs), dtype_name
    assert isinstance(torch.zeros(2, device="meta", dtype=ours.dtype), ours) is False  # only the host device's
    assert not issubclass(ours, torch.Tensor) and not isinstance(3, ours)
    made = ours([1, 0, 2])
    assert type(made) is torch.Tensor and made.dtype is ours.dtype
    assert made.tolist() == theirs([1, 0, 2]).tolist()


def test_typed_constructor_construction_rules(real):
    cases = [((), {}), ((2, 3), {}), (([1, 2],), {}), (((1, 2),), {}), (([[1.5, 2], [3, 4]],), {}),
             ((np.arange(3),), {}), ((np.ones(2, dtype=np.float64),), {}), (([],), {}), (((),), {})]
    for args, kwargs in cases:
        ours = torch.FloatTensor(*args, **kwargs)
        theirs = real.FloatTensor(*args, **kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype is torch.float32, args
        if args and not all(isinstance(a, int) for a in args):  # data, not uninitialised memory
            assert ours.tolist() == theirs.tolist(), args
    assert torch.FloatTensor(torch.Size([2, 3])).shape == (2, 3)  # a Size is sizes, a tuple is data
    assert torch.LongTensor([1.5, -2.7]).tolist() == real.LongTensor([1.5, -2.7]).tolist()
    assert torch.ByteTensor([-1]).tolist() == real.ByteTensor([-1]).tolist()
    assert torch.FloatTensor(2, device="cpu").shape == (2,)


def test_typed_constructor_from_a_tensor_is_an_alias():
    a = torch.ones(3)
    b = torch.FloatTensor(a)
    assert b is not a and b.data_ptr() == a.data_ptr()
    b[0] = 5
    assert a[0].item() == 5
    x = torch.ones(2, requires_grad=True)
    assert torch.FloatTensor(x).requires_grad  # an alias keeps the graph, as in PyTorch


def test_typed_constructor_errors_match_torch(real):
    bad = [((2.5,), {}), (("a",), {}), ((np.float32(3),), {}), ((2, 3.0), {}), (([1], [2]), {}),
           ((2,), {"dtype": real.float64}), (([1, 2],), {"requires_grad": True}), ((-1,), {}),
           ((real.ones(2, dtype=real.float64),), {}), ((2,), {"device": "meta"}), (([[1, 2], [3]],), {})]
    for args, kwargs in bad:
        with pytest.raises(Exception) as theirs:
            real.FloatTensor(*args, **kwargs)
        ours_args = tuple(torch.ones(2, dtype=torch.float64) if isinstance(a, real.Tensor) else a for a in args)
        ours_kwargs = {k: (torch.float64 if v is real.float64 else v) for k, v in kwargs.items()}
        with pytest.raises(theirs.type) as ours:
            torch.FloatTensor(*ours_args, **ours_kwargs)
        expected = str(theirs.value).split(" - got")[0].split("(got TensorOptions")[0].split("expected TensorOptions")[0]
        if expected:
            assert str(ours.value).startswith(expected[:40]), (args, str(ours.value), str(theirs.value))


# ---- Tensor.type ---------------------------------------------------------------------------------------------
def test_type_strings_are_torchs(real):
    for dtype_name in ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64",
                       "bool", "complex64", "complex128"):
        assert torch.zeros(1, dtype=getattr(torch, dtype_name)).type() == real.zeros(1, dtype=getattr(real, dtype_name)).type()
    assert torch.zeros(1, device="meta").type() == real.zeros(1, device="meta").type() == "torch.meta.FloatTensor"


def test_type_conversions(real):
    a = torch.tensor([1.5, -2.5])
    assert a.type(torch.float32) is a and a.type("torch.FloatTensor") is a
    for target in ("torch.DoubleTensor", "torchplug.DoubleTensor", torch.DoubleTensor, torch.float64):
        out = a.type(target)
        assert out.dtype is torch.float64 and out.tolist() == [1.5, -2.5]
    assert a.type(dtype=torch.int32).tolist() == real.tensor([1.5, -2.5]).type(dtype=real.int32).tolist()
    assert a.type(torch.LongTensor).tolist() == real.tensor([1.5, -2.5]).type(real.LongTensor).tolist()
    assert a.double().type(torch.Tensor).dtype is torch.float32  # the default type, as in PyTorch
    for bad in ("DoubleTensor", "torch.FooTensor", "torch.float64"):
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            a.type(bad)
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            real.tensor([1.0]).type(bad)


def test_type_moves_to_the_named_device():
    m = torch.zeros(2).type("torch.meta.HalfTensor")
    assert m.device.type == "meta" and m.dtype is torch.float16
    back = m.type("torch.meta.FloatTensor")
    assert back.device.type == "meta" and back.dtype is torch.float32


# ---- torch.compile / compiler / jit ----------------------------------------------------------------------------
@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(_compile, "_warned", set())


def test_compile_returns_the_model_and_warns_once(fresh_warnings):
    lin = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with pytest.warns(UserWarning, match="torchplug.compile does not compile"):
        compiled = torch.compile(lin, mode="max-autotune", fullgraph=True, dynamic=True)
    assert compiled is lin and torch.equal(compiled(x), lin(x))
    assert list(compiled.state_dict()) == ["weight", "bias"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only once per process
        fn = torch.compile(lambda t: t * 2, backend="eager")
        assert fn(torch.ones(2)).tolist() == [2.0, 2.0]

        @torch.compile(mode="reduce-overhead")
        def double(t):
            return t + t

        assert double(torch.ones(1)).item() == 2.0
        assert torch.compile(lin, disable=True) is lin
        assert torch.compile(lin, backend=lambda gm, inputs: gm) is lin  # a callable backend is accepted


def test_compile_checks_arguments_like_torch(real):
    for kwargs in ({"mode": "fastest"}, {"mode": "default", "options": {"a": 1}}, {"backend": "nosuch"}):
        with pytest.raises(Exception) as theirs, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # real torch's compile stack warns about its own deprecations
            real.compile(lambda x: x, **kwargs)
        with pytest.raises(RuntimeError) as ours:
            torch.compile(lambda x: x, **kwargs)
        assert str(ours.value)[:30] == str(theirs.value)[:30], kwargs
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'> is provided."):
        torch.compile(3)


def test_compiler_module():
    f = lambda t: t  # noqa: E731
    assert torch.compiler.disable(f) is f and torch.compiler.disable()(f) is f
    assert torch.compiler.is_compiling() is False and torch.compiler.is_dynamo_compiling() is False
    assert torch.compiler.allow_in_graph(f) is f and torch.compiler.assume_constant_result(f) is f
    assert "inductor" in torch.compiler.list_backends() and "eager" not in torch.compiler.list_backends()
    assert "eager" in torch.compiler.list_backends(exclude_tags=None)
    torch.compiler.reset()
    torch.compiler.cudagraph_mark_step_begin()
    assert torch.compiler.compile is torch.compile


def test_jit_script_and_trace_run_eagerly(fresh_warnings):
    lin = torch.nn.Linear(3, 2)
    x = torch.randn(2, 3)
    with pytest.warns(UserWarning, match="torchplug.jit.script does not compile"):
        scripted = torch.jit.script(lin)
    with pytest.warns(UserWarning, match="torchplug.jit.trace does not compile"):
        traced = torch.jit.trace(lambda t: t.relu() * 2, (x,))
    assert torch.equal(scripted(x), lin(x))
    assert torch.equal(traced(x), x.relu() * 2)
    assert not isinstance(scripted, torch.jit.ScriptModule)
    assert torch.jit.is_scripting() is False and torch.jit.is_tracing() is False
    assert torch.jit.annotate(list, [1]) == [1]
    fut = torch.jit.fork(lambda a, b: a + b, 1, 2)
    assert torch.jit.wait(fut) == 3

    @torch.jit.ignore
    def helper():
        return 1

    @torch.jit.ignore(drop=True)
    def dropped():
        return 2

    assert helper() == 1 and dropped() == 2 and torch.jit.unused(helper) is helper and torch.jit.export(helper) is helper


def test_jit_save_and_load_say_what_to_do_instead(tmp_path):
    with pytest.raises(NotImplementedError, match=r"torchplug.jit.save is not supported: torchplug has no TorchScript "
                                                  r"compiler.*torchplug.save\(model.state_dict\(\), path\)"):
        torch.jit.save(torch.nn.Linear(1, 1), tmp_path / "m.pt")
    with pytest.raises(NotImplementedError, match="torchplug.jit.load is not supported"):
        torch.jit.load(tmp_path / "m.pt")


# ---- float8 ----------------------------------------------------------------------------------------------------
F8 = ("float8_e4m3fn", "float8_e5m2")
IN_RANGE = [0.1, 1.5, 448.0, -3.3, 0.0, -0.0, 0.0137, 1e-3, 17.0, -240.0]


@pytest.mark.parametrize("name", F8)
def test_float8_casts_match_torch(real, name):
    ours, theirs = getattr(torch, name), getattr(real, name)
    assert ours.itemsize == theirs.itemsize == 1 and ours.is_floating_point and repr(ours) == f"torchplug.{name}"
    x8 = torch.tensor(IN_RANGE).to(ours)
    r8 = real.tensor(IN_RANGE).to(theirs)
    assert x8.dtype is ours and x8.type() == r8.type()
    assert x8.float().tolist() == r8.float().tolist()
    assert x8.view(torch.uint8).tolist() == r8.view(real.uint8).tolist()  # bit for bit
    for target in ("float64", "float16", "bfloat16", "int32"):
        assert x8.to(getattr(torch, target)).tolist() == r8.to(getattr(real, target)).tolist(), target
    assert torch.tensor([1, 3, 17]).to(ours).float().tolist() == real.tensor([1, 3, 17]).to(theirs).float().tolist()
    np.testing.assert_array_equal(x8.float().numpy(), np.array(IN_RANGE, np.float32).astype(getattr(ml_dtypes, name)).astype(np.float32))


@pytest.mark.parametrize("name", F8)
def test_float8_storage(real, name):
    d, rd = getattr(torch, name), getattr(real, name)
    assert torch.zeros(2, dtype=d).float().tolist() == [0.0, 0.0]
    assert torch.ones(2, 2, dtype=d).t().contiguous().float().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert torch.full((2,), 2.5, dtype=d).float().tolist() == real.full((2,), 2.5, dtype=rd).float().tolist()
    assert torch.tensor([1.0, 2.0], dtype=d).float().tolist() == [1.0, 2.0]
    x = torch.tensor([1.5, 2.0]).to(d)
    assert x[1].item() == 2.0 and x.tolist() == [1.5, 2.0]
    assert torch.cat([x, x.clone()]).float().tolist() == [1.5, 2.0, 1.5, 2.0]
    assert torch.zeros(2, dtype=d).copy_(torch.tensor([1.0, 2.0])).float().tolist() == [1.0, 2.0]
    assert torch.zeros(3, dtype=d, device="meta").dtype is d
    fi, rfi = torch.finfo(d), real.finfo(rd)
    assert (fi.max, fi.min, fi.eps, fi.tiny, fi.resolution, fi.bits) == (rfi.max, rfi.min, rfi.eps, rfi.tiny, rfi.resolution, rfi.bits)
    import pickle

    assert pickle.loads(pickle.dumps(d)) is d


def test_float8_promotes_with_nothing(real):
    for a, b in [("float8_e4m3fn", "float32"), ("float8_e4m3fn", "float8_e5m2"), ("int8", "float8_e5m2")]:
        with pytest.raises(RuntimeError) as theirs:
            real.promote_types(getattr(real, a), getattr(real, b))
        with pytest.raises(RuntimeError) as ours:
            torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert str(ours.value) == str(theirs.value)
    assert torch.promote_types(torch.float8_e5m2, torch.float8_e5m2) is torch.float8_e5m2


def test_float8_overflowing_fill_raises():
    # PyTorch's checked scalar conversion (c10::overflows) refuses values beyond float8_e4m3fn's 448
    # (its own fill reaches that check on some paths only, so it is not the reference here).
    with pytest.raises(RuntimeError, match="value cannot be converted to type c10::Float8_e4m3fn without overflow"):
        torch.full((2,), 1000.0, dtype=torch.float8_e4m3fn)
