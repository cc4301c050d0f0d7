"""torchplug.testing: ``assert_close`` and the backend conformance kit (OpInfo table, runner, pytest plugin).

- :func:`assert_close`: ``torch.testing.assert_close`` for torchplug (and torch) tensors.
- :func:`make_tensor`: ``torch.testing.make_tensor`` (random test tensors); :func:`assert_allclose` (deprecated).
- :class:`OpInfo`, :class:`SampleInput`, :class:`T`: describe an op and its sample inputs
  (``torchplug.testing.opinfos.<area>.OPS``; collected by :func:`op_db`).
- :func:`run_case`: run one (op, dtype, sample) on a device against real PyTorch.
- Run the suite on a backend: ``pytest -p torchplug.testing.pytest_plugin --pyargs
  torchplug.testing.conformance --torchplug-device=meta`` (see docs/conformance.md).

Nothing here imports ``torch`` at import time; the runner imports it for references only.
"""

from __future__ import annotations

from torchplug.testing._compare import assert_close, compare_results
from torchplug.testing._creation import assert_allclose, make_tensor
from torchplug.testing._runner import Case, SkipCase, cases, device_has_data, run_case
from torchplug.testing.opinfo import (
    ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, Attr, Dtype, OpInfo, SampleInput, Skip, T, materialize, resolve,
)
from torchplug.testing.opinfos import op_db

__all__ = [
    "assert_close", "assert_allclose", "make_tensor", "compare_results", "OpInfo", "SampleInput", "Skip", "T", "Attr", "Dtype", "materialize", "resolve",
    "op_db", "cases", "Case", "run_case", "SkipCase", "device_has_data", "ALL_DTYPES", "FLOAT_DTYPES", "INT_DTYPES",
    "COMPLEX_DTYPES",
]


from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# a name PyTorch has and torchplug lacks raises "not supported yet" (see docs/compat.md)
__getattr__ = _fallback_getattr("torch.testing", __name__)
