"""Shape rules and argument checks of the nn kernels, shared by every backend (PyTorch's messages).

Backends (cpu computes, meta only describes) call these so that output sizes and error texts
are written once.  Everything here works on Python ints and tuples, never on data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "fmt_sizes", "expand_param", "check_conv", "conv_uses_onednn", "conv_output_size", "conv_transpose_output_size",
    "pool_output_size", "check_max_pool", "check_avg_pool", "pool_out_shape", "adaptive_check",
    "check_softmax_dim", "layer_norm_check", "reduction_name", "nll_check", "pad_check",
    "upsample_check", "wrap_dim", "im2col_check", "col2im_check",
]


def fmt_sizes(sizes: Sequence[int]) -> str:
    """PyTorch's IntArrayRef printing: ``[2, 3]``."""
    return "[" + ", ".join(str(int(s)) for s in sizes) + "]"


def wrap_dim(dim: int, ndim: int) -> int:
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


# ---- convolution ------------------------------------------------------------------------------------
def expand_param(name: str, values: Sequence[int], dims: int) -> tuple[int, ...]:
    """A per-spatial-dim parameter: one value is repeated, otherwise the count must match."""
    values = tuple(values)
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dims} values to match the convolution "
            f"dimensions, but got {name}={fmt_sizes(values)}"
        )
    return values


_CONV_CACHE: dict = {}  # argument tuple -> checked parameters (convolutions run every training step)


def check_conv(in_shape: Sequence[int], w_shape: Sequence[int], bias_shape: Sequence[int] | None,
               stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], transposed: bool,
               output_padding: Sequence[int], groups: int, in_dtype: str, w_dtype: str,
               bias_dtype: str | None, onednn: bool | None = None) -> tuple[tuple[int, ...], ...]:
    """``at::_convolution``'s checks; returns the expanded (stride, padding, dilation, output_padding).

    ``onednn`` says whether PyTorch would run this convolution on oneDNN (see :func:`conv_uses_onednn`); it
    only picks the text of a weight dtype mismatch.  ``None``: only half and bfloat16 inputs do.
    """
    key = (tuple(in_shape), tuple(w_shape), None if bias_shape is None else tuple(bias_shape), tuple(stride),
           tuple(padding), tuple(dilation), transposed, tuple(output_padding), groups, in_dtype, w_dtype, bias_dtype,
           onednn)
    found = _CONV_CACHE.get(key)
    if found is None:
        found = _check_conv(*key)
        if len(_CONV_CACHE) > 1024:
            _CONV_CACHE.clear()
        _CONV_CACHE[key] = found
    return found


