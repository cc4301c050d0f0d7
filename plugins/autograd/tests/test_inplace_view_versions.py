"""In-place view methods (``squeeze_``, ``t_``, ``as_strided_``...) bump the version counter as PyTorch's do: a
saved tensor changed by one is refused at backward, the op's own node keeps its name and other views of the
same base are regenerated as as_strided views, all as torch does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

X = np.random.default_rng(3).standard_normal((3, 1, 4))

INPLACE_VIEWS = {
    "squeeze_": lambda t: t.squeeze_(),
    "squeeze_dim": lambda t: t.squeeze_(1),
    "squeeze_dims": lambda t: t.squeeze_((1,)),
    "unsqueeze_": lambda t: t.unsqueeze_(0),
    "transpose_": lambda t: t.transpose_(0, 2),
    "swapdims_": lambda t: t.swapdims_(0, 1),
    "swapaxes_": lambda t: t.swapaxes_(2, 0),
    "t_": lambda t: t[:, 0].t_(),
    "as_strided_": lambda t: t.as_strided_((2, 2), (1, 2)),
}


def _each(fn: Any) -> tuple[Any, Any]:
    return tuple(fn(T) for T in (torch, tp))


@pytest.mark.parametrize("name", sorted(INPLACE_VIEWS))
def test_version_bumped_and_node_named_as_torch(name: str) -> None:
    method = INPLACE_VIEWS[name]

    def run(T: Any) -> Any:
        plain = T.tensor(X)
        x = T.tensor(X, requires_grad=True)
        y = x * 2
        v_plain, v_y = plain._version, y._version
        out = method(y)
        method(plain)
        return plain._version - v_plain, y._version - v_y, type(out.grad_fn).__name__

    ref, got = _each(run)
    assert got == ref


@pytest.mark.parametrize("name", sorted(INPLACE_VIEWS))
def test_saved_tensor_modified_by_inplace_view_is_refused(name: str) -> None:
    method = INPLACE_VIEWS[name]

    def run(T: Any) -> str:
        x = T.tensor(X, requires_grad=True)
        y = x * 1
        z = y * y  # saves y
        method(y)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return str(info.value)

    ref, got = _each(run)
    start = "one of the variables needed for gradient computation has been modified by an inplace operation"
    assert ref.startswith(start) and got.startswith(start)


def test_result_saved_before_inplace_view_still_backpropagates() -> None:
    # exp saves its result, not y: squeeze_ on y leaves it usable, in both libraries
    def run(T: Any) -> Any:
        x = T.tensor(X, requires_grad=True)
        y = x * 1
        z = y.exp()
        y.squeeze_()
        z.sum().backward()
        return x.grad.numpy()

    ref, got = _each(run)
    np.testing.assert_allclose(got, ref)


def test_views_of_the_same_base_as_torch() -> None:
    # the view written through keeps its node; a sibling view (version now stale) becomes AsStridedBackward0
    def run(T: Any) -> Any:
        a = T.tensor(X[:, 0], requires_grad=True)
        b = a * 1
        v1, v2 = b[0], b[1]
        before = (b._version, v1._version)
        v1.unsqueeze_(0)
        names = [type(t.grad_fn).__name__ for t in (v1, v2, b)]
        w = b[2]
        b.t_()
        names += [type(t.grad_fn).__name__ for t in (w, b)]
        (v1.sum() * 2 + v2.sum() * 3 + w.sum() * 5 + b.sum()).backward()
        return before, (b._version, v1._version), names, a.grad.numpy()

    ref, got = _each(run)
    assert got[:3] == ref[:3]
    np.testing.assert_allclose(got[3], ref[3])


def test_view_of_view_written_in_place() -> None:
    def run(T: Any) -> Any:
        a = T.tensor(X[:, 0], requires_grad=True)
        x = a * 1
        y = x[0]
        z = y[1:]
        y.unsqueeze_(0)
        y.mul_(2)
        names = [type(t.grad_fn).__name__ for t in (z, y, x)]
        (x.sum() + z.sum()).backward()
        return names, a.grad.numpy()

    ref, got = _each(run)
    assert got[0] == ref[0]
    np.testing.assert_allclose(got[1], ref[1])
