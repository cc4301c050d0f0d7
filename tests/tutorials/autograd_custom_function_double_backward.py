# "Double Backward with Custom Functions" (PyTorch intermediate tutorial): custom autograd Functions
# whose backward autograd can record (saving an input, saving an output, returning intermediate
# results as outputs so that they can be saved), the wrong way (intermediates stashed on ctx: no
# graph for the gradient), and a backward that is itself a custom Function (CubeBackward), each
# checked with gradcheck and gradgradcheck.  The tutorial draws the graphs with torchviz; here the
# graphs are checked through grad_fn instead, and the second derivatives against their closed forms.
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # Because we are saving one of the inputs use `save_for_backward`
        # Save non-tensors and non-inputs/non-outputs directly on ctx
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_out):
        # A function supports double backward automatically if autograd
        # is able to record the computations performed in backward
        x, = ctx.saved_tensors
        return grad_out * 2 * x


# Use double precision because finite differencing method magnifies errors
x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
assert torch.autograd.gradcheck(Square.apply, x)
# Use gradcheck to verify second-order derivatives
assert torch.autograd.gradgradcheck(Square.apply, x)

x = torch.tensor(1., requires_grad=True).clone()
out = Square.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
# the gradient with respect to x is itself a function of x (dout/dx = 2x), with its own graph
assert grad_x.grad_fn is not None and out.grad_fn is not None
torch.testing.assert_close(grad_x, 2 * x.detach())
gg, = torch.autograd.grad(grad_x, x)
torch.testing.assert_close(gg, torch.tensor(2.))
print("Square: saving an input")


class Exp(torch.autograd.Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when
        # the tensor saved is an output (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
# Validate our gradients using gradcheck
assert torch.autograd.gradcheck(Exp.apply, x)
assert torch.autograd.gradgradcheck(Exp.apply, x)

out = Exp.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
assert grad_x.grad_fn is not None
gg, = torch.autograd.grad(grad_x, x)
torch.testing.assert_close(gg, x.detach().exp())
print("Exp: saving an output")


# Saving intermediate results: return them as outputs too, so that the backward graph is built
class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, a trick is to
        # include them as our outputs, so that the backward graph is constructed
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs
        # directly. They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
assert torch.autograd.gradcheck(sinh, x)
assert torch.autograd.gradgradcheck(sinh, x)

out = sinh(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
assert grad_x.grad_fn is not None
torch.testing.assert_close(grad_x, torch.cosh(x.detach()))
gg, = torch.autograd.grad(grad_x.sum(), x)
torch.testing.assert_close(gg, torch.sinh(x.detach()))
print("Sinh: intermediate results returned as outputs")


# What NOT to do: intermediates stashed on ctx; the gradient then has no backward graph at all
class Sinh(torch.autograd.Function):
    # This is an example of what NOT to do!
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        expx = ctx.expx
        expnegx = ctx.expnegx
        grad_input = grad_out * (expx + expnegx) / 2
        return grad_input


out = Sinh.apply(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
torch.testing.assert_close(grad_x, torch.cosh(x.detach()))  # the first derivative is still right
assert grad_x.grad_fn is None and not grad_x.requires_grad  # but it is a constant to autograd
print("Sinh (wrong): the gradient has no graph")


# A backward autograd cannot record (think NumPy or C++): make the backward a custom Function too
def cube_forward(x):
    return x ** 3


def cube_backward(grad_out, x):
    return grad_out * 3 * x ** 2


def cube_backward_backward(grad_out, sav_grad_out, x):
    return grad_out * sav_grad_out * 6 * x


def cube_backward_backward_grad_out(grad_out, x):
    return grad_out * 3 * x ** 2


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return cube_forward(x)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


class CubeBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return cube_backward(grad_out, x)

    @staticmethod
    def backward(ctx, grad_out):
        x, sav_grad_out = ctx.saved_tensors
        dx = cube_backward_backward(grad_out, sav_grad_out, x)
        dgrad_out = cube_backward_backward_grad_out(grad_out, x)
        return dgrad_out, dx


x = torch.tensor(2., requires_grad=True, dtype=torch.double)

assert torch.autograd.gradcheck(Cube.apply, x)
assert torch.autograd.gradgradcheck(Cube.apply, x)

out = Cube.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
assert type(grad_x.grad_fn).__name__ == "CubeBackwardBackward"
torch.testing.assert_close(grad_x, torch.tensor(12., dtype=torch.double))
gg, = torch.autograd.grad(grad_x, x)
torch.testing.assert_close(gg, torch.tensor(12., dtype=torch.double))  # 6 x
print("Cube: a custom Function as the backward")
