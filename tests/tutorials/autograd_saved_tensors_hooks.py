# "Hooks for autograd saved tensors" (PyTorch intermediate tutorial), with the "Hooks for saved tensors"
# section of the autograd mechanics note: the _saved_* / _raw_saved_* attributes of a grad_fn,
# SavedTensor.register_hooks, torch.autograd.graph.saved_tensors_hooks with pack hooks returning any
# Python object, save_on_cpu, and packing to temporary files with torch.save / torch.load.
# The tutorial prints its results; here each is also asserted, so running to the end is the check.
import os
import tempfile
import uuid

import torch
import torch.nn as nn

torch.manual_seed(0)

# --- Saved tensors: y = a * b saves a and b
a = torch.randn(5, requires_grad=True)
b = torch.ones(5, requires_grad=True)
y = a * b
print(y.grad_fn._saved_self)
print(y.grad_fn._saved_other)


def f(x):
    return x * x


x = torch.randn(5, requires_grad=True)
y = f(f(f(x)))

# --- Packing / unpacking: inputs come back as the very same object, an output does not
a = torch.randn(5, requires_grad=True)
b = torch.ones(5, requires_grad=True)
y = a * b
print(y.grad_fn._saved_self is a)   # True
print(y.grad_fn._saved_other is b)  # True
assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b

a = torch.randn(5, requires_grad=True)
y = torch.exp(a)
print(y.grad_fn._saved_result.equal(y))  # True
print(y.grad_fn._saved_result is y)      # False
assert y.grad_fn._saved_result.equal(y) and y.grad_fn._saved_result is not y


# --- Saved tensors hooks
calls = []


def pack_hook(x):
    print("Packing", x)
    calls.append("pack")
    return x


def unpack_hook(x):
    print("Unpacking", x)
    calls.append("unpack")
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
assert calls == ["pack", "pack", "unpack", "unpack"], calls

x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
    y = torch.pow(x, 2)
y.sum().backward()
assert (x.grad.equal(2 * x))

# Returning an int: the index of a Python list
storage = []


def pack(x):
    storage.append(x)
    return len(storage) - 1


def unpack(x):
    return storage[x]


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
assert (x.grad.equal(2 * x))


# Returning a tuple: some tensor and a function to unpack it
def pack(x):
    delta = torch.randn(*x.size())
    return x - delta, lambda x: x + delta


def unpack(packed):
    x, f = packed
    return f(x)


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
assert (torch.allclose(x.grad, 2 * x))

# Returning a str: the repr of the tensor
x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda x: repr(x), lambda x: eval("torch." + x)):
    y = x * x
y.sum().backward()
assert (torch.all(x.grad - 2 * x <= 1e-4))


# --- Saving tensors to CPU
def pack_hook(x):
    return (x.device, x.cpu())


def unpack_hook(packed):
    device, tensor = packed
    return tensor.to(device)


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
assert torch.allclose(x.grad, (2 * x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5))

    def forward(self, x):
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            # some computation
            return self.w * x


x = torch.randn(5)
model = Model()
loss = model(x).sum()
loss.backward()
assert torch.equal(model.w.grad, x)


class SaveToCpu(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            return self.module(*args, **kwargs)


model = nn.Sequential(
    nn.Linear(10, 100),
    SaveToCpu(nn.Linear(100, 100)),
    nn.Linear(100, 10),
)
x = torch.randn(10)
loss = model(x).sum()
loss.backward()
print("save_on_cpu loss", loss.item())
assert model[1].module.weight.grad.shape == (100, 100)

# --- Saving tensors to disk.  The "incorrect version" deletes the file on the first unpack, so a second
# access of the saved tensor fails.
tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


def pack_hook(tensor):
    name = os.path.join(tmp_dir, str(uuid.uuid4()))
    torch.save(tensor, name)
    return name


def unpack_hook(name):
    tensor = torch.load(name)
    os.remove(name)
    return tensor


x = torch.ones(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2)
print(y.grad_fn._saved_self)
try:
    print(y.grad_fn._saved_self)
    print("Double access succeeded!")
    double_access = True
except:  # noqa: E722 - as the tutorial has it
    print("Double access failed!")
    double_access = False
assert not double_access


class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


def pack_hook(tensor):
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    return temp_file


def unpack_hook(temp_file):
    return torch.load(temp_file.name)


leaked = set(os.listdir(tmp_dir))  # what the incorrect version left behind
x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2)
assert set(os.listdir(tmp_dir)) > leaked
assert torch.equal(y.grad_fn._saved_self, x) and torch.equal(y.grad_fn._saved_self, x)  # unpack twice is fine
y.sum().backward()
assert torch.allclose(x.grad, 2 * x)
del y
assert set(os.listdir(tmp_dir)) == leaked  # freeing the graph removed the files

# Registering hooks on one saved tensor (autograd mechanics note): pack runs at once, unpack on each access
events = []
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(lambda t: (events.append("pack"), t)[1],
                                         lambda t: (events.append("unpack"), t)[1])
assert events == ["pack"]
assert torch.equal(y.grad_fn._saved_self, x)
y.sum().backward()
assert events == ["pack", "unpack", "unpack"], events
try:
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    raise AssertionError("register_hooks after backward should fail")
except RuntimeError as e:
    print("register_hooks after backward:", str(e).splitlines()[0])

# Only save on disk tensors that have size >= 1000
SAVE_ON_DISK_THRESHOLD = 1000


def pack_hook(x):
    if x.numel() < SAVE_ON_DISK_THRESHOLD:
        return x
    temp_file = SelfDeletingTempFile()
    torch.save(x, temp_file.name)
    return temp_file


def unpack_hook(tensor_or_sctf):
    if isinstance(tensor_or_sctf, torch.Tensor):
        return tensor_or_sctf
    return torch.load(tensor_or_sctf.name)


class SaveToDisk(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            return self.module(*args, **kwargs)


net = nn.DataParallel(SaveToDisk(Model()))
big = nn.Sequential(nn.Linear(40, 40), SaveToDisk(nn.Sequential(nn.Linear(40, 40), nn.Tanh())), nn.Linear(40, 1))
opt = torch.optim.SGD(big.parameters(), lr=0.05)
data, target = torch.randn(64, 40), torch.randn(64, 1)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(big(data), target)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
assert set(os.listdir(tmp_dir)) == leaked
tmp_dir_obj.cleanup()
