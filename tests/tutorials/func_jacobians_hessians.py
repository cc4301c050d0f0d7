# "Jacobians, Hessians, hvp, vhp, and more: composing function transforms" (PyTorch intermediate
# tutorial): a Jacobian row by row with torch.autograd.grad and then with vmap(vjp), jacrev with
# argnums, a torch.utils.benchmark.Timer comparison, jacfwd against jacrev on tall and wide
# problems, hessian as jacfwd(jacrev), batched Jacobians and Hessians through vmap, and
# Hessian-vector products as jvp(grad) and vjp(grad).  Sizes and timing loops are shrunk; every
# result is checked against another way of computing it, so running to the end is the test.
from functools import partial

import torch
import torch.nn.functional as F

_ = torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)  # feature vector


# The Jacobian row by row: one vector-Jacobian product per unit vector
def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])  # the first row
# d tanh(Wx + b) / dx = diag(1 - tanh^2) W
closed_form = (1 - predict(weight, bias, x) ** 2).unsqueeze(1) * weight
torch.testing.assert_close(jacobian, closed_form)

# vmap over the vjp function replaces the loop
from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
assert torch.allclose(ft_jacobian, jacobian)

# jacrev is that vmap-vjp composition; argnums picks the argument
from torch.func import jacrev

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
assert torch.allclose(ft_jacobian, jacobian)


def get_perf(first, first_descriptor, second, second_descriptor):
    """takes torch.benchmark objects and compares delta of second vs first."""
    faster = second.times[0]
    slower = first.times[0]
    gain = (slower - faster) / slower
    if gain < 0:
        gain *= -1
    final_gain = gain * 100
    print(f" Performance delta: {final_gain:.4f} percent improvement with {second_descriptor} ")


from torch.utils.benchmark import Timer

without_vmap = Timer(stmt="compute_jac(xp)", globals=globals())
with_vmap = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())

no_vmap_timer = without_vmap.timeit(5)
with_vmap_timer = with_vmap.timeit(5)
print(no_vmap_timer)
print(with_vmap_timer)
get_perf(no_vmap_timer, "without vmap", with_vmap_timer, "vmap")

# Jacobians with respect to the parameters instead of the input
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
assert ft_jac_weight.shape == (D, D, D) and ft_jac_bias.shape == (D, D)
# d y_i / d b_j = (1 - y_i^2) delta_ij, and d y_i / d W_jk = (1 - y_i^2) delta_ij x_k
dtanh = 1 - predict(weight, bias, x) ** 2
torch.testing.assert_close(ft_jac_bias, torch.diag(dtanh))
torch.testing.assert_close(ft_jac_weight, torch.diag(dtanh).unsqueeze(-1) * x)

# jacrev (reverse mode, row by row) against jacfwd (forward mode, column by column)
from torch.func import jacrev, jacfwd

Din = 8
Dout = 256
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)
print(weight.shape)  # a tall Jacobian: more outputs than inputs

using_fwd = Timer(stmt="jacfwd(predict, argnums=2)(weight, bias, x)", globals=globals())
using_bwd = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())
jacfwd_timing = using_fwd.timeit(5)
jacrev_timing = using_bwd.timeit(5)
print(f'jacfwd time: {jacfwd_timing}')
print(f'jacrev time: {jacrev_timing}')
get_perf(jacfwd_timing, "jacfwd", jacrev_timing, "jacrev", )
torch.testing.assert_close(jacfwd(predict, argnums=2)(weight, bias, x),
                           jacrev(predict, argnums=2)(weight, bias, x))

# and the reverse: more inputs than outputs
Din = 256
Dout = 8
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

using_fwd = Timer(stmt="jacfwd(predict, argnums=2)(weight, bias, x)", globals=globals())
using_bwd = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=globals())
jacfwd_timing = using_fwd.timeit(5)
jacrev_timing = using_bwd.timeit(5)
print(f'jacfwd time: {jacfwd_timing}')
print(f'jacrev time: {jacrev_timing}')
get_perf(jacrev_timing, "jacrev", jacfwd_timing, "jacfwd")
torch.testing.assert_close(jacfwd(predict, argnums=2)(weight, bias, x),
                           jacrev(predict, argnums=2)(weight, bias, x))

# Hessians: hessian(f) is jacfwd(jacrev(f))
from torch.func import hessian

Din = 64
Dout = 8
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
assert hess_api.shape == (Dout, Din, Din)
assert torch.allclose(hess_api, hess_fwdfwd, atol=1e-6)
assert torch.allclose(hess_api, hess_revrev, atol=1e-6)
# d2 tanh(w.x + b) / dx2 = -2 y (1 - y^2) w w^T, output by output
y = predict(weight, bias, x)
closed_hess = (-2 * y * (1 - y ** 2))[:, None, None] * weight[:, :, None] * weight[:, None, :]
torch.testing.assert_close(hess_api, closed_hess)

# Batch Jacobian and batch Hessian
batch_size = 16
Din = 31
Dout = 33

weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")
bias = torch.randn(Dout)
x = torch.randn(batch_size, Din)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
assert batch_jacobian0.shape == (batch_size, Dout, Din)


# Independent outputs: sum over the batch, then take one Jacobian
def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
assert batch_hess.shape == (batch_size, Dout, Din, Din)
torch.testing.assert_close(batch_hess[3], hessian(predict, argnums=2)(weight, bias, x[3]))

# Hessian-vector products: forward-over-reverse, and reverse-over-reverse
from torch.func import jvp, grad, vjp


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(2048)
tangent = torch.randn(2048)

result = hvp(f, (x,), (tangent,))
torch.testing.assert_close(result, -x.sin() * tangent)  # the Hessian of sum(sin x) is diag(-sin x)


def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
print("jacobians, hessians and hessian-vector products agree")