def _check_conv(in_shape, w_shape, bias_shape, stride, padding, dilation, transposed, output_padding, groups, in_dtype,
                w_dtype, bias_dtype, onednn):
    k = len(in_shape)
    wd = len(w_shape)
    dims = max(wd - 2, 1)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = expand_param("stride", stride, dims)
    padding = expand_param("padding", padding, dims)
    dilation = expand_param("dilation", dilation, dims)
    output_padding = expand_param("output_padding", output_padding, dims) if transposed else (0,) * dims
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if any(d == 0 for d in dilation):  # (PyTorch's text for this depends on the backend it picks)
        raise RuntimeError("non-positive dilation is not supported")
    if wd != k:
        raise RuntimeError(
            f"Expected {wd}-dimensional input for {wd}-dimensional weight {fmt_sizes(w_shape)}, but got "
            f"{k}-dimensional input of size {fmt_sizes(in_shape)} instead"
        )
    if k < 3:
        raise RuntimeError(f"weight should have at least three dimensions")
    if w_shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got weight of size "
            f"{fmt_sizes(w_shape)} instead"
        )
    if w_shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of "
            f"size [{fmt_sizes(w_shape)}] instead"
        )
    if not transposed:
        if in_shape[1] != w_shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {fmt_sizes(w_shape)}, expected input{fmt_sizes(in_shape)} to "
                f"have {w_shape[1] * groups} channels, but got {in_shape[1]} channels instead"
            )
        if bias_shape is not None and (len(bias_shape) != 1 or bias_shape[0] != w_shape[0]):
            raise RuntimeError(
                f"Given weight of size {fmt_sizes(w_shape)}, expected bias to be 1-dimensional with {w_shape[0]} "
                f"elements, but got bias of size {fmt_sizes(bias_shape)} instead"
            )
        _check_conv_padding(padding)
        # PyTorch sums in int64: a padded size past it wraps negative and fails the kernel check below
        padded = [_wrap_int64(in_shape[i + 2] + 2 * padding[i]) for i in range(dims)]
        kernel = [dilation[i] * (w_shape[i + 2] - 1) + 1 for i in range(dims)]
        if any(p < kk for p, kk in zip(padded, kernel)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input size"
            )
    else:
        if in_shape[1] != w_shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {fmt_sizes(w_shape)}, expected input{fmt_sizes(in_shape)} to "
                f"have {w_shape[0]} channels, but got {in_shape[1]} channels instead"
            )
        if bias_shape is not None and (len(bias_shape) != 1 or bias_shape[0] != w_shape[1] * groups):
            raise RuntimeError(
                f"Given transposed=1, weight of size {fmt_sizes(w_shape)}, expected bias to be 1-dimensional with "
                f"{w_shape[1] * groups} elements, but got bias of size {fmt_sizes(bias_shape)} instead"
            )
        _check_conv_padding(padding)
        for i in range(dims):
            if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
                names = ["height", "width"] if dims == 2 else (["depth", "height", "width"] if dims == 3 else ["width"])
                parts = [f"output_padding_{n}: {output_padding[j]}" for j, n in enumerate(names)]
                parts += [f"stride_{n}: {stride[j]}" for j, n in enumerate(names)]
                parts += [f"dilation_{n}: {dilation[j]}" for j, n in enumerate(names)]
                raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
        out = conv_transpose_output_size(in_shape, w_shape, stride, padding, dilation, output_padding, groups)[2:]
        if any(o < 1 for o in out):
            spatial = tuple(in_shape[2:])
            if dims == 1:  # PyTorch runs conv_transpose1d as a 2-d one of height 1
                spatial, out = (1, *spatial), (1, *out)
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, spatial))}). Calculated output size per "
                f"channel: ({' x '.join(map(str, out))}). Output size is too small"
            )
    # PyTorch compares the bias's dtype first (non-transposed only), then the weight's: the slow CPU kernels
    # say "expected scalar type", the oneDNN path that half and bfloat16 inputs take names both tensor types.
    if not transposed and bias_dtype is not None and bias_dtype != in_dtype:
        raise RuntimeError(f"Input type ({_meta_name(in_dtype)}) and bias type ({_meta_name(bias_dtype)}) should be "
                           "the same")
    if in_dtype != w_dtype:
        if not (_scalar_name(in_dtype) in ("Half", "BFloat16") if onednn is None else onednn):
            raise RuntimeError(f"expected scalar type {_scalar_name(in_dtype)} but found {_scalar_name(w_dtype)}")
        raise RuntimeError(
            f"Input type ({in_dtype}) and weight type ({w_dtype}) should be the same or input should be a MKLDNN "
            "tensor and weight is a dense tensor"
        )
    if bias_dtype is not None and bias_dtype != in_dtype:
        raise RuntimeError(f"Input type ({in_dtype}) and bias type ({bias_dtype}) should be the same")
    return stride, padding, dilation, output_padding


# c10's TypeMeta names, which PyTorch prints in the input/bias dtype check
_META_NAMES = {"Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
               "Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
               "Bool": "bool", "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>"}


def conv_uses_onednn(in_shape: Sequence[int], w_shape: Sequence[int], stride: Sequence[int],
                     dilation: Sequence[int], groups: int, in_dtype: str, num_threads: int) -> bool:
    """Whether PyTorch's CPU convolution picks oneDNN for a float32 input (``ConvParams::use_mkldnn``).

    1x1 filters stay on the native kernel when single-threaded; small single-image problems too.  A 1-d
    convolution counts as a 2-d one of height 1.  Half and bfloat16 are left to ``check_conv``'s default.
    """
    if _scalar_name(in_dtype) != "Float" or not in_shape or not w_shape:
        return False
    shape4 = (tuple(in_shape[:2]) + (1,) + tuple(in_shape[2:])) if len(in_shape) == 3 else tuple(in_shape)
    kh, kw = (1, w_shape[-1]) if len(w_shape) == 3 else (w_shape[-2], w_shape[-1])
    n = shape4[0]
    picks = (any(s != 1 for s in stride) or any(d != 1 for d in dilation) or n >= 16 or kw != 1 or kh != 1
             or num_threads > 1)
    return picks and (groups > 1 or (kw > 3 and kh > 3) or n > 1 or math.prod(shape4[:4]) > 20480)


