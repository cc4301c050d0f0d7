"""torch.from_file: memory-mapped cpu tensors (private copy-on-write or shared), compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _file(tmp_path, name="data.bin", values=np.arange(10, dtype=np.float32)):
    path = tmp_path / name
    values.tofile(path)
    return str(path)


@pytest.mark.parametrize("kw", [{"size": 10}, {}, {"size": 5, "dtype": "float64"}, {"size": 3, "dtype": "int32"}])
def test_values_match_torch(tmp_path, kw):
    path = _file(tmp_path)
    ours = tp.from_file(path, **{k: getattr(tp, v) if k == "dtype" else v for k, v in kw.items()})
    theirs = torch.from_file(path, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()})
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.tolist() == theirs.tolist()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] and ours.device.type == "cpu"


def test_private_mapping_leaves_the_file_and_shared_writes_through(tmp_path):
    path = _file(tmp_path)
    private = tp.from_file(path, shared=False, size=10)
    private.fill_(1.0)
    assert np.fromfile(path, dtype=np.float32)[:3].tolist() == [0.0, 1.0, 2.0]
    shared = tp.from_file(path, shared=True, size=10)
    shared[0] = 42.0
    del shared
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0


def test_shared_mapping_creates_the_file(tmp_path):
    path = str(tmp_path / "new.bin")
    t = tp.from_file(path, shared=True, size=4, dtype=tp.int32)
    t.fill_(7)
    del t
    assert np.fromfile(path, dtype=np.int32).tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize("call", [
    lambda m, p: m.from_file(p, size=20),
    lambda m, p: m.from_file(p + ".missing", size=5),
    lambda m, p: m.from_file(p, size=-1),
    lambda m, p: m.from_file(123, size=2),
], ids=["too_small", "missing", "negative", "not_a_name"])
def test_errors_match_torch(tmp_path, call):
    path = _file(tmp_path)
    with pytest.raises(Exception) as theirs:
        call(torch, path)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp, path)
    assert str(ours.value).split(":")[0] == str(theirs.value).split(":")[0]
