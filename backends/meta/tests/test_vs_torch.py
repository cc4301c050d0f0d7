"""Every meta kernel against PyTorch: shapes, dtypes and strides against torch's meta tensors,
error types against torch's CPU tensors.

Each case is ``fn(L, mk)`` written once for both libraries: ``L`` is ``torch`` or ``torchplug``
and ``mk(*shape, dtype=..., perm=...)`` makes a tensor of that library (``perm`` lays the
tensor out in memory in that dimension order, e.g. ``perm=(1, 0)`` is a transposed matrix).

Errors are compared with torch's CPU kernels (real data), not its meta tensors: torch's meta
implementations skip many checks that CPU makes (dtype of mm operands, var of ints, sizes of
index_put values, empty max(), ...), and torchplug's meta backend makes the CPU checks.
"""

from __future__ import annotations

import warnings

import pytest

import torchplug

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", category=UserWarning)


def _maker(L, device):
    def mk(*shape, dtype="float32", perm=None):
        dt = getattr(L, "bool" if dtype == "bool" else dtype)
        phys = shape if perm is None else tuple(shape[p] for p in perm)
        if device == "meta":
            t = L.empty(tuple(phys), dtype=dt, device="meta")
        elif dt.is_floating_point or dt == L.bool:
            t = L.ones(tuple(phys), dtype=dt)  # ones: valid probabilities, True masks
        else:
            t = L.zeros(tuple(phys), dtype=dt)  # zeros: valid indices
        if perm is not None:
            inverse = [perm.index(i) for i in range(len(perm))]
            t = t.permute(*inverse)
        return t

    return mk


def _fmt(L, name):
    # torchplug has no memory_format objects yet; its kernels accept the names
    return getattr(L, name, name)


def _describe(r):
    if isinstance(r, (tuple, list)):
        return [_describe(x) for x in r]
    name = str(r.dtype).rsplit(".", 1)[-1]
    return (tuple(r.shape), name, tuple(r.stride()), r.storage_offset())


I = "int64"
B = "bool"

