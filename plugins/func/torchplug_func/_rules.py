"""Batching rules: how an op computes on the values of its batched arguments in one call.

A rule ``rule(op, level, *args)`` receives the op's arguments in schema order, at least one of them batched
at ``level`` (the innermost level among them); it calls ops on the unwrapped values (which may still be
batched at outer levels: those calls dispatch to their own level's rules) and wraps the result at ``level``.
Rules move the batch dimension to the front (``movedim`` is a view) and shift logical dims by one.

``RULES`` maps op names to rules, ``rules_for_table()`` adds the generic ones (pointwise ops by their tag).
"""

from __future__ import annotations

from typing import Any, Callable

import torchplug
from torchplug._dispatch.aten import A

from ._batched import BatchedTensor, call, unwrap, wrap

__all__ = ["RULES", "rules_for_table", "front", "materialize"]

Rule = Callable[..., Any]
RULES: dict[str, Rule] = {}
_Tensor = torchplug.Tensor


def rule(*names: str) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        for n in names:
            RULES["aten::" + n] = fn
        return fn
    return deco


# ---- helpers ---------------------------------------------------------------------------------------------
def front(a: Any, level: int) -> tuple[Any, bool]:
    """``(value with the batch dim first, True)`` for a tensor batched at ``level``, else ``(a, False)``."""
    if a.__class__ is BatchedTensor and a._bt_level == level:
        v, b = a._bt_value, a._bt_bdim
        return (v if b == 0 else v.movedim(b, 0)), True
    return a, False


def materialize(a: Any, level: int, n: int) -> Any:
    """The value of ``a`` with a batch dim of size ``n`` first (an unbatched tensor is expanded, no copy)."""
    v, batched = front(a, level)
    if batched:
        return v
    return v.unsqueeze(0).expand((n,) + tuple(v.shape))


def _size(args: Any, level: int) -> int:
    for a in args:
        if a.__class__ is BatchedTensor and a._bt_level == level:
            return a._bt_value.shape[a._bt_bdim]
        if isinstance(a, (list, tuple)):
            for b in a:
                if b.__class__ is BatchedTensor and b._bt_level == level:
                    return b._bt_value.shape[b._bt_bdim]
    raise AssertionError("no argument batched at this level")