def _scalar_name(type_str: str) -> str:
    """``torch.DoubleTensor`` -> ``Double`` (the ScalarType name)."""
    return type_str.removeprefix("torch.").removesuffix("Tensor")


def _meta_name(type_str: str) -> str:
    name = _scalar_name(type_str)
    return _META_NAMES.get(name, name)


_PADDING_MAX = 2 ** 62 - 1  # PyTorch's bound, so that 2 * padding fits in int64


def _wrap_int64(v: int) -> int:
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def _check_conv_padding(padding: Sequence[int]) -> None:
    """PyTorch's bound on padding (twice it must fit in int64), checked after the shape checks."""
    for i, p in enumerate(padding):
        if p > _PADDING_MAX:
            raise RuntimeError(f"Given padding={p} at dimension {i} , expected padding to be at most {_PADDING_MAX}")


def conv_output_size(in_shape: Sequence[int], w_shape: Sequence[int], stride: Sequence[int],
                     padding: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    out = [in_shape[0], w_shape[0]]
    for i in range(len(in_shape) - 2):
        k = dilation[i] * (w_shape[i + 2] - 1) + 1
        out.append((in_shape[i + 2] + 2 * padding[i] - k) // stride[i] + 1)
    return tuple(out)


def conv_transpose_output_size(in_shape: Sequence[int], w_shape: Sequence[int], stride: Sequence[int],
                               padding: Sequence[int], dilation: Sequence[int], output_padding: Sequence[int],
                               groups: int) -> tuple[int, ...]:
    out = [in_shape[0], w_shape[1] * groups]
    for i in range(len(in_shape) - 2):
        out.append((in_shape[i + 2] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_shape[i + 2] - 1)
                   + output_padding[i] + 1)
    return tuple(out)


# ---- pooling ------------------------------------------------------------------------------------------
def pool_output_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape."""
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_params(name: str, dims: int, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                 dilation: Sequence[int] | None) -> tuple[tuple[int, ...], ...]:
    words = {1: "one", 2: "two", 3: "three"}[dims]
    either = "" if name == "avg_pool3d" else "either "  # avg_pool3d's messages lack the word
    kernel_size = tuple(kernel_size)
    if len(kernel_size) not in (1, dims):
        raise RuntimeError(f"{name}: kernel_size must {either}be a single int, or a tuple of {words} ints")
    _check_int32(kernel_size)  # PyTorch converts each parameter to int right after checking its length
    stride = tuple(stride)
    if len(stride) not in (0, 1, dims):
        raise RuntimeError(f"{name}: stride must {either}be omitted, a single int, or a tuple of {words} ints")
    _check_int32(stride)
    padding = tuple(padding)
    if len(padding) not in (1, dims):
        raise RuntimeError(f"{name}: padding must {either}be a single int, or a tuple of {words} ints")
    _check_int32(padding)
    k = kernel_size * dims if len(kernel_size) == 1 else kernel_size
    s = k if len(stride) == 0 else (stride * dims if len(stride) == 1 else stride)
    p = padding * dims if len(padding) == 1 else padding
    if dilation is None:
        d = (1,) * dims
    else:
        dilation = tuple(dilation)
        if len(dilation) not in (1, dims):
            raise RuntimeError(f"{name}: dilation must be either a single int, or a tuple of {words} ints")
        _check_int32(dilation)
        d = dilation * dims if len(dilation) == 1 else dilation
    return k, s, p, d


_HW = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}
_INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _ctrunc(a: int, b: int) -> int:
    """C++'s integer division (rounds toward zero; Python's ``//`` floors), for PyTorch's ``k / 2`` checks."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _check_int32(values: Sequence[int]) -> None:
    """PyTorch's pooling kernels take int parameters (c10::checked_convert)."""
    if any(not _INT32[0] <= v <= _INT32[1] for v in values):
        raise RuntimeError("value cannot be converted to type int without overflow")


def _pooling_output_shape(size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: its argument checks, then the size."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _ctrunc((k - 1) * dilation + 1, 2):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad}, kernel_size={k} and "
            f"dilation={dilation}"
        )
    return pool_output_size(size, k, pad, stride, dilation, ceil_mode)


def _check_pool_common(name: str, shape: Sequence[int], dims: int, k: Sequence[int], s: Sequence[int],
                       p: Sequence[int], d: Sequence[int], ceil_mode: bool) -> tuple[int, ...]:
    """The output shape of a 2-d/3-d max or average pool (``name`` starts with ``max`` or ``avg``).

    PyTorch's checks in its order (its max_pool/avg_pool meta functions, pooling_output_shape and
    pool2d_shape_check/pool3d_shape_check), so every backend rejects what PyTorch rejects before a
    kernel sees the arguments: negative padding or padding over half the kernel would otherwise
    index outside the input and output buffers.
    """
    _check_int32((*k, *s, *p, *d))
    ndim = len(shape)
    is_max = name.startswith("max")
    if is_max or dims == 3:
        if ndim not in (dims + 1, dims + 2):
            raise RuntimeError(f"non-empty {dims + 1}D or {dims + 2}D (batch mode) tensor expected for input")
    else:
        wrap_dim(-dims - 1, ndim)  # avg_pool2d reads input.size(-3) before any rank check
    spatial = tuple(shape[-dims:])
    out = tuple(_pooling_output_shape(spatial[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(dims))
    hw = _HW[dims]
    if any(x <= 0 for x in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip(hw, k)))
    if any(x <= 0 for x in s):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{n}: {v}" for n, v in zip(hw, s)))
    if any(x <= 0 for x in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{n}: {v}" for n, v in zip(hw, d)))
    planes = shape[-dims - 1]
    if dims == 2:
        valid = all(x != 0 for x in shape[-3:]) if ndim == 3 else ndim == 4 and all(x != 0 for x in shape[1:])
        if not valid:
            raise RuntimeError(
                f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                f"{fmt_sizes(shape)}"
            )
        if any(_ctrunc(kk, 2) < pad for kk, pad in zip(k, p)):
            raise RuntimeError(
                f"pad should be smaller than or equal to half of kernel size, but got padW = {p[1]}, padH = {p[0]}, "
                f"kW = {k[1]}, kH = {k[0]}"
            )
    else:
        fn = f"{name}()" if not is_max else "max_pool3d_with_indices_out_cpu_template()"
        for i in range(ndim):
            if shape[i] <= 0 and not (ndim == 5 and i == 0):
                raise RuntimeError(
                    f"{fn}: Expected input's non-batch dimensions to have positive length, but input has a shape of "
                    f"{fmt_sizes(shape)} and non-batch dimension {shape[i]} has length zero!"
                )
        if not is_max and any(x < kk for x, kk in zip(spatial, k)):
            raise RuntimeError(
                f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) smaller than kernel size "
                f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
            )
        if any(_ctrunc(kk, 2) < pad for kk, pad in zip(k, p)):
            raise RuntimeError(
                f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} kW: {k[2]} "
                f"kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}"
            )
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (planes, *spatial)))}). Calculated output size: "
            f"({'x'.join(map(str, (planes, *out)))}). Output size is too small"
        )
    return tuple(shape[:-dims]) + out