# ---- cases whose result torch's meta tensors define ---------------------------------------------------------
SHAPE_CASES = {
    # unary
    **{f"unary_{op}_{dt}": (lambda op, dt: lambda L, mk: getattr(L, op)(mk(2, 3, dtype=dt)))(op, dt)
       for op in ("abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "reciprocal",
                  "log1p", "expm1", "log2", "log10", "exp2", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                  "acosh", "atanh", "square", "logical_not", "isnan", "isinf", "isfinite")
       for dt in ("float32", "int64", "bool", "float16")},
    **{f"unary_{op}_{dt}": (lambda op, dt: lambda L, mk: getattr(L, op)(mk(2, 3, dtype=dt)))(op, dt)
       for op in ("neg", "floor", "ceil", "trunc", "sign", "round") for dt in ("float32", "int32", "float64")},
    "frac": lambda L, mk: L.frac(mk(4)),
    "relu_int": lambda L, mk: L.relu(mk(2, 3, dtype="int32")),
    "bitwise_not_bool": lambda L, mk: L.bitwise_not(mk(2, 3, dtype=B)),
    "bitwise_not_uint8": lambda L, mk: ~mk(2, 3, dtype="uint8"),
    "abs_complex": lambda L, mk: L.abs(mk(3, dtype="complex64")),
    "exp_complex": lambda L, mk: L.exp(mk(3, dtype="complex128")),
    "round_decimals": lambda L, mk: L.round(mk(3), decimals=2),
    "unary_transposed": lambda L, mk: L.exp(mk(3, 4, perm=(1, 0))),
    "unary_permuted3d": lambda L, mk: L.sin(mk(2, 3, 4, perm=(2, 0, 1))),
    "unary_sliced": lambda L, mk: L.exp(mk(4, 6)[:, ::2]),
    "unary_expanded": lambda L, mk: L.exp(mk(3, 1).expand(3, 4)),
    "unary_0d": lambda L, mk: L.exp(mk()),
    "unary_empty": lambda L, mk: L.exp(mk(0, 3)),
    # binary: promotion
    **{f"binary_{op}_{a}_{b}": (lambda op, a, b: lambda L, mk: getattr(L, op)(mk(2, 3, dtype=a), mk(3, dtype=b)))(op, a, b)
       for op in ("add", "mul", "div", "maximum", "minimum", "remainder", "fmod", "atan2", "pow",
                  "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
       for a, b in (("float32", "float32"), ("int64", "float32"), ("int32", "int64"), ("uint8", "int8"),
                    ("bool", "int32"), ("float16", "bfloat16"), ("float64", "float32"))},
    **{f"binary_{op}_{a}_{b}": (lambda op, a, b: lambda L, mk: getattr(L, op)(mk(2, 3, dtype=a), mk(3, dtype=b)))(op, a, b)
       for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
                  "floor_divide", "sub")
       for a, b in (("int32", "int64"), ("uint8", "int8"), ("int16", "int16"))},
    **{f"binary_bool_{op}": (lambda op: lambda L, mk: getattr(L, op)(mk(2, 3, dtype=B), mk(2, 3, dtype=B)))(op)
       for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "mul", "add", "maximum")},
    "sub_float": lambda L, mk: L.sub(mk(2, 3), mk(2, 3, dtype="float64"), alpha=2),
    "div_trunc_int": lambda L, mk: L.div(mk(2, 3, dtype=I), mk(3, dtype=I), rounding_mode="trunc"),
    "div_floor_int32": lambda L, mk: L.div(mk(2, 3, dtype="int32"), 2, rounding_mode="floor"),
    "div_complex": lambda L, mk: mk(3, dtype="complex64") / mk(3),
    # wrapped numbers and 0-dim tensors
    "int_tensor_plus_float": lambda L, mk: mk(2, 3, dtype=I) + 1.5,
    "int32_tensor_plus_int": lambda L, mk: mk(2, 3, dtype="int32") + 7,
    "uint8_tensor_plus_bool": lambda L, mk: mk(2, 3, dtype="uint8") * True,
    "float16_times_float": lambda L, mk: mk(2, 3, dtype="float16") * 2.5,
    "float_plus_complex": lambda L, mk: mk(2, 3) + 1j,
    "rsub": lambda L, mk: 1 - mk(2, 3, dtype="int16"),
    "rpow": lambda L, mk: 2 ** mk(3, dtype=I),
    "pow_int_float": lambda L, mk: mk(3, dtype=I) ** 2.5,
    "zero_dim_float64_plus_float32": lambda L, mk: mk(2, 3) + mk(dtype="float64"),
    "zero_dim_float_plus_int": lambda L, mk: mk(2, 3, dtype="int32") + mk(dtype="float64"),
    "zero_dim_both": lambda L, mk: mk(dtype="int16") + mk(dtype="int64"),
    "int_div_number": lambda L, mk: mk(3, dtype=I) / 2,
    "compare_number": lambda L, mk: mk(2, 3) > 0.5,
    # broadcasting and strides
    "bcast_3d": lambda L, mk: mk(2, 1, 4) + mk(3, 1),
    "bcast_zero": lambda L, mk: mk(1, 3) * mk(0, 1),
    "bcast_scalar_tensor": lambda L, mk: mk(4, 5) - mk(1),
    "transposed_both": lambda L, mk: mk(3, 4, perm=(1, 0)) + mk(3, 4, perm=(1, 0)),
    "transposed_and_contig": lambda L, mk: mk(3, 4, perm=(1, 0)) + mk(3, 4),
    "transposed_and_bcast": lambda L, mk: mk(3, 4, perm=(1, 0)) + mk(4),
    "permuted_and_permuted": lambda L, mk: mk(2, 3, 4, perm=(2, 1, 0)) * mk(2, 3, 4, perm=(1, 2, 0)),
    "channels_last": lambda L, mk: mk(2, 3, 4, 5, perm=(0, 2, 3, 1)) + mk(2, 3, 4, 5, perm=(0, 2, 3, 1)),
    "channels_last_bcast": lambda L, mk: mk(2, 3, 4, 5, perm=(0, 2, 3, 1)) + mk(3, 1, 1),
    "expanded_plus_number": lambda L, mk: mk(3, 1).expand(3, 4) + 1,
    "expanded_plus_vec": lambda L, mk: mk(3, 1).expand(3, 4) + mk(4),
    "empty_transposed": lambda L, mk: mk(3, 0, perm=(1, 0)) + mk(3, 0, perm=(1, 0)),
    "size1_dims": lambda L, mk: mk(1, 3, 1, perm=(2, 1, 0)) + mk(1, 3, 1),
    # ternary and masked
    "where": lambda L, mk: L.where(mk(2, 1, dtype=B), mk(3), mk(2, 3, dtype=I)),
    "where_numbers": lambda L, mk: L.where(mk(2, 3, dtype=B), 1, 0),
    "where_int_float": lambda L, mk: L.where(mk(2, 3, dtype=B), mk(2, 3, dtype=I), 1.5),
    "where_transposed": lambda L, mk: L.where(mk(3, 4, dtype=B, perm=(1, 0)), mk(3, 4, perm=(1, 0)), 0.0),
    "lerp": lambda L, mk: L.lerp(mk(2, 3), mk(3), 0.5),
    "lerp_tensor_weight": lambda L, mk: L.lerp(mk(2, 1), mk(3), mk(2, 3)),
    "addcmul": lambda L, mk: L.addcmul(mk(2, 3), mk(3, dtype=I), mk(2, 1), value=2),
    "addcdiv": lambda L, mk: L.addcdiv(mk(2, 3, dtype="float64"), mk(3), mk(2, 1)),
    "clamp_number": lambda L, mk: L.clamp(mk(2, 3, dtype=I), min=0.5),
    "clamp_int": lambda L, mk: L.clamp(mk(2, 3, dtype="int32"), 0, 5),
    "clamp_tensor": lambda L, mk: L.clamp(mk(2, 3), mk(3, dtype="float64")),
    "clamp_tensor_max": lambda L, mk: L.clamp(mk(2, 3), max=mk(2, 1)),
    "masked_fill": lambda L, mk: mk(2, 3).masked_fill(mk(2, 3, dtype=B), 1.0),
    "masked_fill_bcast": lambda L, mk: L.masked_fill(mk(3), mk(2, 3, dtype=B), 1.0),
    "masked_fill_int_float": lambda L, mk: mk(2, 3, dtype=I).masked_fill(mk(3, dtype=B), 2),
    "masked_fill_tensor": lambda L, mk: mk(2, 3).masked_fill(mk(2, 3, dtype=B), mk()),
    # in-place / out
    "add_inplace": lambda L, mk: mk(2, 3).add_(mk(3)),
    "mul_inplace_int_float_ok": lambda L, mk: mk(2, 3, dtype="float64").mul_(mk(2, 3, dtype=I)),
    "clamp_inplace": lambda L, mk: mk(2, 3).clamp_(0, 1),
    "exp_out": lambda L, mk: L.exp(mk(2, 3), out=mk(2, 3)),
    "add_out_resize": lambda L, mk: L.add(mk(2, 3), 1, out=mk(0)),
    "sum_out": lambda L, mk: L.sum(mk(2, 3), 1, out=mk(2)),
    # reductions
    **{f"{op}_{dt}": (lambda op, dt: lambda L, mk: getattr(L, op)(mk(2, 3, 4, dtype=dt)))(op, dt)
       for op in ("sum", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any")
       for dt in ("float32", "int32", "bool", "uint8", "float16")
       if not (op.startswith("arg") and dt == "bool")},  # torch's meta takes bool there; its cpu raises (below)
    "mean": lambda L, mk: L.mean(mk(2, 3, 4)),
    "mean_dim": lambda L, mk: L.mean(mk(2, 3, 4), (0, 2), keepdim=True),
    "mean_dtype": lambda L, mk: L.mean(mk(2, 3, dtype=I), 1, dtype=L.float64),
    "sum_dim": lambda L, mk: L.sum(mk(2, 3, 4), 1),
    "sum_dims_keepdim": lambda L, mk: L.sum(mk(2, 3, 4), (0, 2), keepdim=True),
    "sum_neg_dim": lambda L, mk: L.sum(mk(2, 3, 4), -1),
    "sum_dtype": lambda L, mk: L.sum(mk(2, 3), dtype=L.int32),
    "sum_empty_dims": lambda L, mk: L.sum(mk(2, 3), ()),
    "sum_0d": lambda L, mk: L.sum(mk(), 0),
    "sum_transposed": lambda L, mk: L.sum(mk(3, 4, 5, perm=(2, 0, 1)), 1),
    "sum_empty": lambda L, mk: L.sum(mk(0, 3), 0),
    "prod_dim": lambda L, mk: L.prod(mk(2, 3, dtype=B), 1, keepdim=True),
    "amax_dims": lambda L, mk: L.amax(mk(2, 3, 4), (0, 1)),
    "amin_keepdim": lambda L, mk: L.amin(mk(2, 3, 4), -1, keepdim=True),
    "amax_empty_other_dim": lambda L, mk: L.amax(mk(0, 3), 1),
    "max_dim": lambda L, mk: tuple(L.max(mk(2, 3, 4), 1)),
    "min_dim_keepdim": lambda L, mk: tuple(L.min(mk(2, 3, 4, dtype=I), 0, keepdim=True)),
    "max_dim_empty_other": lambda L, mk: tuple(L.max(mk(0, 3), 1)),
    "argmax_dim": lambda L, mk: L.argmax(mk(2, 3, 4), 2),
    "argmax_keepdim_nodim": lambda L, mk: L.argmax(mk(2, 3), keepdim=True),
    "argmin_keepdim": lambda L, mk: L.argmin(mk(2, 3), 0, keepdim=True),
    "var": lambda L, mk: L.var(mk(2, 3, 4)),
    "var_dim": lambda L, mk: L.var(mk(2, 3, 4), 1, keepdim=True),
    "std_complex": lambda L, mk: L.std(mk(2, 3, dtype="complex64"), 0),
    "std_correction": lambda L, mk: L.std(mk(2, 3), 1, correction=0),
    "all_dim": lambda L, mk: L.all(mk(2, 3), 1),
    "any_keepdim": lambda L, mk: L.any(mk(2, 3, dtype=I), 0, keepdim=True),
    # linear algebra
    "mm": lambda L, mk: L.mm(mk(2, 3), mk(3, 4)),
    "mm_transposed": lambda L, mk: L.mm(mk(2, 3, perm=(1, 0)), mk(3, 4, perm=(1, 0))),
    "mm_int": lambda L, mk: L.mm(mk(2, 3, dtype=I), mk(3, 4, dtype=I)),
    "bmm": lambda L, mk: L.bmm(mk(5, 2, 3), mk(5, 3, 4)),
    "mv": lambda L, mk: L.mv(mk(2, 3), mk(3)),
    "dot": lambda L, mk: L.dot(mk(3), mk(3)),
    "addmm": lambda L, mk: L.addmm(mk(4), mk(2, 3), mk(3, 4)),
    "addmm_full": lambda L, mk: L.addmm(mk(2, 4), mk(2, 3), mk(3, 4), beta=0.5, alpha=2),
    "matmul_3d_2d": lambda L, mk: L.matmul(mk(5, 2, 3), mk(3, 4)),
    "matmul_bcast": lambda L, mk: L.matmul(mk(5, 1, 2, 3), mk(6, 3, 4)),
    "matmul_1d_3d": lambda L, mk: L.matmul(mk(3), mk(5, 3, 4)),
    "matmul_vec": lambda L, mk: mk(3) @ mk(3),
    # joining and indexing
    "cat": lambda L, mk: L.cat([mk(2, 3), mk(4, 3)]),
    "cat_dim1_promote": lambda L, mk: L.cat([mk(2, 3, dtype=I), mk(2, 1), mk(2, 2, dtype="float64")], 1),
    "cat_legacy_empty": lambda L, mk: L.cat([mk(2, 3), mk(0)]),
    "cat_neg_dim": lambda L, mk: L.cat([mk(2, 3, 4), mk(2, 3, 1)], -1),
    "cat_transposed": lambda L, mk: L.cat([mk(3, 2, perm=(1, 0)), mk(3, 2, perm=(1, 0))]),
    "cat_bool_int": lambda L, mk: L.cat([mk(2, dtype=B), mk(2, dtype="int32")]),
    "stack": lambda L, mk: L.stack([mk(2, 3), mk(2, 3)], 1),
    "gather": lambda L, mk: L.gather(mk(2, 3), 1, mk(2, 5, dtype=I)),
    "gather_int32": lambda L, mk: L.gather(mk(2, 3), 0, mk(1, 2, dtype="int32")),
    "scatter_src": lambda L, mk: L.scatter(mk(2, 3), 1, mk(2, 2, dtype=I), mk(2, 3)),
    "scatter_value": lambda L, mk: L.scatter(mk(2, 3), 1, mk(2, 2, dtype=I), 2.0),
    "scatter_add": lambda L, mk: L.scatter_add(mk(2, 3), 0, mk(1, 3, dtype=I), mk(2, 3)),
    "masked_fill_transposed": lambda L, mk: mk(2, 3, perm=(1, 0)).masked_fill(mk(2, 3, dtype=B), 1.0),
    "masked_fill_all_transposed": lambda L, mk: mk(2, 3, perm=(1, 0)).masked_fill(mk(2, 3, dtype=B, perm=(1, 0)), 1.0),
    "clamp_transposed": lambda L, mk: L.clamp(mk(2, 3, perm=(1, 0)), 0, 1),
    "lerp_transposed": lambda L, mk: L.lerp(mk(2, 3, perm=(1, 0)), mk(2, 3, perm=(1, 0)), 0.5),
    "index_put_transposed": lambda L, mk: mk(2, 3, perm=(1, 0)).index_put((mk(4, dtype=I),), mk(3)),
    "scatter_add_transposed": lambda L, mk: L.scatter_add(mk(2, 3, perm=(1, 0)), 1, mk(1, 1, dtype=I), mk(2, 3)),
    "scatter_transposed": lambda L, mk: L.scatter(mk(3, 2, perm=(1, 0)), 1, mk(1, 1, dtype=I), 1.0),
    "scatter_inplace": lambda L, mk: mk(2, 3).scatter_(1, mk(2, 2, dtype=I), mk(2, 3)),
    "index_select": lambda L, mk: L.index_select(mk(2, 3), 1, mk(5, dtype=I)),
    "index_select_0d": lambda L, mk: L.index_select(mk(2, 3), 0, mk(dtype=I)),
    "index_select_int32": lambda L, mk: L.index_select(mk(4, 3), 0, mk(2, dtype="int32")),
    "index_one": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(4, 5, dtype=I)]),
    "index_second": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3, 4), [None, mk(5, dtype=I)]),
    "index_adjacent": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3, 4), [None, mk(5, dtype=I), mk(5, dtype=I)]),
    "index_gap": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3, 4), [mk(5, dtype=I), None, mk(1, dtype=I)]),
    "index_bcast": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(4, 1, dtype=I), mk(5, dtype="int32")]),
    "index_put": lambda L, mk: mk(2, 3).index_put((mk(4, dtype=I),), mk(3)),
    "index_put_accumulate": lambda L, mk: mk(5, 3).index_put((mk(2, dtype=I), mk(2, dtype=I)), mk(1), True),
    "index_put_inplace": lambda L, mk: mk(5, 3).index_put_((mk(2, dtype=I),), mk(2, 3)),
    # copies, fills
    "copy_bcast": lambda L, mk: mk(2, 3).copy_(mk(3, dtype=I)),
    "fill_scalar": lambda L, mk: mk(2, 3).fill_(2),
    "fill_tensor": lambda L, mk: mk(2, 3).fill_(mk()),
    "zero_": lambda L, mk: mk(2, 3, perm=(1, 0)).zero_(),
    "clone_contiguous": lambda L, mk: mk(3, 4).clone(),
    "clone_preserve": lambda L, mk: mk(3, 4, perm=(1, 0)).clone(memory_format=_fmt(L, "preserve_format")),
    "to_dtype_preserves": lambda L, mk: mk(3, 4, perm=(1, 0)).to(L.float64),
    "contiguous": lambda L, mk: mk(3, 4, perm=(1, 0)).contiguous(),
    # views
    "view": lambda L, mk: mk(4, 6).view(2, -1, 3),
    "view_of_slice": lambda L, mk: mk(4, 6)[1:3].view(12),
    "reshape_copy": lambda L, mk: mk(3, 4, perm=(1, 0)).reshape(12),
    "reshape_view": lambda L, mk: mk(3, 4)[1:].reshape(2, 2, 2),
    "flatten": lambda L, mk: mk(2, 3, 4).flatten(1),
    "permute": lambda L, mk: mk(2, 3, 4).permute(2, 0, 1),
    "transpose": lambda L, mk: mk(2, 3, 4).transpose(0, -1),
    "t": lambda L, mk: mk(2, 3).t(),
    "t_1d": lambda L, mk: mk(3).t(),
    "expand": lambda L, mk: mk(3, 1).expand(2, 3, 4),
    "expand_minus_one": lambda L, mk: mk(3, 1).expand(-1, 4),
    "squeeze": lambda L, mk: mk(1, 3, 1).squeeze(),
    "squeeze_dim": lambda L, mk: mk(1, 3, 1).squeeze(2),
    "unsqueeze": lambda L, mk: mk(2, 3).unsqueeze(1),
    "unsqueeze_end": lambda L, mk: mk(2, 3, perm=(1, 0)).unsqueeze(-1),
    "narrow": lambda L, mk: mk(4, 6).narrow(1, 2, 3),
    "select": lambda L, mk: mk(4, 6).select(1, -2),
    "slice_step": lambda L, mk: L.ops.aten.slice.Tensor(mk(4, 6), 1, 1, 6, 2),
    "slice_past_end": lambda L, mk: L.ops.aten.slice.Tensor(mk(4, 6), 0, 2, 100),
    "unfold": lambda L, mk: mk(4, 6).unfold(1, 2, 2),
    "diagonal": lambda L, mk: L.diagonal(mk(4, 6), 1),
    "diagonal_neg": lambda L, mk: L.diagonal(mk(3, 4, 6), -1, 1, 2),
    "as_strided": lambda L, mk: mk(4, 6).as_strided((2, 2), (1, 2), 3),
    "as_strided_of_view": lambda L, mk: mk(4, 6)[1].as_strided((3,), (2,)),
    "view_dtype_smaller": lambda L, mk: mk(2, 3).view(L.float16),
    "view_dtype_bigger": lambda L, mk: mk(2, 4, dtype="uint8").view(L.int32),
    "view_dtype_same": lambda L, mk: mk(3, 2, perm=(1, 0)).view(L.int32),
    "split": lambda L, mk: L.split(mk(5, 3), 2),
    "split_sizes": lambda L, mk: L.split(mk(5, 3), [1, 2], 1),
    "chunk": lambda L, mk: L.chunk(mk(5, 3), 2),
    "unbind": lambda L, mk: L.unbind(mk(2, 3), 1),
    "alias_detach": lambda L, mk: mk(2, 3)[1:].detach(),
    "clamp_bool_int_bounds": lambda L, mk: L.clamp(mk(2, dtype=B), 0, 1),
    "cat_all_legacy_empty": lambda L, mk: L.cat([mk(0), mk(0)]),
    "gather_empty_index": lambda L, mk: L.gather(mk(2, 3), 1, mk(0, dtype=I)),
    "scatter_empty_index": lambda L, mk: L.scatter(mk(2, 3), 1, mk(0, dtype=I), 1.0),
    "index_select_of_0d": lambda L, mk: L.index_select(mk(), 0, mk(1, dtype=I)),
    "index_all_none": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [None]),
    "index_trailing_none": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3, 4), [mk(5, dtype=I), None]),
    "transpose_0d": lambda L, mk: mk().transpose(0, -1),
    "channels_last_3d": lambda L, mk: mk(2, 3, 4, 5, 6, perm=(0, 2, 3, 4, 1)) * mk(2, 3, 4, 5, 6, perm=(0, 2, 3, 4, 1)),
    "channels_last_unary": lambda L, mk: L.exp(mk(2, 3, 4, 5, perm=(0, 2, 3, 1))),
    "clone_channels_last": lambda L, mk: mk(2, 3, 4, 5).clone(memory_format=_fmt(L, "channels_last")),
    "to_copy_contiguous": lambda L, mk: L.ops.aten._to_copy(
        mk(3, 4, perm=(1, 0)), dtype=L.float16, memory_format=_fmt(L, "contiguous_format")),
    "empty_channels_last_3d": lambda L, mk: L.ops.aten.empty.memory_format(
        [2, 3, 4, 5, 6], memory_format=_fmt(L, "channels_last_3d"), device="meta"),
    "numpy_scalar_operand": lambda L, mk: mk(3, dtype="float16") + __import__("numpy").float64(1.5),
    "bool_number_operand": lambda L, mk: mk(3, dtype=B) + True,
    "complex_alpha": lambda L, mk: L.add(mk(3, dtype="complex64"), mk(3), alpha=2j),
    "view_dtype_offset": lambda L, mk: mk(4, 8, dtype="uint8")[1:, 2:].view(L.int16),
    # factories
    "empty": lambda L, mk: L.empty(2, 3, device="meta"),
    "empty_dtype": lambda L, mk: L.empty((2, 0, 3), dtype=L.int16, device="meta"),
    "empty_channels_last": lambda L, mk: L.ops.aten.empty.memory_format(
        [2, 3, 4, 5], memory_format=_fmt(L, "channels_last"), device="meta"),
    "empty_strided": lambda L, mk: L.empty_strided((2, 3), (1, 2), device="meta"),
    "zeros": lambda L, mk: L.zeros(2, 3, device="meta"),
    "ones_int": lambda L, mk: L.ones(4, dtype=L.int8, device="meta"),
    "full_int": lambda L, mk: L.full((2, 2), 7, device="meta"),
    "full_bool": lambda L, mk: L.full((2, 2), True, device="meta"),
    "full_float": lambda L, mk: L.full((2,), 1.5, device="meta"),
    "zeros_like": lambda L, mk: L.zeros_like(mk(2, 3, dtype=I)),
    "arange": lambda L, mk: L.arange(10, device="meta"),
    "arange_step": lambda L, mk: L.arange(0, 10, 3, device="meta"),
    "arange_neg_step": lambda L, mk: L.arange(10, 0, -3, device="meta"),
    "arange_float": lambda L, mk: L.arange(0, 1, 0.1, device="meta"),
    "arange_float_int64": lambda L, mk: L.arange(0.5, 3.7, dtype=L.int64, device="meta"),
    "arange_float_int32": lambda L, mk: L.arange(0.5, 3.7, dtype=L.int32, device="meta"),
    "arange_float64": lambda L, mk: L.arange(-1.5, 2.25, 0.25, dtype=L.float64, device="meta"),
    "arange_empty": lambda L, mk: L.arange(3, 3, device="meta"),
    "linspace": lambda L, mk: L.linspace(0, 1, 5, device="meta"),
    "linspace_int": lambda L, mk: L.linspace(0, 10, 4, dtype=L.int64, device="meta"),
    "logspace": lambda L, mk: L.logspace(0, 1, 5, base=2, device="meta"),
    "eye": lambda L, mk: L.eye(3, device="meta"),
    "eye_rect": lambda L, mk: L.eye(3, 5, dtype=L.bool, device="meta"),
    "randperm": lambda L, mk: L.randperm(7, device="meta"),
    "randperm_int32": lambda L, mk: L.randperm(7, dtype=L.int32, device="meta"),
    # random
    "rand": lambda L, mk: L.rand(2, 3, device="meta"),
    "randn": lambda L, mk: L.randn(2, 3, dtype=L.float64, device="meta"),
    "randint": lambda L, mk: L.randint(0, 5, (2, 3), device="meta"),
    "uniform_": lambda L, mk: mk(2, 3).uniform_(-1, 1),
    "normal_": lambda L, mk: mk(2, 3, perm=(1, 0)).normal_(0, 2),
    "random_": lambda L, mk: mk(2, 3, dtype=I).random_(0, 10),
    "bernoulli": lambda L, mk: L.bernoulli(mk(2, 3, perm=(1, 0))),
    "bernoulli_p": lambda L, mk: mk(2, 3).bernoulli_(0.3),
    "multinomial_1d": lambda L, mk: L.multinomial(mk(5), 3),
    "multinomial_2d": lambda L, mk: L.multinomial(mk(2, 5, dtype="float64"), 8, replacement=True),
}


