"""torchplug-cuda vs torch on the same GPU, in the same run: ratios (torchplug / torch throughput).

    python backends/cuda/benchmarks/bench_cuda.py          # needs CuPy (and a CUDA build of torch for ratios)

The benchmark rows of ``python -m torchplug_cuda.selfcheck``: elementwise add of 64M float32
(GB/s: 3 x 4 bytes moved per element), matmul 8192x8192 in float16 and bfloat16 (TFLOP/s:
2 n^3), and an MLP training step (steps/s).  Without a GPU they say "needs a GPU" and it exits 0.
"""

from __future__ import annotations

import sys

from torchplug_cuda import selfcheck

ROWS = ("bench_add_64M", "bench_matmul_fp16", "bench_matmul_bf16", "bench_mlp_step")

if __name__ == "__main__":
    sys.exit(selfcheck.main(["--only", ",".join(ROWS), *sys.argv[1:]]))
