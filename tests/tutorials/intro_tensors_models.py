# "Introduction to PyTorch" (YouTube series): "Introduction to PyTorch Tensors", "The Fundamentals of
# Autograd" (without its autograd.profiler section) and "Building Models with PyTorch".
import math

import numpy as np
import torch

torch.manual_seed(1729)
x = torch.empty(3, 4)
print(type(x))
zeros = torch.zeros(2, 3)
ones = torch.ones(2, 3)
random1 = torch.rand(2, 3)
print(zeros, ones, random1)
torch.manual_seed(1729)
random2 = torch.rand(2, 3)
print(random2)
x = torch.empty(2, 2, 3)
print(x.shape)
empty_like_x = torch.empty_like(x)
zeros_like_x = torch.zeros_like(x)
ones_like_x = torch.ones_like(x)
rand_like_x = torch.rand_like(x)
print(rand_like_x.shape)
some_constants = torch.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
some_integers = torch.tensor((2, 3, 5, 7, 11, 13, 17, 19))
more_integers = torch.tensor(((2, 4, 6), [3, 6, 9]))
print(some_constants, some_integers, more_integers)
a = torch.ones((2, 3), dtype=torch.int16)
b = torch.rand((2, 3), dtype=torch.float64) * 20.
c = b.to(torch.int32)
print(a, b, c)
ones = torch.zeros(2, 2) + 1
twos = torch.ones(2, 2) * 2
threes = (torch.ones(2, 2) * 7 - 1) / 2
fours = twos ** 2
sqrt2s = twos ** 0.5
print(ones, twos, threes, fours, sqrt2s)
powers2 = twos ** torch.tensor([[1, 2], [3, 4]])
fives = ones + fours
dozens = threes * fours
print(powers2, fives, dozens)
rand = torch.rand(2, 4)
doubled = rand * (torch.ones(1, 4) * 2)
a = torch.ones(4, 3, 2)
b = a * torch.rand(3, 2)
c = a * torch.rand(3, 1)
d = a * torch.rand(1, 2)
print(b.shape, c.shape, d.shape)
a = torch.rand(2, 4) * 2 - 1
print(torch.abs(a), torch.ceil(a), torch.floor(a), torch.clamp(a, -0.5, 0.5))
angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
sines = torch.sin(angles)
inverses = torch.asin(sines)
print(angles, sines, inverses)
b = torch.tensor([1, 5, 11])
c = torch.tensor([2, 7, 10])
print(torch.bitwise_xor(b, c))
d = torch.tensor([[1., 2.], [3., 4.]])
e = torch.ones(1, 2)
print(torch.eq(d, e))
print(torch.max(d), torch.max(d).item(), torch.mean(d), torch.std(d), torch.prod(d), torch.unique(torch.tensor([1, 2, 1, 2, 1, 2])))
v1 = torch.tensor([1., 0., 0.])
v2 = torch.tensor([0., 1., 0.])
m1 = torch.rand(2, 2)
m2 = torch.tensor([[3., 0.], [0., 3.]])
print(torch.linalg.cross(v2, v1))
m3 = torch.linalg.matmul(m1, m2)
print(m3, torch.linalg.svd(m3)[1])
a = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
print(torch.sin(a), a)
torch.sin_(a)
print(a)
b = torch.tensor([[0.2, 0.3], [0.4, 0.5]])
b.mul_(b)
print(b)
a = torch.rand(2, 2)
b = torch.rand(2, 2)
c = torch.zeros(2, 2)
old_id = id(c)
d = torch.matmul(a, b, out=c)
print(c, id(c) == old_id, id(d) == old_id)
torch.rand(2, 2, out=c)
a = torch.ones(2, 2)
b = a.clone()
assert b is not a
print(torch.eq(a, b))
a = torch.rand(2, 2, requires_grad=True)
b = a.clone()
c = a.detach().clone()
print(b, c)
a = torch.rand(3, 226, 226)
b = a.unsqueeze(0)
print(a.shape, b.shape)
c = torch.rand(1, 1, 1, 1, 1)
print(c, c.squeeze().shape)
a = torch.ones(4, 3, 2)
c = a * torch.rand(3, 1)
a = torch.ones(4, 3, 2)
b = torch.rand(3)
c = b.unsqueeze(1)
print((a * c).shape)
batch_me = torch.rand(3, 226, 226)
batch_me.unsqueeze_(0)
print(batch_me.shape)
output3d = torch.rand(6, 20, 20)
input1d = output3d.reshape(6 * 20 * 20)
print(input1d.shape, torch.reshape(output3d, (6 * 20 * 20,)).shape)
numpy_array = np.ones((2, 3))
pytorch_tensor = torch.from_numpy(numpy_array)
numpy_array[1, 1] = 23
print(pytorch_tensor)
pytorch_rand = torch.rand(2, 3)
numpy_rand = pytorch_rand.numpy()
pytorch_rand[1, 1] = 17
print(numpy_rand)

