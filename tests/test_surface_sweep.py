"""Small surface defects, each checked against the installed PyTorch."""

from __future__ import annotations

import copy
import pickle
import threading
import warnings

import pytest

import torchplug as tp
import torchplug.nn as tnn
import torchplug.nn.functional as TF

torch = pytest.importorskip("torch")


def _raises(fn):
    """The exception ``fn()`` raises, as (type name, message)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    raise AssertionError("no exception raised")


# --- set_multithreading_enabled ------------------------------------------------------------------------------

def test_set_multithreading_enabled_is_a_context_manager_class():
    from torchplug_autograd._state import STATE

    assert isinstance(tp.autograd.set_multithreading_enabled, type)
    assert isinstance(torch.autograd.set_multithreading_enabled, type)
    assert STATE.multithreading is True
    with tp.autograd.set_multithreading_enabled(False):
        assert STATE.multithreading is False
        with tp.autograd.set_multithreading_enabled(True):
            assert STATE.multithreading is True
        assert STATE.multithreading is False
    assert STATE.multithreading is True

    # as torch's: building the decorator sets the mode at once (it stays set); each call restores it after
    for lib, flag in ((torch, torch._C._is_multithreading_enabled), (tp, lambda: STATE.multithreading)):
        @lib.autograd.set_multithreading_enabled(False)
        def f():
            return flag()

        assert flag() is False
        lib.autograd.set_multithreading_enabled(True)
        assert f() is False and flag() is True
    # called as a function it takes effect at once (thread-local), as torch's
    tp.autograd.set_multithreading_enabled(False)
    seen = []
    t = threading.Thread(target=lambda: seen.append(STATE.multithreading))
    t.start()
    t.join()
    assert STATE.multithreading is False and seen == [True]
    tp.autograd.set_multithreading_enabled(True)
    x = tp.ones(2, requires_grad=True)
    with tp.autograd.set_multithreading_enabled(False):
        (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


# --- load_state_dict pre-hooks -------------------------------------------------------------------------------

@pytest.mark.parametrize("lib", ["torch", "torchplug"])
def test_load_state_dict_pre_hook_arities(lib):
    nn = torch.nn if lib == "torch" else tnn
    m = nn.Linear(2, 2)
    calls = []
    m.register_load_state_dict_pre_hook(lambda *a: calls.append(("public", len(a), a[0] is m)))
    m._register_load_state_dict_pre_hook(lambda *a: calls.append(("private", len(a), a[0] is m)))
    m._register_load_state_dict_pre_hook(lambda *a: calls.append(("with_module", len(a), a[0] is m)),
                                         with_module=True)
    m.load_state_dict(m.state_dict())
    assert calls == [("public", 8, True), ("private", 7, False), ("with_module", 8, True)]


def test_load_state_dict_pre_hook_edits_dict_and_survives_copies():
    m = tnn.Linear(2, 2)

    def rename(module, state_dict, prefix, *rest):
        assert isinstance(module, tnn.Linear)
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    h = m.register_load_state_dict_pre_hook(rename)
    sd = {"w": tp.full((2, 2), 3.0), "bias": tp.zeros(2)}
    m.load_state_dict(sd)
    assert m.weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    m2 = copy.deepcopy(m)  # the hook's module is the copy, not the original
    seen = []
    m2.register_load_state_dict_pre_hook(lambda mod, *a: seen.append(mod))
    m2.load_state_dict({"w": tp.ones(2, 2), "bias": tp.zeros(2)})
    assert m2.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]] and seen == [m2]
    h.remove()
    with pytest.raises(RuntimeError, match="Unexpected key"):
        m.load_state_dict({"w": tp.ones(2, 2), "bias": tp.zeros(2)})


def test_spectral_and_weight_norm_load_hooks_still_work():
    from torchplug.nn.utils import parametrizations, spectral_norm

    src = tnn.Linear(3, 3)
    dst = tnn.Linear(3, 3)
    spectral_norm(src)
    spectral_norm(dst)
    dst.load_state_dict(src.state_dict())
    assert tp.equal(dst.weight_orig, src.weight_orig)
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        old = tnn.utils.weight_norm(tnn.Linear(3, 3))
    new = parametrizations.weight_norm(tnn.Linear(3, 3))
    new.load_state_dict(old.state_dict())
    assert tp.equal(new.parametrizations.weight.original0, old.weight_g)


def test_lazy_module_loads_through_pre_hook():
    lazy = tnn.LazyLinear(4)
    lazy.load_state_dict(tnn.Linear(3, 4).state_dict())
    assert lazy.weight.shape == (4, 3)


# --- legacy size_average / reduce ----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(size_average=False), dict(reduce=False), dict(size_average=True),
                                    dict(size_average=True, reduce=True)])
@pytest.mark.parametrize("name", ["MSELoss", "NLLLoss", "BCELoss", "MarginRankingLoss"])
def test_legacy_loss_args_warn(name, kwargs):
    msgs = {}
    for lib, nn in (("torch", torch.nn), ("torchplug", tnn)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = getattr(nn, name)(**kwargs)
        msgs[lib] = ([(x.category, str(x.message)) for x in w], loss.reduction)
    assert msgs["torchplug"] == msgs["torch"]
    assert msgs["torch"][0][0][1].startswith("size_average and reduce args will be deprecated")


def test_loss_without_legacy_args_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tnn.MSELoss(reduction="sum").reduction == "sum"


# --- fractional_max_pool output_ratio ------------------------------------------------------------------------

def test_fractional_max_pool2d_number_ratio_is_type_error_as_torch():
    ref = _raises(lambda: torch.nn.functional.fractional_max_pool2d(torch.randn(1, 1, 8, 8), 2, output_ratio=0.5))
    got = _raises(lambda: TF.fractional_max_pool2d(tp.randn(1, 1, 8, 8), 2, output_ratio=0.5))
    assert got == ref == ("TypeError", "object of type 'float' has no len()")
    # a pair, the module form and the 3-d functional form take the ratio
    assert TF.fractional_max_pool2d(tp.randn(1, 1, 8, 8), 2, output_ratio=(0.5, 0.5)).shape == (1, 1, 4, 4)
    assert tnn.FractionalMaxPool2d(2, output_ratio=0.5)(tp.randn(1, 1, 8, 8)).shape == (1, 1, 4, 4)
    assert torch.nn.functional.fractional_max_pool3d(torch.randn(1, 1, 8, 8, 8), 2, output_ratio=0.5).shape \
        == TF.fractional_max_pool3d(tp.randn(1, 1, 8, 8, 8), 2, output_ratio=0.5).shape == (1, 1, 4, 4, 4)


# --- Tensor.data = other -------------------------------------------------------------------------------------

def test_data_setter_moves_dispatch_keys():
    for L in (torch, tp):
        c = L.tensor([1 + 2j])
        x = L.zeros(1, dtype=L.complex64)
        x.data = c.conj()  # the conj bit comes with the data
        assert x.is_conj() and (x + 0).tolist() == [1 - 2j]
        x = L.zeros(1, dtype=L.complex64).conj()
        x.data = c  # and goes when the new data has none
        assert not x.is_conj() and (x + 0).tolist() == [1 + 2j]
        x = L.ones(2, device="meta")
        x.data = L.zeros(3, device="meta", dtype=L.int64)
        y = x + 1
        assert (str(y.device), str(y.dtype).split(".")[-1], tuple(y.shape)) == ("meta", "int64", (3,))
        x = L.ones(2, requires_grad=True)
        x.data = L.arange(2.0) * 3  # autograd state stays the tensor's own
        (x * 2).sum().backward()
        assert x.requires_grad and x.grad.tolist() == [2.0, 2.0] and x.tolist() == [0.0, 3.0]


@pytest.mark.parametrize("src,dst", [("cpu", "meta"), ("meta", "cpu")])
def test_data_setter_refuses_incompatible_device_kinds(src, dst):
    ref = _raises(lambda: setattr(torch.ones(2, device=src), "data", torch.ones(2, device=dst)))
    got = _raises(lambda: setattr(tp.ones(2, device=src), "data", tp.ones(2, device=dst)))
    assert got[0] == ref[0] == "RuntimeError"
    assert got[1].startswith(ref[1].rstrip("."))


def test_module_to_meta_and_back_still_moves_parameters():
    m = tnn.Linear(2, 2)
    w = m.weight
    m.to("meta")
    assert m.weight is w and w.device.type == "meta" and (w + 1).device.type == "meta" and w.requires_grad
    m.to_empty(device="cpu")
    assert (m.weight * 1).device.type == "cpu"


# --- reflected operators with a non-number ------------------------------------------------------------------

_REFLECTED = {
    "none_add": lambda L: None + L.ones(2),
    "none_mul": lambda L: None * L.ones(2),
    "none_sub": lambda L: None - L.ones(2),
    "none_div": lambda L: None / L.ones(2),
    "none_pow": lambda L: None ** L.ones(2),
    "none_matmul": lambda L: None @ L.ones(2),
    "none_and": lambda L: None & L.ones(2, dtype=L.bool),
    "none_lshift": lambda L: None << L.tensor([2]),
    "list_add": lambda L: [1] + L.ones(2),
    "list_mul_float": lambda L: [1] * L.ones(2),
    "list_sub": lambda L: [1] - L.ones(2),
    "list_truediv": lambda L: [1] / L.ones(2),
    "list_floordiv": lambda L: [1] // L.ones(2),
    "list_mod": lambda L: [1] % L.ones(2),
    "list_pow": lambda L: [1] ** L.ones(2),
    "list_matmul": lambda L: [1.0, 2.0] @ L.ones(2),
    "list_or": lambda L: [True] | L.ones(2, dtype=L.bool),
    "list_rshift": lambda L: [1] >> L.tensor([2]),
    "tuple_add": lambda L: (1,) + L.ones(2),
    "tuple_sub": lambda L: (1,) - L.ones(2),
    "str_add": lambda L: "a" + L.ones(2),
    "str_mul": lambda L: "a" * L.ones(2),
    "str_sub": lambda L: "a" - L.ones(2),
    "str_xor": lambda L: "a" ^ L.ones(2, dtype=L.bool),
    "object_add": lambda L: object() + L.ones(2),
}


@pytest.mark.parametrize("case", sorted(_REFLECTED))
def test_reflected_operator_with_non_number_raises_python_type_error(case):
    ref = _raises(lambda: _REFLECTED[case](torch))
    got = _raises(lambda: _REFLECTED[case](tp))
    assert got == ref and ref[0] == "TypeError"
    assert "aten::" not in got[1]


def test_reflected_operators_still_take_numbers_and_sequences_repeat():
    for L in (torch, tp):
        t = L.tensor([1.0, 2.0])
        assert (2 - t).tolist() == [1.0, 0.0] and (2 / t).tolist() == [2.0, 1.0] and (2 ** t).tolist() == [2.0, 4.0]
        assert [1] * L.tensor([2]) == [1, 1] and [1] * L.tensor(2) == [1, 1]
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
            1 - L.tensor([True])


_COMPARISONS = {
    "eq_none": lambda L: L.ones(2) == None,  # noqa: E711 - the comparison under test
    "ne_none": lambda L: L.ones(2) != None,  # noqa: E711
    "none_eq": lambda L: None == L.ones(2),  # noqa: E711
    "eq_str": lambda L: L.ones(2) == "a",
    "eq_list": lambda L: L.ones(2) == [1, 1],
    "eq_tuple": lambda L: L.ones(2) == (1, 1),
    "lt_none": lambda L: L.ones(2) < None,
    "ge_str": lambda L: L.ones(2) >= "a",
    "gt_object": lambda L: L.ones(2) > object(),
    "eq_number": lambda L: (L.ones(2) == 1).tolist(),
    "eq_tensor": lambda L: (L.ones(2) == L.tensor([1.0, 0.0])).tolist(),
    "eq_bad_shape": lambda L: L.ones(2) == L.ones(3),
}


@pytest.mark.parametrize("case", sorted(_COMPARISONS))
def test_comparison_with_a_non_tensor_operand_as_torch(case):
    """torch's comparisons answer NotImplemented for an operand that is no tensor or number: == None is
    False, < None Python's TypeError; tensors and numbers compare as before."""
    def outcome(L):
        try:
            return repr(_COMPARISONS[case](L))
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            return type(exc).__name__, str(exc).replace("torchplug", "torch")

    assert outcome(tp) == outcome(torch)


