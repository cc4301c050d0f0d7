"""``torchplug.ops.aten.<op>`` names its overloads as PyTorch does (``aten.mul.Tensor``, ``aten.eq.Tensor_out``):
every overload of a common op exists in torch under the same name with the same tensor arguments, and the
dispatch mode and ``str`` show that name."""

from __future__ import annotations

import pytest

import torchplug as tp
import torchplug

torch = pytest.importorskip("torch")

COMMON = """add sub mul div pow eq ne lt le gt ge maximum minimum where clamp sum mean max min amax amin argmax argmin
prod std var norm softmax log_softmax matmul mm bmm addmm cat stack view reshape permute transpose t expand squeeze
unsqueeze select slice index_select gather scatter scatter_add index_add masked_fill copy_ fill_ zero_ clone relu
sigmoid tanh exp log sqrt abs neg sin cos floor remainder fmod bitwise_and bitwise_or bitwise_xor bitwise_left_shift
bitwise_right_shift logical_and all any sort topk cumsum embedding dropout native_layer_norm convolution conv2d split
chunk unbind flatten full zeros ones empty arange linspace randperm mse_loss nll_loss narrow diagonal repeat lerp
addcmul masked_select nonzero mul_ add_ remainder_ fmod_ bitwise_and_ floor_divide floor_divide_ pow_ xlogy ldexp_
conv_transpose2d""".split()

def _single_tensor(type_text: str) -> bool:
    """A Tensor or optional Tensor argument of a torch schema (not a list of them)."""
    return "Tensor" in type_text and "List" not in type_text and "[]" not in type_text


@pytest.mark.parametrize("name", COMMON)
def test_overload_names_as_torch(name: str) -> None:
    ours = getattr(tp.ops.aten, name)
    theirs = getattr(torch.ops.aten, name)
    for overload in ours.overloads():
        assert overload in theirs.overloads(), (name, overload, theirs.overloads())
        mine = getattr(ours, overload)
        ref = getattr(theirs, overload)
        assert str(mine) == str(ref)
        # the same tensor arguments (by name): the overload is the one PyTorch means by that name
        ref_tensors = [a.name for a in ref._schema.arguments if _single_tensor(str(a.type))]
        our_tensors = [a.name for a in mine._schema.arguments if a.type.base == "Tensor" and not a.type.is_list]
        assert our_tensors == ref_tensors, (name, overload)

def test_renamed_overload_reaches_the_same_kernel() -> None:
    x = tp.tensor([1.0, 2.0, 3.0])
    assert tp.ops.aten.mul.Tensor(x, x).tolist() == [1.0, 4.0, 9.0]
    assert tp.ops.aten.mul(x, 2).tolist() == [2.0, 4.0, 6.0]  # the Tensor overload first, numbers wrapped
    out = tp.empty(3, dtype=tp.bool)
    tp.ops.aten.eq.Tensor_out(x, x, out=out)
    assert out.tolist() == [True, True, True]
    assert repr(tp.ops.aten.remainder.Tensor) == repr(torch.ops.aten.remainder.Tensor)

def test_dispatch_mode_logs_pytorch_overload_names() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    from torchplug.utils._dispatch_mode import DispatchMode

    def logged(T, base):
        seen = []

        class Log(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))

        x = T.tensor([3.0, 4.0])
        with Log():
            x * x, x % x, T.fmod(x, x), x.mul_(x)
        return seen

    assert logged(tp, DispatchMode) == logged(torch, TorchDispatchMode)


def test_pytorch_spellings_of_renamed_overloads_find_the_op():
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._ops.namespace import PYTORCH_OVERLOAD_NAMES

    for internal in PYTORCH_OVERLOAD_NAMES:
        entry = DISPATCHER.find(internal)
        if entry is None:
            continue
        packet = torchplug.ops.aten
        ns_name = internal.split("::")[1].split(".")[0]
        overload = getattr(packet, ns_name)
        name = str(next(o for o in (getattr(overload, n) for n in overload.overloads()) if o._entry is entry))
        full = name.replace(".", "::", 1).removesuffix(".default")  # str() is 'aten.mul.Tensor'; the schema's 'aten::mul.Tensor'
        assert DISPATCHER.entry(full) is entry, (full, internal)


def test_a_kernel_registered_under_pytorchs_overload_name_runs_and_is_removed_with_its_library():
    torchplug.ones(1) + 1  # the backends (and their dispatch keys) load with the first op
    calls = []

    def kernel(a, b):
        calls.append(1)
        return a

    lib = torchplug.library.Library("aten", "IMPL")
    try:
        lib.impl("mul.Tensor", kernel, "CPU", allow_override=True)
        assert torchplug.mul(torchplug.ones(2), torchplug.full((2,), 2.0)).tolist() == [1.0, 1.0] and calls == [1]
    finally:
        lib.close()
    assert torchplug.mul(torchplug.ones(2), torchplug.full((2,), 2.0)).tolist() == [2.0, 2.0]
