"""Start-up laziness: entry points compiled on first call, the schema parser's fast path, kernel signature checks
without ``inspect``, and core-layer plugins loaded on their first use (with the same visible behaviour)."""

from __future__ import annotations

import functools
import inspect
import json
import os
import subprocess
import sys

import pytest

import torchplug
from torchplug._dispatch import schema as S
from torchplug._dispatch.codegen import entry_source
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.library import check_kernel_signature
from torchplug._schemas import expand_table
from torchplug.library import Library


# -- entry points --------------------------------------------------------------------------------------------
@pytest.fixture
def lib():
    with Library("starttest", "DEF") as library:
        yield library


def test_an_entry_point_compiles_on_its_first_call_and_stays_the_same_object(lib):
    lib.define("scale(Tensor x, float factor=2.0, *, bool neg=False) -> Tensor")
    lib.impl("scale", lambda x, factor, neg: x * (-factor if neg else factor), "CompositeExplicitAutograd")
    entry = DISPATCHER.entry("starttest::scale")
    fn = entry.call
    assert "__torchplug_materialize__" in fn.__dict__ and not hasattr(fn, "__torchplug_source__")
    # the stub already has the final signature, so introspection and argument errors are those of the real one
    assert str(inspect.signature(fn)) == "(x, factor=2.0, *, neg=False)"
    with pytest.raises(TypeError, match=r"scale\(\) missing 1 required positional argument: 'x'"):
        fn()
    assert "__torchplug_materialize__" in fn.__dict__  # a call that fails to bind compiles nothing
    x = torchplug.tensor([1.0, 2.0])
    assert fn(x, neg=True).tolist() == [-2.0, -4.0]
    assert entry.call is fn and "__torchplug_materialize__" not in fn.__dict__
    assert fn.__code__.co_filename == "<torchplug entry starttest::scale>"
    assert "_kernel = _get(ks)" in fn.__torchplug_source__  # the generated code now runs in the stub itself
    assert fn(x, 3.0).tolist() == [3.0, 6.0]
    assert str(inspect.signature(fn)) == "(x, factor=2.0, *, neg=False)"
    with pytest.raises(TypeError, match=r"argument 'x' \(position 1\) must be Tensor, not str"):
        fn("a")


def test_entry_source_compiles_an_entry_point_not_called_yet(lib):
    lib.define("twice(Tensor x) -> Tensor")
    fn = DISPATCHER.entry("starttest::twice").call
    assert "__torchplug_materialize__" in fn.__dict__
    assert entry_source(fn).startswith("def twice(x):")
    assert "__torchplug_materialize__" not in fn.__dict__


def test_public_functions_have_their_signatures_before_any_call():
    code = ("import inspect, torchplug\n"
            "print(str(inspect.signature(torchplug.clamp_min)), '__torchplug_materialize__' in torchplug.clamp_min.__dict__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(input,", "min,", "*,", "out=None)", "True"]


# -- the schema parser's fast path ---------------------------------------------------------------------------
def _parsed(text: str) -> object:
    try:
        return S._Parser(text).schema()
    except S.SchemaError as exc:
        return str(exc)


def test_the_fast_path_reads_most_of_the_table_exactly_as_the_parser():
    rows = [text for text, _, _ in expand_table()]
    fast = {text: S._fast_schema(text) for text in rows}
    assert sum(v is not None for v in fast.values()) > 0.9 * len(rows)
    for text, schema in fast.items():
        assert schema is None or schema == _parsed(text), text


@pytest.mark.parametrize("text", [
    "f(Tensor x, int y] -> Tensor",  # mismatched brackets
    "f(Tensor x, Tensor x) -> Tensor",  # duplicate names
    "f(int a=1, int b) -> int",  # a non-default argument after a default one
    "f(Tensor(a!) x, Tensor(a!) y) -> ()",  # two writers of one alias set
    "f(Tensor x, *) -> Tensor",  # a trailing '*'
    "f(int[0] x) -> ()",  # a list of size 0
    "f(int x=[1, 2]) -> ()",  # a list default for a non-list type
    "f(Foo x) -> ()",  # an unknown type
    "f(int(a) x) -> ()",  # an alias on a non-Tensor type
    "f(int x=1e) -> ()",  # not a literal
    "f(Tensor x)  -> Tensor",  # other spacing: the parser's business
    'f(str s="a, b") -> ()',  # strings: the parser's business
])
def test_the_fast_path_leaves_anything_unusual_to_the_parser(text):
    assert S._fast_schema(text) is None


