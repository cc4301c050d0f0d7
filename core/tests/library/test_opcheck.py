"""opcheck: correct registrations pass; each kind of bad registration fails naming its test."""

import itertools

import numpy as np
import pytest

import torchplug as torch
from torchplug import Tensor
from torchplug.library import custom_op, get_ctx, opcheck
from torchplug._library.opcheck import OpCheckError

_ids = itertools.count()



def define(ops, fn, **kw):
    op = custom_op(f"tpcheck::{fn.__name__}_{next(_ids)}", fn, **kw)
    ops.append(op)
    return op


def good_square(ops):
    def square(x: Tensor) -> Tensor:
        return x * x

    op = define(ops, square, mutates_args=())
    op.register_fake(lambda x: torch.empty_like(x))
    op.register_autograd(lambda ctx, g: 2 * g * ctx.x, setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    return op


def test_correct_op_passes_every_test(ops):
    op = good_square(ops)
    x = torch.randn(3, 4, requires_grad=True)
    result = opcheck(op, (x,))
    assert result["test_schema"] == result["test_faketensor"] == result["test_autograd_registration"] == "SUCCESS"
    assert result["test_aot_dispatch_dynamic"].startswith("SKIPPED")
    # also through the OpOverload, the packet and the name
    assert opcheck(op._opoverload, (x,), test_utils="test_schema") == {"test_schema": "SUCCESS"}
    assert opcheck(op._qualname, (x,), test_utils=["test_faketensor"]) == {"test_faketensor": "SUCCESS"}


def test_undeclared_mutation_fails_test_schema(ops):
    def sneaky(x: Tensor) -> Tensor:
        x.numpy()[...] += 1  # mutates, but the schema says it does not
        return x.clone()

    op = define(ops, sneaky, mutates_args=())
    with pytest.raises(OpCheckError, match="test_schema failed.*Argument x is not defined as mutable but was mutated"):
        opcheck(op, (torch.randn(3),), test_utils="test_schema")


def test_declared_mutation_passes(ops):
    def add_(x: Tensor, y: Tensor) -> None:
        x.numpy()[...] += y.numpy()

    op = define(ops, add_, mutates_args=["x"])
    op.register_fake(lambda x, y: None)
    assert opcheck(op, (torch.randn(3), torch.randn(3)), test_utils=("test_schema", "test_faketensor")) == {
        "test_schema": "SUCCESS", "test_faketensor": "SUCCESS"}


def test_op_returning_nothing_needs_no_fake_kernel(ops):
    # PyTorch generates a trivial fake kernel for an op without outputs (its "numpy_sin" tutorial relies on it)
    def fill_sin(x: Tensor, out: Tensor) -> None:
        np.sin(x.numpy(), out=out.numpy())

    op = define(ops, fill_sin, mutates_args={"out"})
    assert op(torch.randn(3, device="meta"), torch.empty(3, device="meta")) is None
    result = opcheck(op, (torch.randn(3), torch.empty(3)), test_utils=("test_schema", "test_faketensor"))
    assert result == {"test_schema": "SUCCESS", "test_faketensor": "SUCCESS"}


def test_output_aliasing_input_fails_test_schema(ops):
    def alias(x: Tensor) -> Tensor:
        return x.view(-1)

    op = define(ops, alias, mutates_args=())
    with pytest.raises(OpCheckError, match="test_schema failed.*Argument x is not defined to alias output"):
        opcheck(op, (torch.randn(2, 2),), test_utils="test_schema")


def test_missing_fake_fails_test_faketensor(ops):
    def nofake(x: Tensor) -> Tensor:
        return x + 1

    op = define(ops, nofake, mutates_args=())
    with pytest.raises(OpCheckError, match="test_faketensor failed.*has no fake kernel.*register_fake"):
        opcheck(op, (torch.randn(2),), test_utils="test_faketensor")


@pytest.mark.parametrize("fake, message", [
    (lambda x: x.new_empty((x.shape[0] + 1,) + tuple(x.shape[1:])), "the fake kernel gives shape \\(4, 2\\) but the real kernel gives \\(3, 2\\)"),
    (lambda x: x.new_empty(x.shape, dtype=torch.float64), "the fake kernel gives dtype torchplug.float64 but the real kernel gives torchplug.float32"),
    (lambda x: x.new_empty((x.shape[1], x.shape[0])).t(), "the fake kernel gives strides \\(1, 3\\) but the real kernel gives \\(2, 1\\)"),
    (lambda x: torch.empty(x.shape), "returned a tensor on cpu"),
    (lambda x: (x.sum() > 0).item(), "running .* on meta tensors failed"),
])
def test_wrong_fake_fails_test_faketensor(ops, fake, message):
    def plus(x: Tensor) -> Tensor:
        return x + 1

    op = define(ops, plus, mutates_args=())
    op.register_fake(fake)
    with pytest.raises(OpCheckError, match="test_faketensor failed.*" + message):
        opcheck(op, (torch.randn(3, 2),), test_utils="test_faketensor")


def test_wrong_autograd_formula_fails_gradcheck(ops):
    def cube(x: Tensor) -> Tensor:
        return x * x * x

    op = define(ops, cube, mutates_args=())
    op.register_fake(lambda x: torch.empty_like(x))
    # wrong: d(x^3)/dx is 3x^2, not 2x^2
    op.register_autograd(lambda ctx, g: 2 * g * ctx.x * ctx.x,
                         setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(OpCheckError, match="test_autograd_registration failed.*disagrees with finite differences"):
        opcheck(op, (x,))
    # without inputs requiring grad there is nothing to check, as in PyTorch
    assert opcheck(op, (x.detach(),), test_utils="test_autograd_registration") == {"test_autograd_registration": "SUCCESS"}


def test_missing_autograd_fails_test_autograd_registration(ops):
    def twice(x: Tensor) -> Tensor:
        return x * 2

    op = define(ops, twice, mutates_args=())
    with pytest.raises(OpCheckError, match="test_autograd_registration failed.*no autograd formula registered"):
        opcheck(op, (torch.randn(2, requires_grad=True),), test_utils="test_autograd_registration")


def test_raise_exception_false_returns_the_errors(ops):
    def twice(x: Tensor) -> Tensor:
        return x * 2

    op = define(ops, twice, mutates_args=())
    result = opcheck(op, (torch.randn(2, requires_grad=True),), raise_exception=False)
    assert result["test_schema"] == "SUCCESS"
    assert isinstance(result["test_faketensor"], OpCheckError)
    assert isinstance(result["test_autograd_registration"], OpCheckError)


def test_argument_validation(ops):
    op = good_square(ops)
    with pytest.raises(ValueError, match="specify both"):
        opcheck(op, (torch.randn(2),), atol=1e-3)
    with pytest.raises(ValueError, match="unknown test_utils"):
        opcheck(op, (torch.randn(2),), test_utils="test_nothing")
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert opcheck(op, (x,), atol=1e-4, rtol=1e-3)["test_autograd_registration"] == "SUCCESS"


def test_dynamic_output_size_accepted_within_bounds(ops):
    def positives(x: Tensor) -> Tensor:
        return torch.from_numpy(x.numpy()[x.numpy() > 0].copy())

    op = define(ops, positives, mutates_args=())
    op.register_fake(lambda x: x.new_empty((get_ctx().new_dynamic_size(max=x.numel()),)))
    x = torch.tensor([1.0, -1.0, 2.0, -3.0])
    assert opcheck(op, (x,), test_utils="test_faketensor") == {"test_faketensor": "SUCCESS"}

    op2 = define(ops, positives, mutates_args=())
    op2.register_fake(lambda x: x.new_empty((get_ctx().new_dynamic_size(min=3, max=x.numel()),)))
    with pytest.raises(OpCheckError, match="gives shape"):
        opcheck(op2, (x,), test_utils="test_faketensor")  # 2 positives, but the fake claims at least 3


def test_opcheck_on_builtin_op():
    x = torch.randn(3, requires_grad=True)
    result = opcheck(torch.ops.aten.sin.default, (x,), test_utils=("test_schema", "test_faketensor", "test_autograd_registration"))
    assert set(result.values()) == {"SUCCESS"}


def test_opcheck_agrees_with_torch_on_undeclared_mutation(ops):
    real = pytest.importorskip("torch")

    @real.library.custom_op("tpcheckref::sneaky", mutates_args=())
    def sneaky_ref(x: real.Tensor) -> real.Tensor:
        x.add_(1)
        return x.clone()

    sneaky_ref.register_fake(lambda x: real.empty_like(x))
    ref_result = real.library.opcheck(sneaky_ref, (real.randn(3),), test_utils="test_schema", raise_exception=False)

    def sneaky(x: Tensor) -> Tensor:
        x.numpy()[...] += 1
        return x.clone()

    op = define(ops, sneaky, mutates_args=())
    ours = opcheck(op, (torch.randn(3),), test_utils="test_schema", raise_exception=False)
    assert "is not defined as mutable but was mutated" in str(ref_result["test_schema"])
    assert "is not defined as mutable but was mutated" in str(ours["test_schema"])
