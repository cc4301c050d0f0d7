# PyTorch recipes on the CPU: "Automatic Mixed Precision" (torch.autocast with bfloat16, the
# torch.amp.GradScaler lines as the recipe has them, gradient clipping after unscale_, the checkpoint of
# model/optimizer/scaler), "What is a state_dict in PyTorch", "Saving and loading a general checkpoint in
# PyTorch", "Warmstarting model using parameters from a different model in PyTorch" (strict=False) and
# "Zeroing out gradients in PyTorch".  Changes: CUDA timing and memory statistics become wall-clock timing,
# float16 on CUDA becomes bfloat16 on the CPU, sizes are small, and a synthetic CIFAR-shaped dataset replaces
# torchvision's CIFAR10.  Printed facts are asserted.
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)

# ---------------------------------------------------------------- Automatic Mixed Precision
start_time = None


def start_timer():
    global start_time
    start_time = time.time()


def end_timer_and_print(local_msg):
    end_time = time.time()
    print("\n" + local_msg)
    print("Total execution time = {:.3f} sec".format(end_time - start_time))


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers))


batch_size = 64  # Try, for example, 128, 256, 513.
in_size = 128
out_size = 128
num_layers = 3
num_batches = 6
epochs = 2

device = 'cuda' if torch.cuda.is_available() else 'cpu'
amp_dtype = torch.float16 if device == 'cuda' else torch.bfloat16
torch.set_default_device(device)

# Creates data in default precision.
# The same data is used for both default and mixed precision trials below.
# You don't need to manually change inputs' ``dtype`` when enabling mixed precision.
data = [torch.randn(batch_size, in_size) for _ in range(num_batches)]
targets = [torch.randn(batch_size, out_size) for _ in range(num_batches)]

loss_fn = torch.nn.MSELoss()

torch.manual_seed(1)
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.01)

start_timer()
for epoch in range(epochs):
    for input, target in zip(data, targets):
        output = net(input)
        loss = loss_fn(output, target)
        loss.backward()
        opt.step()
        opt.zero_grad() # set_to_none=True here can modestly improve performance
    print(f"default precision epoch {epoch} loss {loss.item():.5f}")
end_timer_and_print("Default precision:")

for epoch in range(1):
    for input, target in zip(data, targets):
        # Runs the forward pass under ``autocast``.
        with torch.autocast(device_type=device, dtype=amp_dtype):
            output = net(input)
            # output is bfloat16 because linear layers ``autocast`` to bfloat16.
            assert output.dtype is amp_dtype

            loss = loss_fn(output, target)
            # loss is float32 because ``mse_loss`` layers ``autocast`` to float32.
            assert loss.dtype is torch.float32

        # Exits ``autocast`` before backward().
        # Backward passes under ``autocast`` are not recommended.
        # Backward ops run in the same ``dtype`` ``autocast`` chose for corresponding forward ops.
        loss.backward()
        assert net[0].weight.grad.dtype is torch.float32
        opt.step()
        opt.zero_grad() # set_to_none=True here can modestly improve performance
    print(f"autocast epoch {epoch} loss {loss.item():.5f}")

# Constructs a ``scaler`` once, at the beginning of the convergence run, using default arguments.
# If your network fails to converge with default ``GradScaler`` arguments, please file an issue.
# The same ``GradScaler`` instance should be used for the entire convergence run.
# If you perform multiple convergence runs in the same script, each run should use
# a dedicated fresh ``GradScaler`` instance. ``GradScaler`` instances are lightweight.
scaler = torch.amp.GradScaler(device)

for epoch in range(1):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=amp_dtype):
            output = net(input)
            loss = loss_fn(output, target)

        # Scales loss. Calls ``backward()`` on scaled loss to create scaled gradients.
        scaler.scale(loss).backward()

        # ``scaler.step()`` first unscales the gradients of the optimizer's assigned parameters.
        # If these gradients do not contain ``inf``s or ``NaN``s, optimizer.step() is then called,
        # otherwise, optimizer.step() is skipped.
        scaler.step(opt)

        # Updates the scale for next iteration.
        scaler.update()

        opt.zero_grad() # set_to_none=True here can modestly improve performance
    print(f"grad scaler epoch {epoch} loss {loss.item():.5f} scale {scaler.get_scale()}")

use_amp = True

torch.manual_seed(1)
net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device, enabled=use_amp)

start_timer()
for epoch in range(epochs):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=amp_dtype, enabled=use_amp):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad() # set_to_none=True here can modestly improve performance
    print(f"mixed precision epoch {epoch} loss {loss.item():.5f}")
end_timer_and_print("Mixed precision:")

for epoch in range(1):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=amp_dtype):
            output = net(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()

        # Unscales the gradients of optimizer's assigned parameters in-place
        scaler.unscale_(opt)

        # Since the gradients of optimizer's assigned parameters are now unscaled, clips as usual.
        # You may use the same value for max_norm here as you would without gradient scaling.
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.1)
        total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in net.parameters()]))
        assert total <= 0.1 + 1e-4, total

        scaler.step(opt)
        scaler.update()
        opt.zero_grad() # set_to_none=True here can modestly improve performance
    print(f"clipped epoch {epoch} loss {loss.item():.5f}")

