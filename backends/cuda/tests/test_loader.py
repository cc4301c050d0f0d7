"""The kernel-family loader: the cpu kernels' own code, re-executed against another namespace."""

from __future__ import annotations

import types

import numpy as np
import pytest

import torchplug_cpu._common as cpu_common
import torchplug_cpu.kernels.core as cpu_core
import torchplug_cpu.kernels.pointwise as cpu_pointwise
from torchplug_cuda._loader import KernelFamily


def test_family_runs_the_cpu_code_objects_not_a_copy():
    fam = KernelFamily("test-np", {})
    core = fam.kernels("core")
    assert core is not cpu_core
    # The same compiled code (the loader reads the cpu module's code object; equal, not copied source).
    assert core.fresh.__code__ == cpu_core.fresh.__code__
    assert core.fresh.__code__.co_filename == cpu_core.__file__
    assert core.fresh.__globals__ is core.__dict__  # ...bound to the family's globals
    assert core.C is fam.common() and core.C is not cpu_common
    pointwise = fam.kernels("pointwise")
    shared = [n for n, f in vars(cpu_pointwise).items() if isinstance(f, types.FunctionType) and f.__module__ == cpu_pointwise.__name__]
    assert shared and all(getattr(pointwise, n).__code__ == getattr(cpu_pointwise, n).__code__ for n in shared)


def test_numpy_is_answered_from_the_namespace_mapping():
    fake = types.ModuleType("fake_numpy")
    fake.__dict__.update({k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    fake.marker = "xp"
    fam = KernelFamily("test-fake", {"numpy": fake})
    assert fam.common().np is fake
    assert fam.kernels("core").np is fake
    assert cpu_common.np is np  # the cpu modules are untouched


def test_relative_imports_stay_inside_the_family():
    fam = KernelFamily("test-rel", {})
    shape = fam.kernels("shape")  # imports .core, .index and .._common
    assert shape.fresh is fam.kernels("core").fresh
    assert shape.C is fam.common()
    assert "<test-rel>" in shape.__name__


def test_overrides_apply_before_siblings_import_them():
    sentinel = object()
    fam = KernelFamily("test-ovr", {}, overrides={"core": {"fresh": sentinel}})
    assert fam.kernels("core").fresh is sentinel
    assert fam.kernels("random").fresh is sentinel  # ``from .core import fresh`` saw the override


def test_stale_override_fails_loudly():
    fam = KernelFamily("test-stale", {}, overrides={"core": {"no_such_function": 1}})
    with pytest.raises(AttributeError, match="override core.no_such_function names nothing"):
        fam.kernels("core")
    assert "core" not in fam.modules  # nothing half-instantiated is kept


def test_every_cpu_kernel_module_instantiates_with_its_table():
    fam = KernelFamily("test-all", {})
    mods = fam.all_kernel_modules()
    from torchplug_cpu.kernels import all_tables

    cpu_names = sorted(n for t in all_tables() for n, _f, k, _w in t.kernels if k == "CPU")
    fam_names = sorted(n for m in mods for n, _f, k, _w in getattr(getattr(m, "TABLE", None), "kernels", ()) if k == "CPU")
    assert fam_names == cpu_names


def test_common_hook_binds_state():
    seen = []
    fam = KernelFamily("test-hook", {}, common_hook=seen.append)
    common = fam.common()
    assert seen == [common]


def test_absolute_from_imports_of_cpu_modules_stay_inside_the_family():
    fam = KernelFamily("test-abs", {})
    scope = {"__builtins__": fam._builtins, "__name__": "probe"}
    exec("from torchplug_cpu._common import wrap\nfrom torchplug_cpu.kernels.core import fresh", scope)  # noqa: S102
    assert scope["wrap"] is fam.common().wrap and scope["fresh"] is fam.kernels("core").fresh
