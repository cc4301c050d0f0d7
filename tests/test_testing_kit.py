"""torchplug.testing: assert_close, the spec language's materialization, path resolution and the registry."""

from __future__ import annotations

import pytest

import torchplug
from torchplug.testing import Dtype, OpInfo, SampleInput, T, assert_close, materialize, op_db, resolve


def test_assert_close_passes_and_fails_like_torch_testing():
    a = torchplug.tensor([1.0, 2.0, float("nan")])
    assert_close(a, torchplug.tensor([1.0, 2.0 + 1e-7, float("nan")]), equal_nan=True)
    with pytest.raises(AssertionError, match="Tensor-likes are not close"):
        assert_close(a, torchplug.tensor([1.0, 2.5, float("nan")]), equal_nan=True)
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        assert_close(torchplug.ones(2), torchplug.ones(2, dtype=torchplug.float64))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        assert_close(torchplug.ones(2), torchplug.ones(3))
    with pytest.raises(AssertionError, match="'stride\\(\\)' do not match"):
        assert_close(torchplug.ones(2, 3).t(), torchplug.ones(3, 2), check_stride=True)
    assert_close([torchplug.ones(1), 2], [torchplug.ones(1), 2])
    assert torchplug.testing.assert_close is assert_close  # reachable as torch.testing.assert_close


def test_materialize_gives_identical_inputs():
    torch = pytest.importorskip("torch")
    sample = SampleInput((T((3, 4), noncontig=True), T((2, 3, 4), transposed=True), T((3, 1), expand=(3, 4)),
                          [T(()), T((0, 2))], 2.5), {"dtype": Dtype("float64")})
    tp_args, tp_kw = materialize(sample, torchplug, "cpu", "float32")
    th_args, th_kw = materialize(sample, torch, "cpu", "float32")
    flat_tp = [tp_args[0], tp_args[1], tp_args[2], *tp_args[3]]
    flat_th = [th_args[0], th_args[1], th_args[2], *th_args[3]]
    for a, b in zip(flat_tp, flat_th):
        assert a.stride() == b.stride() and tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, check_stride=True)
    assert not tp_args[0].is_contiguous() and tp_args[2].stride() == (1, 0)
    assert tp_args[4] == 2.5 and tp_kw["dtype"] is torchplug.float64 and th_kw["dtype"] is torch.float64
    meta_args, _ = materialize(sample, torchplug, "meta", "float32")
    assert meta_args[0].is_meta and meta_args[0].stride() == tp_args[0].stride()


def test_resolve_dotted_paths():
    assert resolve(torchplug, "add") is torchplug.add
    assert resolve(torchplug, "Tensor.add_") is torchplug.Tensor.add_
    assert resolve(torchplug, "ops.aten.index.Tensor") is torchplug.ops.aten.index.Tensor
    with pytest.raises(AttributeError):
        resolve(torchplug, "Tensor.no_such_method")


def test_registry_names_are_unique_and_complete():
    ops = op_db()
    assert len({op.name for op in ops}) == len(ops)
    assert all(isinstance(op, OpInfo) and op.dtypes for op in ops)
    assert all(skip.reason for op in ops for skip in op.skips)


def test_reference_quirks_replace_only_the_isa_dependent_answer() -> None:
    torch = pytest.importorskip("torch")
    from torchplug.testing.reference_quirks import QUIRKS, correct_reference

    assert all(q.seen for q in QUIRKS)  # every entry says what torch does, and where
    x = torch.tensor([float("inf"), -float("inf"), float("nan"), 1.0])
    wrong = torch.tensor([float("nan"), float("nan"), float("nan"), 0.8413])  # what an AVX-512 torch returns
    fixed = correct_reference("nn.functional.gelu", "float32", (x,), {}, wrong)
    assert fixed[0].item() == float("inf") and all(v != v for v in fixed[1:3].tolist()) and fixed[3].item() == pytest.approx(0.8413)
    assert correct_reference("nn.functional.gelu", "float32", (x,), {"approximate": "tanh"}, wrong) is wrong
    assert correct_reference("nn.functional.gelu", "float64", (x,), {}, wrong) is wrong


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_gelu_at_infinity_is_the_mathematical_limit(dtype: str) -> None:
    import torchplug

    x = torchplug.tensor([float("inf"), 3.0], dtype=getattr(torchplug, dtype))
    for approximate in ("none", "tanh"):
        y = torchplug.nn.functional.gelu(x, approximate=approximate)
        assert y[0].item() == float("inf")
