# PyTorch recipes "Tips for Loading an nn.Module from a Checkpoint" (torch.load(mmap=True), the
# torch.device('meta') context manager, load_state_dict(assign=True)) and "Extension points in nn.Module
# for load_state_dict and tensor subclasses" (torch.utils.swap_tensors, the wrapper subclass
# MyQuantizedLinearWeight with __torch_dispatch__, torch.__future__.set_swap_module_params_on_conversion,
# Tensor.module_load through __torch_function__).  Added: load_state_dict pre/post hooks as the
# nn.Module docs describe them, and a short training run after loading.  Printed facts are asserted.
import torch
from torch import nn

torch.manual_seed(0)


class SomeModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(1, 1) for i in range(10)])

    def forward(self, x):
        return self.linears(x)


m = SomeModule()
torch.save(m.state_dict(), 'checkpoint.pth')
state_dict = torch.load('checkpoint.pth', mmap=True)
with torch.device('meta'):
  meta_m = SomeModule()
meta_m.load_state_dict(state_dict, assign=True)
assert not meta_m.linears[3].weight.is_meta and isinstance(meta_m.linears[3].weight, nn.Parameter)
assert torch.equal(meta_m.linears[3].weight, m.linears[3].weight)

state_dict = torch.load('checkpoint.pth')
m = SomeModule()
m.load_state_dict(state_dict)

state_dict = torch.load('checkpoint.pth')
state_dict = torch.load('checkpoint.pth', mmap=True)
m = SomeModule()
with torch.device('meta'):
  meta_m = SomeModule()
print(meta_m.linears[0].weight)
assert meta_m.linears[0].weight.is_meta and meta_m.linears[0].weight.shape == (1, 1)
m.load_state_dict(state_dict)
# an in-place copy into a meta tensor does nothing: the parameters stay on the meta device
meta_m.load_state_dict(state_dict)
assert meta_m.linears[0].weight.is_meta
meta_m.load_state_dict(state_dict, assign=True)
print(meta_m.linears[0].weight)
assert torch.equal(meta_m.linears[0].weight, m.linears[0].weight) and meta_m.linears[0].weight.requires_grad

# --- torch.utils.swap_tensors
t1 = torch.arange(2)
t2 = torch.arange(3)
print(f"Before swapping, t1: {t1}, t2: {t2}")
torch.utils.swap_tensors(t1, t2)
print(f"After swapping, t1: {t1}, t2: {t2}")
assert t1.tolist() == [0, 1, 2] and t2.tolist() == [0, 1]

mod = torch.nn.Linear(1, 2, bias=False)
optimizer = torch.optim.SGD(mod.parameters())
print(f"weight in mod: {mod.weight}")
print(f"weight in optimizer: {optimizer.param_groups[0]['params']}")
mod.weight = torch.nn.Parameter(2 * mod.weight)
print(f"weight in mod: {mod.weight}")
print(f"weight in optimizer: {optimizer.param_groups[0]['params']}")
assert optimizer.param_groups[0]['params'][0] is not mod.weight

# --- nn.Module.to() and load_state_dict() with swap_tensors, on plain parameters (the recipe's
# MyQuantizedLinearWeight subclass part is in swap_tensors_subclass.py)
torch.__future__.set_swap_module_params_on_conversion(True)
assert torch.__future__.get_swap_module_params_on_conversion()
m = nn.Linear(3, 5, dtype=torch.float32)
optimizer = torch.optim.SGD(m.parameters(), lr=0.1)
print(f"Before: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
ids = (id(m.weight), id(m.bias))
m.bfloat16()
print(f"After: id(m.weight)={id(m.weight)}, id(m.bias)={id(m.bias)}")
print(f"m.weight.dtype: {m.weight.dtype}")
print(f"m.bias.dtype: {m.bias.dtype}")
assert (id(m.weight), id(m.bias)) == ids and m.weight.dtype == torch.bfloat16
assert optimizer.param_groups[0]['params'][0] is m.weight

with torch.device("meta"):
    m = nn.Linear(3, 5)
optimizer = torch.optim.SGD(m.parameters(), lr=0.1)  # before loading: swapping keeps its references valid
print(f"Before: id(weight)={id(m.weight)}, id(bias)={id(m.bias)}")
ids = (id(m.weight), id(m.bias))
print(f"m.state_dict() before load_state_dict():\n {m.state_dict()}")
state_dict = nn.Linear(3, 5).state_dict()
print(f"state_dict:\n {state_dict}")
m.load_state_dict(state_dict, assign=True)
print(f"After: id(weight)={id(m.weight)}, id(bias)={id(m.bias)}")
print(f"m.state_dict() after load_state_dict():\n {m.state_dict()}")
assert (id(m.weight), id(m.bias)) == ids and not m.weight.is_meta
assert torch.equal(m.weight, state_dict["weight"]) and torch.equal(m.bias, state_dict["bias"])
loaded = m.weight.detach().clone()
m(torch.randn(2, 3)).sum().backward()
optimizer.step()
assert not torch.equal(m.weight, loaded)  # the optimizer updated the module's own parameter
torch.__future__.set_swap_module_params_on_conversion(False)

# --- load_state_dict hooks (nn.Module docs): rename a key before loading, report after
seen = []


def pre_hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    if prefix + "old_weight" in state_dict:
        state_dict[prefix + "weight"] = state_dict.pop(prefix + "old_weight")


def post_hook(module, incompatible_keys):
    seen.append((list(incompatible_keys.missing_keys), list(incompatible_keys.unexpected_keys)))


src = nn.Linear(4, 3)
dst = nn.Linear(4, 3)
dst._register_load_state_dict_pre_hook(pre_hook, with_module=True)
dst.register_load_state_dict_post_hook(post_hook)
sd = src.state_dict()
sd["old_weight"] = sd.pop("weight")
result = dst.load_state_dict(sd)
print(result, seen)
assert torch.equal(dst.weight, src.weight) and seen == [([], [])]

# a few training steps from the loaded checkpoint
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
torch.save(model.state_dict(), 'model.pth')
with torch.device('meta'):
    restored = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
restored.load_state_dict(torch.load('model.pth', mmap=True, weights_only=True), assign=True)
opt = torch.optim.SGD(restored.parameters(), lr=0.05)  # after loading: assign=True replaced the parameters
x, y = torch.randn(64, 8), torch.randn(64, 1)
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(restored(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
