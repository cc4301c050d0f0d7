"""The documentation runs: every python block of README.md and docs/*.md, and the custom-op tutorial's plugin.

Each document's ``python`` blocks are collected with Sybil and run in order in one namespace, in a
fresh interpreter per document (a doc that registers ops or a backend must not leak them into other
tests), with warnings as errors. A block that cannot run here carries another language tag (``sh``,
``toml``, ``cpp``, ``text``) or a ``<!-- skip: next "reason" -->`` directive; skips are few and each
has its reason. ``test_custom_ops_plugin_distribution`` builds the tutorial's example distribution
from the tutorial's own files and loads it through its entry point.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import traceback
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SKIP = re.compile(r"^[ \t]*<!--+\s*skip:\s*(\w+)(.*?)--+>", re.S | re.M)   # as Sybil reads them: at a line start


def _python_blocks(path: Path) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text(encoding="utf-8")) if lang == "python"]


def run_document(path: str) -> int:
    """Run the python blocks of one markdown file in order, in one namespace; return an exit status.

    Prints one line per block (ran, skipped and why) and the traceback of the first failing one.
    """
    from unittest import SkipTest

    from sybil import Document
    from sybil.example import NotEvaluated
    from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

    document = Document.parse(path, PythonCodeBlockParser(), SkipParser())
    # the blocks run as a user's script does: in __main__, so that pickling their classes works
    script = types.ModuleType("__main__")
    sys.modules["__main__"] = script
    document.namespace = script.__dict__
    for example in document.examples():
        where = f"{Path(path).name}, line {example.line}"
        try:
            example.evaluate()
        except (SkipTest, NotEvaluated) as skip:
            print(f"{where}: skipped: {skip}")
        except BaseException:
            print(f"{where}: FAILED")
            traceback.print_exc()
            return 1
        else:
            print(f"{where}: ok")
    return 0


@pytest.mark.parametrize("doc", [p for p in DOCS if _python_blocks(p)], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_python_blocks_run(doc, tmp_path):
    pytest.importorskip("sybil")
    env = dict(os.environ)
    # a doc block that builds a C++ extension gets a fresh cache, unless the caller chose one
    env.setdefault("TORCHPLUG_EXTENSIONS_DIR", str(tmp_path / "ext"))
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(Path(__file__).resolve()), str(doc)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )
    assert proc.returncode == 0, f"a code block of {doc.relative_to(ROOT)} failed:\n{proc.stdout}\n{proc.stderr}"


def test_runner_runs_blocks_in_order_and_reports_the_failing_one(tmp_path):
    pytest.importorskip("sybil")
    doc = tmp_path / "doc.md"
    doc.write_text(textwrap.dedent("""
        ```python
        x = 1
        ```

        <!-- skip: next "shows a file, not a step" -->
        ```python
        raise SystemExit("a skipped block must not run")
        ```

        ```sh
        exit 1
        ```

        ```python
        assert x == 2, "x is 1"
        ```
    """), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(doc)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 1
    assert "doc.md, line 2: ok" in proc.stdout
    assert "skipped: shows a file, not a step" in proc.stdout
    assert "doc.md, line 15: FAILED" in proc.stdout and "AssertionError: x is 1" in proc.stderr


def test_skips_are_few_and_give_a_reason():
    skips = [(p.name, action, reason.strip()) for p in DOCS
             for action, reason in SKIP.findall(p.read_text(encoding="utf-8"))]
    for name, action, reason in skips:
        assert action == "next", f"{name}: use `skip: next \"reason\"`, one block at a time (got skip: {action})"
        assert reason.startswith('"') and len(reason) > 12, f"{name}: a skip directive needs a quoted reason: {reason!r}"
    assert len(skips) <= 4, f"too many skipped doc blocks ({len(skips)}): make them run or tag them as text: {skips}"


if __name__ == "__main__":
    sys.exit(run_document(sys.argv[1]))


def _doc_files(path: Path) -> dict[str, str]:
    """The blocks of a doc that start with a ``# relative/path`` comment, by that path."""
    files = {}
    for _lang, body in FENCE.findall(path.read_text(encoding="utf-8")):
        first, _, rest = body.partition("\n")
        m = re.fullmatch(r"# ([\w./-]+\.(?:py|toml|cpp))", first.strip())
        if m:
            files[m.group(1)] = rest
    return files


