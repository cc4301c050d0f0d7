"""``PYTORCH_CUDA_ALLOC_CONF`` parsing: PyTorch's option names, formats and errors.

The format is ``option:value,option2:value2``; ``roundup_power2_divisions`` also takes a list
``[256:1,512:2,>:4]``.  Unknown options raise ``RuntimeError`` naming the option and the
known ones, like PyTorch's caching-allocator config.  :attr:`AllocConf.unsupported` lists the
options given that CuPy's memory pool cannot honour (block splitting and rounding policies,
expandable segments, pinned-memory registration); the allocator warns about them once instead
of pretending to apply them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AllocConf", "parse", "from_environment", "KNOWN_OPTIONS", "ENV_VARS"]

ENV_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
# Options PyTorch's CUDA caching allocator accepts (torch 2.13).
KNOWN_OPTIONS = (
    "backend", "max_split_size_mb", "max_non_split_rounding_mb", "roundup_power2_divisions",
    "garbage_collection_threshold", "expandable_segments", "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register", "pinned_num_register_threads", "pinned_use_background_threads",
    "graph_capture_record_stream_reuse", "per_process_memory_fraction",
)
# What the CuPy pool applies: the allocator backend, reclaiming above a threshold, a memory cap.
APPLIED = ("backend", "garbage_collection_threshold", "per_process_memory_fraction")


@dataclass
class AllocConf:
    backend: str = "native"
    max_split_size_mb: int | None = None
    max_non_split_rounding_mb: int | None = None
    roundup_power2_divisions: Any = None
    garbage_collection_threshold: float | None = None
    expandable_segments: bool = False
    release_lock_on_cudamalloc: bool = False
    pinned_use_cuda_host_register: bool = False
    pinned_num_register_threads: int = 1
    pinned_use_background_threads: bool = False
    graph_capture_record_stream_reuse: bool = False
    per_process_memory_fraction: float | None = None
    given: list[str] = field(default_factory=list)

    @property
    def unsupported(self) -> list[str]:
        """Options given that the CuPy memory pool does not implement."""
        return [k for k in self.given if k not in APPLIED]


def _error(msg: str, text: str) -> RuntimeError:
    return RuntimeError(f"{msg} (in PYTORCH_CUDA_ALLOC_CONF={text!r}).")


def _split(text: str) -> list[tuple[str, str]]:
    """``a:1,b:[x:1,y:2]`` -> [('a', '1'), ('b', '[x:1,y:2]')] (commas inside brackets kept)."""
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition(":")
        if not sep:
            raise _error(f"Error parsing CachingAllocator option {item!r}: expected option:value", text)
        out.append((key.strip(), value.strip()))
    return out


def _bool(key: str, value: str, text: str) -> bool:
    if value in ("True", "true", "1"):
        return True
    if value in ("False", "false", "0"):
        return False
    raise _error(f"Expected a single True/False argument for {key}, got {value!r}", text)


def _int(key: str, value: str, text: str, minimum: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise _error(f"{key} expects an integer, got {value!r}", text) from None
    if n < minimum:
        raise _error(f"{key} too small: {n}, must be >= {minimum}", text)
    return n


def _divisions(value: str, text: str) -> Any:
    def power2(v: str) -> int:
        n = _int("roundup_power2_divisions", v, text, 0)
        if n and n & (n - 1):
            raise _error(f"For roundups, the divisions has to be power of 2 , but got {n}", text)
        return n

    if not value.startswith("["):
        return power2(value)
    if not value.endswith("]"):
        raise _error("roundup_power2_divisions list is missing its closing ']'", text)
    out: dict[str, int] = {}
    for part in value[1:-1].split(","):
        size, sep, div = part.partition(":")
        if not sep:
            raise _error(f"roundup_power2_divisions entries are size:divisions, got {part!r}", text)
        size = size.strip()
        if size != ">":
            power2(size)
        out[size] = power2(div.strip())
    return out


def parse(text: str) -> AllocConf:
    """Parse a ``PYTORCH_CUDA_ALLOC_CONF`` value (raises RuntimeError for unknown or invalid options)."""
    conf = AllocConf()
    for key, value in _split(text or ""):
        if key not in KNOWN_OPTIONS:
            raise _error(f"Unrecognized CachingAllocator option: {key}. Known options: {', '.join(KNOWN_OPTIONS)}", text)
        if key == "backend":
            if value not in ("native", "cudaMallocAsync"):
                raise _error(f"Unknown allocator backend {value!r}, options are native and cudaMallocAsync", text)
            conf.backend = value
        elif key in ("max_split_size_mb", "max_non_split_rounding_mb"):
            setattr(conf, key, _int(key, value, text, 20 if key == "max_split_size_mb" else 0))
        elif key == "roundup_power2_divisions":
            conf.roundup_power2_divisions = _divisions(value, text)
        elif key in ("garbage_collection_threshold", "per_process_memory_fraction"):
            try:
                f = float(value)
            except ValueError:
                raise _error(f"{key} expects a number, got {value!r}", text) from None
            lo_ok = f > 0.0 if key == "garbage_collection_threshold" else f >= 0.0
            hi_ok = f < 1.0 if key == "garbage_collection_threshold" else f <= 1.0
            if not (lo_ok and hi_ok):
                interval = "(0.0, 1.0)" if key == "garbage_collection_threshold" else "[0.0, 1.0]"
                raise _error(f"{key} is invalid: {value}, set it in {interval}", text)
            setattr(conf, key, f)
        elif key == "pinned_num_register_threads":
            n = _int(key, value, text, 1)
            if n & (n - 1):
                raise _error(f"Number of register threads has to be power of 2, got {n}", text)
            conf.pinned_num_register_threads = n
        else:
            setattr(conf, key, _bool(key, value, text))
        if key not in conf.given:
            conf.given.append(key)
    return conf


def from_environment(environ: Any = None) -> AllocConf:
    """The configuration from ``PYTORCH_CUDA_ALLOC_CONF`` (or ``PYTORCH_ALLOC_CONF``)."""
    env = os.environ if environ is None else environ
    for var in ENV_VARS:
        text = env.get(var)
        if text:
            return parse(text)
    return AllocConf()
