# "Python Custom Operators" (PyTorch advanced tutorial) and the torch.library low-level API of the
# "PyTorch Custom Operators Landing Page": torch.library.custom_op with mutates_args, register_fake,
# register_autograd with setup_context (the backward itself a custom op), torch.library.opcheck, a
# mutable op that writes its output argument, torch.compile(fullgraph=True) around them, calls through
# torch.ops.mylib.*, Library / define / impl, and register_vmap.  The tutorial crops and pastes with
# PIL through torchvision; here NumPy slicing does the same so nothing outside torch is needed, and
# opcheck gets smaller images.  Every result is checked, so running to the end is the test.
from typing import Sequence, Tuple

import numpy as np
import torch


def crop(pic, box):
    x0, y0, x1, y1 = box
    return torch.from_numpy(pic.cpu().numpy()[:, y0:y1, x0:x1].copy()).to(pic.device)


img = torch.ones(3, 64, 64)
img *= torch.linspace(0, 1, steps=64) * torch.linspace(0, 1, steps=64).unsqueeze(-1)
cropped_img = crop(img, (10, 10, 50, 50))
assert cropped_img.shape == (3, 40, 40)


# Wrap crop into a custom operator with a FakeTensor kernel, so that torch.compile treats it as opaque
@torch.library.custom_op("mylib::crop", mutates_args=())
def crop(pic: torch.Tensor, box: Sequence[int]) -> torch.Tensor:
    x0, y0, x1, y1 = box
    cropped = pic.cpu().numpy()[:, y0:y1, x0:x1]
    return torch.from_numpy(np.ascontiguousarray(cropped)).to(pic.device, pic.dtype)


# Use register_fake to add a FakeTensor kernel for the operator
@crop.register_fake
def _(pic, box):
    channels = pic.shape[0]
    x0, y0, x1, y1 = box
    return pic.new_empty(channels, y1 - y0, x1 - x0)


@torch.compile(fullgraph=True)
def f(img):
    return crop(img, (10, 10, 50, 50))


cropped_img = f(img)
torch.testing.assert_close(cropped_img, img[:, 10:50, 10:50])
torch.testing.assert_close(torch.ops.mylib.crop(img, (10, 10, 50, 50)), cropped_img)
# the fake kernel gives shapes without running the NumPy code
assert crop(img.to("meta"), (0, 0, 20, 10)).shape == (3, 10, 20)


# Training support: the gradient of crop pastes the output gradient into zeros; paste is a custom op too
@torch.library.custom_op("mylib::paste", mutates_args=())
def paste(im1: torch.Tensor, im2: torch.Tensor, coord: Sequence[int]) -> torch.Tensor:
    assert im1.device == im2.device
    assert im1.dtype == im2.dtype
    out = im1.cpu().numpy().copy()
    x0, y0 = coord
    out[:, y0:y0 + im2.shape[1], x0:x0 + im2.shape[2]] = im2.cpu().numpy()
    return torch.from_numpy(out).to(im1.device, im1.dtype)


@paste.register_fake
def _(im1, im2, coord):
    assert im1.device == im2.device
    assert im1.dtype == im2.dtype
    return torch.empty_like(im1)


def backward(ctx, grad_output):
    grad_input = grad_output.new_zeros(ctx.pic_shape)
    grad_input = paste(grad_input, grad_output, ctx.coords)
    return grad_input, None


def setup_context(ctx, inputs, output):
    pic, box = inputs
    ctx.coords = box[:2]
    ctx.pic_shape = pic.shape


crop.register_autograd(backward, setup_context=setup_context)

img = img.requires_grad_()
result = crop(img, (10, 10, 50, 50))
result.sum().backward()
# 1s in the cropped region, 0s elsewhere
expected = torch.zeros(3, 64, 64)
expected[:, 10:50, 10:50] = 1
torch.testing.assert_close(img.grad, expected)
assert result.grad_fn is not None

# Testing: opcheck checks the registration (schema, fake kernel, autograd registration)
examples = [
    [torch.randn(3, 16, 16), [0, 0, 10, 10]],
    [torch.randn(3, 21, 21, requires_grad=True), [10, 0, 20, 10]],
    [torch.randn(3, 20, 20, dtype=torch.double), [3, 4, 12, 10]],
    [torch.randn(3, 32, 32, requires_grad=True, dtype=torch.double), [3, 4, 12, 25]],
]

for example in examples:
    torch.library.opcheck(crop, example)
# the gradients are right too (opcheck does not check that)
pic = torch.randn(3, 8, 8, dtype=torch.double, requires_grad=True)
assert torch.autograd.gradcheck(lambda p: crop(p, [1, 2, 6, 7]), (pic,))
print("mylib::crop: fake kernel, autograd and opcheck")