# --- The Fundamentals of Autograd
a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
b = torch.sin(a)
c = 2 * b
d = c + 1
out = d.sum()
print('d:')
print(d.grad_fn)
print(d.grad_fn.next_functions)
print(d.grad_fn.next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print('\nc:')
print(c.grad_fn)
print('\nb:')
print(b.grad_fn)
print('\na:')
print(a.grad_fn)
out.backward()
print(a.grad)
BATCH_SIZE = 16
DIM_IN = 1000
HIDDEN_SIZE = 100
DIM_OUT = 10


class TinyModel(torch.nn.Module):
    def __init__(self):
        super(TinyModel, self).__init__()
        self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
model = TinyModel()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad)
optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
prediction = model(some_input)
loss = (ideal_output - prediction).pow(2).sum()
print("tiny loss", loss.item())
loss.backward()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])
optimizer.step()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])
for i in range(0, 5):
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()
    print("tiny loss", loss.item())
print(model.layer2.weight.grad[0][0:10])
optimizer.zero_grad(set_to_none=False)
print(model.layer2.weight.grad[0][0:10])
a = torch.ones(2, 3, requires_grad=True)
b1 = 2 * a
a.requires_grad = False
b2 = 2 * a
print(b1, b2)
c1 = torch.ones(2, 3, requires_grad=True) + torch.ones(2, 3, requires_grad=True)
with torch.no_grad():
    c2 = torch.ones(2, 3, requires_grad=True) + 1
print(c1.requires_grad, c2.requires_grad)


def add_tensors1(x, y):
    return x + y


@torch.no_grad()
def add_tensors2(x, y):
    return x + y


a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3
print(add_tensors1(a, b).requires_grad, add_tensors2(a, b).requires_grad)
x = torch.rand(5, requires_grad=True)
y = x.detach()
print(x, y)
a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
torch.sin(a)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(1), torch.rand(1))
print(inputs)
print(torch.autograd.functional.jacobian(exp_adder, inputs))
inputs = (torch.rand(3), torch.rand(3))
print(torch.autograd.functional.jacobian(exp_adder, inputs))


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


inputs = torch.randn(3)
my_gradients = torch.tensor([0.1, 1.0, 0.0001])
print(torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))

# --- Building Models with PyTorch
lin = torch.nn.Linear(3, 2)
x = torch.rand(1, 3)
print('Input:', x)
for param in lin.parameters():
    print(param)
y = lin(x)
print(y)


class LSTMTagger(torch.nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = torch.nn.Embedding(vocab_size, embedding_dim)
        self.lstm = torch.nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = torch.nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        return torch.nn.functional.log_softmax(tag_space, dim=1)


print(LSTMTagger(6, 6, 10, 3)(torch.tensor([1, 2, 3])).shape)
my_tensor = torch.rand(1, 6, 6)
print(my_tensor)
maxpool_layer = torch.nn.MaxPool2d(3)
print(maxpool_layer(my_tensor))
my_tensor = torch.rand(1, 4, 4) * 20 + 5
print(my_tensor)
print(my_tensor.mean())
norm_layer = torch.nn.BatchNorm1d(4)
normed_tensor = norm_layer(my_tensor)
print(normed_tensor)
print(normed_tensor.mean())
my_tensor = torch.rand(1, 4, 4)
dropout = torch.nn.Dropout(p=0.4)
print(dropout(my_tensor))
print(dropout(my_tensor))
transformer = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                   dim_feedforward=32)
print(transformer(torch.rand(5, 2, 16), torch.rand(4, 2, 16)).shape)
