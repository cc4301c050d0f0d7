"""clamp with Scalar bounds, clamp_min/clamp_max, relu6 and hardtanh keep an in-range zero's sign and propagate
NaN as PyTorch does (``x < min ? min : x``, then ``x > max ? max : x``): -0.0 stays -0.0 against min=0, +0.0
stays +0.0 against max=-0.0.  Compared with torch value by value, sign bits included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

VALUES = [-0.0, 0.0, -1.5, 1.5, 7.0, -0.5, 0.5, float("nan"), float("inf"), -float("inf")]


def _F(T: Any) -> Any:
    return T.nn.functional


CASES = {
    "clamp_min_0": lambda T, x: T.clamp_min(x, 0),
    "clamp_min_0.0": lambda T, x: T.clamp_min(x, 0.0),
    "clamp_min_neg_zero": lambda T, x: T.clamp_min(x, -0.0),
    "clamp_min_-1": lambda T, x: T.clamp_min(x, -1),
    "clamp_max_0": lambda T, x: T.clamp_max(x, 0.0),
    "clamp_max_neg_zero": lambda T, x: T.clamp_max(x, -0.0),
    "clamp_min=0": lambda T, x: x.clamp(min=0),
    "clamp_max=0": lambda T, x: x.clamp(max=0),
    "clamp_0_1": lambda T, x: T.clamp(x, 0, 1),
    "clamp_neg_zero_1": lambda T, x: T.clamp(x, -0.0, 1),
    "clamp_min_above_max": lambda T, x: T.clamp(x, 2, 1),
    "clamp_nan_min": lambda T, x: T.clamp(x, float("nan")),
    "clamp_nan_max": lambda T, x: T.clamp(x, max=float("nan")),
    "clamp_min_": lambda T, x: x.clone().clamp_min_(0),
    "clamp_": lambda T, x: x.clone().clamp_(0, 6),
    "relu6": lambda T, x: _F(T).relu6(x),
    "relu6_inplace": lambda T, x: _F(T).relu6(x.clone(), inplace=True),
    "hardtanh": lambda T, x: _F(T).hardtanh(x),
    "hardtanh_0_1": lambda T, x: _F(T).hardtanh(x, 0.0, 1.0),
    "hardtanh_-1_0": lambda T, x: _F(T).hardtanh(x, -1.0, 0.0),
    "hardtanh_inplace": lambda T, x: _F(T).hardtanh_(x.clone(), 0.0, 2.0),
    "relu": lambda T, x: _F(T).relu(x),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("size", [len(VALUES), 1000])  # a short tensor and one long enough for vectorized loops
@pytest.mark.parametrize("case", sorted(CASES))
def test_signed_zero_and_nan_as_torch(case: str, size: int, dtype: str) -> None:
    data = np.resize(np.array(VALUES), size)
    ref = CASES[case](torch, torch.tensor(data, dtype=getattr(torch, dtype))).double().numpy()
    got = CASES[case](tp, tp.tensor(data, dtype=getattr(tp, dtype))).double().numpy()
    np.testing.assert_array_equal(got, ref)  # NaNs in the same places
    numbers = ~np.isnan(ref)  # (a NaN's sign bit is the vectorized loop's business in torch)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(ref[numbers]))
