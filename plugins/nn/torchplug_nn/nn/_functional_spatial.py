"""Spatial ``torch.nn.functional`` ops as vectorised compositions: channel shuffle, local response norm,
adaptive/fractional max pooling with indices, ``affine_grid``/``grid_sample``, ``gumbel_softmax``, ``conv_tbc``.

Pooling picks its argmax positions without recording, then gathers the values at them, so the
gradient flows to exactly the element PyTorch's kernel routes it to.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import torchplug
from torchplug._tensor.tensor import Tensor

__all__ = [
    "channel_shuffle", "native_channel_shuffle", "local_response_norm", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "affine_grid", "grid_sample", "gumbel_softmax",
    "conv_tbc",
]


def _tuple(x: Any, n: int) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,) * n


def _F() -> Any:
    return torchplug.nn.functional


# ---- channel shuffle / local response norm --------------------------------------------------------------
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels (dim 1) into ``groups`` and interleave them: (N, g, C/g, *) -> (N, C/g, g, *)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.size(1)
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    shape = list(input.shape)
    x = input.reshape(shape[0], groups, c // groups, *shape[2:])
    return x.transpose(1, 2).reshape(shape)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` (PyTorch's native-kernel entry point; same result)."""
    return channel_shuffle(input, groups)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Normalize each element by the squared sum over ``size`` neighbouring channels."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    F = _F()
    div = input.mul(input)
    if dim == 3:
        div = F.pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


# ---- max pooling over explicit windows ------------------------------------------------------------------
def _window_max(input: Tensor, positions: list[np.ndarray], nd: int) -> tuple[Tensor, Tensor]:
    """Max over windows given per spatial dim as (B, O_i, K_i) input positions (-1 = outside the window).

    ``input`` is (B, *spatial); returns (values, flat indices into the spatial plane), both (B, *O).
    """
    b = input.shape[0]
    spatial = list(input.shape[1:])
    flat = np.zeros((b,) + (1,) * (2 * nd), dtype=np.int64)
    ok = np.ones_like(flat, dtype=bool)
    for i, pos in enumerate(positions):
        shape = [b] + [1] * (2 * nd)
        shape[1 + i], shape[1 + nd + i] = pos.shape[1], pos.shape[2]
        p = pos.reshape(shape)
        flat = flat * spatial[i] + np.maximum(p, 0)
        ok = ok & (p >= 0)
    outs = list(flat.shape[1:1 + nd])
    flat = flat.reshape(b, int(np.prod(outs)), -1)
    ok = ok.reshape(flat.shape)
    plane = input.reshape(b, -1)
    with torchplug.no_grad():
        idx_t = torchplug.from_numpy(np.ascontiguousarray(flat)).to(plane.device)
        win = plane.detach().gather(1, idx_t.reshape(b, -1)).reshape(flat.shape)
        mask = torchplug.from_numpy(np.ascontiguousarray(ok)).to(plane.device)
        win = win.masked_fill(~mask, -math.inf)
        # NaN wins, as in PyTorch's kernels (``val > max || isnan(val)``).
        win = torchplug.where(win.isnan(), torchplug.full_like(win, math.inf), win)
        arg = win.argmax(-1, keepdim=True)
        indices = idx_t.gather(2, arg).reshape(b, -1)
    values = plane.gather(1, indices).reshape([b] + outs)
    return values, indices.reshape([b] + outs)


def _flatten_batch(input: Tensor, nd: int) -> tuple[Tensor, list[int]]:
    lead = list(input.shape[: input.dim() - nd])
    return input.reshape([-1] + list(input.shape[input.dim() - nd:])), lead