def _wrap_dim(d: int, rank: int) -> int:
    n = max(rank, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d + n if d < 0 else d


def _out(result: Any, level: int) -> Any:
    """Wrap every tensor of a result (batch dim first) at ``level``."""
    if isinstance(result, _Tensor):
        return wrap(result, 0, level)
    if isinstance(result, tuple):
        return tuple(_out(r, level) for r in result)
    if isinstance(result, list):
        return [_out(r, level) for r in result]
    return result


def _inplace_unbatched_self(op: Any, level: int, args: tuple[Any, ...]) -> RuntimeError:
    """PyTorch's error for a pointwise op writing batched values into an unbatched ``self``."""
    from ._kernels import InplaceOnUnbatched

    self = args[0]
    n = _size(args, level)
    shape = list(self.shape)
    for a in args[1:]:
        if isinstance(a, _Tensor) and a.dim() > len(shape):
            shape = [1] * (a.dim() - len(shape)) + shape
    return InplaceOnUnbatched(f"output with shape {list(self.shape)} doesn't match the broadcast shape {[n] + shape}")


# ---- pointwise ops (every tensor argument broadcasts with the others) -----------------------------------
def _promotion_fix(values: list[Any], tensors: list[tuple[int, Any, bool]]) -> None:
    """Cast 0-dim batched values to the dtype the logical call would give: physically they have the batch
    dim, and a dimensioned tensor outranks a 0-dim one in type promotion (PyTorch's binary batching rules
    promote logically too)."""
    first = tensors[0][1]._dtype if tensors else None
    if all(t._dtype is first for _, t, _ in tensors) or not any(b and t.dim() == 0 for _, t, b in tensors):
        return
    dtype = _logical_result_type([t for _, t, _ in tensors])
    for i, t, b in tensors:
        if b and t.dim() == 0 and t._dtype is not dtype:
            values[i] = values[i].to(dtype)


def _logical_result_type(ts: list[Any]) -> Any:
    """torch.result_type of the logical tensors: dimensioned ones first, 0-dim ones only from a higher category."""
    dimensioned = [t for t in ts if t.dim() > 0]
    zero = [t for t in ts if t.dim() == 0]
    if not dimensioned:  # all 0-dim: one tier
        dimensioned, zero = zero, []
    dtype = dimensioned[0]._dtype
    for t in dimensioned[1:]:
        dtype = torchplug.promote_types(dtype, t._dtype)
    for t in zero:
        if _category(t._dtype) > _category(dtype):
            dtype = torchplug.promote_types(dtype, t._dtype)
    return dtype


def _category(d: Any) -> int:
    if d.is_complex:
        return 3
    if d.is_floating_point:
        return 2
    return 0 if d is torchplug.bool else 1


# ops whose batching rule in PyTorch promotes the physical values (so torch.vmap's dtypes are those)
_PHYSICAL_PROMOTION = frozenset({"where"})


def pointwise(op: Any, level: int, *args: Any) -> Any:
    """Pointwise ops: batch dims first, batched values padded to the common logical rank so they broadcast."""
    schema = op._entry.schema
    tensors = []
    rank = 0
    for i, a in enumerate(args):
        if isinstance(a, _Tensor):
            batched = a.__class__ is BatchedTensor and a._bt_level == level
            tensors.append((i, a, batched))
            d = a.dim()
            if d > rank:
                rank = d
    values = list(args)
    mutated = schema.mutated_argument_indices
    if mutated and not (args[mutated[0]].__class__ is BatchedTensor and args[mutated[0]]._bt_level == level):
        raise _inplace_unbatched_self(op, level, args)
    for i, a, batched in tensors:
        if batched:
            v, _ = front(a, level)
            d = a.dim()
            if d < rank and i not in mutated:
                v = v.reshape((v.shape[0],) + (1,) * (rank - d) + tuple(v.shape[1:]))
            values[i] = v
    if schema.name not in _PHYSICAL_PROMOTION:
        _promotion_fix(values, [t for t in tensors if schema.arguments[t[0]].name not in ("condition", "mask")])
    result = call(op, values)
    if mutated:
        return args[mutated[0]]
    return _out(result, level)


# ---- matrix products -------------------------------------------------------------------------------------
@rule("matmul", "mm", "bmm")
def matmul_rule(op: Any, level: int, a: Any, b: Any) -> Any:
    name = op._entry.schema.name
    if name == "mm" and (a.dim() != 2 or b.dim() != 2):
        raise RuntimeError(f"{'self' if a.dim() != 2 else 'mat2'} must be a matrix")
    if name == "bmm" and (a.dim() != 3 or b.dim() != 3):
        raise RuntimeError(f"batch1 must be a 3D tensor" if a.dim() != 3 else "batch2 must be a 3D tensor")
    va, ba = front(a, level)
    vb, bb = front(b, level)
    n = _size((a, b), level)
    ra, rb = a.dim(), b.dim()
    if ra == 1 and rb == 1:
        return wrap(A.sum(A.mul(materialize(a, level, n), materialize(b, level, n)), [1]), 0, level)
    if ra >= 2 and rb >= 2:
        if (ba and not bb and rb == 2) or (bb and not ba and ra == 2):
            return wrap(A.matmul(va, vb), 0, level)  # the unbatched matrix broadcasts over the batch dim
        va = materialize(a, level, n)
        vb = materialize(b, level, n)
        r = max(ra, rb)
        va = va.reshape((n,) + (1,) * (r - ra) + tuple(va.shape[1:]))
        vb = vb.reshape((n,) + (1,) * (r - rb) + tuple(vb.shape[1:]))
        return wrap(A.matmul(va, vb), 0, level)
    if ra == 1:  # vector @ matrix(s)
        va = materialize(a, level, n).unsqueeze(-2)
        vb = materialize(b, level, n)
        vb = vb if rb == 2 else vb
        va = va.reshape((n,) + (1,) * (rb - 2) + tuple(va.shape[1:]))
        return wrap(A.matmul(va, vb).squeeze(-2), 0, level)
    # matrix(s) @ vector
    va = materialize(a, level, n)
    vb = materialize(b, level, n).unsqueeze(-1)
    vb = vb.reshape((n,) + (1,) * (ra - 2) + tuple(vb.shape[1:]))
    return wrap(A.matmul(va, vb).squeeze(-1), 0, level)


@rule("mv")
def mv_rule(op: Any, level: int, a: Any, v: Any) -> Any:
    return matmul_rule(op, level, a, v)


@rule("dot", "vdot")
def dot_rule(op: Any, level: int, a: Any, b: Any) -> Any:
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    n = _size((a, b), level)
    va, vb = materialize(a, level, n), materialize(b, level, n)
    if op._entry.schema.name == "vdot":
        va = va.conj()
    return wrap(A.sum(A.mul(va, vb), [1]), 0, level)


@rule("addmm", "addmv", "addbmm", "baddbmm")
def addmm_rule(op: Any, level: int, self: Any, m1: Any, m2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    name = op._entry.schema.name
    prod = torchplug.matmul(m1, m2)
    if name == "addbmm":
        prod = prod.sum(0)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return (self * beta if beta != 1 else self) + prod


@rule("linear")
def linear_rule(op: Any, level: int, x: Any, weight: Any, bias: Any = None) -> Any:
    wb = weight.__class__ is BatchedTensor and weight._bt_level == level
    bb = bias is not None and bias.__class__ is BatchedTensor and bias._bt_level == level
    if not wb and not bb:
        v, _ = front(x, level)
        return wrap(A.linear(v, weight, bias), 0, level)
    out = torchplug.matmul(x, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


# ---- reductions and other ops along dims -----------------------------------------------------------------
def _dims_rule(dim_pos: int, *, keepdim_pos: int | None = None, none_means_all: bool = True,
               list_dims: bool = False, extra_tensor_pos: tuple[int, ...] = ()) -> Rule:
    """A rule for ops with a dim argument at ``dim_pos`` (an int, int list or None); the other tensor
    arguments at ``extra_tensor_pos`` are materialized with the batch dim (same logical rank as self)."""

    def dims_rule(op: Any, level: int, *args: Any) -> Any:
        self = args[0]
        n = _size(args, level)
        rank = self.dim()
        values = list(args)
        values[0] = materialize(self, level, n)
        for p in extra_tensor_pos:
            if isinstance(args[p], _Tensor):
                values[p] = materialize(args[p], level, n)
        dim = args[dim_pos] if dim_pos < len(args) else None
        keepdim = bool(args[keepdim_pos]) if keepdim_pos is not None and keepdim_pos < len(args) else False
        if rank == 0:
            values[0] = values[0].unsqueeze(-1)
            for p in extra_tensor_pos:
                if isinstance(args[p], _Tensor):
                    values[p] = values[p].unsqueeze(-1)
            values[dim_pos] = [1] if list_dims or isinstance(dim, (list, tuple)) else 1
            if dim is not None:
                dims = dim if isinstance(dim, (list, tuple)) else [dim]
                for d in dims:
                    _wrap_dim(d, 0)
            if keepdim_pos is not None:
                values[keepdim_pos] = False
            # a shape-keeping op returns (n, 1) for the (n, 1) physical input: back to one value per sample
            return _out(_squeeze_unit(call(op, values)), level)
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0 and none_means_all):
            if not none_means_all:
                result = call(op, values)
                return _out(result, level)
            flat = values[0].reshape(n, -1)
            values[0] = flat
            values[dim_pos] = [1] if list_dims else 1
            if keepdim_pos is not None:
                values[keepdim_pos] = False
            result = call(op, values)
            if keepdim:
                result = _reshape_all(result, (n,) + (1,) * rank)
            return _out(result, level)
        if isinstance(dim, (list, tuple)):
            values[dim_pos] = [_wrap_dim(d, rank) + 1 for d in dim]
        else:
            values[dim_pos] = _wrap_dim(dim, rank) + 1
        return _out(call(op, values), level)

    return dims_rule


def _squeeze_unit(result: Any) -> Any:
    if isinstance(result, _Tensor):
        return result.squeeze(-1) if result.dim() == 2 else result
    return type(result)(_squeeze_unit(r) for r in result)


def _reshape_all(result: Any, shape: tuple[int, ...]) -> Any:
    if isinstance(result, _Tensor):
        return result.reshape(shape)
    return type(result)(_reshape_all(r, shape) for r in result)


# op -> where its dim (and keepdim) arguments are; ``list_dims``: the dim is an int list
_DIM_OPS: dict[tuple[str, ...], dict[str, Any]] = {
    ("sum", "mean", "nansum", "nanmean", "amax", "amin", "all", "any", "logsumexp"):
        dict(dim_pos=1, keepdim_pos=2, list_dims=True),
    ("prod", "argmax", "argmin", "max.dim", "min.dim", "median.dim", "nanmedian.dim", "mode"):
        dict(dim_pos=1, keepdim_pos=2),
    ("var", "std", "var_mean", "std_mean"): dict(dim_pos=1, keepdim_pos=3, list_dims=True),
    ("kthvalue",): dict(dim_pos=2, keepdim_pos=3),
    ("linalg_vector_norm",): dict(dim_pos=2, keepdim_pos=3, list_dims=True),
    ("count_nonzero",): dict(dim_pos=1, list_dims=True),
    # ops along one dim that keep the shape
    ("cummax", "cummin", "cumsum", "cumprod", "_softmax", "_log_softmax", "softmax.int", "log_softmax.int", "glu",
     "sort", "argsort"): dict(dim_pos=1),
    ("topk",): dict(dim_pos=2),
    ("flip",): dict(dim_pos=1, list_dims=True, none_means_all=False),
    # the FFT primitives transform along their dims (the public torch.fft functions decompose into them)
    ("_fft_r2c", "_fft_c2r", "_fft_c2c"): dict(dim_pos=1, list_dims=True, none_means_all=False),
    ("_softmax_backward_data", "_log_softmax_backward_data"): dict(dim_pos=2, extra_tensor_pos=(1,)),
    ("scatter.src", "scatter.value", "scatter_add", "scatter_reduce.two"): dict(dim_pos=1, extra_tensor_pos=(2, 3)),
}
# the samplers' gradient ops are elementwise in all their tensors
for _n in ("_standard_gamma_grad", "_dirichlet_grad"):
    RULES["aten::" + _n] = pointwise
for _names, _kw in _DIM_OPS.items():
    for _n in _names:
        RULES["aten::" + _n] = _dims_rule(**_kw)


@rule("gather", "index_select")
def index_dim_rule(op: Any, level: int, self: Any, dim: int, index: Any, *rest: Any) -> Any:
    """gather / index_select: an unbatched index with index_select stays one index for every sample."""
    n = _size((self, index), level)
    rank = self.dim()
    d = _wrap_dim(dim, rank) + 1 if rank else 1
    name = op._entry.schema.name
    ib = index.__class__ is BatchedTensor and index._bt_level == level
    v = materialize(self, level, n)
    if rank == 0:
        v = v.unsqueeze(-1)
    if name == "index_select":
        if not ib:
            out = call(op, (v, d, index))
            return wrap(out.squeeze(-1) if rank == 0 else out, 0, level)
        iv = materialize(index, level, n)
        if iv.dim() == 1:
            iv = iv.unsqueeze(-1)
        shape = list(v.shape)
        shape[d] = iv.shape[1]
        idx = iv.reshape((n,) + tuple(1 if k != d else iv.shape[1] for k in range(1, v.dim()))).expand(shape)
        out = A.gather(v, d, idx)
        return wrap(out.squeeze(-1) if rank == 0 and index.dim() == 0 else out, 0, level)
    iv = materialize(index, level, n)
    if rank == 0:
        iv = iv.unsqueeze(-1)
    out = call(op, (v, d, iv, *rest))
    return wrap(out.squeeze(-1) if rank == 0 else out, 0, level)


@rule("index_add", "index_copy", "index_fill.int_Scalar", "index_fill.int_Tensor")
def index_along_dim_rule(op: Any, level: int, self: Any, dim: int, index: Any, *rest: Any) -> Any:
    """index_add/index_copy/index_fill: one index for every sample (a batched index, or a batched value of
    index_fill, takes the per-sample loop); the source gets the batch dim."""
    if (index.__class__ is BatchedTensor and index._bt_level == level) or (
            op._entry.schema.name == "index_fill" and rest and rest[0].__class__ is BatchedTensor
            and rest[0]._bt_level == level):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (self, dim, index, *rest))
    n = _size((self, *rest), level)
    rank = self.dim()
    v = materialize(self, level, n)
    if rank == 0:
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (self, dim, index, *rest))
    rest = list(rest)
    if op._entry.schema.name in ("index_add", "index_copy"):
        rest[0] = materialize(rest[0], level, n)
        if rest[0].dim() == 1:  # a 0-dim source of a 1-element index
            rest[0] = rest[0].unsqueeze(-1)
    return wrap(call(op, (v, _wrap_dim(dim, rank) + 1, index, *rest)), 0, level)


