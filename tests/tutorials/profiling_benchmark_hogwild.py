# PyTorch recipes: "Profiling your PyTorch Module" (torch.profiler, record_function, key_averages tables,
# schedules and trace export), "PyTorch Benchmark" (torch.utils.benchmark Timer / Compare), the Hogwild
# example (examples/mnist_hogwild: model.share_memory(), processes training it through
# torch.multiprocessing), "Scaled Dot Product Attention" (torch.nn.attention.sdpa_kernel) and
# torch.utils.hooks' RemovableHandle. Small synthetic data instead of MNIST/ResNet.
import os
import tempfile

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.benchmark as benchmark
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler
from torch.utils.hooks import RemovableHandle

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(rank, model, data, target, epochs):
    torch.manual_seed(1 + rank)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for _ in range(epochs):
        for i in range(0, data.shape[0], 16):
            optimizer.zero_grad()
            F.nll_loss(model(data[i:i + 16]), target[i:i + 16]).backward()
            optimizer.step()


if __name__ == "__main__":
    data = torch.randn(128, 20)
    target = (data[:, :4].argmax(dim=1)).long()
    model = Net()

    # -- profiling --------------------------------------------------------------------------------
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
        with record_function("model_inference"):
            model(data)
    names = {e.key for e in prof.key_averages()}
    print("profiled:", sorted(n for n in names if n in ("model_inference", "aten::linear", "aten::relu")))
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=5)
    print(table.splitlines()[1].split())
    with tempfile.TemporaryDirectory() as log_dir:
        with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                     on_trace_ready=tensorboard_trace_handler(log_dir)) as p:
            for _ in range(5):
                model(data)
                p.step()
        print("trace files:", len([f for f in os.listdir(log_dir) if f.endswith(".pt.trace.json")]))

    # -- benchmarking -----------------------------------------------------------------------------
    x = torch.randn(64, 20)
    results = []
    for num_threads in (1, 2):
        for label, stmt in (("mm", "x @ w"), ("linear", "model(x)")):
            t = benchmark.Timer(stmt=stmt, globals={"x": x, "w": torch.randn(20, 20), "model": model},
                                num_threads=num_threads, label="ops", sub_label=label, description="cpu")
            results.append(t.blocked_autorange(min_run_time=0.02))
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    print("compare rows:", len(str(compare).splitlines()))

    # -- scaled dot product attention with a chosen backend ---------------------------------------
    q = torch.randn(2, 4, 8, 16)
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    print("attention:", tuple(out.shape))

    # -- hooks -------------------------------------------------------------------------------------
    handle = model.fc1.register_forward_hook(lambda m, i, o: None)
    print("hook handle:", isinstance(handle, RemovableHandle))
    handle.remove()

    # -- Hogwild ------------------------------------------------------------------------------------
    with torch.no_grad():
        print("initial loss: {:.6f}".format(F.nll_loss(model(data), target).item()))
        before = F.nll_loss(model(data), target).item()
    model.share_memory()
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, data, target, 5))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    with torch.no_grad():
        after = F.nll_loss(model(data), target).item()
    print("hogwild trained the shared model:", after < before, [p.exitcode for p in processes])