_POOL_CACHE: dict = {}  # argument tuple -> checked parameters (pooling runs every training step)


def check_max_pool(name: str, shape: Sequence[int], dims: int, kernel_size: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool):
    """(kernel, stride, padding, dilation, output shape) of a max pool, with PyTorch's checks."""
    key = (name, tuple(shape), tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation), ceil_mode)
    found = _POOL_CACHE.get(key)
    if found is not None:
        return found
    k, s, p, d = _pool_params(name, dims, kernel_size, stride, padding, dilation)
    found = (k, s, p, d, _check_pool_common(name, shape, dims, k, s, p, d, ceil_mode))
    if len(_POOL_CACHE) > 1024:
        _POOL_CACHE.clear()
    _POOL_CACHE[key] = found
    return found


def check_avg_pool(name: str, shape: Sequence[int], dims: int, kernel_size: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int], ceil_mode: bool, divisor_override: int | None):
    k, s, p, d = _pool_params(name, dims, kernel_size, stride, padding, None)
    if dims == 3 and len(shape) not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return k, s, p, _check_pool_common(name, shape, dims, k, s, p, d, ceil_mode)


def pool_out_shape(shape: Sequence[int], dims: int, k, s, p, d, ceil_mode: bool) -> tuple[int, ...]:
    spatial = shape[-dims:]
    return tuple(shape[:-dims]) + tuple(pool_output_size(spatial[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(dims))


def adaptive_check(name: str, shape: Sequence[int], output_size: Sequence[int], dims: int) -> tuple[int, ...]:
    """Output shape of adaptive_avg_pool / adaptive_max_pool, with PyTorch's checks in its order."""
    output_size = tuple(output_size)
    is_max = name.startswith("adaptive_max")
    if not is_max and len(output_size) != dims:
        raise RuntimeError(f"{name}: output_size must be {dims}")
    ndim = len(shape)
    if ndim not in (dims + 1, dims + 2):
        sep = ":" if is_max else ""
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got{sep} {fmt_sizes(shape)}")
    # adaptive_max_pool checks every non-batch dim, adaptive_avg_pool only the pooled ones
    for i in range(1, ndim) if is_max else range(ndim - dims, ndim):
        if shape[i] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{fmt_sizes(shape)} with dimension {i} being empty"
            )
    if is_max and len(output_size) != dims:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {dims}")
    out = tuple(shape[:-dims]) + output_size
    if any(o < 0 for o in output_size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(output_size)}: {fmt_sizes(out)}")
    return out


# ---- softmax / norms / losses ------------------------------------------------------------------------
def check_softmax_dim(dim: int, ndim: int) -> int:
    return wrap_dim(dim, ndim)


def layer_norm_check(shape: Sequence[int], normalized_shape: Sequence[int], w_shape, b_shape) -> int:
    """Checks of layer_norm; returns the number of leading (batch) dims."""
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if n < 1:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
            f"normalized_shape = {fmt_sizes(normalized_shape)}"
        )
    if w_shape is not None and tuple(w_shape) != normalized_shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape {fmt_sizes(w_shape)} "
            f"and normalized_shape = {fmt_sizes(normalized_shape)}"
        )
    if b_shape is not None and tuple(b_shape) != normalized_shape:
        raise RuntimeError(
            f"Expected bias to be of same shape as normalized_shape, but got bias of shape {fmt_sizes(b_shape)} and "
            f"normalized_shape = {fmt_sizes(normalized_shape)}"
        )
    ndim = len(shape)
    if ndim < n or tuple(shape[ndim - n:]) != normalized_shape:
        expected = "[*, " + ", ".join(str(s) for s in normalized_shape) + "]"
        raise RuntimeError(
            f"Given normalized_shape={fmt_sizes(normalized_shape)}, expected input with shape {expected}, but got "
            f"input of size{fmt_sizes(shape)}"
        )
    return ndim - n