@rule("cat")
def cat_rule(op: Any, level: int, tensors: Any, dim: int = 0) -> Any:
    n = _size(tensors, level)
    # legacy: 1-D empty tensors are skipped by cat; keep them out of the rank
    ref = next((t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)), tensors[0])
    rank = ref.dim()
    vals = [materialize(t, level, n) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0) or t is ref]
    return wrap(A.cat(vals, _wrap_dim(dim, rank) + 1), 0, level)


@rule("stack")
def stack_rule(op: Any, level: int, tensors: Any, dim: int = 0) -> Any:
    n = _size(tensors, level)
    rank = tensors[0].dim() + 1
    return wrap(A.stack([materialize(t, level, n) for t in tensors], _wrap_dim(dim, rank) + 1), 0, level)


@rule("where.self")
def where_rule(op: Any, level: int, cond: Any, a: Any, b: Any) -> Any:
    return pointwise(op, level, cond, a, b)


# ---- view ops (results are views of the value, so writes through them reach it) --------------------------
def _view_shape(v: Any, shape: Any) -> tuple[int, ...]:
    return (v.shape[0],) + tuple(shape)


@rule("view", "_unsafe_view", "reshape")
def view_rule(op: Any, level: int, self: Any, size: Any) -> Any:
    v, _ = front(self, level)
    try:
        return wrap(call(op, (v, _view_shape(v, size))), 0, level)
    except RuntimeError:
        if op._entry.schema.name == "reshape":
            raise
        # the physical layout (batch dim moved first) can refuse a view the caller chose from the logical
        # strides: give the values, as reshape does
        return wrap(A.reshape(v, _view_shape(v, size)), 0, level)