# Mutable custom operators: numpy_sin writes into its output argument
@torch.library.custom_op("mylib::numpy_sin", mutates_args={"output"}, device_types="cpu")
def numpy_sin(input: torch.Tensor, output: torch.Tensor) -> None:
    assert input.device == output.device
    assert input.device.type == "cpu"
    input_np = input.numpy()
    output_np = output.numpy()
    np.sin(input_np, out=output_np)


@torch.compile(fullgraph=True)
def f(x):
    out = torch.empty(3)
    numpy_sin(x, out)
    return out


x = torch.randn(3)
y = f(x)
assert torch.allclose(y, x.sin())

example_inputs = [
    [torch.randn(3), torch.empty(3)],
    [torch.randn(0, 3), torch.empty(0, 3)],
    [torch.randn(1, 2, 3, 4, dtype=torch.double), torch.empty(1, 2, 3, 4, dtype=torch.double)],
]

for example in example_inputs:
    torch.library.opcheck(numpy_sin, example)
# called through torch.ops, the op still writes its output argument
out = torch.zeros(3)
assert torch.ops.mylib.numpy_sin(x, out) is None
assert torch.allclose(out, x.sin())
print("mylib::numpy_sin: mutates its output")

# The low-level API: define an operator, then implement it per device
torch.library.define("mylib::sin", "(Tensor x) -> Tensor")


@torch.library.impl("mylib::sin", "cpu")
def f(x):
    return torch.from_numpy(np.sin(x.numpy()))


x = torch.randn(3)
y = torch.ops.mylib.sin(x)
assert torch.allclose(y, x.sin())

# A Library object: a new namespace, an operator defined in it and its CPU kernel
my_lib = torch.library.Library("myops", "DEF")
my_lib.define("sum(Tensor self) -> Tensor")


def sum_cpu(self):
    return torch.from_numpy(np.asarray(self.numpy().sum(), dtype=self.numpy().dtype))


my_lib.impl("sum", sum_cpu, "CPU")
t = torch.arange(6.0).reshape(2, 3)
torch.testing.assert_close(torch.ops.myops.sum(t), torch.tensor(15.0))
torch.testing.assert_close(torch.ops.myops.sum.default(t), torch.tensor(15.0))

# A fragment of the mylib namespace (custom_op already registered ops there)
frag = torch.library.Library("mylib", "FRAGMENT")
frag.define("scale(Tensor x, float alpha) -> Tensor")
frag.impl("scale", lambda x, alpha: x * alpha, "CompositeExplicitAutograd")
torch.testing.assert_close(torch.ops.mylib.scale(t, 0.5), t * 0.5)
print("torch.library: define, impl and Library")


# torch.vmap support for a custom op: torch.library.register_vmap (the torch.library documentation's example)
def to_numpy(tensor):
    return tensor.cpu().numpy()


@torch.library.custom_op("mylib::numpy_cube", mutates_args=())
def numpy_cube(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    x_np = to_numpy(x)
    dx = torch.tensor(3 * x_np ** 2, device=x.device)
    return torch.tensor(x_np ** 3, device=x.device), dx


def numpy_cube_vmap(info, in_dims, x):
    result = numpy_cube(x)
    return result, (in_dims[0], in_dims[0])


torch.library.register_vmap(numpy_cube, numpy_cube_vmap)

x = torch.randn(3)
cube, dx = torch.vmap(numpy_cube)(x)
torch.testing.assert_close(cube, x ** 3)
torch.testing.assert_close(dx, 3 * x ** 2)


@torch.library.custom_op("mylib::numpy_mul", mutates_args=())
def numpy_mul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.tensor(to_numpy(x) * to_numpy(y), device=x.device)


@torch.library.register_vmap("mylib::numpy_mul")
def numpy_mul_vmap(info, in_dims, x, y):
    x_bdim, y_bdim = in_dims
    x = x.movedim(x_bdim, -1) if x_bdim is not None else x.unsqueeze(-1)
    y = y.movedim(y_bdim, -1) if y_bdim is not None else y.unsqueeze(-1)
    result = x * y
    result = result.movedim(-1, 0)
    return result, 0


x = torch.randn(3)
y = torch.randn(3)
torch.testing.assert_close(torch.vmap(numpy_mul)(x, y), x * y)
torch.testing.assert_close(torch.vmap(numpy_mul, in_dims=(0, None))(x, y), x.unsqueeze(1) * y)
print("torch.library.register_vmap")