def test_the_fast_path_agrees_with_the_parser_on_these():
    for text in ("ns::op.ovl(Tensor(a -> *) self, int[2]? size=None, Tensor?[] idx=[], *, float eps=-inf, "
                 "bool b=True, ScalarType? dtype=None, MemoryFormat mf=contiguous_format) -> (Tensor(a) x, Tensor)",
                 "g() -> ()", "h(SymInt[] s=[1, -2], float f=1.5e-3) -> Tensor[]"):
        assert S._fast_schema(text) is not None and S._fast_schema(text) == _parsed(text), text


# -- kernel signature checks ---------------------------------------------------------------------------------
SCHEMA = S.parse_schema("f(Tensor a, Tensor b, int c=0) -> Tensor")


def _kernels():
    def exact(a, b, c): ...
    def defaults(a, b=1, c=2, d=3): ...
    def varargs(a, *rest): ...
    def too_few(a, b): ...
    def too_many(a, b, c, d): ...
    def kwonly_required(a, b, c, *, d): ...
    def kwonly_default(a, b, c, *, d=1): ...

    @functools.wraps(too_few)
    def wrapped(*args, **kwargs): ...

    return [exact, defaults, varargs, too_few, too_many, kwonly_required, kwonly_default, wrapped,
            functools.partial(too_many, 0), lambda *a: None, print]


@pytest.mark.parametrize("fn", _kernels(), ids=lambda f: getattr(f, "__name__", type(f).__name__))
@pytest.mark.parametrize("with_keyset", [False, True])
def test_the_kernel_check_accepts_and_refuses_what_inspect_does(fn, with_keyset):
    n = len(SCHEMA.arguments) + with_keyset
    try:
        inspect.signature(fn).bind(*range(n))
        expected = None
    except TypeError as exc:
        expected = str(exc)
    except ValueError:  # no signature (a builtin): nothing is checked
        expected = None
    if expected is None:
        check_kernel_signature(SCHEMA, fn, with_keyset=with_keyset)
    else:
        with pytest.raises(TypeError, match="cannot be called with the schema's") as info:
            check_kernel_signature(SCHEMA, fn, with_keyset=with_keyset)
        assert expected in str(info.value)


# -- plugins loaded on first use -----------------------------------------------------------------------------
def _run(code: str, **env: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_STATE = ("import json, sys, torchplug\nfrom torchplug._plugins.manager import MANAGER\n"
          "def state():\n"
          "    return {'loaded': sorted(n for n, r in MANAGER.records.items() if r.status == 'loaded'),\n"
          "            'modules': sorted({m.split('.')[0] for m in sys.modules if m.startswith(('torchplug_', 'scipy'))})}\n")


def test_a_first_op_loads_the_backends_and_no_core_layer_plugin():
    out = _run(_STATE + "(torchplug.ones(4) + 1).sum()\nprint(json.dumps(state()))")
    assert {"cpu", "meta"} <= set(out["loaded"])
    for plugin in ("autograd", "nn", "amp", "func", "distributed", "distributions", "profiler"):
        assert plugin not in out["loaded"] and f"torchplug_{plugin}" not in out["modules"]
    assert "scipy" not in out["modules"]


def test_import_and_a_first_op_leave_the_standard_library_modules_they_do_not_need():
    # Each costs milliseconds to import: multiprocessing (only shared-memory tensors that are sent need it),
    # numpy.random (seeding runs its own loop until NumPy's generator is loaded anyway), socket, tempfile
    # (importlib.abc pulls it in through importlib.resources).
    heavy = ["multiprocessing", "numpy.random", "socket", "tempfile", "difflib", "importlib.abc"]
    out = _run("import json, sys, torchplug\ntorchplug.manual_seed(3)\n(torchplug.ones(2) + 1).sum()\n"
               f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))")
    assert out == []


def test_the_profiler_plugin_loads_when_a_profile_starts():
    pytest.importorskip("torchplug_profiler")
    out = _run(_STATE + "before = state()['loaded']\n"
               "with torchplug.autograd.profiler.profile() as prof:\n    torchplug.ones(3) + 1\n"
               "names = [e.key for e in prof.key_averages()]\n"
               "print(json.dumps({'before': before, 'after': state()['loaded'], 'names': names}))")
    assert "profiler" not in out["before"] and "profiler" in out["after"]
    assert "aten::add" in out["names"]