@rule("expand")
def expand_rule(op: Any, level: int, self: Any, size: Any, implicit: bool = False) -> Any:
    v, _ = front(self, level)
    size = list(size)
    rank = self.dim()
    if len(size) < rank:  # PyTorch's batching rule's message
        raise RuntimeError(f"expand: the number of sizes provided ({len(size)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({rank})")
    extra = len(size) - rank
    v = v.reshape((v.shape[0],) + (1,) * extra + tuple(v.shape[1:])) if extra else v
    return wrap(A.expand(v, [v.shape[0]] + size), 0, level)


@rule("permute")
def permute_rule(op: Any, level: int, self: Any, dims: Any) -> Any:
    v, _ = front(self, level)
    rank = self.dim()
    return wrap(A.permute(v, [0] + [_wrap_dim(d, rank) + 1 for d in dims]), 0, level)


@rule("transpose.int")
def transpose_rule(op: Any, level: int, self: Any, d0: int, d1: int) -> Any:
    v, _ = front(self, level)
    rank = self.dim()
    if rank == 0:
        _wrap_dim(d0, 0), _wrap_dim(d1, 0)
        return wrap(v, 0, level)
    return wrap(A.transpose(v, _wrap_dim(d0, rank) + 1, _wrap_dim(d1, rank) + 1), 0, level)