def reduction_name(reduction: int) -> str:
    return {0: "none", 1: "mean", 2: "sum"}[reduction]


def nll_check(name: str, shape: Sequence[int], t_shape: Sequence[int], w_shape, reduction: int,
              target_dtype: str) -> tuple[int, ...]:
    """Checks of nll_loss_forward / nll_loss2d_forward; returns the unreduced output shape."""
    ndim = len(shape)
    if name == "nll_loss":
        if not 1 <= ndim <= 2:
            raise RuntimeError("input tensor should be 1D or 2D")
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batch = shape[0] if ndim == 2 else 1
        if ndim == 2 and t_shape[0] != batch or ndim == 1 and len(t_shape) == 1 and t_shape[0] != 1:
            raise ValueError(
                f"Expected input batch_size ({batch}) to match target batch_size "
                f"({t_shape[0] if t_shape else 1})."
            ) if False else RuntimeError(
                f"size mismatch (got input: {fmt_sizes(shape)}, target: {fmt_sizes(t_shape)})"
            )
        classes = shape[-1]
        unreduced = (batch,) if ndim == 2 else ()
    else:
        if len(t_shape) != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                f"{len(t_shape)}"
            )
        if ndim != 4:
            raise RuntimeError(
                "only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                f"{ndim}"
            )
        if shape[0] != t_shape[0] or shape[2] != t_shape[1] or shape[3] != t_shape[2]:
            raise RuntimeError(
                f"size mismatch (got input: {fmt_sizes(shape)} , target: {fmt_sizes(t_shape)}"
            )
        classes = shape[1]
        unreduced = tuple(t_shape)
    if w_shape is not None and (len(w_shape) == 0 or w_shape[0] != classes or len(w_shape) != 1):
        numel = 1
        for s in w_shape:
            numel *= s
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but got weight tensor "
            f"of shape: {fmt_sizes(w_shape)}"
        ) if numel != classes else None
    return unreduced if reduction == 0 else ()


