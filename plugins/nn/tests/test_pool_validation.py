"""Pooling rejects what PyTorch rejects, with its exception type and message, before any kernel runs.

The security review found ``max_pool2d`` with negative padding writing outside the C kernel's
output buffer; these tests pin the argument checks (negative padding, padding over half the
dilated kernel, non-positive kernel/stride/dilation, output size under 1, wrong input rank,
parameters outside int32) against the installed torch, case by case and over a seeded random grid.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import torchplug

F = torchplug.nn.functional


def _outcome(mod, fn):
    """("ok", shape) or (exception type name, first line of its message)."""
    try:
        r = fn(mod)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    if isinstance(r, tuple):
        r = r[0]
    return "ok", tuple(r.shape)


def _assert_like_torch(fn):
    torch = pytest.importorskip("torch")
    want, got = _outcome(torch, fn), _outcome(torchplug, fn)
    assert got[0] == want[0], (want, got)
    if want[0] == "ok":
        assert got == want
    else:
        assert got[1].startswith(want[1][:40]), (want, got)
    return got


def test_the_reviewed_negative_padding_crash_raises_instead():
    x = torchplug.arange(8 * 300.).reshape(1, 1, 8, 300)
    for _ in range(20):  # the review's loop aborted the process with heap corruption
        with pytest.raises(RuntimeError, match=r"^pad must be non-negative, but got pad: -1"):
            F.max_pool2d(x, 2, stride=1, padding=-1)
    with pytest.raises(RuntimeError, match=r"^pad must be non-negative, but got pad: -1"):
        torchplug.nn.MaxPool2d(2, 1, padding=-1)(x)
    with pytest.raises(RuntimeError, match=r"^pad must be non-negative, but got pad: -1"):
        F.max_pool1d(torchplug.ones(1, 1, 300), 2, 1, -1, return_indices=True)
    with pytest.raises(RuntimeError, match=r"^max_pool1d\(\) padding must be non-negative, but got -1"):
        F.max_pool1d(torchplug.ones(1, 1, 300), 2, 1, -1)


def test_padding_over_half_the_dilated_kernel_is_rejected():
    # effective kernel 4: pad 2 passes that check, then PyTorch's pad <= kernel/2 check refuses it
    with pytest.raises(RuntimeError, match=r"^pad should be smaller than or equal to half of kernel size"):
        F.max_pool2d(torchplug.ones(1, 1, 5, 5), 2, 1, 2, 3)
    with pytest.raises(RuntimeError, match=r"^pad should be at most half of effective kernel size, but got pad=2, "
                                           r"kernel_size=2 and dilation=1"):
        F.max_pool2d(torchplug.ones(1, 1, 5, 5), 2, 1, 2)


CASES = {
    "max2d negative pad": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 8, 8), 3, 1, -1),
    "max2d negative pad, dilated": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 8, 8), 3, 1, (0, -2), 3),
    "max2d pad over dilated half": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 9, 9), 3, 1, 3, 2),
    "max2d pad over kernel half": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 9, 9), 2, 1, 2, 4),
    "max3d negative pad": lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 5, 5, 5), 2, 1, -1),
    "max3d pad over kernel half": lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 5, 5, 5), 2, 1, 2, 3),
    "avg1d negative pad": lambda m: m.nn.functional.avg_pool1d(m.ones(1, 1, 8), 2, 1, -1),
    "avg2d negative pad": lambda m: m.nn.functional.avg_pool2d(m.ones(1, 1, 8, 8), 3, 1, -1),
    "avg3d negative pad": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 5, 5, 5), 2, 1, -1),
    "avg2d pad over half": lambda m: m.nn.functional.avg_pool2d(m.ones(1, 1, 8, 8), 3, 1, 2),
    "max2d zero kernel": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 0, 1),
    "max2d negative kernel": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), -1, 1),
    "max2d zero kernel, dilated": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 0, 1, 0, 2),
    "avg2d negative kernel": lambda m: m.nn.functional.avg_pool2d(m.ones(1, 1, 5, 5), -3, 1),
    "max2d zero stride": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 0),
    "max2d negative stride": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, -1),
    "max3d negative stride": lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 5, 5, 5), 2, (1, 1, -1)),
    "max2d zero dilation": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 1, 0, 0),
    "max2d negative dilation": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 1, 0, (1, -1)),
    "max1d zero dilation": lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 5), 2, 1, 0, 0),
    "max1d zero dilation, indices": lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 5), 2, 1, 0, 0, return_indices=True),
    "max2d output too small": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 2, 2), 3),
    "max2d output too small, dilated": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 1, 0, 5),
    "avg3d input smaller than kernel": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 5, 5, 5), 7, 1),
    "max3d output too small": lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 2, 5, 5), 3),
    "max1d output too small": lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 2), 3),
    "max2d rank 2": lambda m: m.nn.functional.max_pool2d(m.ones(5, 5), 2),
    "max2d rank 5": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 1, 5, 5), 2),
    "avg2d rank 2": lambda m: m.nn.functional.avg_pool2d(m.ones(5, 5), 2),
    "avg2d rank 5": lambda m: m.nn.functional.avg_pool2d(m.ones(1, 1, 1, 5, 5), 2),
    "max3d rank 3": lambda m: m.nn.functional.max_pool3d(m.ones(5, 5, 5), 2),
    "avg3d rank 3": lambda m: m.nn.functional.avg_pool3d(m.ones(5, 5, 5), 2),
    "max1d rank 4": lambda m: m.nn.functional.max_pool1d(m.ones(1, 1, 1, 8), 2),
    "max1d empty channels": lambda m: m.nn.functional.max_pool1d(m.ones(1, 0, 8), 2),
    "max2d empty plane": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 0, 3), 2),
    "max3d empty plane": lambda m: m.nn.functional.max_pool3d(m.ones(1, 1, 0, 5, 5), 2),
    "avg3d empty plane": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 0, 5, 5), 2),
    "max2d empty batch": lambda m: m.nn.functional.max_pool2d(m.ones(0, 1, 4, 4), 2, return_indices=True),
    "max2d kernel beyond int32": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2 ** 40),
    "max2d stride beyond int32": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 2 ** 31),
    "max2d dilation beyond int32": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 1, 0, 2 ** 40),
    "avg2d padding beyond int32": lambda m: m.nn.functional.avg_pool2d(m.ones(1, 1, 5, 5), 2, 1, 2 ** 62),
    "max2d dilation at int32 max": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 1, 0, 2 ** 31 - 1),
    "max2d stride at int32 max": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 2 ** 31 - 1),
    "avg3d kernel length": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 5, 5, 5), (2, 2)),
    "avg3d divisor zero": lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 5, 5, 5), 2, divisor_override=0),
    "max2d ceil_mode, padded": lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 5, 5), 2, 2, 1, ceil_mode=True),
    "adaptive max rank 1": lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(5), 2),
    "adaptive avg rank 2": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(5, 5), 2),
    "adaptive avg empty channels": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 0, 5, 5), 2),
    "adaptive max empty channels": lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(1, 0, 5, 5), 2),
    "adaptive max negative size": lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(1, 1, 5, 5), (-1, 2)),
    "adaptive avg negative size": lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 1, 5, 5), (-1, 2)),
    "adaptive max1d negative size": lambda m: m.nn.functional.adaptive_max_pool1d(m.ones(1, 1, 5), -1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pooling_argument_errors_match_torch(case):
    _assert_like_torch(CASES[case])


def _random_case(rng: random.Random):
    def val(lo, hi):
        if rng.random() < 0.03:
            return rng.choice([2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 40])
        return rng.randint(lo, hi)

    def param(dims, lo, hi, allow_empty=False):
        r = rng.random()
        if allow_empty and r < 0.15:
            return None
        if r < 0.5:
            return val(lo, hi)
        n = dims if rng.random() < 0.9 else rng.choice([1, 2, 3, 4])
        return tuple(val(lo, hi) for _ in range(n))

    kind, dims = rng.choice(["max", "avg"]), rng.choice([1, 2, 3])
    nd = dims + rng.choice([0, 1, 1, 1, 2, 2, 2, 3])
    shape = tuple(rng.choice([0, 1, 2]) if rng.random() < 0.1 else rng.randint(1, 7) for _ in range(nd))
    k, s, p, d = param(dims, -1, 5), param(dims, -1, 4, True), param(dims, -1, 3), param(dims, -1, 3)
    ceil, indices = rng.random() < 0.3, rng.random() < 0.4
    if kind == "max":
        if dims == 1 and not indices and any(abs(v) >= 2 ** 31 for v in np.atleast_1d(np.asarray(d, dtype=object))):
            return None  # torch's max_pool1d without indices returns a garbage shape on such a dilation
        return lambda m: getattr(m.nn.functional, f"max_pool{dims}d")(m.ones(shape), k, s, p, d, ceil_mode=ceil,
                                                                      return_indices=indices)
    extra = {} if dims == 1 else {"divisor_override": rng.choice([None, None, 0, 2, -1])}
    return lambda m: getattr(m.nn.functional, f"avg_pool{dims}d")(m.ones(shape), k, s, p, ceil_mode=ceil, **extra)


def test_random_pooling_arguments_fail_or_succeed_like_torch():
    pytest.importorskip("torch")
    rng = random.Random(20240611)
    outcomes = set()
    for _ in range(600):
        fn = _random_case(rng)
        if fn is not None:
            outcomes.add(_assert_like_torch(fn)[0])
    assert outcomes == {"ok", "RuntimeError", "IndexError"}  # the grid reaches successes and both error kinds