@rule("t")
def t_rule(op: Any, level: int, self: Any) -> Any:
    rank = self.dim()
    if rank > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {rank}D")
    v, _ = front(self, level)
    return wrap(A.transpose(v, 1, 2) if rank == 2 else v, 0, level)


@rule("movedim.intlist")
def movedim_rule(op: Any, level: int, self: Any, src: Any, dst: Any) -> Any:
    v, _ = front(self, level)
    rank = self.dim()
    return wrap(A["movedim.intlist"](v, [_wrap_dim(d, rank) + 1 for d in src], [_wrap_dim(d, rank) + 1 for d in dst]), 0, level)


@rule("unsqueeze")
def unsqueeze_rule(op: Any, level: int, self: Any, dim: int) -> Any:
    v, _ = front(self, level)
    return wrap(A.unsqueeze(v, _wrap_dim(dim, self.dim() + 1) + 1), 0, level)


@rule("squeeze")
def squeeze_rule(op: Any, level: int, self: Any, dim: Any = None) -> Any:
    v, _ = front(self, level)
    rank = self.dim()
    if dim is None:
        dims = [d + 1 for d in range(rank) if self.shape[d] == 1]
    else:
        dims = [_wrap_dim(d, rank) + 1 for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
        dims = [d for d in dims if rank and v.shape[d] == 1]
    return wrap(A.squeeze(v, dims) if dims else A.alias(v), 0, level)


def _one_dim(pos: int = 1, extra: int = 0) -> Rule:
    def one_dim_rule(op: Any, level: int, self: Any, *rest: Any) -> Any:
        v, _ = front(self, level)
        rest = list(rest)
        rest[pos - 1] = _wrap_dim(rest[pos - 1], self.dim() + extra) + 1
        return _out(call(op, (v, *rest)), level)
    return one_dim_rule


for _n in ("select.int", "slice.Tensor", "narrow", "unfold", "unflatten.int", "unbind.int"):
    RULES["aten::" + _n] = _one_dim()  # (self, dim, ...)
for _n in ("split.Tensor", "split_with_sizes", "chunk", "tensor_split.sections", "tensor_split.indices"):
    RULES["aten::" + _n] = _one_dim(2)  # (self, sizes or count, dim)


@rule("diagonal", "diagonal_copy")
def diagonal_rule(op: Any, level: int, self: Any, offset: int = 0, d1: int = 0, d2: int = 1) -> Any:
    v, _ = front(self, level)
    r = self.dim()
    return wrap(call(op, (v, offset, _wrap_dim(d1, r) + 1, _wrap_dim(d2, r) + 1)), 0, level)


@rule("diag_embed")
def diag_embed_rule(op: Any, level: int, self: Any, offset: int = 0, d1: int = -2, d2: int = -1) -> Any:
    # (its composite writes into a zeros tensor it makes unbatched: it cannot run on batched values)
    v, _ = front(self, level)
    r = self.dim() + 1  # the dims name the result's
    return wrap(call(op, (v, offset, _wrap_dim(d1, r) + 1, _wrap_dim(d2, r) + 1)), 0, level)


# the <view>_scatter composites clone ``self`` and copy ``src`` into its view: both operands batched first (an
# unbatched one expanded), the view's dims shifted past the batch dim
@rule("slice_scatter", "select_scatter")
def dim_scatter_rule(op: Any, level: int, self: Any, src: Any, dim: int = 0, *rest: Any) -> Any:
    n = _size((self, src), level)
    return wrap(call(op, (materialize(self, level, n), materialize(src, level, n), _wrap_dim(dim, self.dim()) + 1,
                          *rest)), 0, level)


@rule("diagonal_scatter")
def diagonal_scatter_rule(op: Any, level: int, self: Any, src: Any, offset: int = 0, d1: int = 0, d2: int = 1) -> Any:
    n = _size((self, src), level)
    r = self.dim()
    return wrap(call(op, (materialize(self, level, n), materialize(src, level, n), offset, _wrap_dim(d1, r) + 1,
                          _wrap_dim(d2, r) + 1)), 0, level)


@rule("flatten.using_ints")
def flatten_rule(op: Any, level: int, self: Any, start: int = 0, end: int = -1) -> Any:
    v, _ = front(self, level)
    r = self.dim()
    if r == 0:
        return wrap(v.reshape(v.shape[0], 1), 0, level)
    return wrap(A.flatten(v, _wrap_dim(start, r) + 1, _wrap_dim(end, r) + 1), 0, level)


@rule("alias", "detach", "_conj", "_neg_view", "view_as_real", "view_as_complex", "contiguous", "clone",
      "_to_copy", "resolve_conj", "resolve_neg", "conj_physical", "zeros_like", "ones_like", "empty_like",
      "full_like", "lift_fresh", "_to_dense")
def same_layout_rule(op: Any, level: int, self: Any, *rest: Any) -> Any:
    """Ops applying to each element (or the whole tensor) alike: the value keeps its batch dim in place."""
    value, bdim = unwrap(self, level)
    rest = list(rest)
    names = [a.name for a in op._entry.schema.arguments[1:]]
    if "memory_format" in names:  # a memory format is for the logical rank: keep the value's layout
        i = names.index("memory_format")
        if i < len(rest) and rest[i] is not None:
            rest[i] = None
    return wrap(call(op, (value, *rest)), bdim, level)


@rule("copy_")
def copy_rule(op: Any, level: int, self: Any, src: Any, non_blocking: bool = False) -> Any:
    return pointwise(op, level, self, src, non_blocking)


@rule("fill_.Scalar", "zero_")
def fill_rule(op: Any, level: int, self: Any, *rest: Any) -> Any:
    v, b = front(self, level)
    if not b:
        raise _inplace_unbatched_self(op, level, (self, *rest))
    call(op, (v, *rest))
    return self


@rule("embedding")
def embedding_rule(op: Any, level: int, weight: Any, indices: Any, *rest: Any) -> Any:
    wb = weight.__class__ is BatchedTensor and weight._bt_level == level
    if not wb:
        v, _ = front(indices, level)
        return wrap(call(op, (weight, v, *rest)), 0, level)
    from ._kernels import per_sample_loop

    return per_sample_loop(op, level, (weight, indices, *rest))


def rules_for_table(entries: dict[str, Any]) -> dict[str, Rule]:
    """Every op's rule: the hand-written ones above, and the pointwise rule for ops tagged pointwise."""
    found: dict[str, Rule] = {}
    for name, entry in entries.items():
        if name in RULES:
            found[name] = RULES[name]
        elif "pointwise" in entry.tags and "out" not in entry.tags and "random" not in entry.tags:
            found[name] = pointwise
    return found


# ---- ops on the trailing dims of a tensor with any number of leading (batch) dims -----------------------
@rule("linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky", "linalg_qr", "linalg_svd", "linalg_svdvals",
      "linalg_eigh", "linalg_eigvalsh", "linalg_eig", "linalg_eigvals", "linalg_ldl_factor_ex", "tril", "triu",
      "one_hot", "constant_pad_nd", "pixel_shuffle", "pixel_unshuffle")
def leading_batch_rule(op: Any, level: int, self: Any, *rest: Any) -> Any:
    """The op already maps over leading dims: the batch dim becomes one more of them."""
    v, _ = front(self, level)
    if any(r.__class__ is BatchedTensor and r._bt_level == level for r in rest if isinstance(r, _Tensor)):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (self, *rest))
    return _out(call(op, (v, *rest)), level)



