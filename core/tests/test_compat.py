"""``python -m torchplug --compat``: the reference of PyTorch's names, the coverage, docs/compat.md and
the "not supported yet" AttributeError."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import torchplug
from torchplug.__main__ import compat_report, main
from torchplug._doctor.compat_coverage import coverage, resolve_module, select_modules, supports
from torchplug._compat.missing import Unsupported
from torchplug._compat.reference import MODULES, names, reference, torch_version
from torchplug._doctor.compat_report import DOC_COMMAND, parse_markdown_supported

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "compat.md"
# what docs/compat.md describes: every backend and plugin of this repository installed and loaded
FULL_INSTALL_BACKENDS = {"cpu", "cuda", "meta", "mps"}
FULL_INSTALL_PLUGINS = {"nn", "autograd", "amp"}


def _full_install() -> bool:
    from torchplug._runtime.backends import registered_backends
    from torchplug._plugins.manager import MANAGER

    MANAGER.ensure_loaded()
    loaded = {name for name, r in MANAGER.records.items() if r.status == "loaded"}
    return FULL_INSTALL_BACKENDS <= set(registered_backends()) and FULL_INSTALL_PLUGINS <= loaded


needs_full_install = pytest.mark.skipif(
    not _full_install(), reason="docs/compat.md describes the installation with every backend and plugin of the repository"
)


def _missing_now(torch_module: str) -> str:
    """A name PyTorch has that torchplug lacks today (others add names: never hard-code one)."""
    (row,) = coverage([torch_module])
    public = [n for n in row.missing if not n.startswith("_")]
    if not public:
        pytest.skip(f"torchplug now provides every name of {torch_module}")
    return public[0]


# ---- the reference ------------------------------------------------------------------------------


def test_reference_records_version_and_every_module() -> None:
    data = reference()
    assert data["torch_version"].startswith("2.13")
    assert list(data["modules"]) == list(MODULES)
    assert "add" in names("torch") and "Linear" in names("torch.nn") and "relu" in names("torch.nn.functional")
    assert names("torch.Tensor")["add_"] == "method" and names("torch.Tensor")["shape"] == "property"
    for module, entries in data["modules"].items():
        assert entries, module
        assert not [n for n in entries if n.startswith("__")], module
    # what a module merely imports is not its API
    for noise in ("os", "sys", "math", "Optional", "TYPE_CHECKING"):
        assert noise not in names("torch") and noise not in names("torch.nn.functional"), noise
    assert "Tensor" not in names("torch.nn.functional") and "np" not in names("torch.nn.functional")


def test_reference_file_is_package_data() -> None:
    """An installed wheel has the reference: pyproject declares it as package data."""
    text = (ROOT / "pyproject.toml").read_text()
    assert '"_compat/*.json"' in text
    assert Path(importlib.util.find_spec("torchplug._compat").origin).with_name("pytorch_names.json").is_file()


def test_reference_is_what_the_installed_torch_gives() -> None:
    torch = pytest.importorskip("torch")
    if torch.__version__ != torch_version():
        pytest.skip(f"the reference is from torch {torch_version()}; torch {torch.__version__} is installed")
    # A fresh interpreter: what this test process has imported from torch (submodules other tests pulled in)
    # would change the names dir() reports.
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_compat_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        "core/torchplug/_compat/pytorch_names.json is not what the installed torch gives: regenerate it with "
        f"python scripts/generate_compat_reference.py\n{done.stdout}{done.stderr}")


# ---- coverage and the CLI -----------------------------------------------------------------------


def test_coverage_counts_names_that_resolve() -> None:
    rows = {r.torch_module: r for r in coverage()}
    assert list(rows) == list(MODULES)
    for module, row in rows.items():
        assert sorted(row.supported + row.missing) == sorted(names(module))
        assert row.total == len(names(module)) and 0.0 <= row.percent <= 100.0
    assert "add" in rows["torch"].supported and "Linear" in rows["torch.nn"].supported
    assert "relu" in rows["torch.nn.functional"].supported and "add_" in rows["torch.Tensor"].supported
    for row in rows.values():  # a module torchplug lacks: every name missing, and the row says why
        if row.problem is not None:
            assert row.problem == f"torchplug{row.torch_module[len('torch'):]} does not exist yet"
            assert not row.supported
    for module in ("torch.fft", "torch.special"):  # whole namespaces torchplug provides
        assert rows[module].problem is None and not rows[module].missing
    # a Tensor placeholder counts as missing although the class has the attribute
    name = _missing_now("torch.Tensor")
    assert isinstance(inspect.getattr_static(torchplug.Tensor, name), Unsupported)
    assert name in rows["torch.Tensor"].missing


def test_cli_prints_coverage_and_missing_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--compat"]) == 0
    out = capsys.readouterr().out
    assert f"PyTorch {torch_version()} public names that torchplug provides" in out
    for module in MODULES:
        assert f"\n  {module} " in out, module
    assert "Missing from torchplug.nn.functional (" in out


def test_cli_module_filter_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--compat", "--module", "torch.nn", "--module", "torchplug.linalg", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["torch_module"] for m in data["modules"]] == ["torch.nn", "torch.linalg"]
    nn = data["modules"][0]
    assert nn["torchplug_module"] == "torchplug.nn" and nn["total"] == len(names("torch.nn"))
    assert nn["supported"] == len(nn["supported_names"]) and "Linear" in nn["supported_names"]
    assert data["supported"] == sum(m["supported"] for m in data["modules"])
    assert select_modules(["nn.utils.*"]) == ["torch.nn.utils", "torch.nn.utils.rnn"]


def test_cli_unknown_module_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--compat", "--module", "torch.nope"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'torch.nope' is not a module the compatibility reference covers" in err and "torch.nn.functional" in err
    with pytest.raises(SystemExit):
        main(["--json"])  # without --compat
    assert "go with --compat" in capsys.readouterr().err


def test_cli_runs_without_torch() -> None:
    """The reference is committed data: the report needs no torch (blocked here as if not installed)."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from torchplug.__main__ import main\n"
        "main(['--compat', '--module', 'torch.nn.functional', '--json'])\n"
        "assert sys.modules['torch'] is None\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["modules"][0]["torch_module"] == "torch.nn.functional" and data["modules"][0]["supported"] > 0
    done = subprocess.run([sys.executable, "-c", "import sys; sys.modules['torch'] = None\nimport runpy\n"
                           "sys.argv = ['torchplug', '--compat']\nrunpy.run_module('torchplug', run_name='__main__')"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "  torch.Tensor " in done.stdout and "Missing from torchplug" in done.stdout


def test_resolution_imports_no_other_package() -> None:
    """Checking coverage resolves torchplug's names without importing a third-party package (the standard
    library modules the public modules use, e.g. multiprocessing's, are fine)."""
    code = (
        # every plugin loaded first (the core-layer ones load on first use): what is new after is the resolution's
        "import sys, torchplug, torchplug.plugins\ntorchplug.plugins.report()\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "from torchplug._doctor.compat_coverage import coverage\ncoverage()\n"
        "new = {m.split('.')[0] for m in sys.modules} - before\n"
        "print('NEW:', sorted(m for m in new if m not in sys.stdlib_module_names))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "NEW: []", done.stdout


# ---- docs/compat.md -----------------------------------------------------------------------------


def test_doc_supported_names_still_resolve() -> None:
    """A name docs/compat.md promises must not disappear."""
    listed = parse_markdown_supported(DOC.read_text(encoding="utf-8"))
    assert set(listed) == set(MODULES)
    if not _full_install():  # the page describes every backend; here only the core-side modules hold
        listed = {m: ns for m, ns in listed.items() if m not in ("torch.cuda", "torch.mps", "torch.cpu")}
    gone = [f"{module}.{n}" for module, supported in listed.items() for n in supported if not supports(module, n)]
    assert not gone, (f"docs/compat.md lists these as supported but torchplug no longer has them: {gone}. Restore them, "
                      f"or (if removing them is intended) regenerate the page with {DOC_COMMAND}")


@needs_full_install
def test_doc_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == compat_report(None, "markdown"), (
        f"docs/compat.md is out of date with the code (names were added or removed): regenerate it with {DOC_COMMAND}")


# ---- the not-supported-yet AttributeError -------------------------------------------------------


@pytest.mark.parametrize("torch_module", [
    "torch", "torch.nn", "torch.nn.functional", "torch.Tensor", "torch.optim", "torch.linalg", "torch.autograd",
    "torch.utils", "torch.utils.data", "torch.backends", "torch.library", "torch.cuda", "torch.mps",
])
def test_missing_name_says_not_supported_yet(torch_module: str) -> None:
    name = _missing_now(torch_module)
    owner = resolve_module(torch_module)
    public = "torchplug" + torch_module[len("torch"):]
    with pytest.raises(AttributeError, match=rf"^{public}\.{name} is not supported yet: PyTorch 2\.13\.\d+ has "
                                             rf"{torch_module}\.{name}, torchplug does not provide it\. docs/compat\.md "
                                             rf".*`python -m torchplug --compat --module {torch_module}`"):
        getattr(owner, name)
    assert not hasattr(owner, name)


def test_missing_tensor_attribute_on_an_instance() -> None:
    name = _missing_now("torch.Tensor")
    t = torchplug.zeros(2)
    with pytest.raises(AttributeError, match=rf"^torchplug\.Tensor\.{name} is not supported yet"):
        getattr(t, name)
    assert not hasattr(t, name) and name not in dir(t)
    assert "add_" in dir(t) and "shape" in dir(t)


def test_torch_has_the_names_called_missing() -> None:
    torch = pytest.importorskip("torch")
    for module in ("torch", "torch.nn.functional", "torch.Tensor"):
        name = _missing_now(module)
        owner = torch.Tensor if module == "torch.Tensor" else importlib.import_module(module)
        assert hasattr(owner, name), f"{module}.{name}"


def test_names_torch_lacks_keep_python_message() -> None:
    torch = pytest.importorskip("torch")
    for owner, ref in ((torchplug, torch), (torchplug.nn.functional, torch.nn.functional)):
        with pytest.raises(AttributeError) as mine:
            owner.no_such_name  # noqa: B018
        with pytest.raises(AttributeError) as theirs:
            ref.no_such_name  # noqa: B018
        assert str(mine.value) == str(theirs.value).replace(ref.__name__, owner.__name__)
    assert not hasattr(torchplug, "missing") and not hasattr(torchplug.Tensor, "no_such_name")
    with pytest.raises(ImportError):
        from torchplug import no_such_name  # noqa: F401


def test_existing_module_getattr_is_kept() -> None:
    assert torchplug.cuda.FloatTensor is torchplug.cuda.FloatTensor  # device modules' legacy names
    assert torchplug.cuda.amp.autocast is not None
    assert callable(torchplug.library.custom_op)  # lazy names of torchplug.library
    assert torchplug.backends.cudnn.is_available() is False  # lazy submodules of torchplug.backends
    assert torchplug.utils.data.dataloader is not None  # the plugin's submodules through utils.data
    # a module's own explanation stays; only its plain "has no attribute" becomes "not supported yet"
    from types import ModuleType

    from torchplug._compat import missing

    module = ModuleType("torchplug_test_explained")

    def explained(name):
        if name == "explained":
            raise AttributeError("explained is not implemented: use something else")
        raise AttributeError(f"module 'torchplug_test_explained' has no attribute {name!r}")

    module.__getattr__ = explained
    missing.attach(module, "torch.autograd")
    with pytest.raises(AttributeError, match="explained is not implemented: use something else"):
        module.explained  # noqa: B018
    with pytest.raises(AttributeError, match="not supported yet"):
        module.Function  # noqa: B018  (a name torch.autograd has)


def test_blocked_plugin_message_is_kept() -> None:
    code = ("import torchplug\ntry:\n    torchplug.nn\nexcept AttributeError as exc:\n    print(exc)\n")
    env = dict(os.environ, TORCHPLUG_BLOCK_PLUGINS="nn")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "provided by the 'nn' plugin, which is blocked" in done.stdout, done.stdout + done.stderr


def test_tensor_hot_path_has_no_getattr() -> None:
    """Placeholders are class attributes: a Tensor ``__getattr__`` would slow every attribute load."""
    for cls in type.mro(torchplug.Tensor):
        assert "__getattr__" not in vars(cls), cls


def test_a_real_definition_replaces_the_placeholder() -> None:
    name = _missing_now("torch.Tensor")
    placeholder = vars(torchplug.Tensor)[name]
    assert hasattr(torchplug.Tensor, name) is False  # what _bindings' guards ask before defining a method
    try:
        setattr(torchplug.Tensor, name, lambda self: "defined")
        assert getattr(torchplug.zeros(1), name)() == "defined"
        (row,) = coverage(["torch.Tensor"])
        assert name in row.supported
    finally:
        setattr(torchplug.Tensor, name, placeholder)
    assert not hasattr(torchplug.zeros(1), name)


# ---- a name that exists must work ---------------------------------------------------------------

CALLABLE_KINDS = {"function", "class", "method"}


@pytest.mark.parametrize("torch_module", ["torch", "torch.nn.functional", "torch.Tensor", "torch.nn", "torch.linalg",
                                          "torch.optim", "torch.autograd", "torch.utils.data"])
def test_supported_names_resolve_and_callables_are_callable(torch_module: str) -> None:
    (row,) = coverage([torch_module])
    owner = resolve_module(torch_module)
    kinds = names(torch_module)
    not_callable = []
    for name in row.supported:
        value = getattr(owner, name)  # must not raise
        if kinds[name] in CALLABLE_KINDS and not callable(value):
            not_callable.append(name)
    assert not not_callable, f"{torch_module}: torch's are callable, torchplug's are not: {not_callable}"


def test_supported_tensor_properties_read() -> None:
    t = torchplug.ones(2, 3)
    kinds = names("torch.Tensor")
    (row,) = coverage(["torch.Tensor"])
    failed = {}
    for name in row.supported:
        if kinds[name] != "property":
            continue
        try:
            if name == "volatile":  # the removed flag: reading it warns, as in torch
                with pytest.warns(UserWarning, match="volatile was removed"):
                    getattr(t, name)
                continue
            getattr(t, name)
        except RuntimeError as exc:  # as in torch: .imag of a real tensor
            if name != "imag":
                failed[name] = repr(exc)
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            failed[name] = repr(exc)
    assert not failed, failed
