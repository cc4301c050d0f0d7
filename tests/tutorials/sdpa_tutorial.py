# "(Beta) Implementing High-Performance Transformers with Scaled Dot Product Attention (SDPA)" (PyTorch
# intermediate tutorial), on the CPU with small sizes: F.scaled_dot_product_attention, the
# torch.utils.benchmark timing helper (one short measurement instead of blocked_autorange), sdpa_kernel with
# each SDPBackend, the CausalSelfAttention module (float32, .to(device) instead of .to("cuda")), torch.compile
# of the module and of F.scaled_dot_product_attention, the profiler tables, and the causal_upper_left /
# causal_lower_right attention biases.  The NestedTensor section is left out (torch.nested is not part of
# this check).  Added: a few training steps of the attention block on a next-step regression task.
import torch
import torch.nn as nn
import torch.nn.functional as F
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)

# Example Usage:
query, key, value = torch.randn(2, 3, 8, device=device), torch.randn(2, 3, 8, device=device), torch.randn(2, 3, 8, device=device)
out = F.scaled_dot_product_attention(query, key, value)
ref = torch.softmax(query @ key.transpose(-2, -1) / 8 ** 0.5, dim=-1) @ value
assert torch.allclose(out, ref, atol=1e-5)

# Lets define a helpful benchmarking function:
import torch.utils.benchmark as benchmark
def benchmark_torch_function_in_microseconds(f, *args, **kwargs):
    t0 = benchmark.Timer(
        stmt="f(*args, **kwargs)", globals={"args": args, "kwargs": kwargs, "f": f}
    )
    return t0.timeit(3).mean * 1e6

# Lets define the hyper-parameters of our input
batch_size = 4
max_sequence_len = 64
num_heads = 4
embed_dimension = 16

dtype = torch.float32

query = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)
key = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)
value = torch.rand(batch_size, num_heads, max_sequence_len, embed_dimension, device=device, dtype=dtype)

print(f"The default implementation runs in {benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value):.3f} microseconds")

# Lets explore the speed of each of the 3 implementations
from torch.nn.attention import SDPBackend, sdpa_kernel


with sdpa_kernel(SDPBackend.MATH):
    math_time=benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
    print(f"The math implementation runs in {math_time:.3f} microseconds")
    math_out = F.scaled_dot_product_attention(query, key, value)

with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    try:
        flash_time=benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
        print(f"The flash attention implementation runs in {flash_time:.3f} microseconds")
        assert torch.allclose(F.scaled_dot_product_attention(query, key, value), math_out, atol=1e-5)
    except RuntimeError:
        print("FlashAttention is not supported. See warnings for reasons.")

with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    try:
        efficient_time=benchmark_torch_function_in_microseconds(F.scaled_dot_product_attention, query, key, value)
        print(f"The memory efficient implementation runs in {efficient_time:.3f} microseconds")
    except RuntimeError:
        print("EfficientAttention is not supported. See warnings for reasons.")


class CausalSelfAttention(nn.Module):

    def __init__(self, num_heads: int, embed_dimension: int, bias: bool=False, is_causal: bool=False, dropout:float=0.0):
        super().__init__()
        assert embed_dimension % num_heads == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension, bias=bias)
        # output projection
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        # regularization
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        # Perform causal masking
        self.is_causal = is_causal

    def forward(self, x):
        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        query_projected = self.c_attn(x)

        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)

        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads, head_dim).transpose(1, 2)

        if self.training:
            dropout = self.dropout
            is_causal = self.is_causal
        else:
            dropout = 0.0
            is_causal = False

        y = F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout, is_causal=is_causal)
        y = y.transpose(1, 2).view(batch_size, -1, self.num_heads * head_dim)

        y = self.resid_dropout(self.c_proj(y))
        return y


