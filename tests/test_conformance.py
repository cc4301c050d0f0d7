"""A quick slice of the conformance suite (two dtypes, cpu and meta) in the repository's test run.

The full suite runs in tox: ``pytest -p torchplug.testing.pytest_plugin --pyargs
torchplug.testing.conformance --torchplug-device=cpu`` (and ``=meta``); see docs/conformance.md.
"""

from __future__ import annotations

from torchplug.testing.conformance.test_conformance import pytest_generate_tests, test_conformance  # noqa: F401

DEVICES = ("cpu", "meta")
DTYPES = ("int64", "float32")


NO_TORCH_INPLACE = {"maximum", "minimum"}  # torchplug defines maximum_/minimum_; torch has no reference


def test_every_base_op_has_an_opinfo():
    # every overload of _schemas/base.py is exercised: functional ones by an OpInfo's `aten`,
    # `inplace`/`out` variants by the flags of the OpInfo that covers the functional op
    from torchplug._schemas import base
    from torchplug.testing import op_db

    covered: dict[str, list] = {}
    for op in op_db():
        for name in op.aten:
            covered.setdefault(name, []).append(op)
    missing, no_out, no_inplace = [], [], []
    for line in base.ROWS:
        schema, _, flags = line.partition(" | ")
        name = schema.split("(")[0]
        ops = covered.get(name)
        if not ops:
            missing.append(name)
            continue
        flags = flags.split()
        if any(f == "out" or f.startswith("out=") for f in flags) and not any(o.supports_out for o in ops):
            no_out.append(name)
        if "inplace" in flags and not any(o.inplace_variant for o in ops) and name not in NO_TORCH_INPLACE:
            no_inplace.append(name)
    assert not missing, f"base ops without an OpInfo: {missing}"
    assert not no_out, f"base ops whose out= variant is not run: {no_out}"
    assert not no_inplace, f"base ops whose in-place variant is not run: {no_inplace}"
