# "Model ensembling" (PyTorch intermediate tutorial): an ensemble of MLPs run one by one and then
# vectorised with torch.func.stack_module_state, functional_call on a copy of the model moved to
# the meta device, and torch.vmap with in_dims (a different minibatch per model, or the same one
# for all), with the tutorial's torch.utils.benchmark.Timer comparison.  CPU instead of CUDA,
# smaller layers and fewer timing runs; the vmapped predictions are checked against the loop.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# Here's a simple MLP
class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


# Dummy MNIST-shaped data: minibatches of 64 images of 28 x 28, and an ensemble of 10 models
device = 'cpu'
num_models = 10

data = torch.randn(20, 64, 1, 28, 28, device=device)
targets = torch.randint(10, (1280,), device=device)

models = [SimpleMLP().to(device) for _ in range(num_models)]

# Option 1: a different minibatch for each model
minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]

# Option 2: the same minibatch for every model
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

# Stack each parameter (and buffer) of the models along a new leading dimension
from torch.func import stack_module_state

params, buffers = stack_module_state(models)

from torch.func import functional_call
import copy

# A "stateless" copy of one model: its parameters are meta tensors without storage
base_model = copy.deepcopy(models[0])
base_model = base_model.to('meta')


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension
assert [p.size(0) for p in params.values()] == [num_models] * 6
assert minibatches.shape == (num_models, 64, 1, 28, 28)  # minibatches have a leading 'num_models' dimension

from torch import vmap

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)

# in_dims=None for the data: the same minibatch goes to all 10 models
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)

# The stacked parameters are new leaves; the base model holds no data
assert all(p.is_leaf and p.requires_grad for p in params.values())
assert all(p.is_meta for p in base_model.parameters())

# Performance
from torch.utils.benchmark import Timer

without_vmap = Timer(
    stmt="[model(minibatch) for model, minibatch in zip(models, minibatches)]",
    globals=globals())
with_vmap = Timer(
    stmt="vmap(fmodel)(params, buffers, minibatches)",
    globals=globals())
print(f'Predictions without vmap {without_vmap.timeit(5)}')
print(f'Predictions with vmap {with_vmap.timeit(5)}')