def _adaptive_positions(length: int, out: int, batch: int) -> np.ndarray:
    j = np.arange(out)
    start = (j * length) // out
    end = -((-(j + 1) * length) // out)
    k = int((end - start).max()) if out else 0
    pos = start[:, None] + np.arange(k)[None, :]
    pos = np.where(pos < end[:, None], pos, -1)
    return np.broadcast_to(pos, (batch, out, k))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-D adaptive max pooling returning (values, indices into each D*H*W plane)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"adaptive_max_pool3d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being empty")
    sizes = _tuple(output_size, 3)
    spatial = list(input.shape[-3:])
    sizes = [spatial[i] if sizes[i] is None else int(sizes[i]) for i in range(3)]
    x, lead = _flatten_batch(input, 3)
    b = x.shape[0]
    positions = [_adaptive_positions(spatial[i], sizes[i], b) for i in range(3)]
    values, indices = _window_max(x, positions, 3)
    return values.reshape(lead + sizes), indices.reshape(lead + sizes)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-D adaptive max pooling; ``return_indices`` adds the argmax positions."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _fractional_positions(samples: np.ndarray, length: int, out: int, pool: int) -> np.ndarray:
    """PyTorch's ``generate_intervals`` for every plane at once, in the input's float precision."""
    dt = samples.dtype
    seq = np.empty(samples.shape + (out,), dtype=np.int64)
    if out > 1:
        alpha = dt.type(length - pool) / dt.type(out - 1)
        i = np.arange(out - 1, dtype=dt)
        s = samples[..., None]
        seq[..., : out - 1] = ((i + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    if out > 0:
        seq[..., out - 1] = length - pool
    pos = seq[..., None] + np.arange(pool)
    return pos


def _fractional(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any, samples: Tensor | None,
                nd: int) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # torch's 2-d form takes len() of the ratio before widening it, so a bare number is a TypeError there
        # ("object of type 'float' has no len()"); the 3-d form widens first and accepts it
        if len(output_ratio if nd == 2 else _tuple(output_ratio, nd)) > nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, nd)
        output_size = [int(input.size(-nd + i) * ratio[i]) for i in range(nd)]
    outs = [int(v) for v in _tuple(output_size, nd)]
    ks = [int(v) for v in _tuple(kernel_size, nd)]
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    n = 1 if input.dim() == nd + 1 else input.size(0)
    c = input.size(-nd - 1)
    if samples is None:
        samples = torchplug.rand(n, c, nd, dtype=input.dtype, device=input.device)
    if samples.dim() != 3 or samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.size(-1)}.")
    if samples.size(1) != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(0) != n:
        raise RuntimeError("Expect _random_samples.size(0) no less than input batch size.")
    spatial = list(input.shape[-nd:])
    words = ["time", "height", "width"][3 - nd:]
    prefix = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    for i in range(nd):
        # PyTorch's 3-d kernel asks for a strictly shorter span than the 2-d one.
        too_big = outs[i] + ks[i] - 1 > spatial[i] if nd == 2 else outs[i] + ks[i] - 1 >= spatial[i]
        if too_big:
            raise RuntimeError(f"{prefix}: pool {words[i]} {ks[i]} too large relative to input {words[i]} "
                               f"{spatial[i]}")
    np_dtype = np.float64 if input.dtype == torchplug.float64 else np.float32
    smp = samples.detach().to(torchplug.float64).cpu().numpy().astype(np_dtype).reshape(n * c, nd)
    # The 2-d kernel reads sample 0 for the width and 1 for the height; the 3-d one reads them in order.
    order = [1, 0] if nd == 2 else [0, 1, 2]
    positions = [_fractional_positions(smp[:, order[i]], spatial[i], outs[i], ks[i]) for i in range(nd)]
    x, lead = _flatten_batch(input, nd)
    values, indices = _window_max(x, positions, nd)
    return values.reshape(lead + outs), indices.reshape(lead + outs)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """2-D fractional max pooling (Graham, 2014) returning (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """2-D fractional max pooling; the pseudo-random window starts come from ``_random_samples`` or the generator."""
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """3-D fractional max pooling returning (values, indices)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """3-D fractional max pooling; the pseudo-random window starts come from ``_random_samples`` or the generator."""
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]