num_heads = 4
heads_per_dim = 8
embed_dimension = num_heads * heads_per_dim
dtype = torch.float32
model = CausalSelfAttention(num_heads=num_heads, embed_dimension=embed_dimension, bias=False, is_causal=True, dropout=0.1).to(device).to(dtype).eval()
print(model)

batch_size = 4
max_sequence_len = 32
x = torch.rand(batch_size, max_sequence_len,
               embed_dimension, device=device, dtype=dtype)
print(
    f"The non compiled module runs in  {benchmark_torch_function_in_microseconds(model, x):.3f} microseconds")


compiled_model = torch.compile(model)
# Let's compile it
compiled_model(x)
print(
    f"The compiled module runs in  {benchmark_torch_function_in_microseconds(compiled_model, x):.3f} microseconds")
assert torch.allclose(compiled_model(x), model(x), atol=1e-5)

from torch.profiler import profile, record_function, ProfilerActivity
activities = [ProfilerActivity.CPU]
if device == 'cuda':
    activities.append(ProfilerActivity.CUDA)

with profile(activities=activities, record_shapes=False) as prof:
    with record_function(" Non-Compilied Causal Attention"):
        for _ in range(5):
            model(x)
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
assert any(e.key == " Non-Compilied Causal Attention" for e in prof.key_averages())


with profile(activities=activities, record_shapes=False) as prof:
    with record_function("Compiled Causal Attention"):
        for _ in range(5):
            compiled_model(x)
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

from torch.nn.attention.bias import causal_lower_right, causal_upper_left

batch_size = 4
sequence_length_q = 2
sequence_length_kv = 10
num_heads = 4
embed_dimension = 8

dtype = torch.float32

query = torch.rand(batch_size, num_heads, sequence_length_q, embed_dimension, device=device, dtype=dtype)
key = torch.rand(batch_size, num_heads, sequence_length_kv, embed_dimension, device=device, dtype=dtype)
value = torch.rand(batch_size, num_heads, sequence_length_kv, embed_dimension, device=device, dtype=dtype)

upper_left_bias = causal_upper_left(sequence_length_q, sequence_length_kv)
lower_right_bias = causal_lower_right(sequence_length_q, sequence_length_kv)

print(type(upper_left_bias))
print(type(lower_right_bias))

assert type(upper_left_bias) == type(lower_right_bias)
assert issubclass(type(upper_left_bias), torch.Tensor)

# Lets see what these tensors look like
print(upper_left_bias)
print(lower_right_bias)

# These objects are intended to be used with sdpa
out_upper_left = F.scaled_dot_product_attention(query, key, value, upper_left_bias)
out_lower_right = F.scaled_dot_product_attention(query, key, value, lower_right_bias)
out_is_causal = F.scaled_dot_product_attention(query, key, value, is_causal=True)

assert torch.allclose(out_upper_left, out_is_causal)
assert not torch.allclose(out_upper_left, out_lower_right)
mask = torch.ones(sequence_length_q, sequence_length_kv, dtype=torch.bool).tril(diagonal=sequence_length_kv - sequence_length_q)
assert torch.allclose(out_lower_right, F.scaled_dot_product_attention(query, key, value, attn_mask=mask), atol=1e-6)

# These attention biases should also be compatible with torch.compile
compiled_sdpa = torch.compile(F.scaled_dot_product_attention, fullgraph=True)
out_upper_left = compiled_sdpa(query, key, value, upper_left_bias)
assert torch.allclose(out_upper_left, out_is_causal)

# --- a few training steps of the causal attention block (predict the next position's features)
torch.manual_seed(0)
block = CausalSelfAttention(num_heads=4, embed_dimension=16, bias=True, is_causal=True, dropout=0.0).to(device).train()
seq = torch.randn(8, 12, 16, device=device)
opt = torch.optim.Adam(block.parameters(), lr=1e-2)
for step in range(30):
    opt.zero_grad()
    loss = F.mse_loss(block(seq[:, :-1]), seq[:, 1:])
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step} loss {loss.item():.6f}")
