"""Summary protobufs from tensors (PyTorch's ``torch.utils.tensorboard.summary``, the parts SummaryWriter uses
here): scalars, histograms and PNG images, built with NumPy, PIL and tensorboard's own protos."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary

__all__ = ["make_np", "scalar", "histogram", "make_histogram", "image", "convert_to_HWC", "make_grid"]


def make_np(x: Any) -> np.ndarray:
    """A NumPy array of a tensor (detached, on the host), an array, a number or a list."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, str):
        raise NotImplementedError("Strings are not supported as tensorboard values")
    if hasattr(x, "_keyset"):  # a torchplug tensor
        return x.detach().cpu().numpy()
    if np.isscalar(x):
        return np.array([x])
    return np.asarray(x)


def scalar(name: str, value: Any) -> Summary:
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} and "
                             f"{array.ndim} dimensions.")
    return Summary(value=[Summary.Value(tag=name, simple_value=float(array))])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """The histogram proto TensorBoard reads, with empty outer buckets trimmed (TensorFlow's histogram.cc)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - remainder]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (NCHW, 1 or 3 channels) tiled into one CHW canvas, ``ncols`` per row."""
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Expected a 4-D NCHW array with 1 or 3 channels")
    nimg, height, width = images.shape[0], images.shape[2], images.shape[3]
    ncols = min(nimg, ncols)
    nrows = int(np.ceil(float(nimg) / ncols))
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(nimg):
        y, x = divmod(i, ncols)
        canvas[:, y * height:(y + 1) * height, x * width:(x + 1) * width] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802  (PyTorch's name)
    """An image array in ``input_format`` (NCHW, CHW, HWC, HW... any order) as HWC with 3 channels or 4."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if len(tensor.shape) != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    input_format = input_format.upper()
    if len(input_format) == 4:
        return make_grid(tensor.transpose([input_format.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    hw = tensor.transpose([input_format.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """A PNG image summary; float images are taken in [0, 1], uint8 ones in [0, 255]."""
    from PIL import Image

    array = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channel = array.shape
    picture = Image.fromarray(array).resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    output = io.BytesIO()
    picture.save(output, format="PNG")
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(height=height, width=width, colorspace=channel,
                                                                     encoded_image_string=output.getvalue()))])