# ---- affine_grid / grid_sample ----------------------------------------------------------------------------
def _linspace(n: int, align_corners: bool, like: Tensor) -> Tensor:
    if n <= 1:
        return torchplug.zeros(1, dtype=like.dtype, device=like.device)
    r = torchplug.linspace(-1, 1, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """Sampling grid (N, H, W, 2) or (N, D, H, W, 3) for the affine maps ``theta`` (N, 2, 3) / (N, 3, 4)."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    nd = len(spatial)
    # Coordinates are (x, y[, z]) with x along the last spatial dim, as PyTorch's base grid.
    axes = [_linspace(spatial[nd - 1 - i], align_corners, theta) for i in range(nd)]
    count = 1
    for s in spatial:
        count *= s
    cols = []
    for i, ax in enumerate(axes):
        shape = [1] * nd
        shape[nd - 1 - i] = spatial[nd - 1 - i]
        cols.append(ax.reshape(shape).expand(spatial))
    cols.append(torchplug.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = torchplug.stack(cols, -1).reshape(1, count, nd + 1).expand(n, count, nd + 1)
    grid = torchplug.bmm(base, theta.transpose(1, 2))
    return grid.reshape([n] + spatial + [nd])


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    if twice_low == twice_high:
        return torchplug.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = (x - low).abs()
    extra = torchplug.fmod(x, span)
    flips = torchplug.floor(x.detach() / span)
    even = torchplug.remainder(flips, 2) == 0
    return torchplug.where(even, extra + low, span - extra + low)


def _pad_coord(x: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return x.clamp(0, size - 1)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return x.clamp(0, size - 1)
    return x


def _gather(plane: Tensor, coords: list[Tensor], sizes: list[int]) -> Tensor:
    """``plane`` (N, C, prod(sizes)) read at integer ``coords`` (each (N, P)); zero outside the input."""
    ok = None
    flat = None
    for c, s in zip(coords, sizes):
        inside = (c >= 0) & (c <= s - 1)
        ok = inside if ok is None else ok & inside
        ci = c.clamp(0, s - 1).long()
        flat = ci if flat is None else flat * s + ci
    idx = flat.unsqueeze(1).expand(plane.shape[0], plane.shape[1], flat.shape[1])
    return plane.gather(2, idx) * ok.unsqueeze(1).to(plane.dtype)


def _cubic_coeffs(t: Tensor) -> list[Tensor]:
    a = -0.75

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_checks(input: Tensor, grid: Tensor, mode: str) -> None:
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {i} being empty")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, [D,] H, W) at the normalized ``grid`` locations (N, [Do,] Ho, Wo, 2|3)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    _grid_checks(input, grid, mode)
    nd = input.dim() - 2
    n, c = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    outs = list(grid.shape[1:-1])
    plane = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, nd)
    # grid[..., 0] is x (the last input dim); reorder to input-dim order.
    raw = [_unnormalize(g[..., nd - 1 - i], sizes[i], align_corners) for i in range(nd)]
    if mode == "bicubic":
        out = _bicubic(plane, raw, sizes, padding_mode, align_corners)
    else:
        coords = [_pad_coord(raw[i], sizes[i], padding_mode, align_corners) for i in range(nd)]
        if mode == "nearest":
            out = _gather(plane, [torchplug.round(cd.detach()) for cd in coords], sizes)
            if grid.requires_grad:
                # PyTorch hands the grid a zero gradient here (not none); a never-taken branch does the same.
                never = torchplug.zeros((), dtype=torchplug.bool, device=grid.device)
                out = out + torchplug.where(never, grid.sum(), torchplug.zeros((), dtype=out.dtype, device=out.device))
        else:
            lows = [torchplug.floor(cd.detach()) for cd in coords]
            out = None
            for corner in range(2 ** nd):
                pos, weight = [], None
                for i in range(nd):
                    hi = (corner >> (nd - 1 - i)) & 1
                    pos.append(lows[i] + hi)
                    w = (coords[i] - lows[i]) if hi else (lows[i] + 1 - coords[i])
                    weight = w if weight is None else weight * w
                term = _gather(plane, pos, sizes) * weight.unsqueeze(1)
                out = term if out is None else out + term
    return out.reshape([n, c] + outs)


def _bicubic(plane: Tensor, raw: list[Tensor], sizes: list[int], padding_mode: str, align_corners: bool) -> Tensor:
    y, x = raw
    y0, x0 = torchplug.floor(y.detach()), torchplug.floor(x.detach())
    cy, cx = _cubic_coeffs(y - y0), _cubic_coeffs(x - x0)
    out = None
    for i in range(4):
        yy = _pad_coord(y0 + (i - 1), sizes[0], padding_mode, align_corners)
        row = None
        for j in range(4):
            xx = _pad_coord(x0 + (j - 1), sizes[1], padding_mode, align_corners)
            term = _gather(plane, [yy, xx], sizes) * cx[j].unsqueeze(1)
            row = term if row is None else row + term
        term = row * cy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out


# ---- gumbel softmax / conv_tbc --------------------------------------------------------------------------
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Samples from the Gumbel-Softmax distribution; ``hard=True`` returns one-hot with soft gradients."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -torchplug.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = torchplug.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution over time-batch-channel input (T, B, Cin) with weight (K, Cin, Cout) -> (T', B, Cout)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
