# "Neural Tangent Kernels" (PyTorch intermediate tutorial): the empirical NTK of a small CNN with
# torch.func, first by Jacobian contraction (vmap of jacrev over functional_call, then einsum; full,
# trace and diagonal variants) and then by NTK-vector products (vjp composed with jvp, vmapped over
# the columns of an identity and over both batches).  CPU instead of CUDA, fewer channels, smaller
# images and batches; the two methods are checked against each other, and against the NTK built
# from plain autograd Jacobians.
import torch
import torch.nn as nn
from torch.func import functional_call, vmap, vjp, jvp, jacrev

torch.manual_seed(0)
device = 'cpu'


class CNN(nn.Module):
    def __init__(self):
        super(CNN, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, (3, 3))
        self.conv2 = nn.Conv2d(8, 8, (3, 3))
        self.conv3 = nn.Conv2d(8, 8, (3, 3))
        self.fc = nn.Linear(288, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = x.relu()
        x = self.conv2(x)
        x = x.relu()
        x = self.conv3(x)
        x = x.flatten(1)
        x = self.fc(x)
        return x


x_train = torch.randn(6, 3, 12, 12, device=device)
x_test = torch.randn(3, 3, 12, 12, device=device)

net = CNN().to(device)

# Detaching the parameters because we won't be calling Tensor.backward().
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


# Method 1: Jacobian contraction
def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2):
    # Compute J(x1)
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]

    # Compute J(x2)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]

    # Compute J(x1) @ J(x2).T
    result = torch.stack([torch.einsum('Naf,Mbf->NMab', j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
print(result.shape)
assert result.shape == (6, 3, 10, 10)

# The same kernel from plain autograd: one Jacobian row per output, per data point
def autograd_jacobian(x):
    model_params = list(net.parameters())
    out = net(x.unsqueeze(0)).squeeze(0)
    rows = [torch.cat([g.flatten() for g in torch.autograd.grad(out[o], model_params, retain_graph=True)])
            for o in range(out.numel())]
    return torch.stack(rows)


j_train = torch.stack([autograd_jacobian(x) for x in x_train])
j_test = torch.stack([autograd_jacobian(x) for x in x_test])
torch.testing.assert_close(result, torch.einsum('Naf,Mbf->NMab', j_train, j_test), atol=1e-4, rtol=1e-4)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute='full'):
    # Compute J(x1)
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]

    # Compute J(x2)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]

    # Compute J(x1) @ J(x2).T
    einsum_expr = None
    if compute == 'full':
        einsum_expr = 'Naf,Mbf->NMab'
    elif compute == 'trace':
        einsum_expr = 'Naf,Maf->NM'
    elif compute == 'diagonal':
        einsum_expr = 'Naf,Maf->NMa'
    else:
        assert False

    result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


full = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'full')
result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'trace')
print(result.shape)
torch.testing.assert_close(result, torch.einsum('NMaa->NM', full), atol=1e-4, rtol=1e-4)
diagonal = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'diagonal')
torch.testing.assert_close(diagonal, torch.diagonal(full, dim1=2, dim2=3), atol=1e-4, rtol=1e-4)


# Method 2: NTK-vector products
def empirical_ntk_ntk_vps(func, params, x1, x2, compute='full'):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            # This computes vec @ J(x2).T
            # `vec` is some unit vector (a single slice of the Identity matrix)
            vjps = vjp_fn(vec)
            # This computes J(X1) @ vjps
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        # Here's our identity matrix
        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    # get_ntk(x1, x2) computes the NTK for a single data point x1, x2; the vmaps pair every x1 with every x2
    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    if compute == 'full':
        return result
    if compute == 'trace':
        return torch.einsum('NMKK->NM', result)
    if compute == 'diagonal':
        return torch.einsum('NMKK->NMK', result)


result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(fnet_single, params, x_test, x_train)
result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train)
assert torch.allclose(result_from_jacobian_contraction, result_from_ntk_vps, atol=1e-5)
trace_vps = empirical_ntk_ntk_vps(fnet_single, params, x_test, x_train, 'trace')
torch.testing.assert_close(trace_vps, empirical_ntk_jacobian_contraction(fnet_single, params, x_test, x_train, 'trace'),
                           atol=1e-4, rtol=1e-4)
print("the NTK by jacobian contraction and by NTK-vector products agree")
