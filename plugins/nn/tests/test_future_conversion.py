"""``torch.__future__`` switches for ``nn.Module`` conversions and ``load_state_dict``, against PyTorch."""

from __future__ import annotations

import pytest

import torchplug

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("T", [torchplug, torch], ids=["torchplug", "torch"])


@pytest.fixture(autouse=True)
def _reset_flags():
    yield
    for T in (torchplug, torch):
        T.__future__.set_swap_module_params_on_conversion(False)
        T.__future__.set_overwrite_module_params_on_conversion(False)


@LIBS
def test_flags_default_off_and_round_trip(T):
    assert not T.__future__.get_swap_module_params_on_conversion()
    assert not T.__future__.get_overwrite_module_params_on_conversion()
    T.__future__.set_swap_module_params_on_conversion(True)
    T.__future__.set_overwrite_module_params_on_conversion(True)
    assert T.__future__.get_swap_module_params_on_conversion()
    assert T.__future__.get_overwrite_module_params_on_conversion()


@LIBS
@pytest.mark.parametrize("swap", [False, True])
def test_conversion_keeps_parameter_objects_and_converts_grads(T, swap):
    T.__future__.set_swap_module_params_on_conversion(swap)
    m = T.nn.Linear(3, 2)
    m(T.randn(4, 3)).sum().backward()
    ids = (id(m.weight), id(m.bias), id(m.weight.grad))
    m.double()
    assert (id(m.weight), id(m.bias), id(m.weight.grad)) == ids
    assert m.weight.dtype == T.float64 and m.weight.grad.dtype == T.float64
    assert isinstance(m.weight, T.nn.Parameter) and m.weight.requires_grad
    m(T.randn(4, 3, dtype=T.float64)).sum().backward()  # the swapped parameters still train
    assert m.weight.grad.dtype == T.float64


@LIBS
def test_overwrite_makes_new_parameters(T):
    T.__future__.set_overwrite_module_params_on_conversion(True)
    m = T.nn.Linear(3, 2)
    w = m.weight
    m.double()
    assert m.weight is not w and isinstance(m.weight, T.nn.Parameter) and m.weight.dtype == T.float64
    assert w.dtype == T.float32


@LIBS
def test_load_state_dict_assign_with_swap_keeps_parameter_objects(T):
    T.__future__.set_swap_module_params_on_conversion(True)
    with T.device("meta"):
        m = T.nn.Linear(3, 5)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    ids = (id(m.weight), id(m.bias))
    sd = T.nn.Linear(3, 5).state_dict()
    m.load_state_dict(sd, assign=True)
    assert (id(m.weight), id(m.bias)) == ids and not m.weight.is_meta
    assert T.equal(m.weight, sd["weight"]) and isinstance(m.weight, T.nn.Parameter) and m.weight.requires_grad
    m(T.randn(2, 3)).sum().backward()
    opt.step()  # the optimizer's references are the module's parameters
    assert not T.equal(m.weight, T.nn.Linear(3, 5).weight) and m.weight.grad is not None


@LIBS
def test_load_state_dict_with_swap_copies_without_assign(T):
    T.__future__.set_swap_module_params_on_conversion(True)
    m = T.nn.Linear(3, 5)
    ids = (id(m.weight), id(m.bias))
    sd = T.nn.Linear(3, 5).state_dict()
    m.load_state_dict(sd)
    assert (id(m.weight), id(m.bias)) == ids and T.equal(m.weight, sd["weight"])
    m.weight.detach().add_(1)  # copied, not aliased: the state dict keeps its values
    assert not T.equal(m.weight, sd["weight"])


@LIBS
def test_module_load_returning_an_input_is_refused(T):
    T.__future__.set_swap_module_params_on_conversion(True)
    m = T.nn.Linear(2, 2)
    orig = T.Tensor.module_load
    try:
        T.Tensor.module_load = lambda self, other, assign=False: other
        with pytest.raises(RuntimeError, match="module_load returned one of self or other"):
            m.load_state_dict(T.nn.Linear(2, 2).state_dict())
    finally:
        T.Tensor.module_load = orig