class _Reflecting:
    """An operand type with reflected operators: torch lets it answer ``t + obj`` (its ``__radd__``)."""

    def __radd__(self, other):
        return "radd"

    def __rmatmul__(self, other):
        return "rmatmul"

    def __rand__(self, other):
        return "rand"


_BINARY = {
    "add_none": lambda L: L.tensor([1.0, 2.0]) + None,
    "mul_str": lambda L: L.tensor([1.0, 2.0]) * "a",
    "sub_list": lambda L: L.tensor([1.0, 2.0]) - [1],
    "div_none": lambda L: L.tensor([1.0, 2.0]) / None,
    "matmul_none": lambda L: L.tensor([1.0, 2.0]) @ None,
    "pow_none": lambda L: L.tensor([1.0, 2.0]) ** None,
    "and_none": lambda L: L.tensor([1, 2]) & None,
    "add_reflecting": lambda L: L.tensor([1.0]) + _Reflecting(),
    "matmul_reflecting": lambda L: L.tensor([1.0]) @ _Reflecting(),
    "and_reflecting": lambda L: L.tensor([1]) & _Reflecting(),
    "dunder_returns": lambda L: L.tensor([1.0]).__add__(None),
    "iadd_none": lambda L: L.tensor([1.0]).__iadd__(None),
    "add_number": lambda L: (L.tensor([1.0, 2.0]) + 1).tolist(),
    "pow_number": lambda L: (L.tensor([1.0, 2.0]) ** 2).tolist(),
    "and_number": lambda L: (L.tensor([1, 2]) & 1).tolist(),
}