# ---- padding / upsampling / unfold ------------------------------------------------------------------
def pad_check(mode: str, shape: Sequence[int], pad: Sequence[int], dims: int) -> tuple[int, ...]:
    """Output shape of reflection/replication padding over the last ``dims`` dims."""
    pad = tuple(pad)
    if len(pad) != 2 * dims:
        raise RuntimeError(f"padding size is expected to be {2 * dims}, but got: {len(pad)}")
    ndim = len(shape)
    if ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {fmt_sizes(shape)}"
        )
    if any(s == 0 for s in shape[ndim - dims - 1:]) or (ndim == dims + 1 and shape[0] == 0):
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {fmt_sizes(shape)}"
        )
    out = list(shape)
    for i in range(dims):
        axis = ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = shape[axis]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({lo}, {hi}) at dimension {axis} of input {fmt_sizes(shape)}"
            )
        out[axis] = size + lo + hi
    # PyTorch refuses only an output empty in every padded dim (a negative size fails in empty() after)
    ins, outs = shape[ndim - dims:], out[ndim - dims:]
    if all(o < 1 for o in outs):
        if dims == 1:
            got, calc = f"W: {ins[0]}", f"W: {outs[0]}"
        elif dims == 2:  # (sic: replication_pad2d's message has a space before the parenthesis)
            got, calc = f"H: {ins[0]}, W: {ins[1]}{' ' if mode == 'replicate' else ''}", f"H: {outs[0]} W: {outs[1]}"
        else:
            got, calc = f"D: {ins[0]} H: {ins[1]}, W: {ins[2]}", f"D: {outs[0]} H: {outs[1]} W: {outs[2]}"
        raise RuntimeError(f"input ({got}) is too small. Calculated output {calc}")
    if any(o < 0 for o in outs):
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(o for o in out if o < 0)}: {out}")
    return tuple(out)


