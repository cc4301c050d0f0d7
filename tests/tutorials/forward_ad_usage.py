# "Forward-mode Automatic Differentiation" (PyTorch intermediate tutorial): dual tensors with
# torch.autograd.forward_ad, modules made dual in place and through torch.func.functional_call, a
# custom autograd.Function with a jvp (checked by gradcheck's forward mode), and torch.func.jvp.
# Each result is checked against its closed form, so running to the end is the test.
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, jvp

torch.manual_seed(0)

primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    # The tangent is kept as is when its layout matches the primal's, copied otherwise
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    plain_tensor = torch.randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp_out = fwAD.unpack_dual(dual_output).tangent
    torch.testing.assert_close(jvp_out, 2 * primal * tangent)
assert fwAD.unpack_dual(dual_output).tangent is None
print("dual tensors: jvp of x**2 + y**2 is 2 x t")

# Usage with Modules: replace the parameters by dual tensors
model = nn.Linear(5, 5)
inp = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(inp)
    jvp_module = fwAD.unpack_dual(out).tangent
torch.testing.assert_close(jvp_module, inp @ tangents["weight"].T + tangents["bias"])

# The functional Module API
model = nn.Linear(5, 5)
with fwAD.dual_level():
    dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
    out = functional_call(model, dual_params, inp)
    jvp_functional = fwAD.unpack_dual(out).tangent
torch.testing.assert_close(jvp_functional, jvp_module)
print("modules: jvp with respect to the parameters, in place and with functional_call")


# Custom autograd Function with a jvp
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # Tensors used in jvp can be saved on ctx directly (or with ctx.save_for_forward)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
tangent = torch.randn(10, 10, dtype=torch.double)
with fwAD.dual_level():
    dual_output = Fn.apply(fwAD.make_dual(primal, tangent))
    jvp_custom = fwAD.unpack_dual(dual_output).tangent
torch.testing.assert_close(jvp_custom, tangent * primal.detach().exp())
assert torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                check_undefined_grad=False, check_batched_grad=False)
print("custom Function: jvp checked by gradcheck(check_forward_ad=True)")

# torch.func.jvp
primal0, primal1 = torch.randn(10, 10), torch.randn(10, 10)
tangent0, tangent1 = torch.randn(10, 10), torch.randn(10, 10)
primal_out, tangent_out = jvp(fn, (primal0, primal1), (tangent0, tangent1))
torch.testing.assert_close(tangent_out, 2 * primal0 * tangent0 + 2 * primal1 * tangent1)

# torch.func.jvp with respect to a module's parameters through functional_call
model = nn.Linear(5, 5)
params = dict(model.named_parameters())
tangents = {name: torch.rand_like(p) for name, p in params.items()}


def func(params):
    return functional_call(model, params, inp)


_, jvp_params = jvp(func, (params,), (tangents,))
torch.testing.assert_close(jvp_params, inp @ tangents["weight"].T + tangents["bias"])
print("torch.func.jvp: functions and module parameters")
