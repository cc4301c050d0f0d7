"""Custom operator costs: call overhead of ``custom_op`` vs a built-in op, and a C++ fused op vs
the same computation as a chain of built-in ops.  torchplug and PyTorch, measured in the same run.

Usage: ``python benchmarks/bench_custom_op.py [--rounds N] [--json PATH]``

Overhead rows use 16-element float32 tensors (the dispatch-overhead regime): a ``custom_op``
whose body is ``neg(x)`` against ``neg(x)`` itself, so the ratio is what the custom-op
machinery adds.  Fused rows compare ``fused::bias_gelu`` (C++, from the example plugin
``plugins/examples/fused_ops``) with ``0.5*v*(1+erf(v/sqrt(2)))``, ``v = x + b``, written with
built-in ops.  Each round takes the best of several ~30 ms batches per statement; statements
are interleaved round by round and the report is the median over rounds.
"""


import argparse
import json
import math
import statistics
import sys
import timeit
from collections.abc import Callable

SQRT1_2 = 1.0 / math.sqrt(2.0)


def torchplug_env() -> dict[str, object]:
    import torchplug as tp
    from torchplug.library import Library, custom_op

    env: dict[str, object] = {"a": tp.randn(16), "neg": tp.neg}

    @custom_op("benchcustom::neg", mutates_args=())
    def cneg(x: tp.Tensor) -> tp.Tensor:
        return tp.neg(x)

    lib = Library("benchlib", "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: tp.neg(x), "CompositeExplicitAutograd")
    env.update(custom=cneg, libop=tp.ops.benchlib.neg.default, _keep=lib)
    _add_fused(env, tp)
    return env


def torch_env() -> dict[str, object]:
    import torch

    env: dict[str, object] = {"a": torch.randn(16), "neg": torch.neg}

    @torch.library.custom_op("benchcustom::neg", mutates_args=())
    def cneg(x: torch.Tensor) -> torch.Tensor:
        return torch.neg(x)

    lib = torch.library.Library("benchlib", "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.impl("neg", lambda x: torch.neg(x), "CompositeExplicitAutograd")
    env.update(custom=cneg, libop=torch.ops.benchlib.neg.default, _keep=lib)
    _add_fused(env, torch)
    env["gelu"] = torch.nn.functional.gelu
    return env


def _add_fused(env: dict[str, object], mod: object) -> None:
    for tag, shape in (("s", (16,)), ("l", (256, 1024))):
        env[f"x{tag}"] = mod.randn(*shape)  # type: ignore[attr-defined]
        env[f"b{tag}"] = mod.randn(shape[-1])  # type: ignore[attr-defined]
    env["erf"] = mod.erf  # type: ignore[attr-defined]
    env["k"] = SQRT1_2


ROWS = {
    "builtin neg (16 f32)": "neg(a)",
    "custom_op neg (16 f32)": "custom(a)",
    "Library.define/impl neg (16 f32)": "libop(a)",
    "bias+gelu chain of built-ins (16 f32)": "v = xs + bs; 0.5 * v * (1 + erf(v * k))",
    "bias+gelu chain of built-ins (256x1024 f32)": "v = xl + bl; 0.5 * v * (1 + erf(v * k))",
    "fused::bias_gelu C++ (16 f32)": "fused(xs, bs)",
    "fused::bias_gelu C++ (256x1024 f32)": "fused(xl, bl)",
    "torch F.gelu(x + b) (256x1024 f32)": "gelu(xl + bl)",
}
NEEDS = {"fused::bias_gelu C++ (16 f32)": "fused", "fused::bias_gelu C++ (256x1024 f32)": "fused",
         "torch F.gelu(x + b) (256x1024 f32)": "gelu"}


def _time_once(stmt: str, env: dict[str, object]) -> float:
    timer = timeit.Timer(stmt, globals=env)
    number, elapsed = timer.autorange()
    number = max(1, int(number * 0.03 / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=3, number=number)) / number


def measure(rounds: int) -> dict[str, dict[str, float]]:
    envs: dict[str, dict[str, object]] = {"torchplug": torchplug_env()}
    try:
        import torchplug_fused_ops  # noqa: F401 - the example plugin; its ops are under torchplug.ops.fused
        import torchplug

        envs["torchplug"]["fused"] = torchplug.ops.fused.bias_gelu.default
    except ImportError:
        print("(torchplug-fused-ops not installed: pip install -e plugins/examples/fused_ops)", file=sys.stderr)
    try:
        envs["torch"] = torch_env()
    except ImportError:
        print("(PyTorch not installed: torch columns left out)", file=sys.stderr)
    samples: dict[str, dict[str, list[float]]] = {row: {fw: [] for fw in envs} for row in ROWS}
    for _ in range(rounds):
        for row, stmt in ROWS.items():
            for fw, env in envs.items():
                need = NEEDS.get(row)
                if need is not None and need not in env:
                    continue
                samples[row][fw].append(_time_once(stmt, env))
    return {row: {fw: statistics.median(v) for fw, v in per.items() if v} for row, per in samples.items()}


def report(results: dict[str, dict[str, float]]) -> str:
    frameworks = sorted({fw for per in results.values() for fw in per}, key=lambda f: f != "torchplug")
    lines = ["| case | " + " | ".join(f"{fw} (µs)" for fw in frameworks) + " |",
             "|---|" + "---|" * len(frameworks)]
    for row, per in results.items():
        cells = [f"{per[fw] * 1e6:.2f}" if fw in per else "-" for fw in frameworks]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines.append("")
    for fw in frameworks:
        base = results["builtin neg (16 f32)"].get(fw)
        custom = results["custom_op neg (16 f32)"].get(fw)
        lib = results["Library.define/impl neg (16 f32)"].get(fw)
        if base and custom:
            lines.append(f"{fw}: custom_op / built-in = {custom / base:.2f}x; define/impl / built-in = {lib / base:.2f}x")
    tp = results["fused::bias_gelu C++ (256x1024 f32)"].get("torchplug")
    chain = results["bias+gelu chain of built-ins (256x1024 f32)"].get("torchplug")
    small, small_chain = (results["fused::bias_gelu C++ (16 f32)"].get("torchplug"),
                          results["bias+gelu chain of built-ins (16 f32)"].get("torchplug"))
    if tp and chain:
        lines.append(f"torchplug: C++ bias_gelu speed-up over the built-in chain = {chain / tp:.1f}x at 256x1024, "
                     f"{small_chain / small:.1f}x at 16 elements")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the medians (seconds) to this file")
    args = parser.parse_args(argv)
    results = measure(args.rounds)
    print(report(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
