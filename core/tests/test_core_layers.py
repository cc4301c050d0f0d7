"""The core's layering, read from the source (function-level imports included).

import-linter (``.importlinter``, run by tox) checks that the layers import only downwards.  These tests
add what its layers contract cannot see: no layer imports the root package or a public top-level module
(which assemble the layers), and the modules inside each layer form no import cycle either.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "torchplug"
CONFIG = Path(__file__).resolve().parents[2] / ".importlinter"


def _layers() -> list[str]:
    """The layers of .importlinter's core-layers contract, lowest first."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    listed = parser["importlinter:contract:core-layers"]["layers"]
    return [line.strip() for line in listed.splitlines() if line.strip()][::-1]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if "tests" in path.parts:
            continue
        parts = ["torchplug", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()
LAYERS = _layers()
# The top layer looks at the assembled package from outside, as user code does (``python -m torchplug``'s
# reports): it may import the root and the public modules; nothing in the core imports it.
OUTSIDE_VIEW = {"_doctor"}


def _imports(name: str, path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in the file, wherever it is, resolved to a module of the package."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = (name if is_package else name.rsplit(".", 1)[0]).split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts) + (f".{node.module}" if node.module else "")
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.append((node.lineno, target))
    return out


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_the_contract_lists_every_private_subpackage_of_the_core():
    subpackages = {p.parent.name for p in PACKAGE.glob("_*/__init__.py")}
    assert subpackages == set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_itself_and_the_layers_below(layer):
    allowed = set(LAYERS[: LAYERS.index(layer) + 1]) | ({None} if layer in OUTSIDE_VIEW else set())
    wrong = []
    for name, path in MODULES.items():
        if _layer(name) != layer:
            continue
        for line, target in _imports(name, path):
            if _layer(target) not in allowed:  # None: the root package or a public top-level module
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {target}")
    assert wrong == []


@pytest.mark.parametrize("layer", LAYERS)
def test_no_import_cycle_inside_a_layer(layer):
    prefix = f"torchplug.{layer}."
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        if name.startswith(prefix):
            child = ".".join(name.split(".")[:3])  # the layer's direct submodule (or subpackage) it belongs to
            graph.setdefault(child, set()).update(
                ".".join(t.split(".")[:3]) for _, t in _imports(name, path) if t.startswith(prefix)
            )
    for node in graph:
        graph[node].discard(node)
    # a cycle exists iff a depth-first search meets a node still on its stack
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend(stack[stack.index(nxt):] + [node, nxt] if nxt in stack else [node, nxt])
                return True
            if nxt not in state and visit(nxt, [*stack, node]):
                return True
        state[node] = 2
        return False

    for node in sorted(graph):
        if node not in state and visit(node, []):
            break
    assert cycle == []
