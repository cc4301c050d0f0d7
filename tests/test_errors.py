"""The error catalogue: bad inputs raise PyTorch's exception types with PyTorch's messages.

Each case is ``fn(L, mk)`` written once for both libraries (``L`` is ``torch`` or
``torchplug``; ``mk(*shape, dtype=...)`` makes a tensor of ``L`` on the device under test).
It runs on torchplug's cpu and meta devices and is compared with real PyTorch on cpu: the same
exception type and the same first line of the message (``torch.`` spelled ``torchplug.``).
"""

from __future__ import annotations

import warnings

import pytest

import torchplug

torch = pytest.importorskip("torch")

DEVICES = ["cpu", "meta"]


def _maker(L, device):
    def mk(*shape, dtype="float32", fill=1):
        t = L.full(shape, fill, dtype=getattr(L, dtype))
        return t if device == "cpu" else t.to(device)

    return mk


def _outcome(fn, L, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(L, _maker(L, device))
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            return exc
    return None


def _first_line(exc):
    return str(exc).replace("torchplug", "torch").splitlines()[0]


def check_same_error(fn, device, *, message=True, torch_device="cpu"):
    theirs = _outcome(fn, torch, torch_device)
    assert theirs is not None, "torch accepted the call: the case is not an error case"
    ours = _outcome(fn, torchplug, device)
    assert ours is not None, f"torchplug did not raise; torch raised {type(theirs).__name__}: {theirs}"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    if message:
        assert _first_line(ours) == _first_line(theirs)
    return ours


# ---- the catalogue ------------------------------------------------------------------------------------------
I = "int64"
CASES = {
    # broadcasting: both sizes and the dimension
    "broadcast_add": lambda L, mk: mk(2, 3) + mk(4, 3),
    "broadcast_mul_3d": lambda L, mk: mk(2, 1, 4) * mk(3, 5),
    "broadcast_where": lambda L, mk: L.where(mk(2, 3, dtype="bool"), mk(3), mk(4)),
    "broadcast_inplace": lambda L, mk: mk(3, 1).add_(mk(3, 4)),
    "broadcast_expand": lambda L, mk: mk(3, 2).expand(3, 4),
    "broadcast_out": lambda L, mk: L.add(mk(2, 3), mk(4, 3), out=mk(2, 3)),
    # float (or otherwise wrong-dtype) indices
    "float_python_index": lambda L, mk: mk(3, 4)[1.5],
    "float_tensor_index": lambda L, mk: mk(3, 4)[mk(2)],
    "float_index_select": lambda L, mk: L.index_select(mk(3, 4), 0, mk(2)),
    "float_gather": lambda L, mk: L.gather(mk(3, 4), 1, mk(3, 2)),
    "float_scatter": lambda L, mk: mk(3, 4).scatter(1, mk(3, 2), mk(3, 2)),
    "float_index_put": lambda L, mk: mk(3, 4).index_put_((mk(2),), mk(4)),
    # out-of-range dims and indices
    "dim_sum": lambda L, mk: mk(3, 4).sum(2),
    "dim_negative": lambda L, mk: mk(3, 4).sum(-3),
    "dim_transpose": lambda L, mk: mk(3, 4).transpose(0, 2),
    "dim_cat": lambda L, mk: L.cat([mk(3, 4), mk(3, 4)], 2),
    "dim_softmax_like_argmax": lambda L, mk: mk(3, 4).argmax(5),
    "dim_unsqueeze": lambda L, mk: mk(3, 4).unsqueeze(4),
    "dim_0d": lambda L, mk: mk().sum(1),
    "index_out_of_bounds": lambda L, mk: mk(3, 4)[5],
    "select_out_of_bounds": lambda L, mk: mk(3, 4).select(1, -5),
    "gather_out_of_bounds": lambda L, mk: L.gather(mk(3, 4), 1, mk(3, 2, dtype=I, fill=7)),
    # in-place and out= casts
    "inplace_cast_float_to_long": lambda L, mk: mk(3, dtype=I).add_(1.5),
    "inplace_cast_tensor": lambda L, mk: mk(3, dtype=I).mul_(mk(3)),
    "inplace_cast_to_bool": lambda L, mk: mk(3, dtype="bool").add_(mk(3, dtype=I)),
    "inplace_cast_complex": lambda L, mk: mk(3).add_(mk(3, dtype="complex64")),
    "inplace_div_int": lambda L, mk: mk(3, dtype="int32").div_(2),
    "out_cast": lambda L, mk: L.exp(mk(3), out=mk(3, dtype=I)),
    # wrong dtypes for the op
    "bitwise_and_float": lambda L, mk: L.bitwise_and(mk(3), mk(3)),
    "bitwise_not_float": lambda L, mk: ~mk(3),
    "shift_float": lambda L, mk: mk(3) << 1,
    "where_float_condition": lambda L, mk: L.where(mk(3), mk(3), mk(3)),
    "masked_fill_float_mask": lambda L, mk: mk(3).masked_fill(mk(3), 0.0),
    "sub_bool": lambda L, mk: mk(3, dtype="bool") - mk(3, dtype="bool"),
    "neg_bool": lambda L, mk: -mk(3, dtype="bool"),
    "mean_int": lambda L, mk: mk(3, dtype=I).mean(),
    "mm_dtype_mismatch": lambda L, mk: L.mm(mk(2, 2), mk(2, 2, dtype="float64")),
    "addcdiv_int": lambda L, mk: L.addcdiv(mk(3, dtype=I), mk(3, dtype=I), mk(3, dtype=I)),
    # shapes
    "mm_shapes": lambda L, mk: L.mm(mk(3, 4), mk(5, 2)),
    "matmul_shapes": lambda L, mk: mk(2, 3, 4) @ mk(5, 2),
    "dot_1d": lambda L, mk: L.dot(mk(3, 2), mk(3, 2)),
    "view_incompatible": lambda L, mk: mk(3, 4).t().view(12),
    "view_invalid": lambda L, mk: mk(3, 4).view(5, -1),
    "reshape_two_inferred": lambda L, mk: mk(3, 4).reshape(-1, -1),
    "cat_sizes": lambda L, mk: L.cat([mk(2, 3), mk(2, 4)]),
    "cat_0d": lambda L, mk: L.cat([mk(), mk()]),
    "cat_empty_list": lambda L, mk: L.cat([]),
    "stack_sizes": lambda L, mk: L.stack([mk(2, 3), mk(3, 2)]),
    "max_empty": lambda L, mk: mk(0, 3).max(),
    "argmax_empty": lambda L, mk: mk(0).argmax(),
    "squeeze_dims": lambda L, mk: mk(3, 4).squeeze(2),
    "permute_repeated": lambda L, mk: mk(2, 3).permute(0, 0),
    "narrow_too_long": lambda L, mk: mk(5).narrow(0, 3, 3),
    "split_sizes": lambda L, mk: mk(5).split([2, 2]),
    "copy_shape": lambda L, mk: mk(3, 4).copy_(mk(2, 4)),
    "fill_nonscalar": lambda L, mk: mk(3).fill_(mk(2)),
}
# torchplug's meta backend makes PyTorch's CPU checks but a few errors need the data
# (index values), which meta tensors do not have.
DATA_ONLY = {"index_out_of_bounds_data", "gather_out_of_bounds"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(CASES))
def test_error_catalogue(case, device):
    if device == "meta" and case in DATA_ONLY:
        pytest.skip("needs index values; meta tensors have none")
    check_same_error(CASES[case], device)


def test_broadcast_message_names_sizes_and_dimension():
    with pytest.raises(RuntimeError) as info:
        torchplug.ones(2, 3) + torchplug.ones(4, 3)
    assert str(info.value) == "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"


def test_dim_out_of_range_message():
    with pytest.raises(IndexError) as info:
        torchplug.ones(2, 3).sum(2)
    assert str(info.value) == "Dimension out of range (expected to be in range of [-2, 1], but got 2)"


def test_inplace_cast_message():
    with pytest.raises(RuntimeError) as info:
        torchplug.ones(3, dtype=torchplug.long).add_(1.5)
    assert str(info.value) == "result type Float can't be cast to the desired output type Long"


# ---- mixing devices ------------------------------------------------------------------------------------------
def _mixed(L):
    c = lambda *s: L.ones(s)  # noqa: E731
    m = lambda *s: L.ones(s, device="meta")  # noqa: E731
    return c, m


MIXED_ERRORS = {
    "add_cpu_meta": lambda L, c, m: c(3) + m(3),
    "add_meta_cpu": lambda L, c, m: m(3) + c(3),
    "mul_meta_0d_on_cpu": lambda L, c, m: c(3) * m(),
    "eq": lambda L, c, m: L.eq(m(2, 3), c(3)),
    "maximum": lambda L, c, m: L.maximum(c(3), m(3)),
    "where": lambda L, c, m: L.where(m(3) > 0, c(3), m(3)),
    "cat": lambda L, c, m: L.cat([c(3), m(3)]),
    "cat_meta_first": lambda L, c, m: L.cat([m(3), c(3)]),
    "stack": lambda L, c, m: L.stack([m(3), c(3)]),
    "lerp": lambda L, c, m: L.lerp(c(3), m(3), 0.5),
    "addcmul": lambda L, c, m: L.addcmul(c(3), c(3), m(3)),
    "clamp_tensor": lambda L, c, m: L.clamp(c(3), m(3)),
    "masked_fill": lambda L, c, m: m(3).masked_fill(c(3) > 0, 1.0),
    "dot": lambda L, c, m: L.dot(c(3), m(3)),
    "div_floor": lambda L, c, m: L.div(c(3), m(3), rounding_mode="floor"),
    "add_out": lambda L, c, m: L.add(m(3), c(3), out=m(3)),
}
MIXED_OK = {
    "cpu_scalar_plus_meta": lambda L, c, m: c() + m(3),
    "meta_plus_cpu_scalar": lambda L, c, m: m(2, 3) * c(),
    "where_cpu_scalars": lambda L, c, m: L.where(m(3) > 0, c(), c()),
    "lerp_cpu_scalar_weight": lambda L, c, m: L.lerp(m(3), m(3), c()),
}


@pytest.mark.parametrize("case", list(MIXED_ERRORS))
def test_mixing_devices_raises_like_torch(case):
    fn = MIXED_ERRORS[case]
    with pytest.raises(Exception) as theirs:
        fn(torch, *_mixed(torch))
    with pytest.raises(Exception) as ours:
        fn(torchplug, *_mixed(torchplug))
    assert type(ours.value) is RuntimeError and type(theirs.value) is RuntimeError
    assert _first_line(ours.value) == _first_line(theirs.value)


@pytest.mark.parametrize("case", list(MIXED_OK))
def test_cpu_scalars_mix_with_any_device(case):
    fn = MIXED_OK[case]
    expected = fn(torch, *_mixed(torch))
    actual = fn(torchplug, *_mixed(torchplug))
    assert actual.device.type == expected.device.type == "meta"
    assert tuple(actual.shape) == tuple(expected.shape)
    assert str(actual.dtype).rsplit(".", 1)[-1] == str(expected.dtype).rsplit(".", 1)[-1]


def test_mixing_devices_message():
    with pytest.raises(RuntimeError, match="^Tensor on device meta is not on the expected device cpu!$"):
        torchplug.ones(3) + torchplug.ones(3, device="meta")


def test_single_device_calls_are_not_wrapped():
    # the same-device check costs nothing unless a call mixes backends: only mixed key sets are wrapped
    from torchplug._dispatch import keys as K
    from torchplug._dispatch.dispatcher import DISPATCHER

    a, m = torchplug.ones(3), torchplug.ones(3, device="meta")
    a + a
    m + m
    with pytest.raises(RuntimeError):
        a + m
    cache = DISPATCHER.entry("aten::add.Tensor").cache
    for ks, kernel in cache.items():
        band = ks & K.BACKEND_BAND
        wrapped = "same_device_check" in getattr(kernel, "__qualname__", "")
        assert wrapped == bool(band & (band - 1)), (K.keyset_names(ks), kernel)
