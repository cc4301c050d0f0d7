"""torch.signal.windows (values, dtypes, errors against torch) and the torch.functional module."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
         "hamming", "hann", "kaiser", "nuttall"]


def _kwargs(name, sym):
    kw = {"a": [0.5, 0.3, 0.2]} if name == "general_cosine" else {}
    if name == "exponential":
        kw["tau"] = 2.5
        if not sym:
            kw["center"] = 2.0
    if name == "kaiser":
        kw["beta"] = 5.0
    if name == "gaussian":
        kw["std"] = 1.7
    return kw


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("name", NAMES)
def test_windows_match_torch(name, M, sym, dtype):
    kw = _kwargs(name, sym)
    ours = getattr(tp.signal.windows, name)(M, sym=sym, dtype=getattr(tp, dtype), **kw)
    theirs = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_default_dtype_device_and_requires_grad():
    w = tp.signal.windows.hann(8, requires_grad=True)
    assert w.dtype == tp.get_default_dtype() and w.requires_grad
    assert tp.signal.windows.gaussian(5, device="meta").device.type == "meta"
    assert set(tp.signal.windows.__all__) == set(torch.signal.windows.__all__)


@pytest.mark.parametrize("call", [
    lambda m: m.signal.windows.hann(-1),
    lambda m: m.signal.windows.hann(4, dtype=m.int64),
    lambda m: m.signal.windows.exponential(4, tau=0),
    lambda m: m.signal.windows.exponential(4, center=1.0),
    lambda m: m.signal.windows.gaussian(4, std=-1),
    lambda m: m.signal.windows.kaiser(4, beta=-1),
    lambda m: m.signal.windows.general_cosine(4, a=[]),
    lambda m: m.signal.windows.general_cosine(4, a=3),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value).replace("torchplug", "torch") == str(theirs.value)


def test_functional_module_names():
    import torch.functional as tf

    import torchplug.functional as F

    assert set(F.__all__) == set(tf.__all__)
    assert all(getattr(F, name) is getattr(tp, name) for name in F.__all__)
    x = tp.tensor(np.random.default_rng(0).standard_normal(64))
    spec = F.stft(x, 16, window=tp.hann_window(16, dtype=tp.float64), return_complex=True)
    assert tuple(spec.shape) == (9, 17)