checkpoint = {"model": net.state_dict(),
              "optimizer": opt.state_dict(),
              "scaler": scaler.state_dict()}
# Write checkpoint as desired, e.g.,
torch.save(checkpoint, "filename")

# Read checkpoint as desired, e.g.,
checkpoint = torch.load("filename", map_location=device)
net.load_state_dict(checkpoint["model"])
opt.load_state_dict(checkpoint["optimizer"])
scaler.load_state_dict(checkpoint["scaler"])
print(scaler.state_dict())
assert scaler.get_scale() == checkpoint["scaler"]["scale"]

with torch.autocast(device_type=device, dtype=amp_dtype):
    x = torch.randn(4, 8)
    w = torch.randn(8, 8)
    assert (x @ w).dtype is amp_dtype and torch.softmax(x, 1).dtype is torch.float32
    assert torch.is_autocast_enabled(device)
    with torch.autocast(device_type=device, enabled=False):
        assert (x @ w).dtype is torch.float32
assert not torch.is_autocast_enabled(device)
torch.set_default_device('cpu')


# ---------------------------------------------------------------- What is a state_dict
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(0)
net = Net()
print(net)
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

# Print model's state_dict
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
assert list(net.state_dict()) == ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                  "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]

print()

# Print optimizer's state_dict
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])
assert optimizer.state_dict()["param_groups"][0]["params"] == list(range(10))
assert optimizer.state_dict()["param_groups"][0]["momentum"] == 0.9

# ---------------------------------------------------------------- Zeroing out gradients (synthetic CIFAR)
class SyntheticCIFAR(torch.utils.data.Dataset):
    """CIFAR10-shaped images (3x32x32) whose class shifts one colour channel, so a network can learn it."""

    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, 10, (n,), generator=g)
        self.images = torch.randn(n, 3, 32, 32, generator=g) * 0.5
        self.images[:, 0] += (self.labels.float() / 5 - 1).view(-1, 1, 1)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


trainset = SyntheticCIFAR(256)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=16, shuffle=True, num_workers=0)
criterion = nn.CrossEntropyLoss()

for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 8 == 7:    # print every 8 mini-batches
            print('[%d, %5d] loss: %.3f' %
                  (epoch + 1, i + 1, running_loss / 8))
            running_loss = 0.0

print('Finished Training')
# zero_grad(set_to_none=True) (the default) drops the gradients; set_to_none=False keeps zero tensors
optimizer.zero_grad(set_to_none=False)
assert torch.count_nonzero(net.fc3.weight.grad) == 0
optimizer.zero_grad()
assert net.fc3.weight.grad is None

# ---------------------------------------------------------------- Saving and loading a general checkpoint
EPOCH = 5
PATH = "model.pt"
LOSS = 0.4

torch.save({
            'epoch': EPOCH,
            'model_state_dict': net.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': LOSS,
            }, PATH)

model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

checkpoint = torch.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']

model.eval()
# - or -
model.train()
assert epoch == 5 and loss == 0.4 and torch.equal(model.fc2.bias, net.fc2.bias)
assert torch.equal(optimizer.state_dict()["state"][0]["momentum_buffer"],
                   checkpoint['optimizer_state_dict']["state"][0]["momentum_buffer"])
os.remove(PATH)

# resume training from the checkpoint: the momentum buffers came back, so the loss keeps falling
for epoch in range(epoch, epoch + 1):
    running_loss = 0.0
    for i, (inputs, labels) in enumerate(trainloader):
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print('resumed epoch %d loss: %.3f' % (epoch + 1, running_loss / len(trainloader)))


# ---------------------------------------------------------------- Warmstarting from a different model
class NetA(nn.Module):
    def __init__(self):
        super(NetA, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


netA = NetA()


class NetB(nn.Module):
    def __init__(self):
        super(NetB, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


netB = NetB()

# Specify a path to save to
PATH = "model.pt"

torch.save(netA.state_dict(), PATH)

result = netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result)
assert torch.equal(netB.conv1.weight, netA.conv1.weight)

# a model with a different head: the shared layers load, the new ones are reported
class NetC(NetB):
    def __init__(self):
        super().__init__()
        del self.fc3
        self.head = nn.Linear(84, 2)


netC = NetC()
result = netC.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result.missing_keys, result.unexpected_keys)
assert result.missing_keys == ["head.weight", "head.bias"] and result.unexpected_keys == ["fc3.weight", "fc3.bias"]
try:
    netC.load_state_dict(torch.load(PATH, weights_only=True))
    raise AssertionError("strict loading should fail")
except RuntimeError as e:
    print(str(e).splitlines()[0])
os.remove(PATH)
