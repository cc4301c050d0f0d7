"""Custom ops under vmap through torch.library.register_vmap, against torch: the rule gets the unbatched
arguments and in_dims, its (output, out_dims) comes back batched, and the per-sample loop (with its
performance warning) is not used.  (No `from __future__ import annotations`: the ops' annotations name
the library of each run, which infer_schema must see evaluated.)"""


import itertools
import warnings

import numpy as np
import pytest

import torchplug
from func_helpers import close, pair

torch = pytest.importorskip("torch")
_ids = itertools.count()


def make_ops(M, ns):
    """numpy_cube (two outputs, rule registered through the op) and numpy_mul (rule by name, decorator)."""
    calls = []

    @M.library.custom_op(f"{ns}::numpy_cube", mutates_args=())
    def numpy_cube(x: M.Tensor) -> tuple[M.Tensor, M.Tensor]:
        x_np = x.numpy()
        return M.tensor(x_np ** 3), M.tensor(3 * x_np ** 2)

    def numpy_cube_vmap(info, in_dims, x):
        calls.append((info.batch_size, info.randomness, in_dims))
        return numpy_cube(x), (in_dims[0], in_dims[0])

    M.library.register_vmap(numpy_cube, numpy_cube_vmap)

    @M.library.custom_op(f"{ns}::numpy_mul", mutates_args=())
    def numpy_mul(x: M.Tensor, y: M.Tensor, *, alpha: float = 1.0) -> M.Tensor:
        return M.tensor(x.numpy() * y.numpy() * alpha)

    @M.library.register_vmap(f"{ns}::numpy_mul")
    def numpy_mul_vmap(info, in_dims, x, y, *, alpha=1.0):
        calls.append((info.batch_size, info.randomness, in_dims))
        x = x.movedim(in_dims[0], -1) if in_dims[0] is not None else x.unsqueeze(-1)
        y = y.movedim(in_dims[1], -1) if in_dims[1] is not None else y.unsqueeze(-1)
        return (x * y * alpha).movedim(-1, 0), 0

    return numpy_cube, numpy_mul, calls


@pytest.fixture
def ops():
    n = next(_ids)
    made = {torchplug: make_ops(torchplug, f"tpvmaprule{n}"), torch: make_ops(torch, f"tpvmapref{n}")}
    yield made
    for op in made[torchplug][:2]:  # (torch's ops stay; each test uses fresh namespaces)
        op._destroy()


def both(ops, fn, *arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no per-sample fallback warning
        mine = fn(torchplug, *ops[torchplug][:2])(*[a[0] for a in arrays])
    theirs = fn(torch, *ops[torch][:2])(*[a[1] for a in arrays])
    close(mine, theirs, atol=1e-12, rtol=1e-12)


def test_rule_with_two_outputs(ops):
    both(ops, lambda M, cube, mul: M.vmap(cube), pair(3, 2))
    both(ops, lambda M, cube, mul: M.vmap(cube, in_dims=1, randomness="different"), pair(2, 4))
    assert ops[torchplug][2] == [(3, "error", (0,)), (4, "different", (1,))] == ops[torch][2]


def test_rule_with_unbatched_argument_and_keyword_only_argument(ops):
    both(ops, lambda M, cube, mul: M.vmap(mul), pair(3), pair(3, seed=1))
    both(ops, lambda M, cube, mul: M.vmap(lambda x, y: mul(x, y, alpha=2.0), in_dims=(0, None)), pair(3), pair(4))
    both(ops, lambda M, cube, mul: M.vmap(M.vmap(mul)), pair(2, 3), pair(2, 3, seed=1))


def test_rule_signature_and_conflict_errors(ops):
    cube = ops[torchplug][0]
    with pytest.raises(TypeError, match="must accept \\(info, in_dims, \\*args"):
        cube.register_vmap(lambda info, in_dims: None)
    with pytest.raises(RuntimeError):
        cube.register_vmap(lambda info, in_dims, x: (cube(x), 0))  # a second, different rule
