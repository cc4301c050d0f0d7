"""``torch.stft`` / ``torch.istft`` and their Tensor methods, composed from existing ops as ATen's
``SpectralOps.cpp`` does: frames by ``unfold``, the window by ``mul``, the transform by the FFT primitives, the
overlap-add of ``istft`` by ``index_add``.  Every step is a differentiable op, so autograd (and every backend
with those ops) handles them without formulas of their own.
"""

from __future__ import annotations

import warnings
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.nn_functional import pad as _pad
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "stft", "istft"]

# aten's fft_norm_mode values
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2
_WARNED: set[str] = set()  # torch's TORCH_WARN_ONCE: each of these warnings once per process


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _type_string(t: Tensor) -> str:
    """ATen's ``Tensor::toString()``: ``torch.DoubleTensor``, but ``CPUComplexFloatType`` for complex dtypes
    (they have no legacy tensor type)."""
    name = D.scalar_type_name(t.dtype)
    device = t.device.type
    if t.dtype.is_complex:
        return f"{device.upper()}{name}Type"
    return f"torch.{'' if device == 'cpu' else device + '.'}{name}Tensor"


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _opt(value: Any) -> str:
    """ATen's ``writeOpt`` of an optional bool/int: ``None``, or the value with bools as 0/1."""
    return "None" if value is None else str(int(value))


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{_type_string(window)}{{{_sizes(window)}}}"


