"""bfloat16 on the cuda device: NumPy + ml_dtypes under emulation, and the float32 detour the guard
takes on a GPU for ops CuPy cannot run in bfloat16."""

from __future__ import annotations

import pytest

import torchplug as torch
from torchplug_cuda import _bfloat16, _families


def test_bfloat16_tensors_compute_under_emulation(emulated):
    a = torch.linspace(-2, 2, 12, device="cuda", dtype=torch.bfloat16).reshape(3, 4)
    b = torch.ones(4, 2, device="cuda", dtype=torch.bfloat16)
    ref = torch.linspace(-2, 2, 12, dtype=torch.bfloat16).reshape(3, 4)
    assert torch.equal((a * 2 + 1).cpu(), ref * 2 + 1)
    assert (a @ b).dtype == torch.bfloat16 and torch.equal((a @ b).cpu(), ref @ torch.ones(4, 2, dtype=torch.bfloat16))
    assert torch.equal(a.sum(1).cpu(), ref.sum(1))
    assert torch.cuda.is_bf16_supported()


def test_bfloat16_autocast_and_backward(emulated):
    w = torch.randn(4, 3, device="cuda", requires_grad=True)
    x = torch.randn(2, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = x @ w
        assert y.dtype == torch.bfloat16
        assert torch.softmax(y, 1).dtype == torch.float32  # an fp32-list op
    y.float().sum().backward()
    assert w.grad.dtype == torch.float32
    assert torch.allclose(w.grad.cpu(), x.cpu().sum(0, keepdim=True).t().expand(4, 3), atol=0.05)


def _common():
    return _families.family("emulate").common()


def test_via_float32_rounds_results_to_bfloat16(emulated):
    seen = []

    def kernel(a, b):  # a stand-in for a CuPy kernel with no bfloat16 loop: sees float32 only
        seen.append((a.dtype, b.dtype))
        return _common().wrap(a._data * b._data)

    a = torch.tensor([1.5, 2.0, 3.0], device="cuda", dtype=torch.bfloat16)
    b = torch.tensor([2.0, 0.5, 1 / 3], device="cuda", dtype=torch.bfloat16)
    out = _bfloat16.via_float32("aten::mul.Tensor", kernel, _common(), a, b)
    assert seen == [(torch.float32, torch.float32)]
    assert out.dtype == torch.bfloat16 and torch.equal(out.cpu(), (a.cpu().float() * b.cpu().float()).bfloat16())


def test_via_float32_writes_in_place_results_back(emulated):
    def kernel(a, b):
        a._data += b._data
        return a

    a = torch.tensor([1.0, 2.0], device="cuda", dtype=torch.bfloat16)
    out = _bfloat16.via_float32("aten::add_.Tensor", kernel, _common(), a, torch.tensor([0.5, 0.25], device="cuda",
                                                                                    dtype=torch.bfloat16))
    assert out is a and a.tolist() == [1.5, 2.25]


def test_known_gaps_and_the_refusal_message(monkeypatch):
    assert _bfloat16.known_gap("aten::_fft_r2c") and not _bfloat16.known_gap("aten::add.Tensor")
    monkeypatch.setattr(_bfloat16, "MISSING", "CuPy 13.3.0 has no bfloat16 arrays")
    with pytest.raises(TypeError, match="bfloat16 is not supported on the cuda device here: CuPy 13.3.0"):
        _bfloat16.refuse((torch.zeros(1, dtype=torch.bfloat16),))
    _bfloat16.refuse((torch.zeros(1),))  # other dtypes pass


def test_retry_learns_ops_cupy_cannot_run_in_bfloat16(emulated, monkeypatch):
    monkeypatch.setattr(_bfloat16, "LEARNED", set())

    def kernel(a):  # like a CuPy ufunc without a bfloat16 loop
        if a.dtype == torch.bfloat16:
            raise TypeError("Wrong type (dtype(bfloat16)) of arguments for cupy_rint")
        return _common().wrap(a._data.round())

    a = torch.tensor([0.4, 1.6, -2.6], device="cuda", dtype=torch.bfloat16)
    try:
        kernel(a)
    except TypeError as exc:
        out = _bfloat16.retry(exc, "aten::round", kernel, _common(), (a,), 0, lambda f, args: f(*args))
    assert out.dtype == torch.bfloat16 and out.tolist() == [0.0, 2.0, -3.0]
    assert _bfloat16.LEARNED == {"aten::round"} and _bfloat16.known_gap("aten::round")


def test_retry_reraises_errors_that_are_not_bfloat16_gaps(emulated, monkeypatch):
    monkeypatch.setattr(_bfloat16, "LEARNED", set())

    def kernel(a):
        raise TypeError("round() got an unexpected keyword argument")

    error = TypeError("round() got an unexpected keyword argument")
    bf = torch.ones(2, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(TypeError) as info:
        _bfloat16.retry(error, "aten::round", kernel, _common(), (bf,), 0, lambda f, args: f(*args))
    assert info.value is error and not _bfloat16.LEARNED
    with pytest.raises(TypeError) as info:  # no bfloat16 operand: not retried at all
        _bfloat16.retry(error, "aten::round", kernel, _common(), (torch.ones(2, device="cuda"),), 0,
                        lambda f, args: f(*args))
    assert info.value is error