# ---- cases that must raise (compared with torch's CPU kernels) --------------------------------------------------
ERROR_CASES = {
    "bcast": lambda L, mk: mk(2, 3) + mk(3, 2),
    "bcast_3": lambda L, mk: L.where(mk(2, 1, dtype=B), mk(3), mk(4)),
    "inplace_bcast_grow": lambda L, mk: mk(3).add_(mk(2, 3)),
    "inplace_cast": lambda L, mk: mk(2, 3, dtype=I).add_(mk(2, 3)),
    "inplace_bool_cast": lambda L, mk: mk(2, 3, dtype=B).mul_(mk(2, 3, dtype=I)),
    "out_cast": lambda L, mk: L.add(mk(2), mk(2), out=mk(2, dtype=I)),
    "neg_bool": lambda L, mk: -mk(2, dtype=B),
    "sub_bool": lambda L, mk: mk(2, dtype=B) - mk(2, dtype=B),
    "sub_bool_number": lambda L, mk: mk(2) - True,
    "add_alpha_float_for_int": lambda L, mk: L.add(mk(2, dtype=I), mk(2, dtype=I), alpha=1.5),
    "add_alpha_bool": lambda L, mk: L.add(mk(2), mk(2), alpha=True),
    "div_bad_mode": lambda L, mk: L.div(mk(2), mk(2), rounding_mode="round"),
    "bitwise_float": lambda L, mk: L.bitwise_and(mk(2), mk(2)),
    "bitwise_not_float": lambda L, mk: L.bitwise_not(mk(2)),
    "shift_bool": lambda L, mk: L.bitwise_left_shift(mk(2, dtype=B), mk(2, dtype=B)),
    "shift_float": lambda L, mk: L.bitwise_right_shift(mk(2), 1),
    "floor_divide_bool": lambda L, mk: L.floor_divide(mk(2, dtype=B), mk(2, dtype=B)),
    "maximum_complex": lambda L, mk: L.maximum(mk(2, dtype="complex64"), mk(2, dtype="complex64")),
    "sign_complex": lambda L, mk: L.sign(mk(2, dtype="complex64")),
    "floor_complex": lambda L, mk: L.floor(mk(2, dtype="complex64")),
    "frac_int": lambda L, mk: L.frac(mk(2, dtype=I)),
    "relu_bool": lambda L, mk: L.relu(mk(2, dtype=B)),
    "lerp_dtype": lambda L, mk: L.lerp(mk(2), mk(2, dtype="float64"), 0.5),
    "lerp_weight_dtype": lambda L, mk: L.lerp(mk(2), mk(2), mk(2, dtype="float64")),
    "addcdiv_int": lambda L, mk: L.addcdiv(mk(2, dtype=I), mk(2, dtype=I), mk(2, dtype=I)),
    "clamp_none": lambda L, mk: L.clamp(mk(2)),
    "masked_fill_uint8": lambda L, mk: mk(2).masked_fill(mk(2, dtype="uint8"), 1.0),
    "masked_fill_value_1d": lambda L, mk: mk(2).masked_fill(mk(2, dtype=B), mk(1)),
    # reductions
    "mean_int": lambda L, mk: L.mean(mk(2, dtype=I)),
    "mean_bool": lambda L, mk: L.mean(mk(2, dtype=B)),
    "var_int": lambda L, mk: L.var(mk(2, dtype=I)),
    "sum_dup_dims": lambda L, mk: L.sum(mk(2, 3), (0, 0)),
    "sum_dim_range": lambda L, mk: L.sum(mk(2, 3), 2),
    "sum_0d_dim_range": lambda L, mk: L.sum(mk(), 1),
    "max_empty": lambda L, mk: L.max(mk(0, 3)),
    "max_dim_empty": lambda L, mk: L.max(mk(0, 3), 0),
    "argmax_empty": lambda L, mk: L.argmax(mk(0)),
    "argmax_bool": lambda L, mk: L.argmax(mk(2, 3, dtype="bool")),
    "argmin_bool_dim": lambda L, mk: L.argmin(mk(2, 3, dtype="bool"), 1),
    "amin_empty_all_dims": lambda L, mk: L.amin(mk(0, 3)),
    "amax_empty_empty_dims": lambda L, mk: L.amax(mk(0, 3), []),
    "argmax_dim_empty": lambda L, mk: L.argmax(mk(0, 3), 0),
    "amax_empty": lambda L, mk: L.amax(mk(0, 3), 0),
    # linear algebra
    "mm_shapes": lambda L, mk: L.mm(mk(2, 3), mk(2, 3)),
    "mm_1d": lambda L, mk: L.mm(mk(2, 3), mk(3)),
    "mm_dtype": lambda L, mk: L.mm(mk(2, 3), mk(3, 2, dtype="float64")),
    "bmm_2d": lambda L, mk: L.bmm(mk(2, 3), mk(3, 2)),
    "bmm_shapes": lambda L, mk: L.bmm(mk(2, 3, 4), mk(2, 5, 6)),
    "bmm_batch": lambda L, mk: L.bmm(mk(2, 3, 4), mk(3, 4, 6)),
    "bmm_dtype": lambda L, mk: L.bmm(mk(2, 3, 4), mk(2, 4, 5, dtype="float64")),
    "mv_shapes": lambda L, mk: L.mv(mk(2, 3), mk(2)),
    "mv_1d": lambda L, mk: L.mv(mk(3), mk(3)),
    "mv_dtype": lambda L, mk: L.mv(mk(2, 3), mk(3, dtype="float64")),
    "dot_sizes": lambda L, mk: L.dot(mk(3), mk(4)),
    "dot_2d": lambda L, mk: L.dot(mk(2, 3), mk(3)),
    "dot_dtype": lambda L, mk: L.dot(mk(3), mk(3, dtype="float64")),
    "addmm_bcast": lambda L, mk: L.addmm(mk(4), mk(2, 3), mk(3, 3)),
    "addmm_dtype": lambda L, mk: L.addmm(mk(3, dtype="float64"), mk(2, 3), mk(3, 3)),
    "matmul_0d": lambda L, mk: L.matmul(mk(), mk(3)),
    # joining, indexing
    "cat_sizes": lambda L, mk: L.cat([mk(2, 3), mk(3, 3)], 1),
    "cat_ndim": lambda L, mk: L.cat([mk(2, 3), mk(2, 3, 1)]),
    "cat_0d": lambda L, mk: L.cat([mk()]),
    "cat_dim_range": lambda L, mk: L.cat([mk(2, 3)], 2),
    "stack_sizes": lambda L, mk: L.stack([mk(2, 3), mk(3, 2)]),
    "gather_big_index": lambda L, mk: L.gather(mk(2, 3), 1, mk(3, 5, dtype=I)),
    "gather_ndim": lambda L, mk: L.gather(mk(2, 3), 1, mk(5, dtype=I)),
    "gather_float_index": lambda L, mk: L.gather(mk(2, 3), 1, mk(2, 2)),
    "scatter_dtype": lambda L, mk: L.scatter(mk(2, 3), 1, mk(2, 2, dtype=I), mk(2, 3, dtype="float64")),
    "scatter_big_index": lambda L, mk: L.scatter(mk(2, 3), 1, mk(3, 3, dtype=I), mk(2, 3)),
    "scatter_add_float_index": lambda L, mk: L.scatter_add(mk(2, 3), 1, mk(2, 2), mk(2, 3)),
    "index_select_2d": lambda L, mk: L.index_select(mk(2, 3), 1, mk(2, 2, dtype=I)),
    "index_select_float": lambda L, mk: L.index_select(mk(2, 3), 1, mk(2)),
    "index_float": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(2)]),
    "index_too_many": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(1, dtype=I)] * 3),
    "index_bcast": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(2, dtype=I), mk(3, dtype=I)]),
    "index_put_values": lambda L, mk: mk(2, 3).index_put((mk(4, dtype=I),), mk(2)),
    "index_put_dtype": lambda L, mk: mk(2, 3).index_put((mk(4, dtype=I),), mk(3, dtype="float64")),
    # copies, views, factories, random
    "copy_shape": lambda L, mk: mk(3).copy_(mk(2, 3)),
    "fill_tensor_1d": lambda L, mk: mk(2, 3).fill_(mk(1)),
    "view_incompatible": lambda L, mk: mk(3, 4, perm=(1, 0)).view(12),
    "view_bad_numel": lambda L, mk: mk(3, 4).view(5, -1),
    "view_dtype_size": lambda L, mk: mk(2, 3).view(L.float64),
    "view_dtype_stride": lambda L, mk: mk(2, 3, perm=(1, 0)).view(L.float16),
    "view_dtype_0d": lambda L, mk: mk().view(L.float16),
    "as_strided_negative": lambda L, mk: mk(2, 3).as_strided((2,), (-1,)),
    "permute_dup": lambda L, mk: mk(2, 3).permute(0, 0),
    "permute_len": lambda L, mk: mk(2, 3).permute(0),
    "transpose_range": lambda L, mk: mk(2, 3).transpose(0, 2),
    "expand_bad": lambda L, mk: mk(2, 3).expand(3, 3),
    "expand_fewer": lambda L, mk: mk(2, 3).expand(3),
    "unsqueeze_range": lambda L, mk: mk(2, 3).unsqueeze(4),
    "select_range": lambda L, mk: mk(2, 3).select(1, 3),
    "select_0d": lambda L, mk: mk().select(0, 0),
    "t_3d": lambda L, mk: mk(2, 3, 4).t(),
    "empty_negative": lambda L, mk: L.empty(2, -1, device=mk.device),
    "empty_strided_len": lambda L, mk: L.empty_strided((2, 3), (1,), device=mk.device),
    "randperm_negative": lambda L, mk: L.randperm(-1, device=mk.device),
    "arange_step_sign": lambda L, mk: L.arange(0, 10, -1, device=mk.device),
    "arange_zero_step": lambda L, mk: L.ops.aten.arange.start_step(0, 10, 0, device=mk.device),
    "linspace_negative": lambda L, mk: L.linspace(0, 1, -1, device=mk.device),
    "eye_negative": lambda L, mk: L.eye(-1, device=mk.device),
    "uniform_range": lambda L, mk: mk(2).uniform_(1, 0),
    "normal_std": lambda L, mk: mk(2).normal_(0, -1),
    "random_range": lambda L, mk: mk(2, dtype=I).random_(5, 3),
    "bernoulli_p": lambda L, mk: mk(2).bernoulli_(1.5),
    "multinomial_int": lambda L, mk: L.multinomial(mk(3, dtype=I), 2),
    "multinomial_3d": lambda L, mk: L.multinomial(mk(2, 2, 2), 1),
    "multinomial_too_many": lambda L, mk: L.multinomial(mk(3), 4),
    "addmm_mat1_1d": lambda L, mk: L.addmm(mk(3), mk(3), mk(3, 3)),
    "addmm_mat2_1d": lambda L, mk: L.addmm(mk(3), mk(2, 3), mk(3)),
    "addmm_shapes": lambda L, mk: L.addmm(mk(3), mk(2, 3), mk(2, 3)),
    "addmm_mat_dtypes": lambda L, mk: L.addmm(mk(3), mk(2, 3), mk(3, 3, dtype="float64")),
    "addmm_self_too_big": lambda L, mk: L.addmm(mk(4, 2, 3), mk(2, 3), mk(3, 3)),
    "mm_self_1d": lambda L, mk: L.mm(mk(3), mk(3, 2)),
    "bmm_mat2_2d": lambda L, mk: L.bmm(mk(2, 3, 4), mk(4, 5)),
    "complex_alpha_real": lambda L, mk: L.add(mk(3), mk(3), alpha=2j),
    "div_trunc_complex": lambda L, mk: L.div(mk(2, dtype="complex64"), 2, rounding_mode="trunc"),
    "div_floor_bool": lambda L, mk: L.div(mk(2, dtype=B), mk(2, dtype=B), rounding_mode="floor"),
    "clamp_aten_none": lambda L, mk: L.ops.aten.clamp.default(mk(2)),
    "clamp_tensor_none": lambda L, mk: L.ops.aten.clamp.Tensor(mk(2)),
    "clamp_bool_bounds": lambda L, mk: L.clamp(mk(2, dtype=B), max=True),
    "clamp_tensor_bool": lambda L, mk: L.clamp(mk(2, dtype=B), mk(2, dtype=B), mk(2, dtype=B)),
    "scatter_ndim": lambda L, mk: L.scatter(mk(2, 3), 1, mk(2, dtype=I), 1.0),
    "index_mask_shape": lambda L, mk: L.ops.aten.index.Tensor(mk(2, 3), [mk(3, dtype=B)]),
    "view_dtype_odd_offset": lambda L, mk: mk(2, 4, dtype="uint8")[:, 1:3].view(L.int16),
    "view_dtype_odd_stride": lambda L, mk: mk(3, 4, dtype="uint8")[:, :2].as_strided((2, 2), (3, 1)).view(L.int16),
    "as_strided_len": lambda L, mk: mk(2, 3).as_strided((2, 2), (1,)),
    "as_strided_negative_offset": lambda L, mk: mk(2, 3).as_strided((2,), (1,), -1),
    "expand_negative_leading": lambda L, mk: mk(3).expand(-1, 3),
    "empty_aten_negative": lambda L, mk: L.ops.aten.empty.memory_format([2, -1], device=mk.device),
    "empty_strided_negative": lambda L, mk: L.empty_strided((2, -1), (1, 1), device=mk.device),
    "empty_channels_last_rank": lambda L, mk: L.ops.aten.empty.memory_format(
        [2, 3], memory_format=_fmt(L, "channels_last"), device=mk.device),
    "arange_aten_sign": lambda L, mk: L.ops.aten.arange.start_step(0, 10, -1, device=mk.device),
    "arange_aten_sign_int": lambda L, mk: L.ops.aten.arange.start_step(0, 10, -1, dtype=L.int32, device=mk.device),
    "arange_aten_zero_float": lambda L, mk: L.ops.aten.arange.start_step(0, 1.5, 0.0, device=mk.device),
    "linspace_aten_negative": lambda L, mk: L.ops.aten.linspace(0, 1, -1, device=mk.device),
    "eye_aten_negative_m": lambda L, mk: L.ops.aten.eye.m(2, -1, device=mk.device),
    "eye_aten_negative_n": lambda L, mk: L.ops.aten.eye.m(-2, 1, device=mk.device),
    "randperm_aten_negative": lambda L, mk: L.ops.aten.randperm.default(-1, device=mk.device),
    "multinomial_zero": lambda L, mk: L.multinomial(mk(3), 0),
}