# ---- ops over a leading N (batch) dim: the vmap dim merges into N ---------------------------------------
_SPATIAL = {"1d": 1, "2d": 2, "3d": 3}


def _spatial_rank(op: Any, args: tuple[Any, ...]) -> int:
    name = op._entry.schema.name
    if name == "convolution":
        return args[1].dim() - 2
    if name in ("im2col",):
        return 2
    if name in ("col2im",):
        return 1
    if name in ("_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
                "adaptive_max_pool2d_backward"):
        return 2
    for suffix, k in _SPATIAL.items():
        if suffix in name:
            return k
    raise AssertionError(name)


@rule("im2col", "col2im", "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d",
      "_adaptive_avg_pool2d", "adaptive_max_pool2d", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
      "replication_pad1d", "replication_pad2d", "replication_pad3d", "upsample_nearest1d", "upsample_nearest2d",
      "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
      "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
      "max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward", "avg_pool2d_backward",
      "avg_pool3d_backward", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d_backward",
      "reflection_pad1d_backward", "reflection_pad2d_backward", "reflection_pad3d_backward",
      "replication_pad1d_backward", "replication_pad2d_backward", "replication_pad3d_backward",
      "upsample_nearest1d_backward", "upsample_nearest2d_backward", "upsample_nearest3d_backward",
      "_upsample_nearest_exact1d_backward", "_upsample_nearest_exact2d_backward", "_upsample_nearest_exact3d_backward",
      "upsample_linear1d_backward", "upsample_bilinear2d_backward", "upsample_trilinear3d_backward")
def merge_n_rule(op: Any, level: int, *args: Any) -> Any:
    """Ops whose samples along N are independent: the batch dim merges into N (or becomes N when the
    logical input has none).  Only the N-carrying tensor arguments may be batched (not a conv weight)."""
    schema = op._entry.schema
    name = schema.name
    k = _spatial_rank(op, args)
    carriers = [i for i, a in enumerate(schema.arguments) if a.type.base == "Tensor" and not a.type.is_list
                and a.name in ("input", "self", "grad_output", "indices")]
    others_batched = any(isinstance(a, _Tensor) and a.__class__ is BatchedTensor and a._bt_level == level
                         for i, a in enumerate(args) if i not in carriers)
    if others_batched:
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, args)
    n = _size(args, level)
    first = args[carriers[0]]
    has_n = first.dim() == k + 2
    values = list(args)
    for i in carriers:
        a = args[i]
        if a is None or not isinstance(a, _Tensor):
            continue
        v = materialize(a, level, n)
        values[i] = v.reshape((-1,) + tuple(v.shape[2:])) if has_n else v
    if has_n and name.startswith(("upsample", "_upsample")) and name.endswith("_backward"):
        sizes = list(values[2])
        values[2] = [sizes[0] * n] + sizes[1:]  # input_size names N
    result = call(op, values)

    def back(r: Any) -> Any:
        if isinstance(r, _Tensor):
            return wrap(r.reshape((n, -1) + tuple(r.shape[1:])) if has_n else r, 0, level)
        return type(r)(back(x) for x in r)

    return back(result)


