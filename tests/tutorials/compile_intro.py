# "Introduction to torch.compile" (PyTorch intermediate tutorial, William Wen), run on the CPU: torch.compile
# of functions (call and decorator) and of an nn.Module, the eager-vs-compiled evaluation and training
# comparison with mode="reduce-overhead" and torch._dynamo.reset(), data-dependent control flow, a non-PyTorch
# function (scipy.fft.dct) inside a compiled function, and fullgraph=True.  Changes: CUDA events become
# time.perf_counter, densenet121 (torchvision) becomes a small convolutional classifier, sizes and iterations
# are small; the FX sections (torch.fx.symbolic_trace, the custom FX backend, torch._dynamo.export) are left
# out, as is the TorchScript comparison (its printed results depend on what tracing captures).
# Every call names backend="eager": inductor's C++ builds take about a minute of CPU under real torch
# (torchplug runs every backend eagerly, the default one included).  Compiled results are asserted equal to eager ones.
import time
import warnings

import torch

torch.manual_seed(0)

gpu_ok = False
if torch.cuda.is_available():
    device_cap = torch.cuda.get_device_capability()
    if device_cap in ((7, 0), (8, 0), (9, 0)):
        gpu_ok = True

if not gpu_ok:
    warnings.warn(
        "GPU is not NVIDIA V100, A100, or H100. Speedup numbers may be lower "
        "than expected."
    )


def foo(x, y):
    a = torch.sin(x)
    b = torch.cos(y)
    return a + b
opt_foo1 = torch.compile(foo, backend="eager")
x, y = torch.randn(10, 10), torch.randn(10, 10)
print(opt_foo1(x, y))
assert torch.allclose(opt_foo1(x, y), foo(x, y), atol=1e-6)


@torch.compile(backend="eager")
def opt_foo2(x, y):
    a = torch.sin(x)
    b = torch.cos(y)
    return a + b
print(opt_foo2(torch.randn(10, 10), torch.randn(10, 10)))
assert torch.allclose(opt_foo2(x, y), foo(x, y), atol=1e-6)


class MyModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(100, 10)

    def forward(self, x):
        return torch.nn.functional.relu(self.lin(x))

mod = MyModule()
mod.compile(backend="eager")
inp = torch.randn(10, 100)
print(mod(inp))
opt_mod = torch.compile(mod, backend="eager")
print(opt_mod(inp))
assert torch.allclose(opt_mod(inp), torch.nn.functional.relu(mod.lin(inp)))


# Returns the result of running `fn()` and the time it took for `fn()` to run, in seconds
# (the tutorial uses CUDA events; on the CPU a wall clock does).
def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


# Generates random input and targets data for the model, where `b` is batch size.
def generate_data(b):
    return (
        torch.randn(b, 3, 32, 32).to(torch.float32),
        torch.randint(10, (b,)),
    )

N_ITERS = 4


def init_model():
    # densenet121 in the tutorial; any classifier of (b, 3, H, W) images serves
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10),
    ).to(torch.float32)


def evaluate(mod, inp):
    return mod(inp)

model = init_model()

# Reset since we are using a different mode.
import torch._dynamo
torch._dynamo.reset()

evaluate_opt = torch.compile(evaluate, mode="reduce-overhead", backend="eager")

inp = generate_data(16)[0]
with torch.no_grad():
    print("eager:", timed(lambda: evaluate(model, inp))[1])
    print("compile:", timed(lambda: evaluate_opt(model, inp))[1])
    assert torch.allclose(evaluate(model, inp), evaluate_opt(model, inp), atol=1e-5)

eager_times = []
for i in range(N_ITERS):
    inp = generate_data(16)[0]
    with torch.no_grad():
        _, eager_time = timed(lambda: evaluate(model, inp))
    eager_times.append(eager_time)
    print(f"eager eval time {i}: {eager_time}")

print("~" * 10)

compile_times = []
for i in range(N_ITERS):
    inp = generate_data(16)[0]
    with torch.no_grad():
        _, compile_time = timed(lambda: evaluate_opt(model, inp))
    compile_times.append(compile_time)
    print(f"compile eval time {i}: {compile_time}")
