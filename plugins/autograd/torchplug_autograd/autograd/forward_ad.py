"""``torchplug.autograd.forward_ad``: forward-mode automatic differentiation with dual tensors.

Inside ``with dual_level():``, ``make_dual(primal, tangent)`` gives a tensor whose ops carry the
tangent along (the autograd kernels compute each op's Jacobian-vector product), and
``unpack_dual(t)`` returns its primal and tangent.  Only one level may be active at a time, as in
PyTorch.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from torchplug._tensor.tensor import Tensor

# FW, enter_level and exit_level are no public API: they are the plugin's stack of levels, which
# torchplug.func's transforms nest (the public functions allow one level, as PyTorch's).
from torchplug_autograd._forward import FW, enter_level, exit_level, set_tangent, tangent_of

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


def enter_dual_level() -> int:
    """Enter a new forward grad level and return its index.

    This level can be used to make and unpack dual Tensors to compute forward gradients; it
    becomes the default level of the other functions of this module.
    """
    if FW.levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    enter_level()
    return len(FW.levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit a forward grad level: every tangent recorded at it is dropped."""
    if level is None:
        level = len(FW.levels) - 1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != len(FW.levels) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    exit_level(FW.levels[level])


def _level_id(level: int | None, fn: str) -> int | None:
    if level is None:
        return FW.levels[-1] if FW.levels else None
    if not 0 <= level < len(FW.levels):
        raise RuntimeError(f"Invalid level given to {fn}")
    return FW.levels[level]


def _primal_view(tensor: Tensor, lid: int) -> Tensor:
    """A view of ``tensor`` without its tangent at level ``lid`` (gradients still flow to ``tensor``);
    the tangents of the other active levels stay (nested levels, as torch.func nests them)."""
    on = FW.on
    FW.on = False
    try:
        view = tensor.view_as(tensor)
    finally:
        FW.on = on
    view.__dict__["_fw_nodiff"] = (lid,)
    for other in FW.levels:
        if other != lid:
            t = tangent_of(tensor, other)
            if t is not None:
                set_tangent(view, other, t.view_as(t))
    return view


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``.

    Raises ``RuntimeError`` outside ``dual_level()`` or for a tangent of another size, and
    ``ValueError`` for a primal or tangent that is not floating point or complex.
    """
    if level is None and not FW.levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    lid = _level_id(level, "_make_dual")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if tangent_of(tensor, lid) is not None:
        index = FW.levels.index(lid)
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {index} is not supported.")
    if tangent._device != tensor._device:
        raise RuntimeError(f"Trying to set a forward gradient that is on device {tangent.device} while the original "
                           f"Tensor is on device {tensor.device}: move the tangent with .to() first.")
    if tangent.stride() != tensor.stride() and tensor.numel() > 1:
        # a tangent is laid out like its primal (views of the dual tensor view the tangent alike)
        import torchplug

        laid = torchplug.empty_strided(tensor.shape, tensor.stride(), dtype=tangent.dtype, device=tangent.device)
        tangent = laid.copy_(tangent)
    dual = _primal_view(tensor, lid)
    del dual.__dict__["_fw_nodiff"]
    set_tangent(dual, lid, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """The primal (a view of the dual tensor) and tangent (None if it has none) of ``unpack_dual``."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """The primal view and the tangent of ``tensor`` at ``level`` (the current one by default).

    Outside any level the primal is ``tensor`` itself and the tangent ``None``.
    """
    if level is None and not FW.levels:
        return UnpackedDualTensor(tensor, None)
    lid = _level_id(level, "_fw_primal")
    if lid is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_primal_view(tensor, lid), tangent_of(tensor, lid))


def summary() -> list[str]:
    """The doctor's lines: where forward AD runs and how many ops get their jvp by each strategy."""
    from collections import Counter

    from torchplug._dispatch.dispatcher import DISPATCHER

    from torchplug_autograd._jvp import strategy_kind
    from torchplug_autograd._rules import RULES

    kinds: Counter[str] = Counter()
    for name, rule in RULES.items():
        entry = DISPATCHER.find(name)
        if entry is not None and not entry.kernels.get("CompositeImplicitAutograd"):
            kinds[strategy_kind(entry, rule)] += 1
    active = f"{len(FW.levels)} level(s) active" if FW.levels else "no level active"
    return [
        "inside the autograd plugin's Autograd kernels (a dual tensor carries the Autograd key); " + active,
        "ops with a jvp: " + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])),
    ]


class dual_level:
    """Context manager for forward AD: every forward computation happens inside it.

    ``__enter__`` returns the level's index (``enter_dual_level``); ``__exit__`` drops the tangents.
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()