@pytest.mark.parametrize("case", sorted(_BINARY))
def test_binary_operator_with_a_foreign_operand_as_torch(case):
    """torch's binary operators answer NotImplemented for an operand that is no tensor or number, so Python
    tries the operand's reflected method, else raises its own "unsupported operand type(s)" TypeError."""
    def outcome(L):
        try:
            return repr(_BINARY[case](L))
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            return type(exc).__name__, str(exc).replace("torchplug", "torch")

    assert outcome(tp) == outcome(torch)


# --- random_ on complex tensors ------------------------------------------------------------------------------

_COMPLEX_RANDOM = {
    "no_bounds": lambda L, dt: L.zeros(2, dtype=dt).random_(),
    "to": lambda L, dt: L.zeros(2, dtype=dt).random_(5),
    "from_to": lambda L, dt: L.zeros(2, dtype=dt).random_(1, 5),
    "from_ge_to": lambda L, dt: L.zeros(2, dtype=dt).random_(5, 1),
    "zero_to": lambda L, dt: L.zeros(2, dtype=dt).random_(0),
    "from_open": lambda L, dt: L.zeros(2, dtype=dt).random_(1, None),
    "full_range": lambda L, dt: L.zeros(2, dtype=dt).random_(-2 ** 63, None),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(_COMPLEX_RANDOM))
