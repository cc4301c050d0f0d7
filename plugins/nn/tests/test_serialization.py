"""save/load in PyTorch's zip format: our files load in torch, torch's load here, and untrusted pickles are refused."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
import torchplug.optim as optim

from nn_helpers import to_np

torch = pytest.importorskip("torch")


def _bytes(obj, saver):
    buf = io.BytesIO()
    saver(obj, buf)
    buf.seek(0)
    return buf


def test_save_then_torch_load_tensors_and_views():
    base = tp.arange(12, dtype=tp.float32).reshape(3, 4)
    obj = {"a": base, "row": base[1], "col": base[:, 2], "i": tp.tensor([1, 2], dtype=tp.int64),
           "h": tp.ones(2, dtype=tp.float16), "b": tp.tensor([True, False]), "n": 3, "s": "x", "t": (1.5, None)}
    loaded = torch.load(_bytes(obj, tp.save))  # weights_only=True on torch's side too
    np.testing.assert_array_equal(loaded["a"].numpy(), to_np(base))
    np.testing.assert_array_equal(loaded["col"].numpy(), to_np(base[:, 2]))
    assert loaded["i"].dtype == torch.int64 and loaded["h"].dtype == torch.float16 and loaded["b"].dtype == torch.bool
    assert loaded["n"] == 3 and loaded["s"] == "x" and loaded["t"] == (1.5, None)
    loaded["a"][1, 0] = 100.0  # views still share the one saved storage
    assert loaded["row"][0].item() == 100.0


def test_archive_layout_and_alignment():
    buf = _bytes({"w": tp.ones(5), "v": tp.zeros(3, dtype=tp.float64)}, tp.save)
    with zipfile.ZipFile(buf) as zf:
        names = zf.namelist()
        assert {"archive/data.pkl", "archive/byteorder", "archive/version", "archive/data/0", "archive/data/1"} <= set(names)
        for info in zf.infolist():
            if "/data/" in info.filename:
                data_start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert data_start % 64 == 0


def test_torch_save_then_load():
    ref = {"w": torch.randn(3, 4), "view": None, "i": torch.arange(5), "bf": torch.ones(2, dtype=torch.bfloat16),
           "size": torch.Size([2, 3]), "dtype": torch.float16, "p": torch.nn.Parameter(torch.ones(2))}
    ref["view"] = ref["w"][:, 1]
    out = tp.load(_bytes(ref, torch.save))
    np.testing.assert_array_equal(to_np(out["w"]), ref["w"].numpy())
    np.testing.assert_array_equal(to_np(out["view"]), ref["view"].numpy())
    assert out["i"].dtype == tp.int64 and out["bf"].dtype == tp.bfloat16 and tuple(out["size"]) == (2, 3)
    assert out["dtype"] == tp.float16 and isinstance(out["p"], nn.Parameter)


def test_state_dict_round_trips_both_ways(tmp_path):
    ours = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.LazyLinear(3)) if hasattr(nn, "LazyLinear") \
        else nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    path = tmp_path / "model.pt"
    tp.save(ours.state_dict(), path)
    ref = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(), torch.nn.Linear(8, 3))
    ref.load_state_dict(torch.load(path))
    np.testing.assert_array_equal(ref[0].weight.detach().numpy(), to_np(ours[0].weight))
    torch.save(ref.state_dict(), tmp_path / "ref.pth")
    again = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    assert repr(again.load_state_dict(tp.load(tmp_path / "ref.pth"))) == "<All keys matched successfully>"
    np.testing.assert_array_equal(to_np(again[3].bias), ref[3].bias.detach().numpy())


def test_optimizer_state_round_trips_both_ways():
    params = [nn.Parameter(tp.ones(3))]
    opt = optim.Adam(params, lr=0.01)
    params[0].grad = tp.tensor([0.1, -0.2, 0.3])
    opt.step()
    sd = torch.load(_bytes(opt.state_dict(), tp.save))
    rparams = [torch.nn.Parameter(torch.ones(3))]
    ropt = torch.optim.Adam(rparams, lr=0.5)
    ropt.load_state_dict(sd)
    assert ropt.param_groups[0]["lr"] == 0.01 and ropt.state[rparams[0]]["step"].item() == 1.0
    back = tp.load(_bytes(ropt.state_dict(), torch.save))
    opt2 = optim.Adam([nn.Parameter(tp.ones(3))], lr=0.9)
    opt2.load_state_dict(back)
    np.testing.assert_allclose(to_np(next(iter(opt2.state.values()))["exp_avg"]), [0.01, -0.02, 0.03], rtol=1e-5)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_malicious_pickle_is_refused(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"weights": torch.ones(1), "payload": Evil()}, path)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*Unsupported global"):
        tp.load(path)
    from torchplug_nn import serialization

    assert any("system" in g for g in serialization.get_unsafe_globals_in_checkpoint(path))


def test_weights_only_false_and_map_location():
    buf = _bytes({"w": tp.ones(2)}, tp.save)
    out = tp.load(buf, map_location="meta")
    assert out["w"].device.type == "meta"
    buf.seek(0)
    assert to_np(tp.load(buf, weights_only=False)["w"]).tolist() == [1.0, 1.0]
    buf.seek(0)
    seen = []
    tp.load(buf, map_location=lambda s, loc: seen.append(loc))
    assert seen == ["cpu"]
