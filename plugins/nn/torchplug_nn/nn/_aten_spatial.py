"""The sampling-grid operators torch has at the top level (``torch.grid_sampler``, ``grid_sampler_2d``/``3d``,
``affine_grid_generator``): ATen's forms of ``nn.functional.grid_sample``/``affine_grid``, with the modes as
ints (interpolation 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection) and
``align_corners`` required.  The nn plugin exposes them as ``torchplug.<name>``."""

from __future__ import annotations

from typing import Any

from torchplug._tensor.tensor import Tensor

from . import _functional_spatial as S

__all__ = ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator"]

_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _bool(op: str, name: str, position: int, value: Any) -> bool:
    if value.__class__ is not bool:
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}")
    return value


def _modes(interpolation_mode: int, padding_mode: int) -> tuple[str, str]:
    """The ``grid_sample`` names of ATen's mode enums (torch does not check them; an unknown one is an error
    here rather than an unspecified result)."""
    if interpolation_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), "
                           f"but got {interpolation_mode}")
    if padding_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), but got "
                           f"{padding_mode}")
    return _INTERPOLATION[interpolation_mode], _PADDING[padding_mode]


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``input`` (N, C, [D,] H, W) sampled at the normalized ``grid`` locations (``nn.functional.grid_sample``)."""
    mode, padding = _modes(interpolation_mode, padding_mode)
    return S.grid_sample(input, grid, mode, padding, _bool("grid_sampler", "align_corners", 5, align_corners))


def _sampler(nd: int):
    name = f"grid_sampler_{nd}d"

    def sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                align_corners: bool) -> Tensor:
        if input.dim() != nd + 2 or grid.dim() != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, but "
                               f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
        mode, padding = _modes(interpolation_mode, padding_mode)
        return S.grid_sample(input, grid, mode, padding, _bool(name, "align_corners", 5, align_corners))

    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = f"``grid_sampler`` for {nd + 2}-D input only."
    return sampler


grid_sampler_2d = _sampler(2)
grid_sampler_3d = _sampler(3)


def affine_grid_generator(theta: Tensor, size: list[int], align_corners: bool) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for an output of ``size``
    (``nn.functional.affine_grid``)."""
    align_corners = _bool("affine_grid_generator", "align_corners", 3, align_corners)
    try:
        return S.affine_grid(theta, size, align_corners)
    except ValueError as exc:  # nn.functional's Python-level check; ATen's operator fails with RuntimeError
        raise RuntimeError(f"affine_grid_generator(): {exc}") from None