def _pad_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor | None:
    """The window centred in ``n_fft`` samples by zeros; no window (a rectangle) stays ``None`` when it spans
    ``n_fft`` (ATen then skips the multiplication)."""
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:
        window = A.ones([win_length], dtype=like.dtype, device=like.device)
    return A.constant_pad_nd(window, [left, n_fft - win_length - left], 0)


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """Short-time Fourier transform: the FFT of each ``n_fft``-sample frame (``hop_length`` apart, multiplied
    by ``window``) of a 1-D signal or a batch of them, shaped ``(B?, N, T)`` (``(B?, N, T, 2)`` real pairs
    with ``return_complex=False``)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # torch.functional.stft pads before the op, so the op's messages show the padded sizes
        signal_dim = input.dim()
        half = n_fft // 2
        padded = _pad(input.view([1] * (3 - signal_dim) + list(input.shape)), [half, half], pad_mode)
        input = padded.view(list(padded.shape[-signal_dim:]) if signal_dim else [])
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(what: str) -> RuntimeError:
        return RuntimeError(
            f"stft({_type_string(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_repr(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : {what}")

    if window is None:
        _warn_once("stft window", (
            "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
            "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
            "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`."))
    complex_result = return_complex if return_complex is not None else (
        input.is_complex() or (window is not None and window.is_complex()))
    if not complex_result:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        _warn_once("stft return_complex", (
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
            "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
            "torch.view_as_real on the complex output to recover the old return format."))
    if not (input.is_floating_point() or input.is_complex()):
        raise fail("expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    signal = input.unsqueeze(0) if input.dim() == 1 else input
    length = signal.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")  # (ATen prints win_length here)
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
                   f"{_sizes(window)}")
    if align_to_window:
        # each frame starts where its window does: frames of win_length samples, then centred in n_fft zeros
        frames = signal.unfold(-1, win, hop)
        if window is not None:
            frames = frames * window
        left = (n_fft - win) // 2
        frames = A.constant_pad_nd(frames, [left, n_fft - win - left], 0)
    else:
        frames = signal.unfold(-1, n_fft, hop)  # (batch, n_frames, n_fft), a view as ATen's as_strided
        full_window = _pad_window(window, win, n_fft, input)
        if full_window is not None:
            frames = frames * full_window
    complex_fft = frames.is_complex()
    one_sided = (not complex_fft) if onesided is None else onesided
    norm = _BY_ROOT_N if normalized else _NONE
    if complex_fft:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = A._fft_c2c(frames, [2], norm, True)
    else:
        out = A._fft_r2c(frames, [2], norm, one_sided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if complex_result else A.view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """Inverse short-time Fourier transform: the inverse FFT of each frame of ``input`` (as :func:`stft`
    returns it), multiplied by ``window``, overlap-added and divided by the overlap-added squared window."""
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once("istft window", (
            "A window was not provided. A rectangular window will be applied.Please provide the same window used by "
            "stft to make the inversion lossless.To suppress this warning and use a rectangular window, explicitly "
            "set `window=torch.ones(n_fft, device=<device>)`."))
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")

    def fail(what: str) -> RuntimeError:
        return RuntimeError(
            f"istft({_type_string(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_repr(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, length={_opt(length)}, return_complex={int(return_complex)}) {what}")

    if input.numel() == 0:
        raise fail(": input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise fail(f": expected a tensor with 3 or 4 dimensions of complex, but got {input.dim() + 1}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop * (n_frames - 1)
    one_sided = fft_size != n_fft if onesided is None else onesided
    if one_sided and n_fft // 2 + 1 != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                   f"when onesided=True, but got {fft_size}")
    if not one_sided and n_fft != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                   f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    full_window = window if window is not None else A.ones([win], dtype=_real(input.dtype), device=input.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        full_window = A.constant_pad_nd(full_window, [left, n_fft - win - left], 0)
    spectra = input.unsqueeze(0) if input.dim() == 2 else input
    spectra = spectra.transpose(1, 2)  # (channel, n_frames, fft_size)
    norm = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = A._fft_c2c(spectra, [2], norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one_sided:
            spectra = spectra.narrow(-1, 0, n_fft // 2 + 1)
        frames = A._fft_c2r(spectra, [2], norm, n_fft)
    frames = frames * full_window  # (channel, n_frames, n_fft)
    # overlap-add (ATen's unfold_backward): sample j of frame t lands at t * hop + j
    positions = (A["arange.start_step"](0, n_frames, 1, dtype=D.int64, device=input.device).unsqueeze(1) * hop
                 + A["arange.start_step"](0, n_fft, 1, dtype=D.int64, device=input.device)).reshape([-1])
    channels = frames.shape[0]
    signal = A.index_add(A.zeros([channels, expected_len], dtype=frames.dtype, device=frames.device), 1, positions,
                         frames.reshape([channels, -1]))
    squared = (full_window * full_window).expand([n_frames, n_fft]).reshape([1, -1])
    envelope = A.index_add(A.zeros([1, expected_len], dtype=squared.dtype, device=squared.device), 1, positions,
                           squared)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected_len - n_fft // 2 if center else expected_len
    signal = signal[:, start:end]
    envelope = envelope[:, start:end]
    from torchplug._runtime.backends import backend_for

    # (a data-dependent check: a backend without data, meta, only computes the shapes)
    if backend_for(envelope.device.type).has_data and bool((envelope.abs().min() < 1e-11).item()):
        raise fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    signal = signal / envelope
    if input.dim() == 2:
        signal = signal.squeeze(0)
    if end > expected_len:
        _warn_once("istft length", (
            "The length of signal is shorter than the length parameter. Result is being padded with zeros in the "
            "tail. Please check your center and hop_length settings."))
        signal = A.constant_pad_nd(signal, [0, end - expected_len], 0)
    return signal


def _real(dtype: D.dtype) -> D.dtype:
    return {D.complex64: D.float32, D.complex128: D.float64}.get(dtype, dtype)


def _stft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                 window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
                 normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
                 align_to_window: bool | None = None) -> Tensor:
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex,
                align_to_window)


def _istft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                  window: Tensor | None = None, center: bool = True, normalized: bool = False,
                  onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)


_stft_method.__name__, _stft_method.__doc__ = "stft", stft.__doc__
_istft_method.__name__, _istft_method.__doc__ = "istft", istft.__doc__

FUNCTIONS: dict[str, Any] = {"stft": stft, "istft": istft}
METHODS: dict[str, Any] = {"stft": _stft_method, "istft": _istft_method}
