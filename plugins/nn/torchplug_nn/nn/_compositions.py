"""Reference compositions of ``torch.nn.functional`` from core tensor ops.

``torchplug.nn.functional`` takes every function that ``torchplug._ops.nn_functional`` (the
core's nn kernels) provides and falls back to these for the rest, so layers work with any op
set that has the basic pointwise, reduction, view and matmul ops.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

__all__: list[str] = []  # filled by _export


def _export(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


def _ntuple(x: Any, n: int) -> tuple[int, ...]:
    if isinstance(x, (list, tuple)):
        if len(x) == 1 and n > 1:
            return tuple(x) * n
        return tuple(x)
    return (x,) * n


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ---- linear -------------------------------------------------------------------------------------
@_export
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    if input.dim() == 2 and bias is not None:
        return torchplug.addmm(bias, input, weight.t())
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def _bilinear_checks(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    # PyTorch's checks, in its order and words.
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and {input2.shape[i]}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {weight.shape[2]}"
        )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected {weight.shape[0]}"
        )


@_export
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    _bilinear_checks(input1, input2, weight, bias)
    out_f, in1, in2 = weight.shape
    lead = list(input1.shape[:-1])
    # Flattened as PyTorch flattens them (reshape(-1, features), which it refuses for 0 elements
    # with 0 features), so the same inputs are accepted.
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    w = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = x1.matmul(w).reshape(x1.shape[0], out_f, in2)
    out = (t * x2.unsqueeze(-2)).sum(-1).reshape(*lead, out_f)
    return out if bias is None else out + bias


# ---- activations --------------------------------------------------------------------------------
@_export
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


@_export
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


@_export
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


@_export
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    out = torchplug.where(input > 0, input, input * negative_slope)
    return input.copy_(out) if inplace else out


@_export
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    out = torchplug.where(input > 0, input, (input.clamp(max=0).expm1()) * alpha)
    return input.copy_(out) if inplace else out


@_export
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    out = elu(input, alpha) * scale
    return input.copy_(out) if inplace else out


@_export
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    out = torchplug.where(input > 0, input, ((input.clamp(max=0) / alpha).expm1()) * alpha)
    return input.copy_(out) if inplace else out


def _erf(x: Tensor) -> Tensor:
    if hasattr(torchplug, "erf"):
        return torchplug.erf(x)
    # Abramowitz-Stegun 7.1.26 refined with one Newton step is plenty for float32.
    sign = x.sign()
    a = x.abs()
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * (-(a * a)).exp()
    return sign * y


@_export
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * input * (1.0 + (c * (input + 0.044715 * input * input * input)).tanh())
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return 0.5 * input * (1.0 + _erf(input * (1.0 / math.sqrt(2.0))))


@_export
def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


@_export
def tanh(input: Tensor) -> Tensor:
    return input.tanh()


@_export
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    out = input * input.sigmoid()
    return input.copy_(out) if inplace else out


@_export
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    bx = input * beta
    soft = (bx.clamp(max=threshold).exp()).log1p() / beta
    return torchplug.where(bx > threshold, input, soft)


@_export
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    out = input * softplus(input).tanh()
    return input.copy_(out) if inplace else out


@_export
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    out = input * (input + 3.0).clamp(0.0, 6.0) / 6.0
    return input.copy_(out) if inplace else out


@_export
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    out = (input + 3.0).clamp(0.0, 6.0) / 6.0
    return input.copy_(out) if inplace else out


@_export
def logsigmoid(input: Tensor) -> Tensor:
    return -softplus(-input)


@_export
def softsign(input: Tensor) -> Tensor:
    return input / (1 + input.abs())


@_export
def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


@_export
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return torchplug.where(input.abs() > lambd, input, 0.0)


@_export
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return torchplug.where(input > lambd, input - lambd, torchplug.where(input < -lambd, input + lambd, 0.0))


@_export
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    out = torchplug.where(input > threshold, input, value)
    return input.copy_(out) if inplace else out


@_export
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    if weight.numel() != 1 and input.dim() >= 2:
        weight = weight.reshape(weight.numel(), *([1] * (input.dim() - 2)))
    return torchplug.where(input > 0, input, input * weight)


@_export
def glu(input: Tensor, dim: int = -1) -> Tensor:
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def _softmax_dim(ndim: int) -> int:
    return 0 if ndim in (0, 1, 3) else 1


@_export
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _softmax_dim(input.dim())
    if hasattr(Tensor, "softmax"):
        return input.softmax(dim)
    e = (input - input.amax(dim, keepdim=True)).exp()
    return e / e.sum(dim, keepdim=True)


@_export
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _softmax_dim(input.dim())
    if hasattr(Tensor, "log_softmax"):
        return input.log_softmax(dim)
    shifted = input - input.amax(dim, keepdim=True)
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


@_export
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype=dtype)


# ---- dropout ------------------------------------------------------------------------------------
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@_export
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = torchplug.empty_like(input).bernoulli_(1.0 - p)
    scale = 1.0 / (1.0 - p)
    return input.mul_(mask).mul_(scale) if inplace else input * mask * scale


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched_dim: int) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = list(input.shape[: input.dim() - batched_dim]) + [1] * batched_dim
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = torchplug.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)
    scale = 1.0 / (1.0 - p)
    return input.mul_(mask).mul_(scale) if inplace else input * mask * scale


@_export
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 1)


@_export
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 2)


@_export
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 3)


# ---- normalization ------------------------------------------------------------------------------
@_export
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    n = len(_ntuple(normalized_shape, 1))
    dims = list(range(input.dim() - n, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


@_export
def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    n = len(_ntuple(normalized_shape, 1))
    dims = list(range(input.dim() - n, input.dim()))
    if eps is None:
        eps = torchplug.finfo(input.dtype).eps
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def _channel_shape(input: Tensor, t: Tensor) -> Tensor:
    return t.reshape(1, -1, *([1] * (input.dim() - 2)))


@_export
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    dims = [0] + list(range(2, input.dim()))
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.size()}")
        mean = input.mean(dims)
        var = input.var(dims, correction=0)
        if running_mean is not None:
            from .. import _grad

            with _grad.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        mean, var = running_mean, running_var
    out = (input - _channel_shape(input, mean)) * _channel_shape(input, (var + eps).rsqrt())
    if weight is not None:
        out = out * _channel_shape(input, weight)
    if bias is not None:
        out = out + _channel_shape(input, bias)
    return out


@_export
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    dims = list(range(2, input.dim()))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * _channel_shape(input, weight)
    if bias is not None:
        out = out + _channel_shape(input, bias)
    return out


@_export
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of shape {input.size()} and num_groups={num_groups}")
    x = input.reshape(n, num_groups, -1)
    mean = x.mean([2], keepdim=True)
    var = x.var([2], correction=0, keepdim=True)
    out = ((x - mean) * (var + eps).rsqrt()).reshape(input.shape)
    if weight is not None:
        out = out * _channel_shape(input, weight)
    if bias is not None:
        out = out + _channel_shape(input, bias)
    return out


@_export
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None) -> Tensor:
    norm = (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)
    return input / norm.clamp(min=eps)


# ---- sparse -------------------------------------------------------------------------------------
@_export
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    flat = input.reshape(-1)
    if max_norm is not None:
        from .. import _grad

        with _grad.no_grad():
            rows = weight.index_select(0, flat)
            norms = (rows.abs() ** norm_type).sum(1, keepdim=True) ** (1.0 / norm_type)
            scale = torchplug.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight.index_put_((flat,), rows * scale)
    return weight.index_select(0, flat).reshape(*input.shape, weight.shape[1])


@_export
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    if num_classes < 0:
        num_classes = int(tensor.max().item()) + 1
    return (tensor.unsqueeze(-1) == torchplug.arange(num_classes, device=tensor.device)).to(torchplug.int64)


# ---- losses -------------------------------------------------------------------------------------
def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({_torch_size(target.size())}) that is different to the input size "
            f"({_torch_size(input.size())}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def _torch_size(s: Any) -> str:
    return f"torch.Size([{', '.join(str(int(v)) for v in s)}])"


@_export
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    _size_warning(input, target)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_export
def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    _size_warning(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_export
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _size_warning(input, target)
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = torchplug.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


@_export
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    _size_warning(input, target)
    d = (input - target).abs()
    loss = torchplug.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_export
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({_torch_size(target.size())}) that is different to the input size "
            f"({_torch_size(input.size())}) is deprecated. Please ensure they have the same size.")
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_export
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    if target.size() != input.size():
        raise ValueError(f"Target size ({_torch_size(target.size())}) must be the same as input size ({_torch_size(input.size())})")
    softterm = (-input.abs()).exp().log1p() + (-input).relu()
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softterm
    else:
        loss = (1 - target) * input + softterm
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_export
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        safe = torchplug.where(target > 0, target, 1.0)
        loss = torchplug.where(target > 0, target * (safe.log() - input), 0.0 * input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


@_export
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    if input.dim() == 1:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
        squeeze = True
    else:
        squeeze = False
    c = input.shape[1]
    valid = target != ignore_index
    safe_target = torchplug.where(valid, target, 0)
    if safe_target.numel():
        bad = (safe_target < 0).logical_or(safe_target >= c)
        if bool(bad.any()):
            t = int(safe_target.masked_fill(bad.logical_not(), 0).reshape(-1)[bad.reshape(-1).to(torchplug.int64).argmax()].item())
            raise IndexError(f"Target {t} is out of bounds.")
    picked = -input.gather(1, safe_target.unsqueeze(1)).squeeze(1)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe_target.reshape(-1)).reshape(safe_target.shape)
    loss = picked * w
    if reduction == "none":
        return loss.squeeze(0) if squeeze else loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


@_export
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    c = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = c
    if target.dtype.is_floating_point:
        # Class probabilities.
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c) if input.dim() > 1 else loss
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    valid = target != ignore_index
    lp = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -lp.sum(class_dim) * valid.to(logp.dtype)
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        if weight is not None:
            safe_target = torchplug.where(valid, target, 0)
            denom = (weight.index_select(0, safe_target.reshape(-1)).reshape(safe_target.shape) * valid.to(logp.dtype)).sum()
        else:
            denom = valid.sum().to(logp.dtype)
        ret = smooth.sum() / denom
    return (1 - label_smoothing) * nll + ret * (label_smoothing / c)


@_export
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    n1 = (x1 * x1).sum(dim).sqrt().clamp(min=eps)
    n2 = (x2 * x2).sum(dim).sqrt().clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


@_export
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    return ((x1 - x2 + eps).abs() ** p).sum(-1, keepdim=keepdim) ** (1.0 / p)


# ---- padding ------------------------------------------------------------------------------------
def _index_pad(input: Tensor, dim: int, left: int, right: int, mode: str) -> Tensor:
    n = input.shape[dim]
    idx = list(range(-left, n + right))
    if mode == "reflect":
        period = 2 * (n - 1)

        def reflect(i: int) -> int:
            i = abs(i) % period if period else 0
            return period - i if i >= n else i

        idx = [reflect(i) for i in idx]
    elif mode == "replicate":
        idx = [min(max(i, 0), n - 1) for i in idx]
    elif mode == "circular":
        idx = [i % n for i in idx]
    else:
        raise NotImplementedError(f"padding mode {mode!r}")
    return input.index_select(dim, torchplug.tensor(idx, dtype=torchplug.int64, device=input.device))


@_export
def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        if left == 0 and right == 0:
            continue
        if mode == "constant":
            if left < 0:
                out = out.narrow(dim, -left, out.shape[dim] + left)
                left = 0
            if right < 0:
                out = out.narrow(dim, 0, out.shape[dim] + right)
                right = 0
            parts = []
            fill = 0.0 if value is None else value
            if left:
                shape = list(out.shape)
                shape[dim] = left
                parts.append(torchplug.full(shape, fill, dtype=out.dtype, device=out.device))
            parts.append(out)
            if right:
                shape = list(out.shape)
                shape[dim] = right
                parts.append(torchplug.full(shape, fill, dtype=out.dtype, device=out.device))
            out = torchplug.cat(parts, dim)
        else:
            out = _index_pad(out, dim, left, right, mode)
    return out


# ---- convolution --------------------------------------------------------------------------------
def _convnd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
            groups: int, nd: int) -> Tensor:
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _ntuple(stride, nd), _ntuple(dilation, nd)
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            pads = []
            for d in range(nd):
                total = dilation[d] * (ksize[d] - 1)
                pads.append((total // 2, total - total // 2))
            flat: list[int] = []
            for left, right in reversed(pads):
                flat += [left, right]
            input = pad(input, flat)
            padding = (0,) * nd
        else:
            raise ValueError(f"Invalid padding string {padding!r}")
    padding = _ntuple(padding, nd)
    if any(padding):
        flat = []
        for p in reversed(padding):
            flat += [p, p]
        input = pad(input, flat)
    x = input
    for d in range(nd):
        span = dilation[d] * (ksize[d] - 1) + 1
        x = x.unfold(2 + d, span, stride[d])
        if dilation[d] > 1:
            x = x.narrow(x.dim() - 1, 0, span)[..., :: dilation[d]]
    # x: (N, C, O1..On, K1..Kn)
    n, c = x.shape[0], x.shape[1]
    outs = tuple(x.shape[2: 2 + nd])
    onum = 1
    for o in outs:
        onum *= o
    knum = 1
    for k in ksize:
        knum *= k
    cg = c // groups
    out_ch = weight.shape[0]
    x = x.reshape(n, groups, cg, onum, knum).permute(0, 1, 3, 2, 4).reshape(n, groups, onum, cg * knum)
    w = weight.reshape(groups, out_ch // groups, cg * knum).transpose(1, 2)
    y = x.matmul(w)  # (N, G, O, out/G)
    y = y.permute(0, 1, 3, 2).reshape(n, out_ch, *outs)
    if bias is not None:
        y = y + bias.reshape(1, out_ch, *([1] * nd))
    return y.squeeze(0) if unbatched else y


@_export
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1)


@_export
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2)


@_export
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3)


def _flip(t: Tensor, dims: list[int]) -> Tensor:
    for d in dims:
        n = t.shape[d]
        t = t.index_select(d, torchplug.arange(n - 1, -1, -1, device=t.device))
    return t


def _conv_transposend(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                      output_padding: Any, groups: int, dilation: Any, nd: int) -> Tensor:
    unbatched = input.dim() == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, padding = _ntuple(stride, nd), _ntuple(padding, nd)
    output_padding, dilation = _ntuple(output_padding, nd), _ntuple(dilation, nd)
    n, cin = input.shape[0], input.shape[1]
    ksize = tuple(weight.shape[2:])
    cout_g = weight.shape[1]
    x = input
    # Insert stride-1 zeros between input elements.
    for d in range(nd):
        s = stride[d]
        if s > 1:
            length = x.shape[2 + d]
            shape = list(x.shape)
            shape[2 + d] = (length - 1) * s + 1
            z = torchplug.zeros(shape, dtype=x.dtype, device=x.device)
            idx = torchplug.arange(0, (length - 1) * s + 1, s, device=x.device)
            z = z.index_copy(2 + d, idx, x) if hasattr(Tensor, "index_copy") else _scatter_dim(z, 2 + d, idx, x)
            x = z
    flat: list[int] = []
    for d in reversed(range(nd)):
        k = dilation[d] * (ksize[d] - 1)
        flat += [k - padding[d], k - padding[d] + output_padding[d]]
    x = pad(x, flat)
    w = weight.reshape(groups, cin // groups, cout_g, *ksize).transpose(1, 2).reshape(groups * cout_g, cin // groups, *ksize)
    w = _flip(w, list(range(2, 2 + nd)))
    y = _convnd(x, w, bias, 1, 0, dilation, groups, nd)
    return y.squeeze(0) if unbatched else y


def _scatter_dim(z: Tensor, dim: int, idx: Tensor, src: Tensor) -> Tensor:
    shape = [1] * src.dim()
    shape[dim] = idx.shape[0]
    full_idx = idx.reshape(shape).expand(*src.shape)
    return z.scatter(dim, full_idx, src)


@_export
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


@_export
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


@_export
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


# ---- pooling ------------------------------------------------------------------------------------
def _pool_out(length: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    num = length + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= length + p:
        out -= 1
    return out


def _pool_windows(x: Tensor, nd: int, k: tuple, s: tuple, p: tuple, d: tuple, ceil_mode: bool,
                  fill: float, outs: Any = None) -> Tensor:
    """(N, C, O1..On, K1..Kn) windows of ``x`` padded with ``fill`` (extra right padding for ceil_mode)."""
    base = x.dim() - nd
    if outs is None:
        outs = [_pool_out(x.shape[base + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    flat: list[int] = []
    for i in reversed(range(nd)):
        need = (outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        flat += [p[i], max(need - x.shape[base + i] - p[i], 0)]
    x = pad(x, flat, value=fill)
    for i in range(nd):
        span = d[i] * (k[i] - 1) + 1
        x = x.unfold(base + i, span, s[i]).narrow(base + i, 0, outs[i])
        if d[i] > 1:
            x = x[..., :: d[i]]
    return x


def _max_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
              return_indices: bool, nd: int) -> Any:
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride if stride is not None and stride != [] and stride != () else kernel_size, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    win = _pool_windows(input, nd, k, s, p, d, ceil_mode, -math.inf)
    flat = win.reshape(*win.shape[: win.dim() - nd], -1)
    values = flat.amax(-1)
    if not return_indices:
        return values
    arg = flat.argmax(-1)
    # Map the window-local argmax back to a flat index into the unpadded input plane.
    outs = values.shape[values.dim() - nd:]
    idx = torchplug.zeros(values.shape, dtype=torchplug.int64, device=input.device)
    rem = arg
    plane = 1
    coords = []
    for i in reversed(range(nd)):
        coords.append(rem.remainder(k[i]))
        rem = rem.div(k[i], rounding_mode="floor")
    coords.reverse()
    for i in range(nd):
        shape = [1] * values.dim()
        shape[values.dim() - nd + i] = outs[i]
        start = (torchplug.arange(outs[i], device=input.device) * s[i] - p[i]).reshape(shape)
        pos = start + coords[i] * d[i]
        length = input.shape[input.dim() - nd + i]
        idx = idx * length + pos
        plane *= length
    return values, idx


@_export
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


@_export
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


@_export
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _avg_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
              divisor_override: int | None, nd: int) -> Tensor:
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride if stride is not None and stride != [] and stride != () else kernel_size, nd)
    p, d = _ntuple(padding, nd), (1,) * nd
    win = _pool_windows(input, nd, k, s, p, d, ceil_mode, 0.0)
    total = win.reshape(*win.shape[: win.dim() - nd], -1).sum(-1)
    if divisor_override:
        return total / divisor_override
    # Count what each window covers: the input, plus the explicit padding when count_include_pad
    # (never the extra ceil_mode overhang), as PyTorch's divisor does.
    outs = list(total.shape[total.dim() - nd:])
    ones = torchplug.ones(list(input.shape[input.dim() - nd:]), dtype=input.dtype, device=input.device)
    if count_include_pad:
        flat: list[int] = []
        for i in reversed(range(nd)):
            flat += [p[i], p[i]]
        cnt_win = _pool_windows(pad(ones, flat, value=1.0), nd, k, s, (0,) * nd, d, ceil_mode, 0.0, outs)
    else:
        cnt_win = _pool_windows(ones, nd, k, s, p, d, ceil_mode, 0.0, outs)
    counts = cnt_win.reshape(*cnt_win.shape[:nd], -1).sum(-1)
    return total / counts


@_export
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


@_export
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


@_export
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _adaptive(input: Tensor, output_size: Any, nd: int, reducer: str) -> Tensor:
    sizes = _ntuple(output_size, nd)
    base = input.dim() - nd
    sizes = tuple(input.shape[base + i] if sizes[i] is None else sizes[i] for i in range(nd))
    if any(o < 0 for o in sizes):  # torch's words: the avg kernel's check, the max one's empty() of the shape
        if reducer == "mean":
            got = f"{{{sizes[0]}, {sizes[1]},{sizes[2]}}}" if nd == 3 else "{" + ", ".join(map(str, sizes)) + "}"
            raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater than or equal to 0 "
                               f"but received {got}")
        shape = [*input.shape[:base], *((1,) if nd == 1 else ()), *sizes]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {shape}")
    x = input
    for i in range(nd):
        length = x.shape[base + i]
        o = sizes[i]
        if o == 0:  # an empty output along this dim
            x = x.narrow(base + i, 0, 0)
            continue
        pieces = []
        for j in range(o):
            start = (j * length) // o
            end = -((-(j + 1) * length) // o)
            seg = x.narrow(base + i, start, end - start)
            pieces.append(seg.amax(base + i, keepdim=True) if reducer == "max" else seg.mean([base + i], keepdim=True))
        x = torchplug.cat(pieces, base + i)
    return x


def _adaptive_max_indices(input: Tensor, output_size: Any, nd: int) -> Any:
    raise NotImplementedError("adaptive max pooling with return_indices=True")


@_export
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive(input, output_size, 1, "mean")


@_export
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive(input, output_size, 2, "mean")


@_export
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive(input, output_size, 3, "mean")


@_export
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    if return_indices:
        return _adaptive_max_indices(input, output_size, 1)
    return _adaptive(input, output_size, 1, "max")


@_export
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    if return_indices:
        return _adaptive_max_indices(input, output_size, 2)
    return _adaptive(input, output_size, 2, "max")


# ---- attention ----------------------------------------------------------------------------------
def _causal_mask(lq: int, lk: int, device: Any) -> Tensor:
    rows = torchplug.arange(lq, device=device).unsqueeze(1)
    cols = torchplug.arange(lk, device=device).unsqueeze(0)
    return cols <= rows


@_export
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    lq, lk = query.shape[-2], key.shape[-2]
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.unsqueeze(-3).expand(*key.shape[:-2], rep, *key.shape[-2:]).reshape(*query.shape[:-2], *key.shape[-2:])
        value = value.unsqueeze(-3).expand(*value.shape[:-2], rep, *value.shape[-2:]).reshape(*query.shape[:-2], *value.shape[-2:])
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if is_causal:
        scores = scores.masked_fill(_causal_mask(lq, lk, query.device).logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torchplug.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


def _canonical_mask(mask: Tensor | None, target_dtype: Any) -> Tensor | None:
    if mask is None:
        return None
    if mask.dtype == torchplug.bool:
        return torchplug.zeros(mask.shape, dtype=target_dtype, device=mask.device).masked_fill(mask, -math.inf)
    return mask


@_export
def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    head_dim = embed_dim // num_heads
    if is_causal and attn_mask is None:
        attn_mask = _causal_mask(tgt_len, src_len, query.device).logical_not()
    attn_mask = _canonical_mask(attn_mask, query.dtype)
    key_padding_mask = _canonical_mask(key_padding_mask, query.dtype)
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias.chunk(3)
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    else:
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k), linear(value, v_proj_weight, b_v)
    if bias_k is not None and bias_v is not None:
        k = torchplug.cat([k, bias_k.reshape(1, 1, -1).expand(1, bsz, embed_dim)])
        v = torchplug.cat([v, bias_v.reshape(1, 1, -1).expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (static_k if static_k is not None else k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1))
    v = (static_v if static_v is not None else v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1))
    if add_zero_attn:
        k = torchplug.cat([k, torchplug.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = torchplug.cat([v, torchplug.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if not training:
        dropout_p = 0.0
    scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = weights.matmul(v)  # (B*H, L, hd)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    attn_weights = None
    if need_weights:
        attn_weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_weights = attn_weights.mean([1])
        if unbatched:
            attn_weights = attn_weights.squeeze(0)
    if unbatched:
        out = out.squeeze(1)
    return out, attn_weights
