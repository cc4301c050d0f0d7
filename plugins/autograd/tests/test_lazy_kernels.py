"""Autograd kernels are compiled on their first call, not when the plugin loads (``_kernels.lazy_function``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import torchplug as tp
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug_autograd import _kernels as KR

torch = pytest.importorskip("torch")

_FRESH = r"""
import json, threading
import torchplug as tp
from torchplug._dispatch.dispatcher import DISPATCHER

def kernel(op):
    return DISPATCHER.entry(op).kernels["Autograd"][0].fn

x = tp.tensor([0.5, -1.0, 2.0], dtype=tp.float64, requires_grad=True)  # loads the autograd plugin
cosh, sinh = kernel("aten::cosh"), kernel("aten::sinh")
out = {"before": ["__torchplug_build__" in cosh.__dict__, "__torchplug_build__" in sinh.__dict__],
       "qualname": cosh.__qualname__}
x.cosh().sum().backward()
out["grad"] = x.grad.tolist()
out["after"] = ["__torchplug_build__" in cosh.__dict__, "__torchplug_build__" in sinh.__dict__]
out["same_object"] = kernel("aten::cosh") is cosh
out["source"] = "node = _new(" in cosh.__torchplug_source__
# two threads calling an op for the first time at once build it once: one node class
barrier = threading.Barrier(2)
types = []
def first():
    barrier.wait()
    types.append(type(x.tanh().grad_fn))
threads = [threading.Thread(target=first) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
out["one_class"] = types[0] is types[1] and types[0].__name__ == "TanhBackward0"
print(json.dumps(out))
"""


def test_kernels_compile_on_first_call_in_a_fresh_process():
    proc = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["before"] == [True, True]  # loading the plugin compiled neither
    assert out["after"] == [False, True]  # the first backward compiled cosh's kernel only
    assert out["same_object"] and out["source"] and out["one_class"]
    assert out["qualname"] == "autograd[aten::cosh] (forward AD: elementwise)"  # named before it compiles
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    x.cosh().sum().backward()
    assert out["grad"] == pytest.approx(x.grad.tolist(), rel=1e-12)


def test_every_registered_autograd_kernel_builds():
    # Building is where a rule naming a missing argument fails; with lazy kernels that would surface only
    # at the op's first differentiated call, so every kernel is built here.
    tp.ones(1, requires_grad=True)  # the autograd plugin is loaded
    built = 0
    for name, entry in sorted(DISPATCHER.ops.items()):
        for reg in entry.kernels.get("Autograd", ()):
            fn = KR.materialize(reg.fn)
            assert "__torchplug_build__" not in getattr(fn, "__dict__", {}), name
            assert getattr(fn, "__code__", None) is not KR._LAZY_CODE, name
            built += 1
    assert built > 400


def test_a_lazy_function_takes_the_built_code_and_attributes():
    calls = []

    def build(ns):
        calls.append(1)
        ns["_scale"] = 3
        exec("def f(a, b):\n    return (a + b) * _scale", ns)
        f = ns["f"]
        f.note = "built"
        return f

    fn = KR.lazy_function(build, "f")
    assert calls == [] and "__torchplug_build__" in fn.__dict__
    assert fn(1, 2) == 9 and fn(2, 2) == 12
    assert calls == [1] and fn.note == "built" and fn.__code__.co_varnames[:2] == ("a", "b")
    assert KR.materialize(fn) is fn and calls == [1]
