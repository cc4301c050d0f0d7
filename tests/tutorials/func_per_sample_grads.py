# "Per-sample-gradients" (PyTorch intermediate tutorial): one gradient per sample of a batch, first
# with a loop of torch.autograd.grad calls and then with torch.func: functional_call on detached
# parameters, grad of the single-sample loss, and vmap with in_dims=(None, None, 0, 0); the two
# are compared, with the tutorial's float64 check and torch.utils.benchmark.Timer comparison.
# CPU instead of CUDA, a narrower CNN, a smaller batch and fewer timing runs.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# Here's a simple CNN and loss function:
class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.fc1 = nn.Linear(2304, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


# A batch of dummy MNIST-shaped data
device = 'cpu'

num_models = 10
batch_size = 16
data = torch.randn(batch_size, 1, 28, 28, device=device)

targets = torch.randint(10, (16,), device=device)

# Regular training: one 'average' gradient for the whole minibatch
model = SimpleCNN().to(device=device)
predictions = model(data)  # move the entire mini-batch through the model

loss = loss_fn(predictions, targets)
loss.backward()  # back propagate the 'average' gradient of this mini-batch
print(f"minibatch loss {loss.item():.6f}")


# Per-sample gradients, one forward and backward pass per sample
def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)

    prediction = model(sample)
    loss = loss_fn(prediction, target)

    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """ manually process each sample with per sample gradient """
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[0].shape)  # one gradient of conv1.weight per sample
assert per_sample_grads[0].shape == (batch_size, 8, 1, 3, 3)
# The mean of the per-sample gradients is the minibatch gradient
for g, p in zip(per_sample_grads, model.parameters()):
    torch.testing.assert_close(g.mean(0), p.grad, atol=1e-5, rtol=1e-4)

# The efficient way: function transforms
from torch.func import functional_call, vmap, grad

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)

    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
assert list(ft_per_sample_grads) == [k for k, _ in model.named_parameters()]


# A float64 baseline for a more precise comparison
def compute_grad_fp64(sample, target):
    sample_fp64 = sample.to(torch.float64)
    target_fp64 = target

    model_fp64 = SimpleCNN().to(device=device)
    with torch.no_grad():
        for param_fp32, param_fp64 in zip(model.parameters(), model_fp64.parameters()):
            param_fp64.copy_(param_fp32.to(torch.float64))

    sample_fp64 = sample_fp64.unsqueeze(0)  # prepend batch dimension
    target_fp64 = target_fp64.unsqueeze(0)

    prediction = model_fp64(sample_fp64)
    loss = loss_fn(prediction, target_fp64)

    return torch.autograd.grad(loss, list(model_fp64.parameters()))


for i, (per_sample_grad, ft_per_sample_grad) in enumerate(
    zip(per_sample_grads, ft_per_sample_grads.values())
):
    is_close = torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    if not is_close:
        abs_diff = (per_sample_grad - ft_per_sample_grad).abs()
        print(f"Gradient {i} mismatch: max absolute difference {abs_diff.max().item()}")
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)

# The tutorial's float64 baseline, as written, converts the sample but not the model (a fresh SimpleCNN is
# float32), so the convolution refuses the mixed dtypes; the tutorial catches and prints that error.
try:
    fp64_grads = compute_grad_fp64(data[0], targets[0])
except RuntimeError as e:
    print(f"  Error computing float64 baseline: {e}")
    assert str(e).startswith("Input type (double) and bias type (float) should be the same")
else:
    raise AssertionError("a float64 sample through a float32 model must fail")

def get_perf(first, first_descriptor, second, second_descriptor):
    """takes torch.benchmark objects and compares delta of second vs first."""
    second_res = second.times[0]
    first_res = first.times[0]

    gain = (first_res - second_res) / first_res
    if gain < 0:
        gain *= -1
    final_gain = gain * 100

    print(f"Performance delta: {final_gain:.4f} percent improvement with {first_descriptor} ")


from torch.utils.benchmark import Timer

without_vmap = Timer(stmt="compute_sample_grads(data, targets)", globals=globals())
with_vmap = Timer(stmt="ft_compute_sample_grad(params, buffers, data, targets)", globals=globals())
no_vmap_timing = without_vmap.timeit(2)
with_vmap_timing = with_vmap.timeit(2)

print(f'Per-sample-grads without vmap {no_vmap_timing}')
print(f'Per-sample-grads with vmap {with_vmap_timing}')

get_perf(with_vmap_timing, "vmap", no_vmap_timing, "no vmap")
