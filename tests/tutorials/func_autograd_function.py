# "Extending torch.func with autograd.Function" (PyTorch notes): autograd.Functions written with a
# ctx-less forward plus setup_context, so that torch.func transforms see through them: NumpySort /
# NumpyTake calling into NumPy under torch.func.grad, MyCube returning an intermediate for
# second-order gradients, generate_vmap_rule = True, hand-written vmap staticmethods (info.batch_size,
# in_dims, out_dims), and a jvp staticmethod for torch.func.jvp / jacfwd.  Each result is checked
# against its closed form, so running to the end is the test.
import numpy as np
import torch

torch.manual_seed(0)


def to_numpy(tensor):
    return tensor.cpu().numpy()


# Example 1: an autograd.Function that calls into another system (NumPy)
class NumpySort(torch.autograd.Function):
    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as outputs.
        return (
            # The desired output
            torch.tensor(result, device=device),
            # intermediate to save for backward
            torch.tensor(ind, device=device),
            # intermediate to save for backward
            torch.tensor(ind_inv, device=device),
        )

    # setup_context calls methods of and assigns to ctx; no compute here
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        # Tensors go through ctx.save_for_backward; non-tensors are plain attributes
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # Written with another autograd.Function, so that it is transformable itself
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


x = torch.randn(2, 3)
grad_x = torch.func.grad(lambda x: numpy_sort(x).sum())(x)
assert torch.allclose(grad_x, torch.ones_like(x))
# a weighted sum: each input gets the weight of the position it is sorted to
w = torch.arange(3.0)
grad_w = torch.func.grad(lambda x: (numpy_sort(x) * w).sum())(x)
torch.testing.assert_close(grad_w, x.argsort(-1).argsort(-1).to(x.dtype))
# the same through the ordinary autograd API
xr = x.clone().requires_grad_()
(numpy_sort(xr) * w).sum().backward()
torch.testing.assert_close(xr.grad, grad_w)
print("NumpySort: grad through numpy")


# Example 2: custom gradient rules; dx is computed in the forward and returned as an output
class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        # dx = 3 x^2 would normally be computed in the backward pass
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # For higher-order gradients, add the gradient contribution of dx
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, _ = MyCube.apply(x)
    return result


x = torch.randn([])
ggx = torch.func.grad(torch.func.grad(my_cube))(x)
assert torch.allclose(ggx, 6 * x)
print("MyCube: second-order gradient")


# torch.vmap support, generated: forward and backward are made of PyTorch ops
class MyCube(torch.autograd.Function):
    # Set generate_vmap_rule to True to ask PyTorch to automatically generate a vmap rule.
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


x = torch.randn(3)
result = torch.vmap(my_cube)(x)
assert torch.allclose(result, x ** 3)
# per-sample gradients and a Jacobian both vmap the backward
torch.testing.assert_close(torch.vmap(torch.func.grad(my_cube))(x), 3 * x ** 2)
torch.testing.assert_close(torch.func.jacrev(my_cube)(x), torch.diag(3 * x ** 2))
print("MyCube: generated vmap rule")


# torch.vmap support, hand-written: the vmap staticmethod
class NumpySort(torch.autograd.Function):
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        return (
            torch.tensor(result, device=device),
            torch.tensor(ind, device=device),
            torch.tensor(ind_inv, device=device),
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    # The signature of the vmap staticmethod is:
    # vmap(info, in_dims: Tuple[Optional[int]], *args)
    # where *args is the same as the arguments to `forward`.
    @staticmethod
    def vmap(info, in_dims, x, dim):
        # in_dims holds one Optional[int] per input: None if it is not batched (or not a Tensor)
        x_bdim, _ = in_dims
        # The rule: move the batch dim to the front and sort along dim + 1
        x = x.movedim(x_bdim, 0)
        # Handle negative dims correctly
        dim = dim if dim >= 0 else dim + x.dim() - 1
        result = NumpySort.apply(x, dim + 1)
        # (output, out_dims): all three outputs carry the batch dim at 0
        return NumpySort.apply(x, dim + 1), (0, 0, 0)


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims

        # Expand {x, ind, ind_inv} to all have the batch dim, then call NumpyTake with dim + 1
        logical_dim = x.dim() if x_bdim is None else x_bdim - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)

        # output is a Tensor, so out_dims is a single Optional[int]
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


x = torch.randn(2, 3)
result = torch.vmap(numpy_sort)(x)
assert torch.allclose(result, numpy_sort(result, 1))
torch.testing.assert_close(result, x.sort(-1).values)
# in_dims=1: the batch dim is not at the front
torch.testing.assert_close(torch.vmap(numpy_sort, in_dims=1)(x.T.contiguous()), result)
# per-sample gradients: grad inside vmap runs the backward, NumpyTake, under vmap
w = torch.arange(3.0)
grads = torch.vmap(torch.func.grad(lambda x: (numpy_sort(x) * w).sum()))(x)
torch.testing.assert_close(grads, x.argsort(-1).argsort(-1).to(x.dtype))
print("NumpySort: hand-written vmap rule")


# torch.func.jvp support: the jvp staticmethod (forward-mode AD)
class MyExp(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

    @staticmethod
    def jvp(ctx, x_t):
        result, = ctx.saved_tensors
        return x_t * result


x = torch.randn(4)
t = torch.randn(4)
out, jvp_out = torch.func.jvp(MyExp.apply, (x,), (t,))
torch.testing.assert_close(out, x.exp())
torch.testing.assert_close(jvp_out, t * x.exp())
# jacfwd vmaps the jvp over the columns of the identity; jacrev vmaps the backward
torch.testing.assert_close(torch.func.jacfwd(MyExp.apply)(x), torch.diag(x.exp()))
torch.testing.assert_close(torch.func.jacrev(MyExp.apply)(x), torch.diag(x.exp()))
# hessian = jacfwd(jacrev): the backward, made of PyTorch ops, is differentiated forward
torch.testing.assert_close(torch.func.hessian(lambda x: MyExp.apply(x).sum())(x), torch.diag(x.exp()))
print("MyExp: jvp, jacfwd, jacrev and hessian")
