"""Fake (meta) kernels of custom ops: the Meta-key trampoline and ``get_ctx`` for dynamic sizes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["FakeImplCtx", "DynamicSize", "get_ctx", "make_meta_kernel", "run_fake", "record_fake_contexts"]

_CURRENT = threading.local()


class DynamicSize(int):
    """A data-dependent size on the meta device: a plain int (so shapes stay concrete) that
    remembers its declared bounds.  Its value is ``max`` when one is given (the worst case, so
    ``memory_estimate`` is an upper bound) and ``min`` otherwise."""

    min: int
    max: int | None

    def __new__(cls, min: int, max: int | None) -> DynamicSize:  # noqa: A002 - PyTorch's keyword names
        self = super().__new__(cls, max if max is not None else min)
        self.min, self.max = min, max
        return self

    def __repr__(self) -> str:
        return f"DynamicSize({int(self)}, min={self.min}, max={self.max})"


class FakeImplCtx:
    """What ``torchplug.library.get_ctx()`` returns inside a fake kernel."""

    def __init__(self, op_name: str) -> None:
        self._op = op_name
        self.dynamic_sizes: list[DynamicSize] = []  # read by opcheck to accept data-dependent dims

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> int:  # noqa: A002
        """A size that depends on the input data (``nonzero``-like ops).

        There is no symbolic shape engine here, so the size is a concrete :class:`DynamicSize`:
        ``max`` when given, else ``min``.  ``opcheck`` accepts any real size in ``[min, max]``
        where the fake output used one."""
        if not isinstance(min, int) or (max is not None and not isinstance(max, int)):
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected min and max to be statically known ints.")
        if min < 0:
            raise ValueError(
                f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater than or equal to 0: this API can "
                "only create non-negative sizes."
            )
        if max is not None and max < min:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected max >= min.")
        size = DynamicSize(min, max)
        self.dynamic_sizes.append(size)
        return size

    create_unbacked_symint = new_dynamic_size  # PyTorch's deprecated name


def get_ctx() -> FakeImplCtx:
    """The context of the fake kernel running now; ``RuntimeError`` anywhere else."""
    ctx = getattr(_CURRENT, "ctx", None)
    if ctx is None:
        raise RuntimeError(
            "torchplug.library.get_ctx() can only be called inside a fake kernel (a function registered with "
            "register_fake), while it runs on meta tensors. Move the call into the fake kernel."
        )
    return ctx


def run_fake(fake: Callable[..., Any], op_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, FakeImplCtx]:
    """Call ``fake`` with a fresh :class:`FakeImplCtx` current; returns the result and the ctx."""
    ctx = FakeImplCtx(op_name)
    recorder = getattr(_CURRENT, "recorder", None)
    if recorder is not None:  # opcheck wants the dynamic sizes the fake kernel created
        recorder.append(ctx)
    previous = getattr(_CURRENT, "ctx", None)
    _CURRENT.ctx = ctx
    try:
        return fake(*args, **kwargs), ctx
    finally:
        _CURRENT.ctx = previous


class record_fake_contexts:
    """``with record_fake_contexts() as ctxs:`` collects the ctx of every fake kernel run inside."""

    def __enter__(self) -> list[FakeImplCtx]:
        self._previous = getattr(_CURRENT, "recorder", None)
        _CURRENT.recorder = []
        return _CURRENT.recorder

    def __exit__(self, *exc: Any) -> None:
        _CURRENT.recorder = self._previous


def make_meta_kernel(opdef: Any) -> Callable[..., Any]:
    """The kernel registered at ``Meta`` for a custom op: it runs the op's current fake kernel.

    Reading ``opdef`` at call time lets ``register_fake`` swap the fake without touching the
    dispatcher; an op without one says how to add it."""
    split = opdef._split_args

    def meta_kernel(*args: Any) -> Any:
        fake = opdef._fake_fn
        if fake is None:
            if not opdef._parsed.returns:  # nothing to describe: PyTorch generates this trivial fake kernel
                return None
            raise RuntimeError(
                f"There was no fake impl registered for {opdef._qualname}. This is necessary for the meta device "
                f"(and torchplug.utils.memory_estimate) to run it. Please use `{opdef._name}.register_fake` "
                "(or torchplug.library.register_fake) to add a fake impl."
            )
        pos, kw = split(args)
        return run_fake(fake, opdef._qualname, pos, kw)[0]

    meta_kernel.__qualname__ = f"fake[{opdef._qualname}]"
    return meta_kernel
