# "Parametrizations Tutorial" (PyTorch intermediate tutorial, Mario Lezcano): constraining weights with
# torch.nn.utils.parametrize.register_parametrization (Symmetric, Skew, CayleyMap, MatrixExponential),
# inspecting a parametrized module, parametrize.cached(), concatenating parametrizations, right_inverse
# initialisation, a pruning parametrization, and remove_parametrizations.  Added at the end: the
# register_parametrization docs' right_inverse returning two tensors (original0/original1), and a few
# training steps of an orthogonal layer.  Printed checks are also asserted.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize

torch.manual_seed(0)


def symmetric(X):
    return X.triu() + X.triu(1).transpose(-1, -2)


X = torch.rand(3, 3)
A = symmetric(X)
assert torch.allclose(A, A.T)  # A is symmetric
print(A)                       # Quick visual check


class LinearSymmetric(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(n_features, n_features))

    def forward(self, x):
        A = symmetric(self.weight)
        return x @ A


layer = LinearSymmetric(3)
out = layer(torch.rand(8, 3))


# --- Introduction to parametrizations
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
assert torch.allclose(A, A.T)  # A is symmetric
print(A)                       # Quick visual check


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
parametrize.register_parametrization(cnn, "weight", Skew())
# Print a few kernels
print(cnn.weight[0, 1])
print(cnn.weight[2, 2])
assert torch.allclose(cnn.weight, -cnn.weight.transpose(-1, -2))

# --- Inspecting a parametrized module
layer = nn.Linear(3, 3)
print(f"Unparametrized:\n{layer}")
parametrize.register_parametrization(layer, "weight", Symmetric())
print(f"\nParametrized:\n{layer}")
print(layer.parametrizations)
print(layer.parametrizations.weight)
print(layer.parametrizations.weight[0])
print(dict(layer.named_parameters()))
assert sorted(dict(layer.named_parameters())) == ["bias", "parametrizations.weight.original"]
print(layer.parametrizations.weight.original)
symmetric = Symmetric()
weight_orig = layer.parametrizations.weight.original
print(torch.dist(layer.weight, symmetric(weight_orig)))
assert torch.dist(layer.weight, symmetric(weight_orig)) == 0
assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
assert not parametrize.is_parametrized(layer, "bias")
assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)


# --- Caching the value of a parametrization
class NoisyParametrization(nn.Module):
    def forward(self, X):
        print("Computing the Parametrization")
        self.calls = getattr(self, "calls", 0) + 1
        return X


layer = nn.Linear(4, 4)
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
calls = layer.parametrizations.weight[0].calls  # registering checked the parametrization once
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
assert layer.parametrizations.weight[0].calls == calls + 3
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()
assert layer.parametrizations.weight[0].calls == calls + 4


# --- Concatenating parametrizations
class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)^{-1}(I - X)
        return torch.linalg.solve(self.Id + X, self.Id - X)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
print(torch.dist(X.T @ X, torch.eye(3)))  # X is orthogonal
assert torch.dist(X.T @ X, torch.eye(3)) < 1e-5


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(torch.dist(X.T @ X, torch.eye(3)))         # X is orthogonal
assert torch.dist(X.T @ X, torch.eye(3)) < 1e-5

layer_spd = nn.Linear(3, 3)
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print(torch.dist(X, X.T))                        # X is symmetric
print((torch.linalg.eigvalsh(X) > 0.).all())  # X is positive definite
assert torch.dist(X, X.T) < 1e-5 and (torch.linalg.eigvalsh(X) > 0.).all()
assert torch.allclose(torch.linalg.matrix_exp(layer_spd.parametrizations.weight[0](
    layer_spd.parametrizations.weight.original)), X)


# --- Initializing parametrizations
class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        # We assume that A is skew-symmetric
        # We take the upper-triangular elements, as these are those used in the forward
        return A.triu(1)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
