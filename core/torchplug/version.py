"""``torchplug.version``: what this installation is built with, as ``torch.version`` reports it.

torchplug itself is pure Python plus an optional C fast path: it is built against no CUDA, ROCm or
XPU toolkit, so those entries are ``None`` as on a CPU-only PyTorch build.  The CUDA backend is a
separate distribution (``torchplug-cuda``) that uses whatever CUDA runtime CuPy brings.
"""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torchplug")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    # __version__ is read from the installed metadata on first use: importlib.metadata costs ~30 ms to import
    if name == "__version__":
        value = globals()["__version__"] = _installed_version()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


debug: bool = False
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
git_version: str = "Unknown"