def constant_pad_shape(shape: Sequence[int], pad: Sequence[int]) -> tuple[int, ...]:
    """Output shape of constant_pad_nd, with PyTorch's checks (negative pads narrow first)."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    nd = len(shape)
    npad = len(pad) // 2
    if nd < npad:
        raise RuntimeError(
            f"Length of pad should be no more than twice the number of dimensions of the input. Pad length is "
            f"{len(pad)}while the input has {nd}dimensions."
        )
    diff = nd - npad
    cur = list(shape)
    for i in range(diff, nd):
        j = 2 * (nd - i - 1)
        for start_side in (True, False):
            p = pad[j] if start_side else pad[j + 1]
            if p >= 0:
                continue
            size = cur[i]
            length = size + p
            start = -p if start_side else 0
            if length < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
            if not -size <= start <= size:
                raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
            cur[i] = length
    out = list(shape)
    for i in range(npad):
        j = len(pad) - (i + 1) * 2
        lo, hi = pad[j], pad[j + 1]
        size = shape[diff + i]
        new = size + lo + hi
        if new < 0:
            raise RuntimeError(
                f"The input size {size}, plus negative padding {lo} and {hi} resulted in a negative output size, which "
                f"is invalid. Check dimension {diff + i} of your input."
            )
        out[diff + i] = new
    return tuple(out)


def upsample_check(shape: Sequence[int], output_size: Sequence[int], dims: int) -> tuple[int, ...]:
    output_size = tuple(output_size)
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size {len(output_size)}")
    if len(shape) != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size {len(shape)}")
    spatial = tuple(shape[2:])
    if any(s <= 0 for s in spatial) or any(o <= 0 for o in output_size):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({', '.join(f'{n}: {v}' for n, v in zip(_HW[dims], spatial)).replace('W:', 'W:').replace('H:', 'H:')}) "
            f"output ({', '.join(f'{n}: {v}' for n, v in zip(_HW[dims], output_size))})"
        )
    if shape[1] == 0 and False:
        pass
    return tuple(shape[:2]) + output_size


def im2col_check(shape: Sequence[int], k, d, p, s) -> tuple[int, ...]:
    ndim = len(shape)
    for name, v, what in (("kernel", k, "kernel size"), ("dilation", d, "dilation"), ("stride", s, "stride")):
        pass
    if len(k) != 2:
        raise RuntimeError(f"It is expected kernel_size equals to 2, but got size {len(k)}")
    if len(d) != 2:
        raise RuntimeError(f"It is expected dilation equals to 2, but got size {len(d)}")
    if len(p) != 2:
        raise RuntimeError(f"It is expected padding equals to 2, but got size {len(p)}")
    if len(s) != 2:
        raise RuntimeError(f"It is expected stride equals to 2, but got size {len(s)}")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    wrap_dim(1, ndim)  # PyTorch reads size(1) and size(2) before checking the rank
    wrap_dim(2, ndim)
    valid = ndim in (3, 4) and all(x != 0 for x in shape[-3:])
    if not valid:
        raise RuntimeError(
            f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
            f"input, but got: {fmt_sizes(shape)}"
        )
    h, w = shape[-2], shape[-1]
    oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), calculated shape of the array of sliding blocks as ({oh}, {ow}), but its "
            "components must be at least one."
        )
    c = shape[-3]
    lead = tuple(shape[:-3])
    return lead + (c * k[0] * k[1], oh * ow)


def col2im_check(shape: Sequence[int], output_size, k, d, p, s) -> tuple[int, ...]:
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    if len(k) != 2:
        raise RuntimeError(f"It is expected kernel_size equals to 2, but got size {len(k)}")
    if len(d) != 2:
        raise RuntimeError(f"It is expected dilation equals to 2, but got size {len(d)}")
    if len(p) != 2:
        raise RuntimeError(f"It is expected padding equals to 2, but got size {len(p)}")
    if len(s) != 2:
        raise RuntimeError(f"It is expected stride equals to 2, but got size {len(s)}")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    ndim = len(shape)
    if not (ndim in (2, 3) and all(x != 0 for x in shape[-2:])):
        raise RuntimeError(
            f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for "
            f"input, but got: {fmt_sizes(shape)}"
        )
    kk = k[0] * k[1]
    if kk >= 2 ** 64:
        raise RuntimeError(f"Given kernel_width = {k[1]} and kernel_height = {k[0]} the product of kernel_width and "
                           "kernel_height overflowed.")
    if shape[-2] % kk:
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={shape[-2]} and kernel_size=({k[0]}, {k[1]})."
        )
    oh, ow = output_size
    bh = (oh + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    bw = (ow + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if shape[-1] != bh * bw:
        raise RuntimeError(
            f"Given output_size=({oh}, {ow}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got input.size(2)={shape[-1]}."
        )
    if bh < 1 or bw < 1:
        raise RuntimeError(
            f"Given output_size=({oh}, {ow}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), "
            f"padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), calculated shape of the array of sliding blocks as "
            f"({bh}, {bw}), which is too small (non-positive)"
        )
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size=({oh}, {ow}).")
    return tuple(shape[:-2]) + (shape[-2] // kk, oh, ow)
