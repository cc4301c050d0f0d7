"""torchplug.testing.make_tensor (seeded: torch's values, since the cpu random stream is PyTorch's) and the
deprecated assert_allclose, against the installed torch."""

from __future__ import annotations

import warnings

import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _dtype_name(dt):
    return str(dt).split(".")[-1]


def test_seeded_make_tensor_matches_torch():
    def run(m):
        m.manual_seed(0)
        out = []
        for dt in (m.float32, m.float64, m.int64, m.int32, m.uint8, m.bool, m.complex64, m.int8):
            t = m.testing.make_tensor(3, 4, dtype=dt, device="cpu")
            out.append((_dtype_name(t.dtype), tuple(t.shape), t.tolist()))
        t = m.testing.make_tensor((2, 3), dtype=m.float32, device="cpu", low=-1, high=1, noncontiguous=True,
                                  requires_grad=True)
        out.append((t.is_contiguous(), t.stride(), t.requires_grad, t.is_leaf, t.detach().tolist()))
        out.append(m.testing.make_tensor(5, dtype=m.int64, device="cpu", low=0, high=2, exclude_zero=True).tolist())
        return out

    assert run(tp) == run(torch)


def test_make_tensor_refusals_match_torch():
    def run(m):
        out = []
        for call in (lambda: m.testing.make_tensor(2, dtype=m.int64, device="cpu", requires_grad=True),
                     lambda: m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=3, high=1),
                     lambda: m.testing.make_tensor(2, dtype=m.uint8, device="cpu", low=-5, high=-1),
                     lambda: m.testing.make_tensor(2, 2, dtype=m.float32, device="cpu", noncontiguous=True,
                                                   memory_format=m.contiguous_format)):
            try:
                call()
                out.append(None)
            except ValueError as exc:
                out.append(str(exc).replace("torchplug.", "torch."))
        return out

    assert run(tp) == run(torch)


def test_assert_allclose_warns_and_compares_like_torch():
    for m in (tp, torch):
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated since 1.12"):
            m.testing.assert_allclose(m.tensor([1.0, 2.0]), [1.0, 2.00001])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(AssertionError, match="Tensor-likes are not close"):
                m.testing.assert_allclose(m.tensor([1.0]), [1.1])