print("~" * 10)

import numpy as np
eager_med = np.median(eager_times)
compile_med = np.median(compile_times)
speedup = eager_med / compile_med
assert speedup > 0
print(f"(eval) eager median: {eager_med}, compile median: {compile_med}, speedup: {speedup}x")
print("~" * 10)

torch.manual_seed(0)
model = init_model()
opt = torch.optim.Adam(model.parameters())
losses = []


def train(mod, data):
    opt.zero_grad(True)
    pred = mod(data[0])
    loss = torch.nn.CrossEntropyLoss()(pred, data[1])
    loss.backward()
    opt.step()
    losses.append(loss.item())

torch.manual_seed(1)
batches = [generate_data(16) for _ in range(N_ITERS)]
eager_times = []
for i in range(N_ITERS):
    inp = batches[i]
    _, eager_time = timed(lambda: train(model, inp))
    eager_times.append(eager_time)
    print(f"eager train time {i}: {eager_time} loss {losses[-1]:.5f}")
print("~" * 10)

torch.manual_seed(0)
model = init_model()
opt = torch.optim.Adam(model.parameters())
train_opt = torch.compile(train, mode="reduce-overhead", backend="eager")
eager_losses, losses = losses, []

compile_times = []
for i in range(N_ITERS):
    inp = batches[i]
    _, compile_time = timed(lambda: train_opt(model, inp))
    compile_times.append(compile_time)
    print(f"compile train time {i}: {compile_time} loss {losses[-1]:.5f}")
print("~" * 10)
assert np.allclose(losses, eager_losses, rtol=1e-4)  # the same model trained the same way

eager_med = np.median(eager_times)
compile_med = np.median(compile_times)
speedup = eager_med / compile_med
print(f"(train) eager median: {eager_med}, compile median: {compile_med}, speedup: {speedup}x")
print("~" * 10)


def f1(x, y):
    if x.sum() < 0:
        return -y
    return y


# Test that `fn1` and `fn2` return the same result, given the same arguments `args`.
def test_fns(fn1, fn2, args):
    out1 = fn1(*args)
    out2 = fn2(*args)
    return torch.allclose(out1, out2)

inp1 = torch.randn(5, 5)
inp2 = torch.randn(5, 5)

# Reset since we are using a different mode.
torch._dynamo.reset()

compile_f1 = torch.compile(f1, backend="eager")
print("compile 1, 1:", test_fns(f1, compile_f1, (inp1, inp2)))
print("compile 1, 2:", test_fns(f1, compile_f1, (-inp1, inp2)))
print("~" * 10)
assert test_fns(f1, compile_f1, (inp1, inp2)) and test_fns(f1, compile_f1, (-inp1, inp2))


def f2(x, y):
    return x + y

inp1 = torch.randn(5, 5)
inp2 = 3

compile_f2 = torch.compile(f2, backend="eager")
print("compile 2:", test_fns(f2, compile_f2, (inp1, inp2)))
print("~" * 10)
assert test_fns(f2, compile_f2, (inp1, inp2))

import scipy
import scipy.fft


def f3(x):
    x = x * 2
    x = scipy.fft.dct(x.numpy())
    x = torch.from_numpy(x)
    x = x * 2
    return x

inp2 = torch.randn(5, 5)
compile_f3 = torch.compile(f3, backend="eager")
print("compile 3:", test_fns(f3, compile_f3, (inp2,)))
assert test_fns(f3, compile_f3, (inp2,))


def bar(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

# Reset since we are using a different backend.
torch._dynamo.reset()
explain_output = torch._dynamo.explain(bar)(torch.randn(10), torch.randn(10))
print(explain_output)
assert explain_output.graph_count >= 0

import traceback as tb
opt_bar = torch.compile(bar, fullgraph=True, backend="eager")
try:
    opt_bar(torch.randn(10), torch.randn(10))
except:  # noqa: E722 - as the tutorial has it: torch's tracer refuses the data-dependent branch
    tb.print_exc()

opt_model = torch.compile(init_model(), fullgraph=True, backend="eager")
print(opt_model(generate_data(16)[0]).shape)
torch.compiler.reset()