def _run(fn, L, device):
    mk = _maker(L, device)
    mk.device = device
    return fn(L, mk)


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_matches_torch_meta(name):
    fn = SHAPE_CASES[name]
    expected = _describe(_run(fn, torch, "meta"))
    got = _run(fn, torchplug, "meta")
    for t in got if isinstance(got, (tuple, list)) else [got]:
        assert t.is_meta, name
    assert _describe(got) == expected


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch_cpu(name):
    fn = ERROR_CASES[name]
    with pytest.raises(Exception) as ref:
        _run(fn, torch, "cpu")
    with pytest.raises(Exception) as got:
        _run(fn, torchplug, "meta")
    # torch's NotImplementedError/IndexError/ValueError are Python's builtins
    assert isinstance(got.value, type(ref.value)), (
        f"torchplug raised {type(got.value).__name__}: {got.value}\n"
        f"torch (cpu) raised {type(ref.value).__name__}: {ref.value}"
    )


def test_data_dependent_ops_raise_like_torch():
    for L in (torch, torchplug):
        x = L.empty(2, 3, device="meta")
        with pytest.raises(NotImplementedError):
            L.nonzero(x)
        with pytest.raises(NotImplementedError):
            L.ops.aten.index.Tensor(x, [L.empty(2, 3, dtype=L.bool, device="meta")])


def test_no_data_errors_like_torch():
    for L in (torch, torchplug):
        x = L.empty(2, 3, device="meta")
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            x.tolist()
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            x.cpu()
        with pytest.raises(RuntimeError):
            x[0, 0].item() if L is torch else L.empty(1, device="meta").item()
        with pytest.raises(TypeError):
            x.numpy()


@pytest.mark.parametrize("view", [False, True])
def test_detach_of_meta_tensor_that_requires_grad_does_not_require_grad(view):
    # nn.Module.state_dict() of a module built under torch.device("meta") detaches its parameters
    results = []
    for L in (torchplug, torch):
        w = L.empty(4, 3, device="meta", requires_grad=True)
        src = w[1:] if view else w
        d = src.detach()
        results.append((d.requires_grad, d.is_leaf, d.grad_fn is None, d._base is None, tuple(d.shape),
                        d.storage_offset(), d.is_meta))
        with L.device("meta"):
            sd = L.nn.Linear(2, 2).state_dict()
        assert not any(t.requires_grad for t in sd.values())
    assert results[0] == results[1]
