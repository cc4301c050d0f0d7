"""rand_like/randn_like are aten ops of their own, as in ATen: a dispatch mode sees ``aten.rand_like.default`` (or
``.generator``) and nothing it runs inside; the values, layout and dtype are torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp
from torchplug.utils._dispatch_mode import DispatchMode

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


def _logged(T: Any, mode_cls: Any, fn: Any) -> list[str]:
    calls: list[str] = []

    class Log(mode_cls):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append(str(func))
            return func(*args, **(kwargs or {}))

    x = T.ones(2, 3)
    with Log():
        fn(T, x)
    return calls


CALLS = {
    "rand_like": lambda T, x: T.rand_like(x),
    "randn_like": lambda T, x: T.randn_like(x),
    "rand_like_dtype": lambda T, x: T.rand_like(x, dtype=T.float64),
    "rand_like_generator": lambda T, x: T.rand_like(x, generator=T.Generator().manual_seed(1)),
    "randn_like_generator": lambda T, x: T.randn_like(x, generator=T.Generator().manual_seed(1)),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_dispatch_mode_sees_the_op_itself(case: str) -> None:
    ref = _logged(torch, TorchDispatchMode, CALLS[case])
    got = _logged(tp, DispatchMode, CALLS[case])
    assert got == ref


def test_overload_names_as_torch() -> None:
    for name in ("rand_like", "randn_like"):
        ours = set(getattr(tp.ops.aten, name).overloads())
        assert ours <= set(getattr(torch.ops.aten, name).overloads())
        assert {"default", "generator"} <= ours


@pytest.mark.parametrize("fn", ["rand_like", "randn_like"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "contiguous_format"])
def test_values_layout_and_dtype_as_torch(fn: str, layout: str) -> None:
    def run(T: Any) -> Any:
        x = T.ones(3, 4, dtype=T.float64, requires_grad=True)
        x = x.t() if layout != "contiguous" else x
        kwargs = {"memory_format": T.contiguous_format} if layout == "contiguous_format" else {}
        T.manual_seed(7)
        a = getattr(T, fn)(x, **kwargs)
        b = getattr(T, fn)(x, dtype=T.float32, generator=T.Generator().manual_seed(3), requires_grad=True)
        return a.detach().numpy(), a.stride(), a.requires_grad, b.detach().numpy(), b.dtype.is_floating_point, \
            b.requires_grad, b.is_leaf

    ref, got = run(torch), run(tp)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6)
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-6)
    assert got[1:3] == ref[1:3] and got[4:] == ref[4:]
