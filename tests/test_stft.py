"""torch.stft / torch.istft (and the Tensor methods) compared with torch: values, dtypes and shapes for each
argument, the warnings and errors, gradients (torch's and finite-difference gradcheck), meta shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 50))
XC = X + 1j * RNG.standard_normal((2, 50))


def _check(ours, theirs, rtol=1e-7, atol=1e-9):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().resolve_conj().numpy(), theirs.detach().resolve_conj().numpy(),
                               rtol=rtol, atol=atol)


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(tp), fn(torch)


STFT_CASES = [
    {}, {"center": False}, {"hop_length": 3, "win_length": 10}, {"win_length": 9}, {"normalized": True},
    {"onesided": False}, {"pad_mode": "constant"}, {"pad_mode": "replicate"},
    {"center": False, "align_to_window": True, "win_length": 10, "hop_length": 5},
    {"center": False, "align_to_window": False},
]


@pytest.mark.parametrize("kw", STFT_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
@pytest.mark.parametrize("signal", ["batch", "1d", "complex", "float32"])
@pytest.mark.parametrize("windowed", [False, True])
def test_stft_matches_torch(kw, signal, windowed):
    data = {"batch": X, "1d": X[0], "complex": XC, "float32": X.astype(np.float32)}[signal]
    if signal == "complex" and kw.get("onesided") is not None:
        kw = {k: v for k, v in kw.items() if k != "onesided"}

    def run(m):
        win = kw.get("win_length", 16)
        window = m.hann_window(win, dtype=m.float64 if signal != "float32" else m.float32) if windowed else None
        return m.stft(m.tensor(data), 16, window=window, return_complex=True, **kw)

    ours, theirs = _both(run)
    _check(ours, theirs, rtol=1e-5 if signal == "float32" else 1e-7, atol=1e-5 if signal == "float32" else 1e-9)


def test_stft_real_pairs_and_method():
    ours, theirs = _both(lambda m: m.tensor(X).stft(16, hop_length=5, return_complex=False))
    _check(ours, theirs)
    ours, theirs = _both(lambda m: m.tensor(X).stft(16, window=m.ones(16, dtype=m.complex128)))
    _check(ours, theirs)  # a complex window makes the result complex (and two-sided) by default


ISTFT_CASES = [
    {}, {"length": 60}, {"length": 30}, {"hop_length": 3, "win_length": 10}, {"normalized": True},
    {"center": False}, {"onesided": False},
]


@pytest.mark.parametrize("kw", ISTFT_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
@pytest.mark.parametrize("batched", [True, False])
def test_istft_matches_torch(kw, batched):
    data = X if batched else X[0]

    def run(m):
        win = kw.get("win_length", 16)
        # a rectangle without centring: the envelope of a hann window is zero at the first sample
        window = m.ones(win, dtype=m.float64) if kw.get("center") is False else m.hann_window(win, dtype=m.float64)
        spec = m.stft(m.tensor(data), 16, kw.get("hop_length"), kw.get("win_length"), window,
                      center=kw.get("center", True), normalized=kw.get("normalized", False),
                      onesided=kw.get("onesided"), return_complex=True)
        return m.istft(spec, 16, window=window, **kw)

    ours, theirs = _both(run)
    _check(ours, theirs)


def test_istft_inverts_stft_and_returns_complex_signals():
    window = tp.hann_window(16, dtype=tp.float64)
    x = tp.tensor(X)
    back = tp.istft(tp.stft(x, 16, window=window, return_complex=True), 16, window=window, length=50)
    np.testing.assert_allclose(back.numpy(), X, atol=1e-12)

    def run(m):
        w = m.hann_window(16, dtype=m.float64)
        return m.tensor(XC).stft(16, window=w).istft(16, window=w, return_complex=True)

    ours, theirs = _both(run)
    _check(ours, theirs)


def test_meta_shapes_match_torch():
    ours = tp.stft(tp.empty(3, 100, device="meta"), 32, window=tp.empty(32, device="meta"), return_complex=True)
    theirs = torch.stft(torch.empty(3, 100, device="meta"), 32, window=torch.empty(32, device="meta"),
                        return_complex=True)
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == "torchplug.complex64"
    assert ours.device.type == "meta"
    window = tp.empty(32, device="meta")
    back = tp.istft(tp.stft(tp.empty(3, 100, device="meta"), 32, window=window, return_complex=True), 32,
                    window=window, length=100)
    assert tuple(back.shape) == (3, 100) and back.device.type == "meta"


# ---- warnings and errors ---------------------------------------------------------------------------------------
def _message(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            fn(m)
    return type(info.value), str(info.value)


SPEC = np.fft.rfft(RNG.standard_normal((13, 16)), axis=-1).T  # (9, 13): a onesided n_fft=16 spectrum


@pytest.mark.parametrize("call", [
    lambda m: m.stft(m.tensor(X), 16),
    lambda m: m.stft(m.tensor(X), 16, align_to_window=True, return_complex=True),
    lambda m: m.stft(m.tensor(X), 100, center=False, return_complex=True),
    lambda m: m.stft(m.tensor(X), 100, return_complex=True),
    lambda m: m.stft(m.tensor(X), 16, hop_length=0, return_complex=True),
    lambda m: m.stft(m.tensor(X), 16, win_length=20, return_complex=True),
    lambda m: m.stft(m.tensor(X), 16, window=m.ones(5), return_complex=True),
    lambda m: m.stft(m.tensor(XC).to(m.complex64), 16, window=m.ones(5)),
    lambda m: m.stft(m.tensor(X).long(), 16, return_complex=True),
    lambda m: m.stft(m.tensor(X)[None], 16, return_complex=True),
    lambda m: m.stft(m.tensor(XC), 16, onesided=True),
    lambda m: m.stft(m.tensor(X), 16, return_complex=True, pad_mode="foo"),
    lambda m: m.istft(m.tensor(X), 16),
    lambda m: m.istft(m.tensor(SPEC), 15),
    lambda m: m.istft(m.tensor(SPEC), 16, onesided=False),
    lambda m: m.istft(m.tensor(SPEC), 16, hop_length=17),
    lambda m: m.istft(m.tensor(SPEC), 16, win_length=17),
    lambda m: m.istft(m.tensor(SPEC), 16, return_complex=True),
    lambda m: m.istft(m.tensor(SPEC)[:, :0], 16),
    lambda m: m.istft(m.tensor(SPEC), 16, window=m.ones(3)),
    lambda m: m.istft(m.tensor(SPEC), 16, window=m.zeros(16, dtype=m.float64)),
    lambda m: m.istft(m.tensor(SPEC), 16, window=m.ones(16, dtype=m.complex128)),
], ids=["no_return_complex", "align_with_center", "n_fft_too_long", "pad_too_long", "hop_zero", "win_too_long",
        "window_size", "complex_window_size", "integer", "3d", "complex_onesided", "pad_mode", "istft_real",
        "istft_n_fft", "istft_twosided", "istft_hop", "istft_win", "istft_complex_onesided", "istft_empty",
        "istft_window_size", "istft_zero_envelope", "istft_complex_window"])
def test_errors_match_torch(call):
    ours, theirs = _message(call, tp), _message(call, torch)
    assert ours[0] is theirs[0]
    assert ours[1].replace("torchplug", "torch") == theirs[1]


def test_warnings_once_like_torch():
    from torchplug._ops.pyfuncs import spectral

    spectral._WARNED.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            tp.stft(tp.tensor(X), 16, return_complex=False)
            tp.istft(tp.stft(tp.tensor(X), 16, window=tp.ones(16, dtype=tp.float64), return_complex=True), 16,
                     length=60)
    texts = [str(w.message) for w in seen]
    assert len(texts) == 4
    assert texts[0].startswith("A window was not provided. A rectangular window will be applied,which is known")
    assert texts[1].startswith("stft with return_complex=False is deprecated.")
    assert texts[2].startswith("A window was not provided. A rectangular window will be applied.Please provide")
    assert texts[3].startswith("The length of signal is shorter than the length parameter.")


# ---- autograd ----------------------------------------------------------------------------------------------------
def test_gradients_match_torch():
    def run(m):
        x = m.tensor(X[:, :40], requires_grad=True)
        w = m.hann_window(12, dtype=m.float64).requires_grad_()
        spec = m.stft(x, 16, hop_length=4, win_length=12, window=w, return_complex=True)
        back = m.istft(spec * 1.5, 16, hop_length=4, win_length=12, window=w, length=40)
        (spec.abs().sum() + (back ** 2).sum()).backward()
        return x.grad, w.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = run(tp), run(torch)
    _check(ours[0], theirs[0])
    _check(ours[1], theirs[1])


def test_gradcheck_float64():
    x = tp.tensor(X[:, :24], requires_grad=True)
    w = tp.hann_window(8, dtype=tp.float64).add(0.1).requires_grad_()
    assert tp.autograd.gradcheck(
        lambda a, b: tp.view_as_real(tp.stft(a, 8, hop_length=3, window=b, return_complex=True)), (x, w))
    spec = tp.stft(tp.tensor(X[:, :24]), 8, hop_length=2, window=w.detach(), return_complex=True)
    spec = spec.detach().requires_grad_()
    assert tp.autograd.gradcheck(lambda s, b: tp.istft(s, 8, hop_length=2, window=b, length=20), (spec, w))