def test_each_trigger_loads_its_plugin_and_the_doctor_sees_all():
    code = _STATE + (
        "steps = {}\n"
        "x = torchplug.ones(3, requires_grad=True)\n(x * 2).sum().backward()\nassert x.grad.tolist() == [2.0] * 3\n"
        "steps['requires_grad'] = state()['loaded']\n"
        "y = torchplug.nn.Linear(4, 2)(torchplug.ones(1, 4))\nassert y.requires_grad\n"
        "steps['nn'] = state()['loaded']\n"
        "with torchplug.autocast('cpu'):\n    pass\n"
        "steps['autocast'] = state()['loaded']\n"
        "torchplug.plugins.report()\nsteps['report'] = state()['loaded']\n"
        "print(json.dumps(steps))"
    )
    steps = _run(code)
    core_layer = {"autograd", "nn", "amp", "func", "distributed", "distributions"}
    assert set(steps["requires_grad"]) & core_layer == {"autograd"}
    assert set(steps["nn"]) & core_layer == {"autograd", "nn"}
    assert "amp" in steps["autocast"]  # (amp asks for every plugin itself: all backends' policies)
    assert core_layer <= set(steps["report"])


def test_a_blocked_core_layer_plugin_is_reported_when_its_trigger_fires():
    code = _STATE + (
        "try:\n    torchplug.ones(2, requires_grad=True)\nexcept RuntimeError as e:\n    msg = str(e)\n"
        "print(json.dumps({'msg': msg, 'status': MANAGER.records['autograd'].status}))"
    )
    out = _run(code, TORCHPLUG_BLOCK_PLUGINS="autograd")
    assert out["status"] == "blocked"
    assert "needs the autograd plugin, which is blocked by TORCHPLUG_BLOCK_PLUGINS" in out["msg"]


# -- entry-point discovery without importlib.metadata ---------------------------------------------------------
def test_the_entry_point_reader_finds_what_importlib_metadata_finds(monkeypatch):
    import importlib.metadata
    from importlib.machinery import PathFinder

    from torchplug._plugins import discovery

    # the installed distributions only (other tests put eggs and finders of their own on the path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p.endswith("site-packages")])
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not hasattr(f, "find_distributions")] + [PathFinder])
    points = importlib.metadata.entry_points()
    groups = tuple(sorted(points.groups))
    read = discovery.read_entry_points(groups)
    assert read is not None  # site-packages holds only .dist-info directories
    expected = [(g, ep.name, ep.value, ep.dist.metadata["Name"], ep.dist.version) for g in groups
                for ep in points.select(group=g)]
    assert [r for g in groups for r in read if r[0] == g] == expected


def test_the_entry_point_reader_defers_to_importlib_metadata_for_eggs_and_zips(tmp_path, monkeypatch):
    from torchplug._plugins import discovery, manager

    (tmp_path / "old-1.0.egg-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert discovery.read_entry_points(manager.ENTRY_POINT_GROUPS) is None
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert discovery.read_entry_points(manager.ENTRY_POINT_GROUPS) is None
    records = manager.MANAGER.discover()  # the fallback still reads (nothing here)
    assert records == []


def test_import_and_a_first_op_do_not_import_importlib_metadata():
    out = _run("import json, sys, torchplug\n(torchplug.ones(2) + 1).sum()\n"
               "print(json.dumps(['importlib.metadata' in sys.modules, torchplug.__version__ == torchplug.version.__version__]))")
    assert out == [False, True]


def test_other_backends_register_their_kernels_when_their_device_is_first_used():
    code = (
        "import json, torchplug\nfrom torchplug._dispatch.dispatcher import DISPATCHER\n"
        "from torchplug._plugins.manager import MANAGER\n"
        "def meta_kernels():\n    return 'Meta' in DISPATCHER.entry('aten::add.Tensor').kernels\n"
        "(torchplug.ones(2) + 1).sum()\nsteps = [sorted(MANAGER._pending_kernels), meta_kernels()]\n"
        "m = torchplug.ones(2, 3, device='meta') + 1\nsteps += [sorted(MANAGER._pending_kernels), meta_kernels(), list(m.shape)]\n"
        "report = torchplug.ops.aten.add.Tensor.kernels()\n"
        "steps += [sorted(MANAGER._pending_kernels), 'CUDA' in report and 'MPS' in report]\n"
        "print(json.dumps(steps))"
    )
    assert _run(code) == [["cuda", "meta", "mps"], False, ["cuda", "mps"], True, [2, 3], [], True]


def test_nn_parameters_load_autograd_when_nn_comes_first():
    code = _STATE + (
        "import torchplug.nn as nn\nlayer = nn.Linear(3, 2)\n"
        "layer(torchplug.ones(1, 3)).sum().backward()\n"
        "print(json.dumps([layer.weight.requires_grad, layer.weight.grad.tolist(), MANAGER.records['autograd'].status]))"
    )
    assert _run(code) == [True, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], "loaded"]
