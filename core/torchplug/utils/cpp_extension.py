"""``torchplug.utils.cpp_extension``: C++ kernels through pybind11, built with the system compiler.

- :func:`load_inline` / :func:`load` compile sources into a cached build folder (one folder per
  content hash, so a build is reused until a source, flag or toolchain changes) and import it.
- :func:`CppExtension` / :class:`BuildExtension` do the same for a package's ``setup.py``.

Kernels exchange data zero-copy: pass ``tensor.numpy()`` (host tensors share memory with their
NumPy array) to a function taking ``py::array_t<T>``, and wrap a returned array with
``torchplug.from_numpy``.  Release the GIL around the compute loop (``py::gil_scoped_release``)
once the raw pointers are taken, so other Python threads run meanwhile.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["load_inline", "load", "CppExtension", "BuildExtension", "include_paths", "get_default_build_root",
           "get_compiler", "BuildError"]

_CXX_FLAGS = ["-O3", "-std=c++17", "-fPIC", "-fvisibility=hidden"]
_PRELUDE = (
    "#include <pybind11/pybind11.h>\n"
    "#include <pybind11/numpy.h>\n"
    "namespace py = pybind11;\n"
)


_LOADED_KEYS: dict[str, str] = {}  # extension name -> content key first imported in this process


class BuildError(RuntimeError):
    """The compiler failed; the message holds its command line and output."""


def include_paths() -> list[str]:
    """Header folders a torchplug extension compiles against: pybind11's and Python's."""
    try:
        import pybind11
    except ImportError:
        raise RuntimeError(
            "torchplug.utils.cpp_extension needs pybind11 to compile C++ kernels: pip install pybind11"
        ) from None
    paths = [pybind11.get_include(), sysconfig.get_paths()["include"]]
    platinclude = sysconfig.get_paths().get("platinclude")
    if platinclude and platinclude not in paths:
        paths.append(platinclude)
    return paths


def get_compiler() -> str:
    """The C++ compiler: ``$CXX`` if set, else the first of c++, g++, clang++ on PATH."""
    cxx = os.environ.get("CXX")
    if cxx:
        return cxx
    for candidate in ("c++", "g++", "clang++"):
        found = shutil.which(candidate)
        if found:
            return found
    raise RuntimeError(
        "No C++ compiler found: set $CXX or install one (e.g. apt-get install g++). "
        "torchplug.utils.cpp_extension compiles with the system compiler."
    )


def get_default_build_root() -> Path:
    """``$TORCHPLUG_EXTENSIONS_DIR``, else ``~/.cache/torchplug_extensions/py<ver>``."""
    env = os.environ.get("TORCHPLUG_EXTENSIONS_DIR")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "torchplug_extensions" / f"py{sys.version_info.major}{sys.version_info.minor}"


def _bindings(name: str, functions: Sequence[str] | Mapping[str, str]) -> str:
    items = functions.items() if isinstance(functions, Mapping) else ((f, "") for f in functions)
    lines = ["PYBIND11_MODULE(TORCHPLUG_EXTENSION_NAME, m) {"]
    for fn, doc in items:
        if not fn.isidentifier():
            raise ValueError(f"load_inline: function name {fn!r} is not a C++ identifier")
        lines.append(f'  m.def("{fn}", &{fn}, {_cpp_string(doc)});')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def load_inline(name: str, cpp_sources: str | Sequence[str], functions: Sequence[str] | Mapping[str, str] | None = None,
                extra_cflags: Sequence[str] | None = None, extra_ldflags: Sequence[str] | None = None,
                extra_include_paths: Sequence[str] | None = None, build_directory: str | os.PathLike[str] | None = None,
                verbose: bool = False) -> ModuleType:
    """Compile C++ source strings into a Python module and import it.

    The sources are joined and get the pybind11 headers (and ``namespace py = pybind11``)
    prepended; ``functions`` (names, or a name -> docstring dict) get bindings generated, or the
    sources may contain their own ``PYBIND11_MODULE(TORCHPLUG_EXTENSION_NAME, m)``.  The build
    is cached: calling again with the same sources and flags imports the existing build without
    compiling.  Changed sources build a new module, importable in the same process (its
    compiled name gets a suffix, as PyTorch's ``name_v1``; hence the macro).
    """
    if not name.isidentifier():
        raise ValueError(f"load_inline: name must be a valid Python identifier (it is the module name), got {name!r}")
    sources = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    text = _PRELUDE + "\n".join(sources) + "\n"
    if functions:
        text += _bindings(name, functions)
    return _build_and_import(name, {"main.cpp": text}, extra_cflags, extra_ldflags, extra_include_paths,
                             build_directory, verbose)


def load(name: str, sources: Sequence[str | os.PathLike[str]], extra_cflags: Sequence[str] | None = None,
         extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
         build_directory: str | os.PathLike[str] | None = None, verbose: bool = False) -> ModuleType:
    """Like :func:`load_inline`, for source files (which define
    ``PYBIND11_MODULE(TORCHPLUG_EXTENSION_NAME, m)``)."""
    files = {}
    for i, src in enumerate(sources):
        path = Path(src)
        files[f"{i}_{path.name}"] = path.read_text()
    return _build_and_import(name, files, extra_cflags, extra_ldflags, extra_include_paths, build_directory, verbose)


def _build_and_import(name: str, files: dict[str, str], extra_cflags: Sequence[str] | None,
                      extra_ldflags: Sequence[str] | None, extra_include_paths: Sequence[str] | None,
                      build_directory: str | os.PathLike[str] | None, verbose: bool) -> ModuleType:
    cxx = get_compiler()
    includes = list(extra_include_paths or ()) + include_paths()
    cflags = _CXX_FLAGS + list(extra_cflags or ())
    ldflags = list(extra_ldflags or ())
    # Everything that changes the binary goes into the key, so a build is reused only when
    # nothing it depends on changed.
    key = hashlib.sha256(repr((sorted(files.items()), cxx, includes, cflags, ldflags, sys.version,
                               _pybind11_version())).encode()).hexdigest()[:16]
    root = Path(build_directory) if build_directory is not None else get_default_build_root() / name
    folder = root / key
    # CPython keeps one extension module per name for the process, so a second build under
    # the same name (changed sources) gets its own compiled name.
    first = _LOADED_KEYS.setdefault(name, key)
    modname = name if first == key else f"{name}_{key[:8]}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = folder / f"{modname}{suffix}"
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _compile(modname, files, folder, target, cxx, includes, [*cflags, f"-DTORCHPLUG_EXTENSION_NAME={modname}"],
                 ldflags, verbose)
    elif verbose:
        print(f"torchplug.utils.cpp_extension: reusing {target}", file=sys.stderr)
    spec = importlib.util.spec_from_file_location(modname, target)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot load the extension built at {target}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.__torchplug_build_dir__ = str(folder)  # type: ignore[attr-defined]
    return module


def _pybind11_version() -> str:
    try:
        import pybind11

        return pybind11.__version__
    except ImportError:
        return ""


def _compile(name: str, files: dict[str, str], folder: Path, target: Path, cxx: str, includes: list[str],
             cflags: list[str], ldflags: list[str], verbose: bool) -> None:
    srcs = []
    for fname, text in files.items():
        path = folder / fname
        path.write_text(text)
        srcs.append(str(path))
    # Build under a unique name and rename: a concurrent build of the same sources (another
    # process) then never sees a half-written library.
    tmp = folder / f".{name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    import shlex  # only when compiling: the module itself stays cheap to import (compat resolution)

    cmd = [*shlex.split(cxx), *cflags, "-shared", *(f"-I{p}" for p in includes), *srcs, "-o", str(tmp), *ldflags]
    if sys.platform == "darwin":
        cmd += ["-undefined", "dynamic_lookup"]
    if verbose:
        print("torchplug.utils.cpp_extension:", shlex.join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(
            f"Error building extension {name!r}: the compiler exited with status {proc.returncode}.\n"
            f"Command: {shlex.join(cmd)}\n{proc.stdout}{proc.stderr}"
        )
    os.replace(tmp, target)


# -- setuptools ----------------------------------------------------------------------------------------
def CppExtension(name: str, sources: Sequence[str], *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - PyTorch's name
    """A ``setuptools.Extension`` for a pybind11 C++ module (pybind11 and Python headers added)."""
    from setuptools import Extension

    kwargs["include_dirs"] = list(kwargs.get("include_dirs", [])) + include_paths()
    kwargs.setdefault("language", "c++")
    return Extension(name, list(sources), *args, **kwargs)


_BUILD_EXTENSION: list[type] = []


def _make_build_extension() -> type:
    from setuptools.command.build_ext import build_ext

    class BuildExtension(build_ext):
        """``cmdclass={'build_ext': BuildExtension}``: setuptools' ``build_ext`` that adds C++17 and
        optimisation flags and accepts PyTorch's ``extra_compile_args={'cxx': [...]}`` form."""

        def build_extension(self, ext: Any) -> None:
            extra = ext.extra_compile_args
            if isinstance(extra, dict):
                extra = list(extra.get("cxx", []))
            flags = [f for f in _CXX_FLAGS if f != "-fPIC"]
            ext.extra_compile_args = flags + [f for f in (extra or []) if f not in flags]
            super().build_extension(ext)

    BuildExtension.__module__ = __name__
    return BuildExtension


def __getattr__(name: str) -> Any:
    # BuildExtension subclasses setuptools' command, so it is made on first use: importing
    # this module for load_inline does not import setuptools.
    if name == "BuildExtension":
        if not _BUILD_EXTENSION:
            _BUILD_EXTENSION.append(_make_build_extension())
        return _BUILD_EXTENSION[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
