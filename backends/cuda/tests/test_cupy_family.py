"""The CuPy kernel family, where CuPy is importable (no GPU needed): every cpu kernel module
instantiates against the CuPy namespace, with the overrides in place.  Skips without CuPy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

cp = pytest.importorskip("cupy")

import torchplug as torch  # noqa: E402
import torchplug_cpu  # noqa: E402
from torchplug_cuda import _kernels, _overrides, _runtime  # noqa: E402
from torchplug_cuda._families import family  # noqa: E402


@pytest.fixture
def cupy_family(monkeypatch):
    monkeypatch.delenv(_runtime.EMULATE_VAR, raising=False)
    torch.ones(1)
    return family("cupy")


def test_every_cpu_kernel_module_instantiates_on_cupy(cupy_family):
    from torchplug_cpu.kernels import all_tables

    mods = cupy_family.all_kernel_modules()
    assert all(m.np.__name__ == "torchplug_cuda.xp" for m in mods)
    assert cupy_family.common().np.ndarray is cp.ndarray
    names = {n for m in mods for n, _f, k, _w in getattr(getattr(m, "TABLE", None), "kernels", ()) if k == "CPU"}
    assert names == {n for t in all_tables() for n, _f, k, _w in t.kernels if k == "CPU"}


def test_overrides_are_in_place(cupy_family):
    for short, spec in _overrides.OVERRIDES.items():
        mod = cupy_family.common() if short == "_common" else cupy_family.kernels(short)
        replaced = [n for n, v in vars(mod).items() if getattr(v, "__module__", "") == _overrides.__name__]
        assert replaced, short
    assert cupy_family.kernels("random").fresh is cupy_family.kernels("core").fresh


def test_numpy_names_the_kernels_use_exist_in_cupy():
    src = Path(torchplug_cpu.__file__).parent
    names: set[str] = set()
    for f in [*src.glob("kernels/*.py"), src / "_common.py"]:
        names |= set(re.findall(r"\bnp\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)", f.read_text()))
    missing = []
    for name in sorted(names):
        obj = cp
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(name)
                break
    # errstate/seterr are host floating-point warning controls: NumPy's apply (CuPy never warns).
    assert set(missing) <= {"errstate", "seterr"}, missing


def test_without_a_gpu_the_reason_comes_from_the_cuda_runtime(cupy_family):
    if _runtime.probe()[0] is not None:
        pytest.skip("a CUDA device is present")
    assert "no CUDA device was found: the CUDA runtime reports" in _runtime.unavailable_message()
    with pytest.raises(RuntimeError, match="no CUDA device was found"):
        _kernels.impls_for(_runtime.mode())
