"""Regressions found by differential fuzzing against torch 2.13, each compared with the installed torch.

Each case is ``fn(L)`` written once for both libraries (``L`` is ``torch`` or ``torchplug``).  The
outcome must match: the same values (NaN where torch has NaN), or the same exception type and the
same message start.
"""

from __future__ import annotations

import math
import warnings

import pytest

import torchplug

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def _run(fn, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(L)
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            return "raises", exc


def _plain(value):
    """Tensors (and tuples of them) as nested lists and shapes; NaN as a marker so == compares it."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "shape"):
        flat = value.detach().reshape(-1).tolist()
        return (tuple(value.shape), [("nan" if isinstance(v, float) and v != v else v) for v in flat])
    return value


def check_same(fn, *, message_chars=60, rel=1e-6):
    t_kind, t_val = _run(fn, torch)
    p_kind, p_val = _run(fn, torchplug)
    if t_kind == "raises":
        assert p_kind == "raises", f"torchplug returned {p_val!r}; torch raised {type(t_val).__name__}: {t_val}"
        assert type(p_val).__name__ == type(t_val).__name__, (p_val, t_val)
        theirs = str(t_val).replace("torch.", "torchplug.")[:message_chars]
        assert str(p_val)[:message_chars] == theirs
        return
    assert p_kind == "ok", f"torchplug raised {type(p_val).__name__}: {p_val}; torch returned {t_val!r}"
    ours, theirs = _plain(p_val), _plain(t_val)
    assert _close(ours, theirs, rel), (ours, theirs)


def _close(a, b, rel):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, rel) for x, y in zip(a, b))
    return a == b


def _grad(L, make, f):
    x = make(L).requires_grad_()
    f(L, x).sum().backward()
    return x.grad


# ---- nll_loss: an ignored target's -inf/+inf logit gives 0, not NaN ------------------------------------------
_LOGITS = [[-INF, 0.0], [-0.5, -1.0], [INF, 2.0], [1.0, -INF]]


def _nll(reduction, dtype="float32", weight=False):
    def fn(L):
        x = L.tensor(_LOGITS, dtype=getattr(L, dtype), requires_grad=True)
        w = L.tensor([1.0, 2.0], dtype=getattr(L, dtype)) if weight else None
        loss = L.nn.functional.nll_loss(x, L.tensor([0, 1, 0, 0]), weight=w, ignore_index=0, reduction=reduction)
        (g,) = L.autograd.grad(loss.sum(), x)
        return loss.float(), g.float()

    return fn


NLL = {
    "issue_none": lambda L: L.nn.functional.nll_loss(
        L.tensor([[-INF, 0.0], [-0.5, -1.0]]), L.tensor([0, 1]), ignore_index=0, reduction="none"
    ),
    **{f"{r}_{dt}{'_w' if w else ''}": _nll(r, dt, w)
       for r in ("none", "mean", "sum") for dt in ("float32", "float64", "float16", "bfloat16") for w in (False, True)},
    "spatial_none": lambda L: L.nn.functional.nll_loss(
        L.tensor([[[[-INF]], [[0.0]]]]), L.tensor([[[0]]]), ignore_index=0, reduction="none"
    ),
    "cross_entropy_smoothing": lambda L: L.nn.functional.cross_entropy(
        L.tensor(_LOGITS[:2] + [[1.0, 2.0]]), L.tensor([0, 1, 0]), ignore_index=0, label_smoothing=0.1,
        reduction="none",
    ),
}


@pytest.mark.parametrize("name", sorted(NLL))
def test_nll_loss_ignored_infinite_logits(name):
    check_same(NLL[name], rel=1e-3)


# ---- var/std backward with no degrees of freedom ------------------------------------------------------------
STD = {
    "issue_std": lambda L: _grad(L, lambda L: L.ones(1), lambda L, x: x.std(0)),
    "issue_var": lambda L: _grad(L, lambda L: L.ones(1), lambda L, x: x.var(0)),
    "std_all_one_element": lambda L: _grad(L, lambda L: L.tensor([3.0]), lambda L, x: x.std()),
    "var_0d": lambda L: _grad(L, lambda L: L.tensor(3.0), lambda L, x: x.var()),
    "var_correction_2": lambda L: _grad(L, lambda L: L.tensor([3.0]), lambda L, x: x.var(0, correction=2)),
    "var_all_correction_2": lambda L: _grad(L, lambda L: L.tensor([3.0, 4.0]), lambda L, x: x.var(correction=2)),
    "std_constant": lambda L: _grad(L, lambda L: L.ones(3), lambda L, x: x.std()),
    "std_constant_dim": lambda L: _grad(L, lambda L: L.ones(2, 3), lambda L, x: x.std(1)),
    "std_ordinary": lambda L: _grad(L, lambda L: L.tensor([1.0, 2.0, 4.0]), lambda L, x: x.std(0)),
    "std_mean": lambda L: _grad(L, lambda L: L.ones(1, 2), lambda L, x: L.std_mean(x, 0)[0]),
}


@pytest.mark.parametrize("name", sorted(STD))
def test_var_std_backward_without_degrees_of_freedom(name):
    check_same(STD[name], rel=1e-5)


# ---- matmul-family shapes with zero-sized dims --------------------------------------------------------------
def _r(L, *shape):
    n = math.prod(shape)
    return L.arange(float(n)).reshape(*shape) / 7


_MATMUL_SHAPES = [(0,), (3,), (0, 3), (3, 0), (2, 0), (0, 0), (2, 3), (3, 1), (2, 0, 3), (2, 3, 0), (0, 2, 3),
                  (2, 3, 1), (1, 3, 2), (2, 1, 0, 3), (0, 3, 3), (3, 3)]
ZERO = {
    f"matmul_{a}_{b}": (lambda a, b: lambda L: L.matmul(_r(L, *a), _r(L, *b)))(a, b)
    for a in _MATMUL_SHAPES for b in _MATMUL_SHAPES if 0 in a + b
}
ZERO.update({
    "issue_linear": lambda L: L.nn.functional.linear(L.zeros(3, 2, 0), L.zeros(0, 0)),
    "linear_bias": lambda L: L.nn.functional.linear(_r(L, 3, 2, 0), _r(L, 4, 0), _r(L, 4)),
    "linear_no_batch": lambda L: L.nn.functional.linear(_r(L, 0, 5), _r(L, 4, 5), _r(L, 4)),
    "linear_no_features": lambda L: L.nn.functional.linear(_r(L, 2, 5), _r(L, 0, 5), _r(L, 0)),
    "mm": lambda L: L.mm(_r(L, 2, 0), _r(L, 0, 3)),
    "addmm": lambda L: L.addmm(_r(L, 2, 3), _r(L, 2, 0), _r(L, 0, 3)),
    "addmm_vector_bias": lambda L: L.addmm(_r(L, 3), _r(L, 2, 0), _r(L, 0, 3)),
    "bmm": lambda L: L.bmm(_r(L, 2, 3, 0), _r(L, 2, 0, 4)),
    "baddbmm": lambda L: L.baddbmm(_r(L, 2, 3, 4), _r(L, 2, 3, 0), _r(L, 2, 0, 4)),
    "addbmm": lambda L: L.addbmm(_r(L, 3, 4), _r(L, 0, 3, 3), _r(L, 0, 3, 4)),
    "mv": lambda L: L.mv(_r(L, 2, 0), _r(L, 0)),
    "addmv": lambda L: L.addmv(_r(L, 0), _r(L, 0, 3), _r(L, 3)),
    "einsum_batched": lambda L: L.einsum("bij,bjk->bik", _r(L, 2, 0, 3), _r(L, 2, 3, 1)),
    "einsum_contract_empty": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 0), _r(L, 0, 3)),
    "einsum_ellipsis": lambda L: L.einsum("...ij,...jk", _r(L, 2, 0, 3), _r(L, 3, 4)),
    "tensordot": lambda L: L.tensordot(_r(L, 2, 0, 3), _r(L, 0, 3, 4), 2),
    "multi_dot": lambda L: L.linalg.multi_dot([_r(L, 2, 0), _r(L, 0, 3), _r(L, 3, 4)]),
    # torch flattens bilinear's inputs with reshape(-1, features): refused for 0 elements and 0 features
    "bilinear_no_features": lambda L: L.nn.functional.bilinear(_r(L, 5, 0), _r(L, 5, 3), _r(L, 4, 0, 3), _r(L, 4)),
    "bilinear_no_batch": lambda L: L.nn.functional.bilinear(_r(L, 0, 2), _r(L, 0, 3), _r(L, 4, 2, 3), _r(L, 4)),
    "bilinear_3d": lambda L: L.nn.functional.bilinear(_r(L, 2, 5, 2), _r(L, 2, 5, 3), _r(L, 4, 2, 3), _r(L, 4)),
    "bilinear_batch_mismatch": lambda L: L.nn.functional.bilinear(_r(L, 5, 2), _r(L, 4, 3), _r(L, 4, 2, 3)),
    # matmul's fold of a 1-d/2-d operand times a batch: torch's mv error for the transposed batch
    "matmul_fold_transposed_error": lambda L: L.matmul(_r(L, 3), _r(L, 2, 4, 5).transpose(0, 1)),
    "matmul_batch_error": lambda L: L.matmul(_r(L, 2, 3), _r(L, 2, 4, 5)),
})


@pytest.mark.parametrize("name", sorted(ZERO))
def test_zero_size_products(name):
    check_same(ZERO[name], message_chars=200)


def test_matmul_fold_keeps_values():
    a = torch.randn(3, 4, 5, dtype=torch.float64)
    b = torch.randn(5, 2, dtype=torch.float64)
    for x, y in [(a, b), (a.transpose(0, 1), b), (b.t(), a.transpose(1, 2)), (a[0, :, 0], a), (a[0], a.transpose(1, 2))]:
        ours = torchplug.matmul(torchplug.tensor(x.numpy()), torchplug.tensor(y.numpy()))
        assert tuple(ours.shape) == tuple(torch.matmul(x, y).shape)
        assert torch.allclose(torch.tensor(ours.numpy()), torch.matmul(x, y))


# ---- numbers an integer tensor cannot hold ------------------------------------------------------------------
def _set(dtype, index, value):
    def fn(L):
        x = L.zeros(3, dtype=getattr(L, dtype))
        x[index(L) if callable(index) else index] = value
        return x

    return fn


CONVERT = {
    "issue_setitem_nan": _set("int64", 0, NAN),
    "setitem_nan_int32": _set("int32", 0, NAN),
    "setitem_inf": _set("int64", 0, INF),
    "setitem_slice_nan": _set("int64", slice(0, 2), NAN),
    "setitem_ellipsis_nan": _set("int64", Ellipsis, NAN),
    "setitem_index_nan": _set("int64", lambda L: L.tensor([0]), NAN),
    "setitem_mask_nan": _set("int64", lambda L: L.tensor([True, False, True]), NAN),
    "setitem_uint8_300": _set("uint8", 0, 300),
    "setitem_uint8_minus_1": _set("uint8", 0, -1),
    "setitem_int_beyond_int64": _set("int64", 0, 2**63),
    "setitem_float16_overflows_to_inf": _set("float16", 0, 1e40),
    "setitem_float16_rounds_to_max": _set("float16", 0, 65519.0),
    "setitem_bfloat16_overflow": _set("bfloat16", lambda L: L.tensor([0]), -1e40),
    "setitem_float32_overflow": _set("float32", 0, 1e40),
    "setitem_bool_nan": _set("bool", 0, NAN),
    "fill_nan": lambda L: L.zeros(3, dtype=L.int64).fill_(NAN),
    "full_nan": lambda L: L.full((2,), NAN, dtype=L.int64),
    "full_like_nan": lambda L: L.full_like(L.zeros(2, dtype=L.int64), NAN),
    "new_full_nan": lambda L: L.zeros(2, dtype=L.int64).new_full((2,), NAN),
    "full_float16_inf": lambda L: L.full((1,), 1e40, dtype=L.float16),
    "full_like_float16_refused": lambda L: L.full_like(L.zeros(2, dtype=L.float16), 1e40),
    "index_fill_nan": lambda L: L.zeros(3, dtype=L.int64).index_fill_(0, L.tensor([0]), NAN),
    "index_fill_uint8_300": lambda L: L.zeros(3, dtype=L.uint8).index_fill_(0, L.tensor([0]), 300),
    "scatter_value_nan": lambda L: L.zeros(3, dtype=L.int64).scatter_(0, L.tensor([0]), NAN),
    "scalar_tensor_nan": lambda L: L.scalar_tensor(NAN, dtype=L.int64),
    "scalar_tensor_float32_overflow": lambda L: L.scalar_tensor(1e40, dtype=L.float32),
    "scalar_tensor_float16_inf": lambda L: L.scalar_tensor(1e40, dtype=L.float16),
    "tensor_nan_int64": lambda L: L.tensor([NAN], dtype=L.int64),
    "tensor_inf_int32": lambda L: L.tensor(INF, dtype=L.int32),
    "tensor_uint8_300": lambda L: L.tensor([300], dtype=L.uint8),
    "tensor_uint8_minus_1": lambda L: L.tensor([-1], dtype=L.uint8),
    "tensor_uint8_minus_1_5": lambda L: L.tensor([-1.5], dtype=L.uint8),
    "tensor_int8_127_9": lambda L: L.tensor([127.9], dtype=L.int8),
    "tensor_nested_nan": lambda L: L.tensor([[1, 2], [3, NAN]], dtype=L.int64),
    "tensor_beyond_int64": lambda L: L.tensor([2**63]),
    "tensor_beyond_int64_as_float": lambda L: L.tensor([2**63], dtype=L.float32),
    "tensor_float32_overflow_is_inf": lambda L: L.tensor([1e40], dtype=L.float32),
    "tensor_complex_to_int": lambda L: L.tensor([1 + 0j], dtype=L.int64),
    "tensor_complex_to_float": lambda L: L.tensor([1 + 2j], dtype=L.float32),
    "tensor_nan_bool": lambda L: L.tensor([NAN], dtype=L.bool),
}


@pytest.mark.parametrize("name", sorted(CONVERT))
def test_number_conversion_into_dtype(name):
    check_same(CONVERT[name])


# ---- index_put_ with one mask and a one-element value: masked_fill_ (any value dtype) ------------------------
def _put(index, value, dtype="float32"):
    def fn(L):
        x = L.tensor([[1.0, -1.0], [2.0, -3.0]], dtype=getattr(L, dtype))
        x[index(L) if callable(index) else index] = value(L)
        return x

    return fn


_MASK = lambda L: L.tensor([[True, False], [False, True]])  # noqa: E731
_ROWS = lambda L: L.tensor([True, False])  # noqa: E731
MASKED = {
    "issue_mask_int32_0d": _put(_MASK, lambda L: L.tensor(1, dtype=L.int32)),
    "mask_int64_0d": _put(_MASK, lambda L: L.tensor(5)),
    "mask_one_element_1d": _put(_MASK, lambda L: L.tensor([7], dtype=L.int32)),
    "mask_bool_value": _put(_MASK, lambda L: L.tensor(True)),
    "row_mask_broadcast": _put(_ROWS, lambda L: L.tensor(3, dtype=L.int32)),
    "int_self_float_value_truncates": _put(_MASK, lambda L: L.tensor(2.7), dtype="int64"),
    "complex_value_refused": _put(_MASK, lambda L: L.tensor(1 + 1j)),
    "mask_shape_mismatch": _put(lambda L: L.tensor([True, False, True]), lambda L: L.tensor(1.0)),
    # the general index_put_ path still wants matching dtypes
    "mask_two_elements": _put(_MASK, lambda L: L.tensor([7, 8], dtype=L.int32)),
    "int_index_0d": _put(lambda L: L.tensor([0]), lambda L: L.tensor(9, dtype=L.int32)),
    "direct_index_put_mask": lambda L: L.zeros(2).index_put_((L.tensor([True, False]),), L.tensor(1, dtype=L.int32)),
    "direct_index_put_int": lambda L: L.zeros(2).index_put_((L.tensor([0]),), L.tensor(1, dtype=L.int32)),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_index_put_one_mask_one_value_is_masked_fill(name):
    check_same(MASKED[name], message_chars=200)


# ---- clamp with a number beside a Tensor bound: torch wraps the number ------------------------------------------
def _x(L, dtype="float32"):
    return L.tensor([0.0, 1.5, 3.0]).to(getattr(L, dtype))


CLAMP = {
    "issue_number_min_tensor_max": lambda L: L.clamp(_x(L), 1, L.tensor(2.0)),
    "tensor_min_number_max": lambda L: L.clamp(_x(L), L.tensor(1.0), 2),
    "method": lambda L: _x(L).clamp(1, L.tensor(2.0)),
    "method_keywords": lambda L: _x(L).clamp(min=1, max=L.tensor(2.0)),
    "in_place": lambda L: _x(L).clamp_(1, L.tensor(2.0)),
    "clip": lambda L: L.clip(_x(L), 1, L.tensor(2.0)),
    "out": lambda L: L.clamp(_x(L), 1, L.tensor(2.0), out=L.empty(3)),
    "int_input_float_number_promotes": lambda L: L.clamp(_x(L, "int64"), 1.5, L.tensor(2)),
    "int_input_int_number_stays_int": lambda L: L.clamp(_x(L, "int64"), 1, L.tensor(2)),
    "bool_number": lambda L: L.clamp(_x(L), True, L.tensor(2.0)),
    # a number beside a 0-dim tensor: the Scalar overload (the tensor's dtype does not promote)
    "scalar_overload_ignores_0dim_dtype": lambda L: L.clamp(_x(L, "int32"), min=L.tensor(-2.5, dtype=L.float64), max=0),
    "scalar_overload_int8_bound": lambda L: L.clamp(_x(L, "int32"), min=2, max=L.tensor(2, dtype=L.int8)),
    "two_tensor_bounds_promote": lambda L: L.clamp(_x(L, "int32"), min=L.tensor(-2.5, dtype=L.float64), max=L.tensor(0)),
    # no overload takes a number beside a tensor with dims
    "number_beside_1d_tensor": lambda L: L.clamp(_x(L), 1, L.tensor([2.0, 2.0, 2.0])),
    "complex_number_bound": lambda L: L.clamp(_x(L), 1j),
    "complex_number_bound_no_imag": lambda L: L.clamp(_x(L), 1 + 0j),
}


@pytest.mark.parametrize("name", sorted(CLAMP))
def test_clamp_number_beside_tensor_bound(name):
    check_same(lambda L: (lambda r: (r, str(r.dtype).split(".")[-1]))(CLAMP[name](L)))


# ---- Python numbers where torch has no Scalar overload ----------------------------------------------------------
def _t(L):
    return L.tensor([1.0, 2.0])


NUMBERS = {}
for _op in ("maximum", "minimum", "atan2", "logical_and", "logical_or", "logical_xor"):
    NUMBERS[f"{_op}_other"] = (lambda op: lambda L: getattr(L, op)(_t(L), 2))(_op)
    NUMBERS[f"{_op}_input"] = (lambda op: lambda L: getattr(L, op)(2, _t(L)))(_op)
    NUMBERS[f"{_op}_method"] = (lambda op: lambda L: getattr(_t(L), op)(2.5))(_op)
for _op in ("eq", "ne", "lt", "le", "gt", "ge", "fmod", "copysign", "clamp_min", "clamp_max"):
    NUMBERS[f"{_op}_number_first"] = (lambda op: lambda L: getattr(L, op)(2, _t(L)))(_op)
    NUMBERS[f"{_op}_number_second_ok"] = (lambda op: lambda L: getattr(L, op)(_t(L), 2))(_op)
for _op in ("add", "sub", "mul", "div", "pow", "remainder", "xlogy", "float_power", "floor_divide"):
    NUMBERS[f"{_op}_number_first_ok"] = (lambda op: lambda L: getattr(L, op)(2, _t(L)))(_op)
NUMBERS.update({
    "lerp_end_number": lambda L: L.lerp(_t(L), 2, 0.5),
    "lerp_weight_number_ok": lambda L: L.lerp(_t(L), _t(L), 0.5),
    "method_message_counts_after_self": lambda L: _t(L).hypot(2),
    "where_number_condition": lambda L: L.where(True, _t(L), _t(L)),
    "where_two_operands": lambda L: L.where(_t(L) > 1, _t(L)),
    "where_float_condition": lambda L: L.where(_t(L), _t(L), 0.0),
    "where_numbers_ok": lambda L: L.where(_t(L) > 1, 1, 2.5),
    "no_maximum_inplace_method": lambda L: _t(L).maximum_(_t(L)),
})


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_numbers_only_where_torch_takes_them(name):
    check_same(NUMBERS[name], message_chars=70)


# ---- dims of 0-dim tensors, methods taking *dims ----------------------------------------------------------------
S0 = {
    "issue_permute_no_dims": lambda L: L.tensor(1.0).permute(),
    "permute_empty_tuple_ok": lambda L: L.tensor(1.0).permute(()),
    "permute_no_dims_2d": lambda L: L.ones(2, 3).permute(),
    "issue_transpose_out_of_range": lambda L: L.tensor(1.0).transpose(1, -1),
    "transpose_0_minus_1_ok": lambda L: L.tensor(1.0).transpose(0, -1),
    "swapaxes_out_of_range": lambda L: L.tensor(1.0).swapaxes(0, 1),
    "flatten_out_of_range": lambda L: L.tensor(1.0).flatten(1),
    "flatten_ok": lambda L: L.tensor(1.0).flatten(),
    "mT_vector": lambda L: L.ones(3).mT,
    "mT_scalar_identity": lambda L: L.tensor(2.0).mT,
    "mH_real": lambda L: L.arange(6.0).reshape(2, 3).mH,
    "mH_vector": lambda L: L.ones(3).mH,
    "H_batch": lambda L: L.ones(2, 3, 4).H,
    "unbind_scalar": lambda L: L.tensor(1.0).unbind(0),
    "chunk_scalar": lambda L: L.tensor(1.0).chunk(1, 0),
    "split_scalar": lambda L: L.tensor(1.0).split(1, 0),
    "roll_scalar_dim": lambda L: L.tensor(1.0).roll(1, 1),
    "view_no_size": lambda L: L.ones(2).view(),
    "reshape_no_size": lambda L: L.ones(2).reshape(),
    "expand_no_size": lambda L: L.ones(2).expand(),
    "repeat_no_size": lambda L: L.ones(2).repeat(),
    "tile_no_dims": lambda L: L.ones(2).tile(),
    "flip_no_dims": lambda L: L.ones(2).flip(),
    "new_zeros_no_size": lambda L: L.ones(2).new_zeros(),
    "new_zeros_size_keyword": lambda L: L.ones(2).new_zeros(size=(3,)),
}


@pytest.mark.parametrize("name", sorted(S0))
def test_dims_and_sizes_as_torch(name):
    check_same(S0[name], message_chars=60)


# ---- autograd of an op asked for an integer result dtype ---------------------------------------------------------
def _rg(L):
    return L.ones(2, requires_grad=True)


AUTOGRAD_DTYPE = {
    "issue_sum_int64": lambda L: _rg(L).sum(dtype=L.int64),
    "sum_dim_int64": lambda L: _rg(L).sum(0, dtype=L.int64),
    "sum_bool": lambda L: _rg(L).sum(dtype=L.bool),
    "cumsum_int64": lambda L: _rg(L).cumsum(0, dtype=L.int64),
    "cumprod_int32": lambda L: _rg(L).cumprod(0, dtype=L.int32),
    "prod_int64": lambda L: _rg(L).prod(dtype=L.int64),
    "nansum_int64": lambda L: _rg(L).nansum(dtype=L.int64),
    "sum_float64_ok": lambda L: (lambda r: (r, r.requires_grad))(_rg(L).sum(dtype=L.float64)),
    "to_int64_ok": lambda L: (lambda r: (r, r.requires_grad))(_rg(L).to(L.int64)),
    "view_dtype_ok": lambda L: (lambda r: (r, r.requires_grad))(_rg(L).view(L.int32)),
    "detached_ok": lambda L: _rg(L).detach().sum(dtype=L.int64),
    "masked_fill_integer_self_grad_value": lambda L: L.zeros(3, dtype=L.int16).masked_fill(
        L.tensor([True, False, True]), L.tensor(2.5, requires_grad=True)),
    "index_fill_integer_self_grad_value": lambda L: L.zeros(3, dtype=L.int64).index_fill(
        0, L.tensor([0]), L.tensor(2.5, requires_grad=True)),
    "where_promotes_ok": lambda L: (lambda r: (r, r.requires_grad))(
        L.where(L.tensor([True, False]), L.tensor([1, 2]), L.tensor(2.5, requires_grad=True))),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD_DTYPE))
def test_integer_result_of_a_grad_requiring_input(name):
    check_same(AUTOGRAD_DTYPE[name])


# ---- dtypes the cpu kernels refuse ------------------------------------------------------------------------------
def _m(L, dtype):
    return L.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]).to(getattr(L, dtype))


F_ = lambda L: L.nn.functional  # noqa: E731
DTYPES = {
    "issue_topk_bool": lambda L: _m(L, "bool").topk(1),
    "issue_kthvalue_bool": lambda L: _m(L, "bool").kthvalue(1),
    "issue_avg_pool2d_uint8": lambda L: F_(L).avg_pool2d(_m(L, "uint8")[None, None], 1),
    "avg_pool2d_int64_ok": lambda L: F_(L).avg_pool2d(_m(L, "int64")[None, None], 1),
    "avg_pool1d_int32": lambda L: F_(L).avg_pool1d(_m(L, "int32")[None], 1),
    "avg_pool2d_bool": lambda L: F_(L).avg_pool2d(_m(L, "bool")[None, None], 1),
    "avg_pool3d_float16": lambda L: F_(L).avg_pool3d(_m(L, "float16")[None, None, None], 1),
    "max_pool1d_int64": lambda L: F_(L).max_pool1d(_m(L, "int64")[None], 1),
    "max_pool1d_indices_int64_ok": lambda L: F_(L).max_pool1d(_m(L, "int64")[None], 1, return_indices=True)[0],
    "median_bool": lambda L: _m(L, "bool").median(),
    "median_dim_bool": lambda L: _m(L, "bool").median(1),
    "nanmedian_bool": lambda L: _m(L, "bool").nanmedian(),
    "unique_complex": lambda L: L.unique(_m(L, "complex64")),
    "searchsorted_bool": lambda L: L.searchsorted(_m(L, "bool")[0], _m(L, "bool")),
    "searchsorted_bool_int_ok": lambda L: L.searchsorted(L.tensor([1, 2]), _m(L, "bool")),
    "hardtanh_uint8_negative": lambda L: F_(L).hardtanh(_m(L, "uint8"), -1.0, 1.0),
    "hardtanh_uint8_ok": lambda L: F_(L).hardtanh(_m(L, "uint8"), 0.0, 1.0),
    "cdist_float16": lambda L: L.cdist(_m(L, "float16"), _m(L, "float16")),
    "interpolate_nearest_int64": lambda L: F_(L).interpolate(_m(L, "int64")[None], scale_factor=2),
    "interpolate_nearest_2d_bool": lambda L: F_(L).interpolate(_m(L, "bool")[None, None], scale_factor=2),
    "interpolate_nearest_uint8_ok": lambda L: F_(L).interpolate(_m(L, "uint8")[None], scale_factor=2),
    "pad_replicate_bool": lambda L: F_(L).pad(_m(L, "bool"), (1, 1), mode="replicate"),
    "scatter_reduce_mean_bool": lambda L: _m(L, "bool").scatter_reduce(0, L.zeros(1, 3, dtype=L.int64), _m(L, "bool")[:1], "mean"),
    "scatter_reduce_amax_complex": lambda L: _m(L, "complex64").scatter_reduce(0, L.zeros(1, 3, dtype=L.int64), _m(L, "complex64")[:1], "amax"),
    "mse_int64": lambda L: F_(L).mse_loss(_m(L, "int64"), _m(L, "int64")),
    "mse_bool": lambda L: F_(L).mse_loss(_m(L, "bool"), _m(L, "bool")),
    "mse_int_float_ok": lambda L: F_(L).mse_loss(_m(L, "int64"), _m(L, "float32")),
    "mse_complex": lambda L: F_(L).mse_loss(_m(L, "float32"), _m(L, "complex64")),
    "smooth_l1_int64": lambda L: F_(L).smooth_l1_loss(_m(L, "int64"), _m(L, "int64")),
    "huber_bool": lambda L: F_(L).huber_loss(_m(L, "bool"), _m(L, "bool")),
    "kl_div_int64": lambda L: F_(L).kl_div(_m(L, "int64"), _m(L, "int64"), reduction="sum"),
    "kl_div_complex": lambda L: F_(L).kl_div(_m(L, "complex64"), _m(L, "complex64"), reduction="sum"),
    "normalize_int64": lambda L: F_(L).normalize(_m(L, "int64")),
    "bce_target_out_of_range": lambda L: F_(L).binary_cross_entropy(_m(L, "float32").sigmoid(), _m(L, "float32")),
    "cross_bool": lambda L: L.linalg.cross(_m(L, "bool")[:, :3], _m(L, "bool")[:, :3]),
    "det_float16": lambda L: L.linalg.det(L.eye(2, dtype=L.float16)),
    "solve_float16": lambda L: L.linalg.solve(L.eye(2, dtype=L.float16), L.eye(2, dtype=L.float16)),
    "cholesky_bfloat16": lambda L: L.linalg.cholesky(L.eye(2, dtype=L.bfloat16)),
    "svdvals_float16": lambda L: L.linalg.svdvals(L.eye(2, dtype=L.float16)),
    "eigh_float16": lambda L: L.linalg.eigh(L.eye(2, dtype=L.float16)),
    "qr_float16": lambda L: L.linalg.qr(L.eye(2, dtype=L.float16)),
    "inv_float16_argument_check": lambda L: L.linalg.inv(L.eye(2, dtype=L.float16)),
    "det_float16_not_square_first": lambda L: L.linalg.det(L.ones(2, 3, dtype=L.float16)),
}


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_dtypes_the_kernels_refuse(name):
    check_same(DTYPES[name], rel=1e-3)


# ---- out-of-range indices: torch's exception types ----------------------------------------------------------------
INDEX = {
    "issue_embedding": lambda L: L.nn.functional.embedding(L.tensor([5]), L.ones(2, 2)),
    "embedding_negative": lambda L: L.nn.functional.embedding(L.tensor([-1]), L.ones(2, 2)),
    "issue_index_select": lambda L: L.index_select(L.ones(2), 0, L.tensor([5])),
    "index_select_dim0": lambda L: L.index_select(L.ones(2, 3), 0, L.tensor([-1])),
    "index_select_dim1_fast_path": lambda L: L.index_select(L.ones(2, 3), 1, L.tensor([2, 0, 3, 7])),
    "index_select_dim2": lambda L: L.index_select(L.ones(2, 3, 4), 2, L.tensor([5], dtype=L.int32)),
    "index_select_0d": lambda L: L.index_select(L.tensor(1.0), 0, L.tensor([1])),
    "gather": lambda L: L.ones(2, 3).gather(1, L.tensor([[5]])),
    "scatter": lambda L: L.ones(2, 3).scatter(1, L.tensor([[5]]), 1.0),
    "take": lambda L: L.ones(2, 3).take(L.tensor([6])),
    "index_add": lambda L: L.ones(2, 3).index_add(0, L.tensor([5]), L.ones(1, 3)),
    "index_copy": lambda L: L.ones(2, 3).index_copy(0, L.tensor([5]), L.ones(1, 3)),
    "index_fill": lambda L: L.ones(2, 3).index_fill(0, L.tensor([5]), 1.0),
    "getitem_tensor": lambda L: L.ones(2, 3)[L.tensor([5])],
    "setitem_tensor": lambda L: L.ones(2, 3).__setitem__(L.tensor([5]), 1.0),
    "getitem_int": lambda L: L.ones(2, 3)[5],
    "index_select_scalar_two_values": lambda L: L.index_select(L.tensor(True), 0, L.tensor([0, 1])),
    "index_select_empty_self": lambda L: L.index_select(L.zeros(3, 3, 0), 0, L.tensor(3)),
    "index_select_empty_self_zero_dim": lambda L: L.index_select(L.zeros(3, 3, 0), 2, L.tensor([0])),
    "index_add_0dim_source": lambda L: L.index_add(L.tensor(1.0), 0, L.tensor([0, 0, 0]), L.tensor(1.0)),
    "index_copy_0dim_source": lambda L: L.index_copy(L.ones(3), 0, L.tensor([0, 0]), L.tensor(1.0)),
    "index_copy_2d_index": lambda L: L.ones(3).index_copy(0, L.zeros(2, 2, dtype=L.int64), L.ones(3)),
    "kthvalue_empty_dim_first": lambda L: L.kthvalue(L.zeros(0, 3), 5, 0),
}


@pytest.mark.parametrize("name", sorted(INDEX))
def test_out_of_range_index_exception(name):
    check_same(INDEX[name], message_chars=80)


# ---- scatter(reduce=...), bool products with nothing to multiply -----------------------------------------------
MORE = {
    "scatter_reduce_add": lambda L: L.scatter(L.ones(3), 0, L.tensor([0, 0]), L.tensor([2.0, 3.0]), reduce="add"),
    "scatter_reduce_multiply_value": lambda L: L.scatter(L.ones(3, dtype=L.int8), 0, L.tensor([0, 0]), 2, reduce="multiply"),
    "scatter_reduce_0dim": lambda L: L.scatter(L.tensor(2, dtype=L.int8), 0, L.tensor(0), L.tensor(72, dtype=L.int8), reduce="add"),
    "scatter__reduce": lambda L: L.ones(3).scatter_(0, L.tensor([0, 0]), L.tensor([2.0, 3.0]), reduce="add"),
    "scatter_reduce_bad": lambda L: L.scatter(L.ones(3), 0, L.tensor([0]), 5.0, reduce="mean"),
    "mm_bool_empty_inner": lambda L: L.mm(L.ones(2, 0, dtype=L.bool), L.ones(0, 3, dtype=L.bool)),
    "mm_bool_empty_result": lambda L: L.mm(L.ones(0, 2, dtype=L.bool), L.ones(2, 3, dtype=L.bool)),
    "mm_bool_refused": lambda L: L.mm(L.ones(2, 3, dtype=L.bool), L.ones(3, 4, dtype=L.bool)),
    "bmm_bool_empty_inner": lambda L: L.bmm(L.ones(2, 2, 0, dtype=L.bool), L.ones(2, 0, 3, dtype=L.bool)),
    "mv_bool_empty": lambda L: L.mv(L.ones(2, 0, dtype=L.bool), L.ones(0, dtype=L.bool)),
    "matmul_bool_empty": lambda L: L.matmul(L.tensor([True]), L.zeros(1, 0, dtype=L.bool)),
    # empty tensors: nothing is divided, nothing is indexed
    "floor_divide_empty_by_zero": lambda L: L.floor_divide(L.zeros(0, 1, dtype=L.uint8), 0),
    "remainder_empty_by_zero": lambda L: L.remainder(L.zeros(0, dtype=L.uint8), 0),
    "floor_divide_by_zero": lambda L: L.floor_divide(L.zeros(1, 1, dtype=L.uint8), 0),
    "index_add_empty_self": lambda L: L.index_add(L.zeros(4, 0), 1, L.tensor([0]), L.ones(4, 1)),
    "index_add_1d_out_of_range": lambda L: L.index_add(L.zeros(3), 0, L.tensor([5]), L.ones(1)),
    "index_add_2d_out_of_range": lambda L: L.index_add(L.zeros(2, 3), 1, L.tensor([5]), L.ones(2, 1)),
    "setitem_uint8_0dim_mask": lambda L: (lambda x: (x.__setitem__(L.tensor(0, dtype=L.uint8), 2), x)[1])(L.zeros(3)),
    "setitem_uint8_mask_bad_shape": lambda L: (lambda x: (x.__setitem__(L.tensor([[1]], dtype=L.uint8), -1.5), x)[1])(
        L.zeros(1, 0, 0, dtype=L.int64)),
    "setitem_uint8_mask": lambda L: (lambda x: (x.__setitem__(L.tensor([1, 0, 1], dtype=L.uint8), 2), x)[1])(L.zeros(3)),
    # an expanded but empty write target: nothing is written, torch accepts it
    "add__expanded_empty": lambda L: L.zeros(1, 3, 1, 0).expand(1, 3, 5, 0).add_(L.zeros(1, 3, 5, 0)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_scatter_reduce_and_empty_products(name):
    check_same(MORE[name], message_chars=80)


# ---- the order of checks decides the error --------------------------------------------------------------------
def _set_fn(make, index, value):
    def fn(L):
        x = make(L)
        x[index(L)] = value(L) if callable(value) else value
        return x

    return fn


ORDER = {
    # index_put_: the indices' own checks (mask shape, broadcast) before the dtype check, which comes
    # before the bounds check
    "index_put_mask_shape_before_dtype": _set_fn(
        lambda L: L.arange(25, dtype=L.int16).view(5, 5),
        lambda L: (slice(None, -6, 2), L.tensor([True, True, False, False, True, True]), None, None),
        lambda L: L.tensor([True, True, True])),
    "index_put_broadcast_before_dtype": _set_fn(
        lambda L: L.zeros(1, 0, 2, 4, dtype=L.uint8).permute(3, 1, 0, 2),
        lambda L: (False, None, -2, L.tensor([1, 0]), L.tensor([True])),
        lambda L: L.tensor(4)),
    "index_put_dtype_before_bounds": lambda L: L.zeros(3).index_put_((L.tensor([5, 6]),), L.tensor([1, 2])),
    # the number is converted before anything is indexed
    "setitem_value_conversion_first": _set_fn(lambda L: L.zeros(1, 0, 0, 0, dtype=L.uint8),
                                              lambda L: L.tensor([True, True]), -1.5),
    "fill_uint8_negative_float": lambda L: L.zeros(3, dtype=L.uint8).fill_(-0.5),
    "fill_uint8_negative_int_wraps": lambda L: L.zeros(3, dtype=L.uint8).fill_(-1),
    "sort_dim_before_complex": lambda L: L.sort(L.tensor(1j), 1),
    # indices that broadcast to no element: nothing is read or written, no bound is checked
    "index_put_empty_broadcast": lambda L: L.zeros(0, 0, 1, dtype=L.int16).index_put(
        (L.zeros(0, dtype=L.int64), L.tensor(1), L.zeros(0, dtype=L.int64)), L.zeros(0, dtype=L.int16), accumulate=True),
    "index_empty_broadcast_with_mask": lambda L: L.zeros(3, 2)[L.zeros(0, dtype=L.int64), L.tensor([True, False])],
    "index_out_of_range_still_checked": lambda L: L.zeros(3, 2)[L.tensor([5]), L.tensor([1])],
    # mse/smooth_l1 compute in the common dtype (bool beside float is fine); huber writes self's dtype
    "mse_bool_float": lambda L: L.nn.functional.mse_loss(L.tensor([True, False]), L.tensor([0.5, 2.0])),
    "smooth_l1_float_bool": lambda L: L.nn.functional.smooth_l1_loss(L.tensor([0.5, 2.0]), L.tensor([True, False])),
    "huber_bool_float_refused": lambda L: L.nn.functional.huber_loss(L.tensor([True, False]), L.tensor([0.5, 2.0])),
    "huber_float32_float64_is_float32": lambda L: (lambda r: (r, str(r.dtype).split(".")[-1]))(
        L.nn.functional.huber_loss(L.ones(2) * 1.5, L.zeros(2, dtype=L.float64))),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_order_of_checks(name):
    check_same(ORDER[name], message_chars=80)


# ---- index_add: torch's exception type follows the kernel path (alpha == 1 goes through index_put_) -------------
# (scatter_add_ for several dims, dim first or last, alpha == 1 and an int64 index; TORCH_CHECK_INDEX otherwise)
def _index_add(L, alpha, shape=(2, 4), dim=0, index_dtype="int64"):
    src = list(shape)
    src[dim] = 3
    index = L.tensor([0, 0, 2], dtype=getattr(L, index_dtype))
    return L.zeros(*shape).index_add(dim, index, L.ones(*src), alpha=alpha)


INDEX_ADD = {
    "issue_2d_alpha_2": lambda L: _index_add(L, 2),
    "3d_alpha_negative": lambda L: _index_add(L, -2, (2, 4, 2)),
    "2d_alpha_bool": lambda L: _index_add(L, True),
    "2d_alpha_1": lambda L: _index_add(L, 1),
    "2d_alpha_1_float": lambda L: _index_add(L, 1.0),
    "2d_alpha_1_int32_index": lambda L: _index_add(L, 1, index_dtype="int32"),
    "3d_alpha_1_middle_dim": lambda L: _index_add(L, 1, (1, 2, 2), dim=1),
    "3d_alpha_1_last_dim": lambda L: _index_add(L, 1, (1, 2, 2), dim=2),
    "1d_alpha_1": lambda L: _index_add(L, 1, (2,)),
    "empty_self_unchecked": lambda L: _index_add(L, 2, (2, 0)),
}


@pytest.mark.parametrize("name", sorted(INDEX_ADD))
def test_index_add_out_of_range_exception(name):
    check_same(INDEX_ADD[name])


# ---- gradients at nan/inf/0: torch's derivatives.yaml formulas ---------------------------------------------------
def _g(vals, f, dtype="float32", create_graph=False):
    def fn(L):
        x = L.tensor(vals, dtype=getattr(L, dtype), requires_grad=True)
        y = f(L, x)
        (g,) = L.autograd.grad(y, x, L.ones(y.shape, dtype=y.dtype) * 1.5, create_graph=create_graph)
        if not create_graph:
            return g
        (gg,) = L.autograd.grad((g * g).sum(), x)
        return g, gg
    return fn


GRAD_NONFINITE = {
    # amax/amin: scale_grad_by_count over the elements equal to the result; a nan result equals nothing
    "issue_amax_0d_nan": _g(NAN, lambda L, x: x.amax()),
    "amax_0d_finite": _g(2.0, lambda L, x: x.amax()),
    "amin_0d_nan_empty_dims": _g(NAN, lambda L, x: x.amin(dim=())),
    "amax_dim_nan_row": _g([[NAN, 1.0], [2.0, 2.0]], lambda L, x: x.amax(1)),
    "amin_all_nan": _g([[NAN, 1.0], [2.0, 3.0]], lambda L, x: x.amin()),
    # max()/min(): evenly_distribute_backward shares a nan result's gradient among the nan inputs
    "max_all_nan": _g([[NAN, 1.0], [2.0, NAN]], lambda L, x: x.max()),
    "min_all_nan_once": _g([[NAN, 1.0], [2.0, 3.0]], lambda L, x: x.min()),
    "max_all_ties": _g([[3.0, 1.0], [3.0, 2.0]], lambda L, x: x.max()),
    # prod: result / input without zeros; the product of the others (prod_safe_zeros_backward) with any zero
    "issue_prod_dim_inf_and_zero": _g([[1.0, INF, 3.0], [0.0, 2.0, 1.0], [NAN, 1.0, 0.0]], lambda L, x: x.prod(1)),
    "prod_dim_inf_no_zero": _g([[1.0, INF, 3.0], [4.0, 2.0, 1.0]], lambda L, x: x.prod(1)),
    "prod_dim0_keepdim": _g([[1.0, INF], [0.0, 2.0]], lambda L, x: x.prod(0, keepdim=True)),
    "prod_all_one_zero_nan": _g([1.0, NAN, 0.0], lambda L, x: x.prod()),
    "prod_all_two_zeros_inf": _g([0.0, 0.0, INF], lambda L, x: x.prod()),
    "prod_all_inf": _g([1.0, INF, 3.0], lambda L, x: x.prod()),
    "prod_all_zero_create_graph": _g([0.0, 2.0, 3.0], lambda L, x: x.prod(), create_graph=True),
    "prod_all_two_zeros_create_graph": _g([0.0, 0.0, INF], lambda L, x: x.prod(), create_graph=True),
    "prod_dim_zero_create_graph": _g([[0.0, 2.0, 3.0], [1.0, 2.0, 4.0]], lambda L, x: x.prod(1), create_graph=True),
    "prod_dim_dtype": _g([[0.0, 2.0, 3.0], [1.0, 2.0, 4.0]], lambda L, x: x.prod(-1, dtype=L.float64)),
    # cumprod: one element along dim passes the gradient; with zeros each range is masked as torch's backward
    "issue_cumprod_grad_size_one_dim_inf": _g([[1.0, INF], [2.0, 3.0]], lambda L, x: x.unsqueeze(0).cumprod(0)),
    "cumprod_grad_inf_after_zero": _g([2.0, 0.0, 3.0, INF, 0.0, 4.0], lambda L, x: x.cumprod(0)),
    "cumprod_grad_nan_before_zero": _g([[NAN, 2.0, 0.0], [1.0, 0.0, 0.0]], lambda L, x: x.cumprod(1)),
    "cumprod_grad_zero_first": _g([0.0, 2.0, INF, 0.0, 1.0], lambda L, x: x.cumprod(0), "float64"),
    "cumprod_grad_no_zero_inf": _g([2.0, INF, 3.0], lambda L, x: x.cumprod(0)),
    "cumprod_grad_zeros_create_graph": _g([2.0, 0.0, 3.0, 0.0], lambda L, x: x.cumprod(0), create_graph=True),
    # (log_)softmax of a 0-dim tensor: the formula over one element, nan where the output is nan
    "issue_log_softmax_0d_nan": _g(NAN, lambda L, x: L.log_softmax(x, 0), "float64"),
    "log_softmax_0d_inf": _g(INF, lambda L, x: L.log_softmax(x, 0)),
    "log_softmax_0d_finite": _g(2.0, lambda L, x: L.log_softmax(x, 0)),
    "softmax_0d_nan": _g(NAN, lambda L, x: L.softmax(x, 0), "float64"),
    "softmax_0d_neg_inf": _g(-INF, lambda L, x: L.softmax(x, 0)),
    "softmax_0d_finite": _g(2.0, lambda L, x: L.softmax(x, 0)),
    "log_softmax_nan_row": _g([[1.0, NAN, 3.0], [2.0, 2.0, 1.0]], lambda L, x: L.log_softmax(x, 1)),
}


@pytest.mark.parametrize("name", sorted(GRAD_NONFINITE))
def test_gradients_at_nonfinite_inputs(name):
    check_same(GRAD_NONFINITE[name], rel=1e-5)


# ---- what torch accepts (empty inputs, wrapped dims, ragged empties): torchplug must not refuse it ---------------
def _shape_dtype(r):
    return tuple(r.shape), str(r.dtype).split(".")[-1]


ACCEPTED = {
    "issue_softmax_empty_uint8": lambda L: _shape_dtype(L.softmax(L.zeros(3, 0, dtype=L.uint8), -1)),
    "softmax_empty_bool_dim0": lambda L: _shape_dtype(L.softmax(L.zeros(3, 0, dtype=L.bool), 0)),
    "softmax_empty_complex": lambda L: _shape_dtype(L.softmax(L.zeros(0, 2, dtype=L.complex128), 0)),
    "log_softmax_empty_to_int64": lambda L: _shape_dtype(L.log_softmax(L.zeros(1, 3, 0, 0, dtype=L.int8), 2,
                                                                       dtype=L.int64)),
    "softmax_int64_refused": lambda L: L.softmax(L.zeros(2, dtype=L.int64), 0),
    # gather: an empty index is checked for its dim only; cat skips legacy empty 1-D inputs; roll clones empties
    "issue_gather_empty_index_other_rank": lambda L: _shape_dtype(L.gather(L.zeros(0, 0, dtype=L.bfloat16), 0,
                                                                           L.zeros(0, 0, 1, dtype=L.int64))),
    "gather_empty_int16_index": lambda L: _shape_dtype(L.gather(L.zeros(2, 3), 1, L.zeros(0, 1, dtype=L.int16))),
    "gather_empty_index_bad_dim": lambda L: L.gather(L.zeros(2, 3), 5, L.zeros(0, 1, dtype=L.int64)),
    "gather_index_rank_refused": lambda L: L.gather(L.zeros(2, 3), 0, L.zeros(1, 1, 1, dtype=L.int64)),
    "issue_cat_legacy_empty_any_dim": lambda L: _shape_dtype(L.cat([L.zeros(0, dtype=L.int64)], dim=-3)),
    "cat_legacy_empties_any_dim": lambda L: _shape_dtype(L.cat([L.zeros(0), L.zeros(0)], dim=5)),
    "cat_legacy_empty_beside_2d": lambda L: L.cat([L.zeros(0), L.ones(2, 3)], dim=-2),
    "cat_legacy_empty_beside_2d_bad_dim": lambda L: L.cat([L.zeros(0), L.ones(2, 3)], dim=2),
    "cat_legacy_empty_gradient": lambda L: (lambda a, b: (L.cat([a, b], -1).sum().backward(), a.grad, b.grad)[1:])(
        L.ones(2, 3, requires_grad=True), L.zeros(0, requires_grad=True)),
    "issue_roll_empty_any_dim": lambda L: _shape_dtype(L.roll(L.zeros(5, 0, dtype=L.complex128), 0, (3,))),
    "roll_empty_flat": lambda L: _shape_dtype(L.roll(L.zeros(0), 1, 4)),
    "roll_shifts_dims_align_first": lambda L: L.roll(L.zeros(0), (1, 2), (0,)),
    "roll_dim_refused": lambda L: L.roll(L.zeros(5, 1), 0, (3,)),
    # reflection/replication padding: refused only when every padded dim comes out empty
    "issue_pad_replicate_one_empty_dim": lambda L: _shape_dtype(L.nn.functional.pad(
        L.ones(4, 4, 1, 2), (2, -1, 0, -1, 3, 2), mode="replicate")),
    "pad_reflect_one_empty_dim": lambda L: _shape_dtype(L.nn.functional.pad(L.ones(2, 2, 3), (-1, -1, -1, -1),
                                                                            mode="reflect")),
    "pad_replicate_1d_too_small": lambda L: L.nn.functional.pad(L.ones(2, 2, 3), (-3, 0), mode="replicate"),
    "pad_replicate_2d_too_small": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (-3, 0, 0, -2), mode="replicate"),
    "pad_reflect_2d_too_small": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (-3, 0, 0, -2), mode="reflect"),
    "pad_replicate_3d_too_small": lambda L: L.nn.functional.pad(L.ones(2, 1, 2, 3), (0, -4, 0, -2, 0, -1),
                                                                mode="replicate"),
    "pad_replicate_negative_dim": lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (0, 0, -2, -1), mode="replicate"),
    # torch.tensor: the sizes follow the first element; with no element stored, no other length is checked
    "issue_tensor_ragged_empty": lambda L: _shape_dtype(L.tensor([[[]], [[]], []], dtype=L.bool)),
    "tensor_ragged_empty_default_dtype": lambda L: _shape_dtype(L.tensor([[[], []], [[]]])),
    "tensor_ragged_empty_ignores_numbers": lambda L: _shape_dtype(L.tensor([[], [1]])),
    "tensor_ragged_refused": lambda L: L.tensor([[1, 2], [3]]),
    "tensor_ragged_deeper_refused": lambda L: L.tensor([[[1], [2]], [[3]]]),
    "tensor_overflow_before_later_length": lambda L: L.tensor([[0.5, -1.5], [0.5]], dtype=L.uint8),
    "tensor_complex_into_int_before_length": lambda L: L.tensor([[1j, 2], [3]], dtype=L.int8),
    "tensor_number_for_sequence": lambda L: L.tensor([[1, 2], 3]),
    "tensor_sequence_for_number": lambda L: L.tensor([1.5, [2]]),
    "tensor_mixed_ints_wrap_into_uint8": lambda L: L.tensor([[-4, 0.5, True], [True, -4, 4]], dtype=L.uint8),
    "tensor_mixed_float_negative_uint8": lambda L: L.tensor([-4, -0.5], dtype=L.uint8),
    "log_softmax_bool_refused": lambda L: L.log_softmax(L.zeros(2, 2, dtype=L.bool), 0),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_as_torch_does(name):
    check_same(ACCEPTED[name])


# ---- dtypes torch's cpu kernels compute: round(decimals=), scans to bool, the convolution backends ---------------
def _conv_in(L, dtype, batch=1):
    return L.ones(batch, 2, 5, dtype=getattr(L, dtype)), L.ones(2, 2, 2, dtype=getattr(L, dtype))


def _cplx(L, *shape, dtype="complex64"):
    n = math.prod(shape)
    parts = [[(k % 5) - 2.0, ((3 * k) % 7) / 4 - 0.5] for k in range(n)]
    return L.view_as_complex(L.tensor(parts)).reshape(*shape).to(getattr(L, dtype))


KERNEL_DTYPES = {
    "issue_round_decimals_0_int32": lambda L: L.round(L.tensor([1, 2], dtype=L.int32), decimals=0),
    "round_decimals_2_int8": lambda L: L.round(L.tensor([1, 2], dtype=L.int8), decimals=2),
    "round_decimals_0_empty_int64": lambda L: L.round(L.zeros(0, dtype=L.int64), decimals=0),
    "round_plain_int64_ok": lambda L: L.round(L.tensor([1, 2])),
    "round_plain_bool": lambda L: L.round(L.tensor([True])),
    "round_decimals_0_float_ok": lambda L: L.round(L.tensor([1.5, 2.25]), decimals=0),
    "round_decimals_1_float_ok": lambda L: L.tensor([1.26, 2.25]).round(decimals=1),
    "round_node_names": lambda L: [type(L.round(L.ones(1, requires_grad=True), **kw).grad_fn).__name__
                                   for kw in ({}, {"decimals": 0}, {"decimals": 2})],
    "issue_cumsum_to_bool": lambda L: L.cumsum(L.tensor([1, 2]), 0, dtype=L.bool),
    "cumprod_float_to_bool": lambda L: L.cumprod(L.tensor([[1.5, INF]]), -1, dtype=L.bool),
    "cumsum_bool_0d_to_bool_ok": lambda L: L.cumsum(L.tensor(True), 0, dtype=L.bool),
    "cumprod_empty_to_bool_ok": lambda L: L.cumprod(L.zeros(2, 0), 0, dtype=L.bool),
    "cumsum_bool_to_int8_ok": lambda L: L.cumsum(L.tensor([True, True]), 0, dtype=L.int8),
    "issue_conv2d_dilated_int16": lambda L: L.nn.functional.conv2d(
        L.ones(1, 2, 5, 5, dtype=L.int16), L.ones(2, 1, 2, 2, dtype=L.int16), dilation=2, groups=2),
    "conv1d_dilated_int64_ok": lambda L: L.nn.functional.conv1d(*_conv_in(L, "int64"), dilation=2),
    "conv1d_int32_ok": lambda L: L.nn.functional.conv1d(*_conv_in(L, "int32")),
    "conv1d_bool": lambda L: L.nn.functional.conv1d(*_conv_in(L, "bool")),
    "conv1d_bool_float_weight": lambda L: L.nn.functional.conv1d(_conv_in(L, "bool")[0], _conv_in(L, "float32")[1]),
    "conv1d_empty_batch_bool_ok": lambda L: L.nn.functional.conv1d(*_conv_in(L, "bool", 0)),
    "conv1d_dilated_empty_batch_int8_ok": lambda L: L.nn.functional.conv1d(*_conv_in(L, "int8", 0), dilation=2),
    "conv3d_bool": lambda L: L.nn.functional.conv3d(L.ones(1, 1, 3, 3, 3, dtype=L.bool),
                                                    L.ones(1, 1, 2, 2, 2, dtype=L.bool)),
    "conv_transpose1d_int8": lambda L: L.nn.functional.conv_transpose1d(*_conv_in(L, "int8")),
    "conv_transpose1d_int64_ok": lambda L: L.nn.functional.conv_transpose1d(*_conv_in(L, "int64")),
    # complex inputs: torch's conv1d/2d/3d run complex_convolution (three real convolutions)
    "issue_conv1d_complex_unbatched_bias": lambda L: L.nn.functional.conv1d(
        _cplx(L, 2, 3), _cplx(L, 2, 2, 2), _cplx(L, 2), dilation=1),
    "conv2d_complex_groups_stride": lambda L: L.nn.functional.conv2d(
        _cplx(L, 1, 2, 4, 4), _cplx(L, 2, 1, 2, 2), _cplx(L, 2), groups=2, stride=2),
    "conv1d_complex_same_padding": lambda L: L.nn.functional.conv1d(
        _cplx(L, 1, 2, 5, dtype="complex128"), _cplx(L, 3, 2, 2, dtype="complex128"), padding="same", dilation=2),
    "conv1d_complex_double_weight": lambda L: L.nn.functional.conv1d(
        _cplx(L, 1, 2, 5), _cplx(L, 3, 2, 2, dtype="complex128")),
    "conv1d_complex_double_bias": lambda L: L.nn.functional.conv1d(
        _cplx(L, 1, 2, 5), _cplx(L, 3, 2, 2), _cplx(L, 3, dtype="complex128")),
    # index_select of a 0-dim tensor takes exactly one index (checked before the index dtype)
    "issue_index_select_0d_no_index": lambda L: L.index_select(L.tensor(4), 0, L.zeros(0, dtype=L.int64)),
    "index_select_0d_two_indices": lambda L: L.index_select(L.tensor(4), 0, L.tensor([0, 0])),
    "index_select_0d_two_int16_indices": lambda L: L.index_select(L.tensor(4), 0, L.tensor([0, 0], dtype=L.int16)),
    "index_select_0d_one_index_ok": lambda L: L.index_select(L.tensor(4), -1, L.tensor([0])),
}


@pytest.mark.parametrize("name", sorted(KERNEL_DTYPES))
def test_kernel_dtypes_as_torch(name):
    check_same(KERNEL_DTYPES[name], message_chars=80, rel=1e-5)


# ---- numbers outside the dtype's range: c10's checked conversion, where torch converts --------------------------
_F = lambda L: L.nn.functional  # noqa: E731
OVERFLOW = {
    "issue_linspace_negative_float_uint8": lambda L: L.linspace(-3.0, 0.0, 7, dtype=L.uint8),
    "linspace_end_int8": lambda L: L.linspace(0, 300, 2, dtype=L.int8),
    "linspace_float16_end": lambda L: L.linspace(0, 1e5, 3, dtype=L.float16),
    "linspace_one_step_checks_start": lambda L: L.linspace(-3.0, 0.0, 1, dtype=L.uint8),
    "linspace_one_step_ignores_end": lambda L: L.linspace(0, 1e5, 1, dtype=L.float16),
    "linspace_no_step_checks_nothing": lambda L: L.linspace(-3.0, 0.0, 0, dtype=L.uint8),
    "linspace_negative_int_wraps_into_uint8": lambda L: L.linspace(-1, 0, 7, dtype=L.uint8),
    "linspace_bool_one_step": lambda L: L.linspace(2, 0, 1, dtype=L.bool),
    "linspace_bool_empty": lambda L: L.linspace(0.0, 0.0, 0, dtype=L.bool),
    "linspace_bool_refused": lambda L: L.linspace(0, 2, 2, dtype=L.bool),
    "linspace_complex_bounds_real_dtype": lambda L: L.linspace(0, 1 + 1j, 2, dtype=L.int64),
    "issue_full_float16_two_elements": lambda L: L.full((2,), 1e5, dtype=L.float16),
    "full_float16_one_element_rounds": lambda L: L.full((1,), 1e5, dtype=L.float16),
    "full_bfloat16_empty": lambda L: L.full((0,), 1e39, dtype=L.bfloat16),
    "full_float32_one_element": lambda L: L.full((1,), 1e39, dtype=L.float32),
    "fill_float16_one_element_rounds": lambda L: L.zeros(1, dtype=L.float16).fill_(1e5),
    "issue_masked_fill_negative_float_uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor([True, False]), -1.5),
    "masked_fill_nothing_masked_still_checked": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor([False, False]), L.tensor(-3.0625, dtype=L.bfloat16)),
    "masked_fill_large_int_float16": lambda L: L.zeros(2, dtype=L.float16).masked_fill(L.tensor([True, False]), 2**40),
    "masked_fill_negative_int_wraps_uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor([True, False]), -1),
    "issue_clamp_float16_bound": lambda L: L.clamp(L.zeros(2, dtype=L.float16), 1e5),
    "clamp_uint8_max_300": lambda L: L.clamp(L.zeros(2, dtype=L.uint8), None, 300),
    "clamp_empty_int8_checked": lambda L: L.clamp(L.zeros(0, dtype=L.int8), -129),
    "clamp_int_float_bound_promotes": lambda L: L.clamp(L.zeros(2, dtype=L.int16), 1e39),
    "clamp_uint8_in_range_ok": lambda L: L.clamp(L.tensor([1, 9], dtype=L.uint8), 2, 5),
    "issue_pad_uint8_negative": lambda L: _F(L).pad(L.tensor([2], dtype=L.uint8), (1, 0), value=-1),
    "pad_nothing_padded_nothing_converted": lambda L: _F(L).pad(L.tensor([2], dtype=L.uint8), (0, 0), value=1e5),
    "pad_only_narrowed_nothing_converted": lambda L: _F(L).pad(L.tensor([2, 3], dtype=L.int8), (-1, 0), value=300),
    "pad_bool_value": lambda L: _F(L).pad(L.zeros(2, dtype=L.int8), (1, 0), value=True),
    "constant_pad_nd_int_wraps": lambda L: L.constant_pad_nd(L.zeros(1, dtype=L.uint8), (1, 0), -1),
    "tensor_uint8_300": lambda L: L.tensor(300, dtype=L.uint8),
    "scatter_value_uint8": lambda L: L.zeros(2, dtype=L.uint8).scatter(0, L.tensor([0]), -1.5),
    # arange: the kernel refuses bool and complex before checking the bounds
    "issue_arange_bool_negative_end": lambda L: L.arange(-1, dtype=L.bool),
    "arange_complex_backwards": lambda L: L.arange(1, -1, dtype=L.complex128),
    "arange_bool_zero_step": lambda L: L.arange(0, 1, 0, dtype=L.bool),
    "arange_int8_backwards_refused": lambda L: L.arange(1, -1, dtype=L.int8),
}


@pytest.mark.parametrize("name", sorted(OVERFLOW))
def test_number_out_of_range_as_torch(name):
    check_same(OVERFLOW[name], message_chars=80)


# ---- index dtypes, integer results of grad-requiring inputs, adaptive average pooling -----------------------------
def _setitem(x, index, value):
    x[index] = value
    return x


def _adaptive_grad(shape, output_size):
    def fn(L):
        x = L.ones(*shape, requires_grad=True)
        L.nn.functional.adaptive_avg_pool2d(x, output_size).sum().backward()
        return x.grad
    return fn


_POOL_IN = [[[[1.0, INF, 2.0, 3.0], [4.0, 5.0, NAN, 6.0], [-INF, 1.0, 2.0, INF], [0.5, 1.5, 2.5, 3.5]]]]
MORE_FUZZ = {
    "issue_index_put_int16_index": lambda L: L.zeros(3, dtype=L.int32).index_put(
        (L.tensor([1, 0], dtype=L.int16),), L.tensor([5, 6], dtype=L.int32)),
    "index_put_int8_index_accumulate": lambda L: L.zeros(3).index_put(
        (L.tensor([1, 0], dtype=L.int8),), L.tensor([5.0, 6.0]), accumulate=True),
    "index_put_int32_index_ok": lambda L: L.zeros(3).index_put(
        (L.tensor([1, 0], dtype=L.int32),), L.tensor([5.0, 6.0])),
    "setitem_int16_index_ok": lambda L: _setitem(L.zeros(3), L.tensor([1, 0], dtype=L.int16), 5.0),
    "getitem_int8_index_ok": lambda L: L.arange(3.0)[L.tensor([2, 0], dtype=L.int8)],
    "setitem_uint8_mask": lambda L: _setitem(L.zeros(3), L.tensor([1, 0, 1], dtype=L.uint8), 5.0),
    "issue_cross_entropy_spatial_uint8_target": lambda L: L.nn.functional.cross_entropy(
        L.ones(1, 3, 2), L.tensor([[1, 2]], dtype=L.uint8), reduction="none", label_smoothing=0.1),
    "nll_loss2d_uint8_target": lambda L: L.nn.functional.nll_loss(L.ones(1, 3, 2, 2), L.zeros(1, 2, 2, dtype=L.uint8)),
    "nll_loss_uint8_target_ok": lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([1, 0], dtype=L.uint8)),
    "nll_loss_int32_target": lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([1, 0], dtype=L.int32)),
    # an integer result of an op whose input requires grad: autograd refuses its dtype
    "issue_masked_fill_bool_grad_value": lambda L: L.zeros(3, dtype=L.bool).masked_fill(
        L.tensor([True, False, True]), L.tensor(1.5, requires_grad=True)),
    "masked_fill_nothing_masked_grad_value": lambda L: L.zeros(3, dtype=L.int64).masked_fill(
        L.tensor([False, False, False]), L.tensor(1.5, requires_grad=True)),
    "masked_fill_complex_grad_value_ok": lambda L: (lambda r: (r, r.requires_grad))(
        L.zeros(2, dtype=L.complex64).masked_fill(L.tensor([True, False]), L.tensor(1.5, requires_grad=True))),
    # adaptive_avg_pool2d: each window averaged on its own; an empty output in any dtype; its backward
    "issue_adaptive_avg_pool2d_nonfinite_windows": lambda L: L.nn.functional.adaptive_avg_pool2d(L.tensor(_POOL_IN), 2),
    "adaptive_avg_pool2d_nonfinite_uneven": lambda L: L.nn.functional.adaptive_avg_pool2d(L.tensor(_POOL_IN), (3, 2)),
    "adaptive_avg_pool2d_nonfinite_grad": lambda L: (lambda x: (L.nn.functional.adaptive_avg_pool2d(x, 3).sum()
                                                                .backward(), x.grad)[1])(
        L.tensor(_POOL_IN, requires_grad=True)),
    "issue_adaptive_avg_pool2d_empty_output_uint8": lambda L: _shape_dtype(L.nn.functional.adaptive_avg_pool2d(
        L.ones(1, 2, 3, 1, dtype=L.uint8), (0, 2))),
    "adaptive_avg_pool2d_empty_batch_bool": lambda L: _shape_dtype(L.nn.functional.adaptive_avg_pool2d(
        L.ones(0, 2, 3, 3, dtype=L.bool), (2, 2))),
    "adaptive_avg_pool2d_empty_complex": lambda L: _shape_dtype(L.nn.functional.adaptive_avg_pool2d(
        L.ones(1, 1, 1, dtype=L.complex128), (0, 2))),
    "adaptive_avg_pool2d_uint8_refused": lambda L: L.nn.functional.adaptive_avg_pool2d(
        L.ones(1, 3, 3, dtype=L.uint8), 2),
    "issue_adaptive_avg_pool2d_backward_empty_output": _adaptive_grad((1, 2, 3, 3), (0, 2)),
    "adaptive_avg_pool2d_backward_no_channels": _adaptive_grad((1, 0, 3, 3), (2, 2)),
    "adaptive_avg_pool2d_backward_empty_batch_ok": _adaptive_grad((0, 2, 3, 3), (2, 2)),
    "adaptive_avg_pool3d_negative_size": lambda L: L.nn.functional.adaptive_avg_pool3d(
        L.ones(1, 2, 3, 3, 3), (2, -1, 2)),
    # a dim of size 0 indexed by a non-empty index (AdvancedIndex: before the value's dtype); no bound is
    # checked where the result has no element
    "issue_setitem_empty_dim_before_dtype": lambda L: _setitem(
        L.zeros(0, 1, 5, 1, dtype=L.int16), ([0], slice(-2, 1, 3), slice(None, 1), slice(0, 2)), L.tensor(-INF)),
    "getitem_empty_dim": lambda L: L.zeros(2, 0)[:, L.tensor([0])],
    "index_put_empty_dim": lambda L: L.zeros(0, 2).index_put((L.tensor([0]),), L.tensor([1.0])),
    "issue_index_put_no_element_no_bound": lambda L: _shape_dtype(L.zeros(3, 0, dtype=L.bool).index_put(
        (L.tensor([4, 3, 3]),), L.tensor(False), accumulate=True)),
    "getitem_no_element_no_bound": lambda L: _shape_dtype(L.zeros(2, 0)[L.tensor([5]), :]),
    "getitem_bound_still_checked": lambda L: L.zeros(2, 3)[L.tensor([5]), :],
    # index_put checks the value's shape before the kernel checks the bounds
    "index_put_value_shape_before_bounds": lambda L: L.zeros(3, 5, 3, dtype=L.int64).index_put(
        (L.tensor(3),), L.ones(4, 5, 3, dtype=L.int64)),
    "index_put_bounds_after_value_shape": lambda L: L.zeros(3, 5, 3).index_put((L.tensor(3),), L.ones(5, 3)),
    "index_put_value_shape_mask_accumulate": lambda L: L.zeros(3, 2).index_put(
        (L.tensor([True, False, True]),), L.ones(2, 2), accumulate=True),
    # stack wraps the dim before comparing the sizes; bmm of no element returns zeros before comparing dtypes
    "stack_dim_before_sizes": lambda L: L.stack([L.zeros(0, dtype=L.bool), L.tensor([True])], 2),
    "stack_sizes_refused": lambda L: L.stack([L.zeros(0), L.ones(1)], 1),
    "bmm_empty_inner_mixed_dtypes": lambda L: _shape_dtype(L.bmm(L.zeros(1, 4, 0, dtype=L.int16),
                                                                 L.zeros(1, 0, 4, dtype=L.int8))),
    "bmm_empty_batch_mixed_dtypes": lambda L: _shape_dtype(L.bmm(L.zeros(0, 4, 2, dtype=L.int16),
                                                                 L.zeros(0, 2, 4, dtype=L.int8))),
    "bmm_mixed_dtypes_refused": lambda L: L.bmm(L.zeros(1, 4, 2, dtype=L.int16), L.zeros(1, 2, 4, dtype=L.int8)),
    "matmul_empty_batch_mixed_dtypes": lambda L: _shape_dtype(L.matmul(
        L.zeros(0, 1, 1, 1, dtype=L.int32).expand(0, 2, 1, 4), L.ones(2, 4, 1, dtype=L.int16))),
    # loss backward kernels: a bool target in the common dtype; bce's epsilon is ATen's float 1e-12
    "mse_loss_bool_target_grad": _g([0.25, 0.5, 1.0], lambda L, x: L.nn.functional.mse_loss(
        x, L.tensor([True, False, True])), "float64"),
    "smooth_l1_loss_bool_target_grad": _g([0.25, 2.5, 1.0], lambda L, x: L.nn.functional.smooth_l1_loss(
        x, L.tensor([True, False, True])), "float64"),
    "bce_grad_at_one_float64": _g([1.0, 0.0, 0.5], lambda L, x: L.nn.functional.binary_cross_entropy(
        x, L.tensor([0.3125, 0.5, 0.25], dtype=L.float64), reduction="sum"), "float64"),
    # addmm with an empty inner dim computes self * beta in place: a number of a higher kind is refused
    "linear_bool_empty_inner_with_bias": lambda L: L.nn.functional.linear(
        L.zeros(0, dtype=L.bool), L.zeros(2, 0, dtype=L.bool), L.tensor([True, True])),
    "addmm_int_empty_inner_float_beta": lambda L: L.addmm(L.tensor([1, 1]), L.zeros(1, 0, dtype=L.int64),
                                                          L.zeros(0, 2, dtype=L.int64), beta=1.0),
    "addmm_bool_empty_inner_bool_beta_ok": lambda L: L.addmm(L.tensor([True, True]), L.zeros(1, 0, dtype=L.bool),
                                                             L.zeros(0, 2, dtype=L.bool), beta=True),
    "addmm_int_empty_inner_zero_beta_ok": lambda L: L.addmm(L.tensor([1, 1]), L.zeros(1, 0, dtype=L.int64),
                                                            L.zeros(0, 2, dtype=L.int64), beta=0.0),
    # atan2's gradient where self^2 + other^2 is 0 is a signed zero (torch 2.13's atan2_backward)
    "issue_atan2_grad_origin": _g([-0.0], lambda L, x: L.atan2(x, L.tensor([-0.0]))),
    "atan2_grad_other_origin": _g([0.0], lambda L, x: L.atan2(L.tensor([0.0]), x)),
    "atan2_grad_underflow": _g([1e-25], lambda L, x: L.atan2(x, L.tensor([1e-25]))),
    "atan2_grad_inf": _g([1.0], lambda L, x: L.atan2(L.tensor([INF]), x)),
    # losses of no element: the mean's 2 / N is inf, the gradient empty
    "mse_loss_empty_grad": _g([[]], lambda L, x: L.nn.functional.mse_loss(x, L.zeros(1, 0))),
    "smooth_l1_loss_empty_grad": _g([[]], lambda L, x: L.nn.functional.smooth_l1_loss(x, L.zeros(1, 0))),
    "huber_loss_empty_grad": _g([[]], lambda L, x: L.nn.functional.huber_loss(x, L.zeros(1, 0))),
    "bce_with_logits_empty_grad": _g([[]], lambda L, x: L.nn.functional.binary_cross_entropy_with_logits(
        x, L.zeros(1, 0))),
    "adaptive_avg_pool3d_zero_size": lambda L: _shape_dtype(L.nn.functional.adaptive_avg_pool3d(
        L.ones(1, 2, 3, 3, 3), (2, 2, 0))),
}


@pytest.mark.parametrize("name", sorted(MORE_FUZZ))
def test_more_fuzz_findings(name):
    check_same(MORE_FUZZ[name], message_chars=80, rel=1e-9)
