"""``torchplug.backends.cuda``: whether a cuda backend is installed, cuBLAS and attention switches.

``matmul.allow_tf32`` is the float32 matmul precision seen as a bool, exactly as in PyTorch
(True means ``torchplug.get_float32_matmul_precision() != 'highest'``); the reduced-precision
reduction flags and the scaled-dot-product-attention switches are recorded and checked (torchplug
has one attention implementation, the math one, which runs whatever they say).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from torchplug._base.flags import SDP_ENABLED

__all__ = [
    "is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
    "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
    "is_flash_attention_available", "sdp_kernel",
]


def is_built() -> bool:
    """Whether a backend for the ``cuda`` device type is installed and registered (torchplug-cuda).
    Built is not available: that also needs a GPU (``torchplug.cuda.is_available()``)."""
    from torchplug._runtime.backends import registered_backends
    from torchplug._plugins import ensure_loaded

    ensure_loaded()
    return "cuda" in registered_backends()


class _CuBLASModule:
    """``torchplug.backends.cuda.matmul``: only the known flags can be read or set."""

    _bools = {"allow_fp16_reduced_precision_reduction": True, "allow_bf16_reduced_precision_reduction": True,
              "allow_fp16_accumulation": False}

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            from torchplug._base.flags import get_float32_matmul_precision

            return get_float32_matmul_precision() != "highest"
        if name in self._bools:
            return self._bools[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
            from torchplug._base.flags import set_float32_matmul_precision

            set_float32_matmul_precision("high" if value else "highest")
        elif name in self._bools:
            if not isinstance(value, bool):
                raise RuntimeError(f"set_{name}_cublas expects a bool, but got {type(value).__name__}")
            type(self)._bools[name] = value
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = _CuBLASModule()

_sdp = SDP_ENABLED  # process-global, shared with torchplug.nn.attention.sdpa_kernel and F.scaled_dot_product_attention


def _set_sdp(kind: str, enabled: Any) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_{kind}_sdp(): argument 'enabled' must be bool, not {type(enabled).__name__}")
    _sdp[kind] = enabled


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be used (recorded; torchplug runs the math kernel)."""
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel."""
    _set_sdp("flash", enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be used."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel."""
    _set_sdp("mem_efficient", enabled)


def math_sdp_enabled() -> bool:
    """Whether the math attention kernel may be used."""
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math attention kernel."""
    _set_sdp("math", enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be used."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel."""
    _set_sdp("cudnn", enabled)


def is_flash_attention_available() -> bool:
    """False: no torchplug backend has a flash attention kernel."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> Iterator[None]:
    """Deprecated in PyTorch (use ``torch.nn.attention.sdpa_kernel``): set the four switches inside the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    saved = dict(_sdp)
    _set_sdp("flash", enable_flash)
    _set_sdp("math", enable_math)
    _set_sdp("mem_efficient", enable_mem_efficient)
    _set_sdp("cudnn", enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)