def test_random_on_complex_raises_as_torch(case, dtype):
    ref = _raises(lambda: _COMPLEX_RANDOM[case](torch, getattr(torch, dtype)))
    got = _raises(lambda: _COMPLEX_RANDOM[case](tp, getattr(tp, dtype)))
    assert got == ref


# --- device modules keep the placeholder's names -------------------------------------------------------------

@pytest.mark.parametrize("device_type", ["cuda", "mps"])
def test_installed_device_module_has_every_placeholder_name(device_type):
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, registered_backends
    from torchplug._runtime.device_placeholder import placeholder_module

    if device_type not in registered_backends():
        pytest.skip(f"the {device_type} backend is not installed")
    real = tp.get_device_module(device_type)
    placeholder = placeholder_module(device_type)
    missing = [n for n in dir(placeholder) if not n.startswith("_") and not hasattr(real, n)]
    assert missing == []
    for name in WELL_KNOWN_DEVICE_TYPES[device_type].extras:
        assert name in real.__all__ and callable(getattr(real, name))


def test_cuda_is_tf32_supported_without_a_gpu():
    from torchplug._runtime.backends import registered_backends

    if "cuda" not in registered_backends():
        pytest.skip("the cuda backend is not installed")
    if not tp.cuda.is_available():
        assert tp.cuda.is_tf32_supported() is False
    else:  # torch: where bfloat16 runs natively (compute capability 8.0 or newer)
        assert tp.cuda.is_tf32_supported() is (tp.cuda.get_device_capability()[0] >= 8)


def test_mps_memory_functions(monkeypatch):
    from torchplug._runtime.backends import registered_backends

    if "mps" not in registered_backends():
        pytest.skip("the mps backend is not installed")
    from torchplug_mps._runtime import EMULATE_VAR

    monkeypatch.delenv(EMULATE_VAR, raising=False)
    if not tp.mps.is_available():
        with pytest.raises(RuntimeError, match="The 'mps' device is not available"):
            tp.mps.current_allocated_memory()
    monkeypatch.setenv(EMULATE_VAR, "1")
    before = tp.mps.current_allocated_memory()
    x = tp.ones(1000, device="mps")
    assert tp.mps.current_allocated_memory() - before == 4000
    assert tp.mps.driver_allocated_memory() >= tp.mps.current_allocated_memory()
    assert tp.mps.recommended_max_memory() > 0
    del x
    # the argument checks of torch.mps.set_per_process_memory_fraction (torch.mps's Python code, any platform)
    with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
        tp.mps.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 2.5. Allowed range: 0~2"):
        tp.mps.set_per_process_memory_fraction(2.5)
    tp.mps.set_per_process_memory_fraction(1.5)
    assert tp.mps._per_process_memory_fraction == 1.5
    tp.mps.set_per_process_memory_fraction(0.0)