# ---- convolution: the batch dim merges into N, or with batched weights into the channels (groups) -----------
def _at(t: Any, level: int) -> bool:
    return t is not None and t.__class__ is BatchedTensor and t._bt_level == level


def _into_channels(t: Any, n: int, count: int) -> Any:
    """(B, N, C, *sp) -> (N, B*C, *sp): sample b's channels become the b-th block of ``count`` channels."""
    return t.movedim(0, 1).reshape((t.shape[1], n * count) + tuple(t.shape[3:]))


@rule("convolution")
def convolution_rule(op: Any, level: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                     dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Any:
    """Unbatched weights: the batch dim merges into N.  Batched weights (per-sample gradients, ensembles):
    one grouped convolution, sample b's channels (and weights) forming groups b*groups .. (b+1)*groups-1."""
    if not (_at(weight, level) or _at(bias, level)):
        return merge_n_rule(op, level, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                            groups)
    n = _size((input, weight, bias), level)
    has_n = input.dim() == weight.dim()
    x = materialize(input, level, n)
    if not has_n:
        x = x.unsqueeze(1)
    w = materialize(weight, level, n)
    b = None if bias is None else materialize(bias, level, n).reshape(-1)
    out = call(op, (_into_channels(x, n, x.shape[2]), w.reshape((-1,) + tuple(w.shape[2:])), b, stride, padding,
                    dilation, transposed, output_padding, groups * n))
    out = out.reshape((out.shape[0], n, -1) + tuple(out.shape[2:]))  # (N, B, O, *sp)
    return wrap(out, 1, level) if has_n else wrap(out[0], 0, level)


@rule("convolution_backward")
def convolution_backward_rule(op: Any, level: int, grad_output: Any, input: Any, weight: Any, bias_sizes: Any,
                              stride: Any, padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                              groups: int, output_mask: Any) -> Any:
    """The backward of the grouped convolution above: every sample's input, weight and bias gradients
    in one call (an unbatched argument is expanded first)."""
    n = _size((grad_output, input, weight), level)
    has_n = input.dim() == weight.dim()
    g = materialize(grad_output, level, n)
    x = materialize(input, level, n)
    w = materialize(weight, level, n)
    if not has_n:
        g, x = g.unsqueeze(1), x.unsqueeze(1)
    sizes = None if bias_sizes is None else [n * int(bias_sizes[0])]
    gi, gw, gb = call(op, (_into_channels(g, n, g.shape[2]), _into_channels(x, n, x.shape[2]),
                           w.reshape((-1,) + tuple(w.shape[2:])), sizes, stride, padding, dilation, transposed,
                           output_padding, groups * n, output_mask))
    if gi is not None:
        gi = gi.reshape((gi.shape[0], n, -1) + tuple(gi.shape[2:]))
        gi = wrap(gi, 1, level) if has_n else wrap(gi[0], 0, level)
    if gw is not None:
        gw = wrap(gw.reshape((n, -1) + tuple(gw.shape[1:])), 0, level)
    if gb is not None:
        gb = wrap(gb.reshape(n, -1), 0, level)
    return gi, gw, gb


@rule("native_layer_norm")
def layer_norm_rule(op: Any, level: int, x: Any, shape: Any, weight: Any, bias: Any, eps: float) -> Any:
    if any(t is not None and t.__class__ is BatchedTensor and t._bt_level == level for t in (weight, bias)):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (x, shape, weight, bias, eps))
    v, _ = front(x, level)
    return _out(call(op, (v, shape, weight, bias, eps)), level)


@rule("native_group_norm")
def group_norm_rule(op: Any, level: int, x: Any, weight: Any, bias: Any, N: int, C: int, HxW: int, group: int,
                    eps: float) -> Any:
    if any(t is not None and t.__class__ is BatchedTensor and t._bt_level == level for t in (weight, bias)):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (x, weight, bias, N, C, HxW, group, eps))
    v, _ = front(x, level)
    n = v.shape[0]
    out, mean, rstd = call(op, (v.reshape((n * N,) + tuple(v.shape[2:])), weight, bias, n * N, C, HxW, group, eps))
    return (wrap(out.reshape(v.shape), 0, level), wrap(mean.reshape(n, N, -1), 0, level),
            wrap(rstd.reshape(n, N, -1), 0, level))