def test_custom_ops_plugin_distribution(tmp_path):
    """docs/custom-ops.md section 7, as a user would do it: write the files, pip install, use the plugin."""
    files = _doc_files(ROOT / "docs" / "custom-ops.md")
    assert {"pyproject.toml", "mylib_ops/__init__.py"} <= set(files), sorted(files)
    project = tmp_path / "mylib-ops"
    for rel in ("pyproject.toml", "mylib_ops/__init__.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(files[rel], encoding="utf-8")
    site = tmp_path / "site"
    # offline and into a folder of its own: the test environment already has setuptools and torchplug
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--target", str(site), str(project)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    if install.returncode and "No module named pip" in install.stderr:
        pytest.skip("pip is not installed in this environment")
    assert install.returncode == 0, install.stdout + install.stderr
    assert (site / "mylib_ops" / "__init__.py").exists()

    use = textwrap.dedent("""
        import io, contextlib, numpy as np
        import torchplug as torch
        from torchplug.__main__ import main
        x = torch.randn(5)
        np.testing.assert_allclose(torch.ops.mylib.numpy_sin(x).numpy(), np.sin(x.numpy()))
        assert torch.ops.mylib.numpy_sin(torch.empty(7, device="meta")).shape == (7,)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main([])
        assert "mylib" in out.getvalue() and "mylib-ops" in out.getvalue(), out.getvalue()
        print("plugin ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    env.pop("TORCHPLUG_BLOCK_PLUGINS", None)
    env.pop("TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD", None)
    proc = subprocess.run([sys.executable, "-W", "error", "-c", use], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 0 and "plugin ok" in proc.stdout, proc.stdout + proc.stderr

    blocked = textwrap.dedent("""
        import sys
        import torchplug as torch
        assert list(torch.ops.mylib) == [], list(torch.ops.mylib)
        assert "mylib_ops" not in sys.modules
        print("blocked ok")
    """)
    proc = subprocess.run([sys.executable, "-W", "error", "-c", blocked], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(env, TORCHPLUG_BLOCK_PLUGINS="mylib"), timeout=300)
    assert proc.returncode == 0 and "blocked ok" in proc.stdout, proc.stdout + proc.stderr


# ---- the docs speak about this repository as it is: no dead paths, no build diary ----

TOP = ("core", "backends", "benchmarks", "docs", "plugins", "scripts", "tests", ".ci")
REPO_PATH = re.compile(r"(?<![\w./~-])((?:%s)/[\w./<>*-]*)" % "|".join(re.escape(t) for t in TOP))
PROSE_PATH = re.compile(r"`([\w.-]+(?:/[\w.<>*-]+)+\.(?:py|md|c|cpp|toml|ini|json|txt))`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# what a user could not follow: folders outside the checkout, absolute paths of a build machine
OUTSIDE = re.compile(r"(?<![\w.])\.\./[\w.-]|(?<![\w.])/work/|(?<![\w/])shared/(?:bench|research|seeds)\b")
DIARY = [re.compile(p, re.I) for p in (
    r"\b20\d\d-[01]\d-[0-3]\d\b",                      # a dated entry
    r"\bissues?\s*#?\d+\b",                            # "issue 6", "Targets of issue 6"
    r"\b(this|that|the same|last) (hour|session|morning|afternoon|evening)\b",
    r"\bsession\b",
    r"\bthe host was\b|\bwas (noisy|loud) (during|that)\b",
    r"at the time of writing",
    r"\bmeasured while\b",
    r"\bissue report\b",
    r"\bthis (VM|host)\b",
)]
DIST_ROOTS = [ROOT, ROOT / "core", *sorted(p for p in (ROOT / "backends").iterdir() if p.is_dir()),
              *sorted(p for p in (ROOT / "plugins").iterdir() if p.is_dir()),
              *sorted(p for p in (ROOT / "plugins" / "examples").iterdir() if p.is_dir())]


def _prose(text: str) -> str:
    return FENCE.sub("", text)


def _exists(path: str, roots) -> bool:
    path = re.sub(r"<[^>]*>", "*", path.rstrip(".,:;)"))
    return any(list(root.glob(path)) if "*" in path else (root / path).exists() for root in roots)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_paths_exist(doc):
    text = doc.read_text(encoding="utf-8")
    dead = [p for p in REPO_PATH.findall(text) if not _exists(p, [ROOT])]
    dead += [p for p in PROSE_PATH.findall(_prose(text)) if not _exists(p, DIST_ROOTS)]
    dead += [t for t in LINK.findall(_prose(text))
             if not t.startswith(("http://", "https://", "#", "mailto:")) and not _exists(t.split("#")[0], [doc.parent])]
    assert not dead, f"{doc.relative_to(ROOT)} names paths that do not exist in the repository: {dead}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_has_no_build_diary(doc):
    found = []
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        found += [f"line {n}: {line.strip()[:120]}" for pat in [OUTSIDE, *DIARY] if pat.search(line)]
    assert not found, f"{doc.relative_to(ROOT)} has build-diary lines or paths outside the repository:\n" + "\n".join(found)


def test_conformance_doc_counts_are_current():
    from torchplug.testing import cases, op_db

    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    m = re.search(r"holds \*\*([\d,]+) ops\*\* and \*\*([\d,]+) sample cases\*\*", text)
    assert m, "docs/conformance.md no longer states the OpInfo table's size"
    documented = tuple(int(g.replace(",", "")) for g in m.groups())
    actual = (len(op_db()), len(cases()))
    assert documented == actual, (
        f"docs/conformance.md says {documented[0]} ops and {documented[1]} sample cases; the table has "
        f"{actual[0]} and {actual[1]}: update the figures there"
    )
