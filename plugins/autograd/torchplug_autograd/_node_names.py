"""PyTorch's names of backward nodes (``type(t.grad_fn).__name__``) and the edges it shows.

PyTorch's code generator names the node of each ``derivatives.yaml`` entry
``<TitleCasedOpName>Backward<k>``: the op name's ``_``-separated parts go through ``str.title``
(so ``log1p`` gives ``Log1P`` and ``max_pool2d`` ``MaxPool2D``), a ``Forward`` suffix is dropped
(``nll_loss_forward`` gives ``NllLossBackward0``), and ``k`` counts the earlier entries with the same
prefix (``pow.Tensor_Tensor`` is ``PowBackward1``).  :data:`OVERLOAD_NUMBERS` holds the ``k`` of the ops
where it is not 0.

Where torchplug keeps one overload for several of PyTorch's (``sum`` with an optional ``dim`` stands
for ``sum`` and ``sum.dim_IntList``), the node name depends on the call: :data:`VARIANTS` lists,
per op, ``(condition, name, hidden)`` entries, tried in order when a node is recorded.  The
condition is a Python expression over the schema's argument names (``_Tensor`` is the tensor
class); ``hidden`` names inputs that PyTorch's overload takes as a Scalar, so its node has no edge
for them (``torch.fmod(x, 2)`` records ``FmodBackward0`` with one entry in ``next_functions``).
"""

from __future__ import annotations

__all__ = ["NAMES", "OVERLOAD_NUMBERS", "QUALIFIED_NAMES", "VARIANTS", "node_name"]

# Hand-written C++ nodes: ``name()`` carries the namespace, the type name does not.
QUALIFIED_NAMES: dict[str, str] = {
    n: f"torch::autograd::{n}"
    for n in ("AccumulateGrad", "CopyBackwards", "CopySlices", "GraphRoot", "Error", "NotImplemented")
}

# Ops whose node PyTorch names after the op it computes them with (linalg_inv calls linalg_inv_ex,
# square is pow(self, 2)).
NAMES: dict[str, str] = {
    "linalg_inv": "LinalgInvExBackward0", "linalg_solve": "LinalgSolveExBackward0",
    "linalg_cholesky": "LinalgCholeskyExBackward0", "linalg_svdvals": "LinalgSvdBackward0",
    "linalg_eigvalsh": "LinalgEighBackward0", "square": "PowBackward0",
    "diagonal_copy": "DiagonalBackward0_copy",  # the name of the view_copy variants PyTorch generates
}

# PyTorch's k in <Name>Backward<k> where it is not 0 (from derivatives.yaml's order of overloads).
OVERLOAD_NUMBERS: dict[str, int] = {
    "acosh_": 1, "asinh_": 1, "atanh_": 1, "bernoulli_.float": 2, "celu_": 1, "clamp": 1, "elu_": 1,
    "fill_.Scalar": 2, "fill_.Tensor": 3, "index_fill.int_Tensor": 1, "leaky_relu_": 1, "lerp.Tensor": 1,
    "masked_fill.Tensor": 1, "max": 1, "median.dim": 1, "min": 1, "nanmedian.dim": 1, "pow.Tensor_Tensor": 1,
    "scatter.value": 1, "add.Scalar": 1, "mul.Scalar": 1, "div.Scalar": 1, "norm.ScalarOpt_dim": 1,
    # the in-place views (Tensor.squeeze_ & co.): recorded by the functional view's formula under these names
    "squeeze_": 3, "squeeze_.dim": 4, "squeeze_.dims": 5, "unsqueeze_": 1, "t_": 1, "transpose_": 1, "as_strided_": 1, "threshold_": 1, "random_": 2, "random_.to": 1, "clamp_min": 1, "clamp_max": 1,
}

_NUMBER = "other.__class__ is not _Tensor"  # a Python number where PyTorch's overload takes a Scalar

# op -> ((condition, node name, hidden inputs), ...): the first true condition wins.
VARIANTS: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "aten::sum": (("dim is not None", "SumBackward1", ()),),
    "aten::mean": (("dim is not None", "MeanBackward1", ()),),
    "aten::prod": (("dim is not None", "ProdBackward1", ()),),
    "aten::div.Tensor": (("rounding_mode is not None", "DivBackward2", ()),),
    "aten::round": (("decimals is not None", "RoundBackward1", ()),),
    "aten::sort": (("stable", "SortBackward1", ()),),
    "aten::squeeze": (("dim is not None and len(dim) == 1", "SqueezeBackward1", ()), ("dim is not None", "SqueezeBackward2", ())),
    "aten::pow.Tensor_Tensor": (("exponent.__class__ is not _Tensor", "PowBackward0", ("exponent",)),
                                ("self.__class__ is not _Tensor", "PowBackward2", ("self",))),
    "aten::fmod": ((_NUMBER, "FmodBackward0", ("other",)), ("True", "FmodBackward1", ())),
    "aten::remainder": ((_NUMBER, "RemainderBackward0", ("other",)), ("True", "RemainderBackward1", ())),
    "aten::xlogy.Tensor": ((_NUMBER, "XlogyBackward2", ("other",)),
                           ("self.__class__ is not _Tensor", "XlogyBackward1", ("self",))),
    "aten::special_xlog1py": ((_NUMBER, "SpecialXlog1PyBackward2", ("other",)),
                              ("self.__class__ is not _Tensor", "SpecialXlog1PyBackward1", ("self",))),
    "aten::special_zeta": ((_NUMBER, "SpecialZetaBackward2", ("other",)),
                           ("self.__class__ is not _Tensor", "SpecialZetaBackward1", ("self",))),
    "aten::copysign.Tensor": ((_NUMBER, "CopysignBackward1", ("other",)),),
    "aten::lerp.Tensor": (("weight.__class__ is not _Tensor", "LerpBackward0", ("weight",)),),
    "aten::sub.Tensor": (("self.__class__ is not _Tensor", "RsubBackward1", ("self",)),),  # 2 - x: torch's rsub
    "aten::clamp_min": (("min.__class__ is not _Tensor", "ClampMinBackward0", ("min",)),),
    "aten::clamp_max": (("max.__class__ is not _Tensor", "ClampMaxBackward0", ("max",)),),
}


def node_name(op: str) -> str:
    """PyTorch's node name of ``aten::op[.overload]`` (its first variant's, for merged overloads)."""
    key = op.split("::")[-1]
    if key in NAMES:
        return NAMES[key]
    base = key.split(".")[0]
    prefix = ("".join(p.title() for p in base.split("_")) + "Backward").replace("ForwardBackward", "Backward")
    return f"{prefix}{OVERLOAD_NUMBERS.get(key, 0)}"