X = torch.rand(3, 3)
X = X - X.T                             # X is now skew-symmetric
layer.weight = X                        # Initialize layer.weight to be X
print(torch.dist(layer.weight, X))      # layer.weight == X
assert torch.dist(layer.weight, X) < 1e-6


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # Assume X skew-symmetric
        # (I + X)^{-1}(I - X)
        return torch.linalg.solve(self.Id + X, self.Id - X)

    def right_inverse(self, A):
        # Assume A orthogonal
        # See https://en.wikipedia.org/wiki/Cayley_transform#Matrix_map
        # (I - A)(I + A)^{-1}
        return torch.linalg.solve(A + self.Id, self.Id - A)


layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
# Sample an orthogonal matrix with positive determinant
X = torch.empty(3, 3)
nn.init.orthogonal_(X)
if X.det() < 0.:
    X[0].neg_()
layer_orthogonal.weight = X
print(torch.dist(layer_orthogonal.weight, X))  # layer_orthogonal.weight == X
assert torch.dist(layer_orthogonal.weight, X) < 1e-5

layer_orthogonal.weight = nn.init.orthogonal_(layer_orthogonal.weight)


class PruningParametrization(nn.Module):
    def __init__(self, X, p_drop=0.2):
        super().__init__()
        # sample zeros with probability p_drop
        mask = torch.full_like(X, 1.0 - p_drop)
        self.mask = torch.bernoulli(mask)

    def forward(self, X):
        return X * self.mask

    def right_inverse(self, A):
        return A


layer = nn.Linear(3, 4)
X = torch.rand_like(layer.weight)
print(f"Initialization matrix:\n{X}")
parametrize.register_parametrization(layer, "weight", PruningParametrization(layer.weight))
layer.weight = X
print(f"\nInitialized weight:\n{layer.weight}")
assert torch.equal(layer.weight, X * layer.parametrizations.weight[0].mask)

# --- Removing parametrizations
layer = nn.Linear(3, 3)
print("Before:")
print(layer)
print(layer.weight)
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
skew_weight = layer.weight.detach().clone()
parametrize.remove_parametrizations(layer, "weight")
print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
print(layer)
print(layer.weight)
assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
assert torch.equal(layer.weight, skew_weight)

layer = nn.Linear(3, 3)
print("Before:")
print(layer)
print(layer.weight)
before = layer.weight.detach().clone()
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print("\nAfter. Same as Before:")
print(layer)
print(layer.weight)
assert torch.equal(layer.weight, before.triu(1))  # the original, as Skew.right_inverse stored it


# --- (register_parametrization docs) a right_inverse returning two tensors: original0, original1
class RankOne(nn.Module):
    def forward(self, x, y):
        # Form a rank 1 matrix multiplying two vectors
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z):
        # Project Z onto the rank 1 matrices
        U, S, Vh = torch.linalg.svd(Z, full_matrices=False)
        # Return rescaled singular vectors
        s0_sqrt = S[0].sqrt().unsqueeze(-1)
        return U[..., :, 0] * s0_sqrt, Vh[..., 0, :] * s0_sqrt


linear_rank_one = parametrize.register_parametrization(nn.Linear(4, 4), "weight", RankOne())
print(torch.linalg.matrix_rank(linear_rank_one.weight).item())  # 1
assert torch.linalg.matrix_rank(linear_rank_one.weight).item() == 1
orig = linear_rank_one.parametrizations.weight
print(orig.original0.shape, orig.original1.shape)
assert orig.original0.shape == (4,) and orig.original1.shape == (4,)
assert torch.allclose(linear_rank_one.weight, torch.outer(orig.original0, orig.original1))

# --- a few training steps of a layer kept orthogonal by its parametrization
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 1))
parametrize.register_parametrization(model[0], "weight", Skew())
parametrize.register_parametrization(model[0], "weight", MatrixExponential())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(32, 6), torch.randn(32, 1)
for step in range(20):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.6f}")
W = model[0].weight
assert torch.dist(W.T @ W, torch.eye(6)) < 1e-4
