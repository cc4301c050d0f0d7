"""torchplug-cuda vs torch on the same GPU, in the same run: ratios (torchplug / torch throughput).

    python backends/cuda/benchmarks/bench_cuda.py          # needs CuPy and a CUDA build of torch

Rows: elementwise add of 64M float32 (GB/s: 3 x 4 bytes moved per element), matmul 8192x8192
in float16 and bfloat16 (TFLOP/s: 2 n^3), and an MLP training step (steps/s).  Without a GPU
it says so and exits 0 without numbers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def _time(fn: Callable[[], object], sync: Callable[[], None], reps: int) -> float:
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - start) / reps


def main() -> int:
    try:
        import torch
    except ImportError:
        print("torch is not installed: no reference to compare with")
        return 0
    import torchplug as tp

    if not (tp.cuda.is_available() and not tp.cuda.is_emulated() and torch.cuda.is_available()):
        print("needs an NVIDIA GPU with CuPy and a CUDA build of torch; nothing measured")
        return 0
    print(f"device: {tp.cuda.get_device_name()} (torch {torch.__version__})")
    rows = []

    n = 64 * 1024 * 1024
    for name, m, sync in (("torchplug", tp, tp.cuda.synchronize), ("torch", torch, torch.cuda.synchronize)):
        a, b = m.ones(n, device="cuda"), m.ones(n, device="cuda")
        t = _time(lambda: a + b, sync, 20)
        rows.append(("add 64M float32", name, 3 * 4 * n / t / 1e9, "GB/s"))

    for dt in ("float16", "bfloat16"):
        k = 8192
        for name, m, sync in (("torchplug", tp, tp.cuda.synchronize), ("torch", torch, torch.cuda.synchronize)):
            try:
                a = m.randn(k, k, device="cuda").to(getattr(m, dt))
                t = _time(lambda: a @ a, sync, 5)
                rows.append((f"matmul 8192 {dt}", name, 2 * k ** 3 / t / 1e12, "TFLOP/s"))
            except Exception as exc:  # noqa: BLE001 - e.g. bfloat16 without device support: report, go on
                rows.append((f"matmul 8192 {dt}", name, float("nan"), f"failed: {type(exc).__name__}: {exc}"[:120]))

    for name, m, sync in (("torchplug", tp, tp.cuda.synchronize), ("torch", torch, torch.cuda.synchronize)):
        model = m.nn.Sequential(m.nn.Linear(1024, 4096), m.nn.ReLU(), m.nn.Linear(4096, 1024)).to("cuda")
        opt = m.optim.Adam(model.parameters(), lr=1e-3)
        x, y = m.randn(256, 1024, device="cuda"), m.randn(256, 1024, device="cuda")

        def step() -> None:
            opt.zero_grad()
            m.nn.functional.mse_loss(model(x), y).backward()
            opt.step()

        rows.append(("MLP step 1024-4096-1024 b256", name, 1 / _time(step, sync, 20), "steps/s"))

    by_row: dict[str, dict[str, tuple[float, str]]] = {}
    for row, who, value, unit in rows:
        by_row.setdefault(row, {})[who] = (value, unit)
    for row, r in by_row.items():
        ours, theirs = r["torchplug"], r["torch"]
        ratio = ours[0] / theirs[0] if theirs[0] == theirs[0] and theirs[0] else float("nan")
        print(f"{row:32s} torchplug {ours[0]:10.2f} {ours[1]:10s} torch {theirs[0]:10.2f} {theirs[1]:10s} ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