# ---- losses: computed unreduced, then reduced per sample -------------------------------------------------
@rule("nll_loss_forward", "nll_loss2d_forward")
def nll_loss_rule(op: Any, level: int, x: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    if weight is not None and weight.__class__ is BatchedTensor and weight._bt_level == level:
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (x, target, weight, reduction, ignore_index))
    n = _size((x, target), level)
    xv = materialize(x, level, n)
    tv = materialize(target, level, n)
    has_n = x.dim() == (2 if op._entry.schema.name == "nll_loss_forward" else 4)
    if has_n:
        xv = xv.reshape((-1,) + tuple(xv.shape[2:]))
        tv = tv.reshape((-1,) + tuple(tv.shape[2:]))
    elif op._entry.schema.name == "nll_loss2d_forward":
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    out, _ = call(op, (xv, tv, weight, 0, ignore_index))
    out = out.reshape(n, -1)
    tflat = tv.reshape(n, -1)
    valid = A.ne(tflat, ignore_index)
    if weight is not None:
        safe = A.where(valid, tflat, A.zeros_like(tflat))
        w = A.mul(A.index_select(weight, 0, safe.reshape(-1)).reshape(tflat.shape), valid.to(weight.dtype))
    else:
        w = valid.to(out.dtype)
    total = A.sum(w, [1])
    if reduction == 0:
        result = out.reshape((n,) + tuple(target.shape)) if has_n else out.reshape(n)
    elif reduction == 2:
        result = A.sum(out, [1])
    else:
        result = A.div(A.sum(out, [1]), total)
    return wrap(result, 0, level), wrap(total.to(out.dtype), 0, level)


@rule("binary_cross_entropy")
def bce_rule(op: Any, level: int, x: Any, target: Any, weight: Any = None, reduction: int = 1) -> Any:
    """Unreduced on the physical values (input and target have one shape, so both get the batch dim), then
    reduced per sample."""
    n = _size((x, target, weight), level)
    xv, tv = materialize(x, level, n), materialize(target, level, n)
    wv = weight
    if weight is not None and weight.__class__ is BatchedTensor and weight._bt_level == level:
        wv, _ = front(weight, level)
        wv = wv.reshape((n,) + (1,) * (x.dim() - weight.dim()) + tuple(wv.shape[1:]))
    out = call(op, (xv, tv, wv, 0))
    if reduction == 0:
        return wrap(out, 0, level)
    flat = out.reshape(n, -1)
    return wrap(A.sum(flat, [1]) if reduction == 2 else A.mean(flat, [1]), 0, level)


@rule("max", "min", "median", "nanmedian")
def full_reduce_rule(op: Any, level: int, self: Any) -> Any:
    v, _ = front(self, level)
    if self.numel() == 0:
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (self,))
    flat = v.reshape(v.shape[0], -1)
    name = op._entry.schema.name
    if name == "max":
        return wrap(A.amax(flat, [1]), 0, level)
    if name == "min":
        return wrap(A.amin(flat, [1]), 0, level)
    return wrap(A[f"{name}.dim"](flat, 1)[0], 0, level)


@rule("index.Tensor")
def index_rule(op: Any, level: int, self: Any, indices: Any) -> Any:
    """``x[idx]``: unbatched indices index every sample alike (the batch dim stays first when the indexed
    dims are adjacent); batched indices go through the per-sample loop."""
    positions = [i for i, t in enumerate(indices) if t is not None]
    batched_idx = any(t is not None and t.__class__ is BatchedTensor and t._bt_level == level for t in indices)
    if batched_idx or self.__class__ is not BatchedTensor or self._bt_level != level or (
            positions and positions[-1] - positions[0] + 1 != len(positions)):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (self, indices))
    v, _ = front(self, level)
    return wrap(call(op, (v, [None] + list(indices))), 0, level)


@rule("fill_.Tensor")
def fill_tensor_rule(op: Any, level: int, self: Any, value: Any) -> Any:
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    if value.__class__ is BatchedTensor and value._bt_level == level:
        if not (self.__class__ is BatchedTensor and self._bt_level == level):
            raise _inplace_unbatched_self(op, level, (self, value))
        self.copy_(value)
        return self
    v, _ = front(self, level)
    call(op, (v, value))
    return self


@rule("native_batch_norm")
def batch_norm_rule(op: Any, level: int, x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                    training: bool, momentum: float, eps: float) -> Any:
    """Evaluation mode normalizes each sample with the running statistics: the batch dim merges into N.
    Training mode (statistics over N, running-stat updates) and batched parameters take the per-sample loop."""
    others = (weight, bias, running_mean, running_var)
    if training or x.dim() < 2 or any(t is not None and t.__class__ is BatchedTensor and t._bt_level == level
                                      for t in others):
        from ._kernels import per_sample_loop

        return per_sample_loop(op, level, (x, weight, bias, running_mean, running_var, training, momentum, eps))
    v, _ = front(x, level)
    n = v.shape[0]
    out, mean, invstd = call(op, (v.reshape((-1,) + tuple(v.shape[2:])), weight, bias, running_mean, running_var,
                                  training, momentum, eps))
    return wrap(out.reshape(v.shape), 0, level), mean, invstd
