# PyTorch recipes "Changing default device" and "Reasoning about Shapes in PyTorch".  This machine has no
# CUDA, so the recipe's 'cuda' is the best device available (CUDA when present, else the CPU); the device
# context manager and set_default_device are also exercised with the meta device.  The shapes recipe runs
# a convolution on meta tensors (the huge one included: nothing is allocated) and prints every layer's
# output shape with forward hooks; the printed values are asserted too.
import timeit

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# --- Changing default device
USE_CUDA = torch.cuda.is_available()

mod = torch.nn.Linear(20, 30)
if USE_CUDA:
    mod.cuda()

device = 'cpu'
if USE_CUDA:
    device = 'cuda'
inp = torch.randn(128, 20, device=device)
print(mod(inp).device)
assert mod(inp).device.type == device

with torch.device(device):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device)
    print(mod(torch.randn(128, 20)).device)
    assert mod.weight.device.type == device and torch.randn(2).device.type == device

with torch.device('meta'):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device)
    print(mod(torch.randn(128, 20)).device)
    assert mod.weight.device.type == 'meta' and torch.zeros(3).device.type == 'meta'
    assert torch.tensor([1.0, 2.0]).device.type == 'meta' and torch.arange(4).device.type == 'meta'
assert torch.zeros(3).device.type == 'cpu'  # the context restored the previous default

torch.set_default_device(device)
mod = torch.nn.Linear(20, 30)
print(mod.weight.device)
print(mod(torch.randn(128, 20)).device)
print(torch.get_default_device())
assert torch.get_default_device().type == device

torch.set_default_device(torch.device('meta'))
print(torch.get_default_device(), torch.ones(2, 2).device, torch.empty(3).device)
assert torch.get_default_device() == torch.device('meta') and torch.empty(3).is_meta
with torch.device('cpu'):  # the context manager wins over the global default
    assert torch.ones(1).device.type == 'cpu'
assert torch.ones(1).is_meta
torch.set_default_device('cpu')
assert torch.ones(1).device.type == 'cpu' and torch.get_default_device() == torch.device('cpu')

# --- Reasoning about shapes
t = torch.rand(2, 3, 10, 10, device="meta")
conv = torch.nn.Conv2d(3, 5, 2, device="meta")
start = timeit.default_timer()
out = conv(t)
end = timeit.default_timer()

print(out)
print(f"Time taken: {end-start}")
assert out.shape == (2, 5, 9, 9) and out.is_meta

t_large = torch.rand(2**10, 3, 2**16, 2**16, device="meta")
start = timeit.default_timer()
out = conv(t_large)
end = timeit.default_timer()

print(out)
print(f"Time taken: {end-start}")
assert out.shape == (2**10, 5, 2**16 - 1, 2**16 - 1) and out.is_meta
assert end - start < 1.0  # nothing was materialized


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1) # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


shapes = []


def fw_hook(module, input, output):
    print(f"Shape of output to {module} is {output.shape}.")
    shapes.append((type(module).__name__, tuple(output.shape)))


# Any tensor created within this torch.device context manager will be
# on the meta device.
with torch.device("meta"):
    net = Net()
    inp = torch.randn((1024, 3, 32, 32))

for name, layer in net.named_modules():
    layer.register_forward_hook(fw_hook)

out = net(inp)
assert shapes == [("Conv2d", (1024, 6, 28, 28)), ("MaxPool2d", (1024, 6, 14, 14)), ("Conv2d", (1024, 16, 10, 10)),
                  ("MaxPool2d", (1024, 16, 5, 5)), ("Linear", (1024, 120)), ("Linear", (1024, 84)),
                  ("Linear", (1024, 10)), ("Net", (1024, 10))], shapes
assert out.is_meta

# The same network materialized on the CPU from the shapes found above, and trained a little
net = net.to_empty(device="cpu")
for m in net.modules():
    if hasattr(m, "reset_parameters"):
        m.reset_parameters()
shapes.clear()
x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
assert shapes[-1] == ("Net", (16, 10))