# --- interpolate(mode='bicubic') -----------------------------------------------------------------------------

_BICUBIC = [((2, 3, 5, 7), dict(size=(9, 4))), ((1, 2, 4, 4), dict(scale_factor=2.5)),
            ((1, 1, 6, 5), dict(size=(6, 5))), ((1, 1, 3, 8), dict(scale_factor=(1.7, 0.6))),
            ((1, 1, 3, 8), dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
            ((1, 1, 1, 1), dict(size=(3, 2))), ((2, 1, 8, 8), dict(size=(3, 3)))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape,kwargs", _BICUBIC)
def test_interpolate_bicubic_values_and_gradients(shape, kwargs, align_corners, dtype):
    import numpy as np

    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    xt, xp = torch.tensor(a, requires_grad=True), tp.tensor(a, requires_grad=True)
    rt = torch.nn.functional.interpolate(xt, mode="bicubic", align_corners=align_corners, **kwargs)
    rp = TF.interpolate(xp, mode="bicubic", align_corners=align_corners, **kwargs)
    assert tuple(rp.shape) == tuple(rt.shape) and rp.dtype == getattr(tp, dtype)
    g = rng.standard_normal(tuple(rt.shape)).astype(dtype)
    rt.backward(torch.tensor(g))
    rp.backward(tp.tensor(g))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(rp.detach().numpy(), rt.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


def test_upsample_module_bicubic_and_half_types():
    import numpy as np

    a = np.random.default_rng(3).standard_normal((1, 2, 4, 5)).astype("float32")
    ref = torch.nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)(torch.tensor(a))
    got = tnn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)(tp.tensor(a))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    for name in ("float16", "bfloat16"):
        ref = torch.nn.functional.interpolate(torch.tensor(a).to(getattr(torch, name)), size=(7, 3), mode="bicubic")
        got = TF.interpolate(tp.tensor(a).to(getattr(tp, name)), size=(7, 3), mode="bicubic")
        assert got.dtype == getattr(tp, name)
        np.testing.assert_allclose(got.float().numpy(), ref.float().numpy(), rtol=2e-2, atol=2e-2)
    meta = TF.interpolate(tp.ones(1, 1, 3, 3, device="meta"), size=(5, 4), mode="bicubic")
    assert meta.device.type == "meta" and tuple(meta.shape) == (1, 1, 5, 4)


@pytest.mark.parametrize("case", ["zero_size", "int64", "complex"])
def test_interpolate_bicubic_errors_as_torch(case):
    def call(L, F):
        if case == "zero_size":
            return F.interpolate(L.ones(1, 1, 3, 3), size=(0, 5), mode="bicubic")
        dtype = L.int64 if case == "int64" else L.complex64
        return F.interpolate(L.ones(1, 1, 3, 3, dtype=dtype), size=(4, 5), mode="bicubic")

    assert _raises(lambda: call(tp, TF)) == _raises(lambda: call(torch, torch.nn.functional))


# --- unsafe_split / unsafe_chunk -----------------------------------------------------------------------------

_UNSAFE = {
    "unsafe_split": lambda L, y: y.unsafe_split(2),
    "unsafe_chunk": lambda L, y: y.unsafe_chunk(3),
    "unsafe_split_with_sizes": lambda L, y: L.unsafe_split_with_sizes(y, [2, 4]),
    "torch.unsafe_split": lambda L, y: L.unsafe_split(y, 2),
}


@pytest.mark.parametrize("case", sorted(_UNSAFE))
def test_unsafe_split_pieces_take_inplace_writes(case):
    results = []
    for L in (torch, tp):
        x = L.arange(6.0, requires_grad=True)
        y = x.clone()
        pieces = _UNSAFE[case](L, y)
        assert not pieces[0]._is_view() and pieces[0]._base is None
        pieces[0].mul_(2)  # torch: allowed, recorded on the piece only
        assert type(pieces[0].grad_fn).__name__ == "MulBackward0"
        assert type(y.grad_fn).__name__ == "CloneBackward0"
        (pieces[0].sum() + pieces[1].sum() * 3).backward()
        results.append((x.grad.tolist(), y.tolist()))
        # split proper still refuses
        with pytest.raises(RuntimeError, match="returns multiple views"):
            x.clone().split(2)[0].mul_(2)
    assert results[0] == results[1]
