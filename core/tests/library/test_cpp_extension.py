"""torchplug.utils.cpp_extension: JIT builds with a cache, zero-copy buffers, GIL release, setuptools."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import torchplug as torch
from torchplug.utils import cpp_extension

pytest.importorskip("pybind11", reason="pybind11 is needed to build C++ extensions")
try:
    cpp_extension.get_compiler()
    _HAS_CXX = True
except RuntimeError:
    _HAS_CXX = False
pytestmark = pytest.mark.skipif(not _HAS_CXX, reason="no C++ compiler on this machine ($CXX, c++, g++, clang++)")

SOURCE = r"""
// out = x + 1, allocated here; the loop runs without the GIL.
py::array_t<float> add_one(py::array_t<float, py::array::c_style> x) {
    py::array_t<float> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    const float* in = x.data(); float* o = out.mutable_data(); py::ssize_t n = x.size();
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
    return out;
}
// Scales x in place: the caller's memory, no copy.
void scale_(py::array_t<float, py::array::c_style> x, float s) {
    float* p = x.mutable_data(); py::ssize_t n = x.size();
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) p[i] *= s;
}
// Waits (without the GIL) until another thread sets flag[0]; true if it saw it in time.
bool wait_for_flag(py::array_t<int, py::array::c_style> flag) {
    volatile int* f = flag.mutable_data();
    py::gil_scoped_release release;
    for (long i = 0; i < 20000000L; ++i) { if (f[0]) return true; std::this_thread::yield(); }
    return false;
}
"""
HEADERS = "#include <thread>\n#include <vector>\n"


@pytest.fixture(scope="module")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("torchplug_ext")


@pytest.fixture(scope="module")
def ext(build_root):
    return cpp_extension.load_inline("tp_ext_test", [HEADERS, SOURCE], functions={"add_one": "x + 1",
                                     "scale_": "x *= s", "wait_for_flag": "spin until flag[0]"},
                                     build_directory=build_root / "tp_ext_test")


def test_load_inline_builds_and_runs(ext):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ext.add_one(a), a + 1)
    assert ext.add_one.__doc__.strip().endswith("x + 1")


def test_buffers_are_zero_copy(ext):
    t = torch.arange(4, dtype=torch.float32)
    ext.scale_(t.numpy(), 3.0)  # writes through to the tensor's memory
    assert t.tolist() == [0.0, 3.0, 6.0, 9.0]
    out = torch.from_numpy(ext.add_one(t.numpy()))
    assert out.tolist() == [1.0, 4.0, 7.0, 10.0]
    assert np.shares_memory(out.numpy(), out.numpy())
    arr = ext.add_one(t.numpy())
    assert np.shares_memory(torch.from_numpy(arr).numpy(), arr)  # the result is wrapped, not copied


def test_kernels_release_the_gil(ext):
    flag = np.zeros(1, dtype=np.int32)
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("seen", ext.wait_for_flag(flag)))
    worker.start()
    time.sleep(0.05)
    flag[0] = 1  # this Python line can only run while the C++ loop has released the GIL
    worker.join(timeout=30)
    assert result == {"seen": True}


def test_build_is_cached_until_sources_change(ext, build_root):
    folder = ext.__torchplug_build_dir__
    library = [f for f in os.listdir(folder) if f.startswith("tp_ext_test") and not f.endswith(".cpp")][0]
    mtime = os.path.getmtime(os.path.join(folder, library))
    start = time.perf_counter()
    again = cpp_extension.load_inline("tp_ext_test", [HEADERS, SOURCE], functions={"add_one": "x + 1",
                                      "scale_": "x *= s", "wait_for_flag": "spin until flag[0]"},
                                      build_directory=build_root / "tp_ext_test")
    assert time.perf_counter() - start < 2.0  # imported, not compiled
    assert again.__torchplug_build_dir__ == folder
    assert os.path.getmtime(os.path.join(folder, library)) == mtime
    changed = cpp_extension.load_inline("tp_ext_test", [HEADERS, SOURCE.replace("+ 1.0f", "+ 2.0f")],
                                        functions=["add_one", "scale_", "wait_for_flag"],
                                        build_directory=build_root / "tp_ext_test")
    assert changed.__torchplug_build_dir__ != folder
    assert changed.add_one(np.zeros(1, dtype=np.float32)).tolist() == [2.0]


def test_compile_error_is_reported(build_root):
    with pytest.raises(cpp_extension.BuildError, match="(?s)Error building extension 'tp_ext_bad'.*not_a_type"):
        cpp_extension.load_inline("tp_ext_bad", "not_a_type f();", functions=["f"], build_directory=build_root / "bad")
    with pytest.raises(ValueError, match="valid Python identifier"):
        cpp_extension.load_inline("bad-name", "", build_directory=build_root / "bad")


def test_missing_compiler_message(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(RuntimeError, match="No C\\+\\+ compiler found"):
        cpp_extension.get_compiler()


def test_load_from_files(tmp_path, build_root):
    src = tmp_path / "mod.cpp"
    src.write_text("#include <pybind11/pybind11.h>\nint triple(int x) { return 3 * x; }\n"
                   "PYBIND11_MODULE(TORCHPLUG_EXTENSION_NAME, m) { m.def(\"triple\", &triple); }\n")
    mod = cpp_extension.load("tp_ext_file", [src], build_directory=build_root / "file")
    assert mod.triple(5) == 15


def test_setuptools_cpp_extension_and_build_extension(tmp_path):
    (tmp_path / "tpext_pkg.cpp").write_text(
        "#include <pybind11/pybind11.h>\nint twice(int x) { return 2 * x; }\n"
        "PYBIND11_MODULE(tpext_pkg, m) { m.def(\"twice\", &twice); }\n")
    (tmp_path / "setup.py").write_text(textwrap.dedent("""
        from setuptools import setup
        from torchplug.utils.cpp_extension import BuildExtension, CppExtension
        setup(name="tpext-pkg", version="0.0.1",
              ext_modules=[CppExtension("tpext_pkg", ["tpext_pkg.cpp"], extra_compile_args={"cxx": ["-O1"]})],
              cmdclass={"build_ext": BuildExtension})
    """))
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    check = subprocess.run([sys.executable, "-c", "import tpext_pkg; print(tpext_pkg.twice(21))"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert check.stdout.strip() == "42", check.stderr
