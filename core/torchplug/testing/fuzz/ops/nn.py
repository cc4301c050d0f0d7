"""Fuzzed ``torch.nn.functional`` ops: softmax/log_softmax, conv1d/conv2d, max/avg pooling, adaptive
average pooling, linear, losses (mse, l1, cross_entropy, nll, binary_cross_entropy), embedding,
layer_norm, dropout (p = 0 or 1, or eval mode: deterministic) and pad."""

from __future__ import annotations

from typing import Any

from torchplug.testing.fuzz._table import FuzzOp
from torchplug.testing.fuzz.ops._common import ALL, FLOATS, Call, Draw, DtypeArg, dim, dtype, maybe_kw, scalar, shape, tensor

__all__ = ["OPS"]

NN_FLOATS = FLOATS  # torch's cpu nn kernels cover all four floating dtypes
REDUCTIONS = ("mean", "sum", "none")


def _f(name: str) -> str:
    return f"nn.functional.{name}"


def _softmax(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        shp = shape(d)
        x = tensor(d, shp, dtype(d, NN_FLOATS))
        kwargs: dict[str, Any] = {"dim": dim(d, len(shp))}
        if d.chance(20):
            kwargs["dtype"] = DtypeArg(d.pick(("float32", "float64", "float16", "int64")))
        return Call(name, (x,), kwargs)

    return FuzzOp(name, gen, fn=_f(name), tol="reduce", grad=True)


def _conv(name: str, spatial: int) -> FuzzOp:
    def gen(d: Draw) -> Call:
        dt = dtype(d, NN_FLOATS, any_percent=6)
        groups = d.int(1, 2) if not d.chance(4) else 3
        cin = groups * d.int(1, 2)
        cout = groups * d.int(1, 2)
        sizes = tuple(d.int(1, 6) for _ in range(spatial))
        kernel = tuple(d.int(1, 3) for _ in range(spatial))
        batch = () if d.chance(20) else (d.int(0 if d.chance(10) else 1, 2),)
        x_shape = batch + (cin if not d.chance(4) else cin + 1,) + sizes
        w = tensor(d, (cout, cin // groups) + kernel, dt if d.chance(92) else d.pick(NN_FLOATS))
        args: tuple[Any, ...] = (tensor(d, x_shape, dt), w)
        if d.chance(50):
            args += (tensor(d, (cout if not d.chance(4) else cout + 1,), dt),)
        kwargs: dict[str, Any] = {}
        if d.chance(40):
            kwargs["stride"] = d.int(1, 2) if d.chance(70) else d.int(0, 1)
        if d.chance(40):
            kwargs["padding"] = d.pick((0, 1, 2, "same", "valid")) if not d.chance(5) else -1
        if d.chance(30):
            kwargs["dilation"] = d.int(1, 2)
        if groups > 1 or d.chance(10):
            kwargs["groups"] = groups
        return Call(name, args, kwargs)

    return FuzzOp(name, gen, fn=_f(name), tol="reduce", grad=True)


def _pool_args(d: Draw, spatial: int, avg: bool) -> tuple[tuple[int, ...], dict[str, Any], Any]:
    sizes = tuple(d.int(1, 7) for _ in range(spatial))
    batch = () if d.chance(25) else (d.int(0 if d.chance(8) else 1, 2),)
    x_shape = batch + (d.int(1, 3),) + sizes
    kernel: Any = d.int(1, 3) if d.chance(60) else tuple(d.int(1, 3) for _ in range(spatial))
    kwargs: dict[str, Any] = {}
    if d.chance(40):
        kwargs["stride"] = d.int(1, 3)
    if d.chance(40):
        kwargs["padding"] = d.int(0, 2) if not d.chance(8) else -1
    kwargs.update(maybe_kw(d, 30, ceil_mode=(True, False)))
    if avg:
        kwargs.update(maybe_kw(d, 30, count_include_pad=(True, False)))
        if d.chance(15):
            kwargs["divisor_override"] = d.int(0 if d.chance(20) else 1, 5)
    else:
        if d.chance(25):
            kwargs["dilation"] = d.int(1, 2)
        kwargs.update(maybe_kw(d, 30, return_indices=(True, False)))
    return x_shape, kwargs, kernel


def _pool(name: str, spatial: int, avg: bool) -> FuzzOp:
    def gen(d: Draw) -> Call:
        x_shape, kwargs, kernel = _pool_args(d, spatial, avg)
        x = tensor(d, x_shape, dtype(d, NN_FLOATS, any_percent=10))
        return Call(name, (x, kernel), kwargs)

    return FuzzOp(name, gen, fn=_f(name), tol="reduce" if avg else "elementwise", grad=True)


def _adaptive_avg_pool2d(d: Draw) -> Call:
    x_shape, _, _ = _pool_args(d, 2, True)
    out: Any = d.int(1, 4) if d.chance(50) else (d.int(1, 4), d.pick((None, 1, 2, 3)))
    if d.chance(4):
        out = (0, 2)
    return Call("adaptive_avg_pool2d", (tensor(d, x_shape, dtype(d, NN_FLOATS)), out))


def _linear(d: Draw) -> Call:
    dt = dtype(d, NN_FLOATS, any_percent=6)
    lead = shape(d, max_dims=2, max_side=4)
    fin, fout = d.int(0 if d.chance(8) else 1, 5), d.int(0 if d.chance(8) else 1, 5)
    x = tensor(d, lead + (fin if not d.chance(5) else fin + 1,), dt)
    w = tensor(d, (fout, fin), dt if d.chance(92) else d.pick(NN_FLOATS))
    args: tuple[Any, ...] = (x, w)
    if d.chance(50):
        args += (tensor(d, (fout,) if d.chance(80) else (), dt),)
    return Call("linear", args)


def _pointwise_loss(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        shp = shape(d)
        dt = dtype(d, NN_FLOATS)
        tshape = shp if d.chance(85) else shape(d)
        kwargs = maybe_kw(d, 60, reduction=REDUCTIONS + ("bad",) if d.chance(5) else REDUCTIONS)
        return Call(name, (tensor(d, shp, dt), tensor(d, tshape, dt if d.chance(90) else d.pick(ALL))), kwargs)

    return FuzzOp(name, gen, fn=_f(name), tol="reduce", grad=True)


def _class_inputs(d: Draw) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(input shape, class-index target shape, number of classes) for (N, C[, d1]) or (C,)."""
    c = d.int(1, 4)
    if d.chance(20):
        return (c,), (), c
    n = d.int(0 if d.chance(8) else 1, 4)
    if d.chance(25):
        extra = d.int(1, 3)
        return (n, c, extra), (n, extra), c
    return (n, c), (n,), c


def _nll_kwargs(d: Draw, c: int, dt: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = maybe_kw(d, 40, reduction=REDUCTIONS)
    if d.chance(30):
        kwargs["weight"] = tensor(d, (c if not d.chance(5) else c + 1,), dt, low=0, high=2)
    if d.chance(30):
        kwargs["ignore_index"] = d.int(-1, c)
    return kwargs


def _target(d: Draw, tshape: tuple[int, ...], c: int) -> Any:
    high = c - 1 if not d.chance(5) else c
    return tensor(d, tshape, "int64" if d.chance(92) else d.pick(("int32", "uint8")), low=-1 if d.chance(3) else 0,
                  high=high)


def _cross_entropy(d: Draw) -> Call:
    xs, ts, c = _class_inputs(d)
    dt = dtype(d, NN_FLOATS, any_percent=5)
    kwargs = _nll_kwargs(d, c, dt)
    if d.chance(25):
        kwargs["label_smoothing"] = d.pick((0.0, 0.1, 0.5, 1.5 if d.chance(10) else 0.2))
    if d.chance(25):  # class probabilities
        kwargs.pop("ignore_index", None)
        return Call("cross_entropy", (tensor(d, xs, dt), tensor(d, xs, dt, low=0, high=1)), kwargs)
    return Call("cross_entropy", (tensor(d, xs, dt), _target(d, ts, c)), kwargs)


def _nll_loss(d: Draw) -> Call:
    xs, ts, c = _class_inputs(d)
    dt = dtype(d, NN_FLOATS, any_percent=5)
    return Call("nll_loss", (tensor(d, xs, dt, low=-6, high=0), _target(d, ts, c)), _nll_kwargs(d, c, dt))


def _bce(d: Draw) -> Call:
    shp = shape(d)
    dt = dtype(d, NN_FLOATS, any_percent=5)
    low, high = (0, 1) if not d.chance(5) else (-1, 2)
    kwargs: dict[str, Any] = maybe_kw(d, 40, reduction=REDUCTIONS)
    if d.chance(25):
        kwargs["weight"] = tensor(d, shp[d.int(0, len(shp)):], dt, low=0, high=2)
    tshape = shp if d.chance(92) else shape(d)
    return Call("binary_cross_entropy", (tensor(d, shp, dt, low=low, high=high, special=False),
                                         tensor(d, tshape, dt, low=0, high=1, special=False)), kwargs)


def _embedding(d: Draw) -> Call:
    num, width = d.int(1, 6), d.int(0 if d.chance(5) else 1, 4)
    high = num - 1 if not d.chance(6) else num
    idx = tensor(d, shape(d, max_dims=3, max_side=4), "int64" if d.chance(88) else d.pick(("int32", "float32")),
                 low=-1 if d.chance(3) else 0, high=high)
    kwargs = {"padding_idx": d.int(-num, num - 1) if not d.chance(5) else num} if d.chance(30) else {}
    return Call("embedding", (idx, tensor(d, (num, width), dtype(d, NN_FLOATS))), kwargs)


def _layer_norm(d: Draw) -> Call:
    shp = shape(d, min_dims=1)
    k = d.int(1, len(shp))
    norm = shp[len(shp) - k:]
    if d.chance(5):
        norm = norm[:-1] + (norm[-1] + 1,)
    dt = dtype(d, NN_FLOATS)
    args: tuple[Any, ...] = (tensor(d, shp, dt), norm)
    if d.chance(50):
        args += (tensor(d, norm, dt), tensor(d, norm, dt) if d.chance(70) else None)
    return Call("layer_norm", args, {"eps": d.pick((1e-5, 1e-3))} if d.chance(20) else {})


def _dropout(d: Draw) -> Call:
    x = tensor(d, shape(d), dtype(d, NN_FLOATS))
    training = d.chance(60)
    p = d.pick((0.0, 1.0)) if training else d.pick((0.0, 0.3, 1.0))
    if d.chance(8):
        p = d.pick((-0.1, 1.5))
    return Call("dropout", (x,), {"p": p, "training": training})


def _pad(d: Draw) -> Call:
    shp = shape(d, min_dims=1)
    mode = "constant" if d.chance(75) else d.pick(("reflect", "replicate", "circular"))
    count = d.int(1, min(len(shp), 3)) * 2 if not d.chance(4) else 3
    pads = tuple(d.int(-2, 3) for _ in range(count))
    kwargs: dict[str, Any] = {"mode": mode}
    if mode == "constant" and d.chance(40):
        kwargs["value"] = scalar(d, d.pick(("int", "float")))
    return Call("pad", (tensor(d, shp, dtype(d, ALL, any_percent=0) if mode == "constant" else dtype(d, NN_FLOATS)),
                        pads), kwargs)


OPS = [
    _softmax("softmax"),
    _softmax("log_softmax"),
    _conv("conv1d", 1),
    _conv("conv2d", 2),
    _pool("max_pool1d", 1, avg=False),
    _pool("max_pool2d", 2, avg=False),
    _pool("avg_pool2d", 2, avg=True),
    FuzzOp("adaptive_avg_pool2d", _adaptive_avg_pool2d, fn=_f("adaptive_avg_pool2d"), tol="reduce", grad=True),
    FuzzOp("linear", _linear, fn=_f("linear"), tol="reduce", grad=True),
    _pointwise_loss("mse_loss"),
    _pointwise_loss("l1_loss"),
    FuzzOp("cross_entropy", _cross_entropy, fn=_f("cross_entropy"), tol="reduce", grad=True),
    FuzzOp("nll_loss", _nll_loss, fn=_f("nll_loss"), tol="reduce", grad=True),
    FuzzOp("binary_cross_entropy", _bce, fn=_f("binary_cross_entropy"), tol="reduce", grad=True),
    FuzzOp("embedding", _embedding, fn=_f("embedding"), grad=True),
    FuzzOp("layer_norm", _layer_norm, fn=_f("layer_norm"), tol="reduce", grad=True,
           grad_tol=lambda call: call.kwargs.get("eps", 1e-5) ** -0.5),
    FuzzOp("dropout", _dropout, fn=_f("dropout"), grad=True),
    FuzzOp("pad", _pad, fn=_f("pad"), grad=True),
]
