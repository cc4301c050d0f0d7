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
    ours.eval()(tp.zeros(1, 1, 4, 4))  # materializes a lazy layer (torch cannot save an uninitialized one either)
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
    # os.system pickles as posix.system, whose module PyTorch refuses outright (as torch.load does here)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*GLOBAL posix.system whose module posix is blocked"):
        tp.load(path)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*GLOBAL posix.system whose module posix is blocked"):
        torch.load(path)
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


# ---- storage sharing and round trips ------------------------------------------------------------------
def _records(buf):
    buf.seek(0)
    with zipfile.ZipFile(buf) as zf:
        names = [n for n in zf.namelist() if "/data/" in n]
    buf.seek(0)
    return names


def test_views_loaded_from_torch_share_a_storage_and_are_saved_as_one_record():
    b = torch.arange(10, dtype=torch.float32)
    ours = tp.load(_bytes({"b": b, "v": b[2:8]}, torch.save))
    assert ours["v"].untyped_storage() is ours["b"].untyped_storage()
    assert ours["v"].storage_offset() == 2 and ours["v"]._base is None  # a leaf, like torch's rebuilt views
    ours["b"][3] = -1.0
    assert ours["v"][1].item() == -1.0
    again = _bytes(ours, tp.save)
    assert _records(again) == ["archive/data/0"]
    ref = torch.load(again)
    assert ref["v"].untyped_storage().data_ptr() == ref["b"].untyped_storage().data_ptr()
    assert ref["v"].storage_offset() == 2
    ref["b"][4] = 42.0
    assert ref["v"][2].item() == 42.0


def test_tied_weights_stay_tied_through_torch_and_back():
    emb = tp.arange(12, dtype=tp.float32).reshape(4, 3)
    obj = {"embedding": emb, "head": emb[:2], "head_t": emb.t(), "other": tp.ones(2)}
    buf = _bytes(obj, tp.save)
    assert len(_records(buf)) == 2
    ref = torch.load(buf)
    assert ref["head"].untyped_storage().data_ptr() == ref["embedding"].untyped_storage().data_ptr()
    assert ref["head_t"].stride() == (1, 3)
    back = tp.load(_bytes(ref, torch.save))
    assert back["head_t"].untyped_storage() is back["embedding"].untyped_storage()
    np.testing.assert_array_equal(to_np(back["head_t"]), to_np(emb.t()))
    back["embedding"][0, 0] = 7.0
    assert back["head"][0, 0].item() == 7.0 and back["head_t"][0, 0].item() == 7.0


def test_tied_parameters_in_a_module_state_dict():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    b.weight = a.weight
    sd = {"a": a.weight, "b": b.weight, "half": a.weight[1:]}
    out = tp.load(_bytes(tp.load(_bytes(sd, tp.save)), tp.save))
    assert out["a"] is out["b"] and isinstance(out["a"], nn.Parameter)
    assert out["half"].untyped_storage() is out["a"].untyped_storage()


def test_round_trip_torchplug_torch_torchplug_keeps_everything():
    p = nn.Parameter(tp.tensor([1.0, -2.0]))
    p.tag = "decoder"  # a Python attribute on a parameter is saved as its state, as torch does
    t = tp.tensor([[1, 2], [3, 4]], dtype=tp.int16)
    t.note = 3
    obj = {"p": p, "t": t, "frozen": nn.Parameter(tp.zeros(1), requires_grad=False),
           "g": tp.ones(2).requires_grad_(), "bf": tp.tensor([1.5, -2.0], dtype=tp.bfloat16),
           "c": tp.tensor([1 + 2j], dtype=tp.complex128), "meta": tp.empty(2, 3, device="meta"),
           "dtype": tp.float16, "device": tp.device("cpu"), "size": tp.Size([2, 3]), "layout": tp.strided,
           "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 - 1j}
    ref = torch.load(_bytes(obj, tp.save))
    assert isinstance(ref["p"], torch.nn.Parameter) and ref["p"].requires_grad and ref["p"].tag == "decoder"
    assert ref["t"].note == 3 and ref["t"].dtype == torch.int16
    assert not ref["frozen"].requires_grad and ref["g"].requires_grad and ref["g"].is_leaf
    assert ref["meta"].device.type == "meta" and ref["meta"].shape == (2, 3)
    assert ref["dtype"] is torch.float16 and ref["device"] == torch.device("cpu") and ref["size"] == torch.Size([2, 3])
    assert ref["layout"] is torch.strided and ref["bytes"] == b"\x00\xff" and ref["set"] == {1, 2}
    back = tp.load(_bytes(ref, torch.save))
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad and back["p"].tag == "decoder"
    assert back["t"].note == 3 and to_np(back["t"]).tolist() == [[1, 2], [3, 4]]
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    assert back["g"].requires_grad and back["bf"].dtype == tp.bfloat16 and to_np(back["bf"]).tolist() == [1.5, -2.0]
    assert back["c"].item() == 1 + 2j and back["meta"].device.type == "meta"
    assert back["dtype"] is tp.float16 and back["device"] == tp.device("cpu") and back["size"] == (2, 3)
    assert back["layout"] is tp.strided and back["bytes"] == b"\x00\xff" and back["complex"] == 1 - 1j


def test_saved_files_only_name_allow_listed_globals():
    obj = {"p": nn.Parameter(tp.ones(2)), "sd": nn.Linear(2, 2).state_dict(), "d": tp.float64, "dev": tp.device("cpu")}
    buf = _bytes(obj, tp.save)
    from torchplug_nn import serialization

    assert serialization.get_unsafe_globals_in_checkpoint(buf) == []
    buf.seek(0)
    assert torch.serialization.get_unsafe_globals_in_checkpoint(buf) == []


def test_saving_views_of_one_storage_as_different_dtypes_is_refused_like_torch():
    a = tp.ones(4)
    with pytest.raises(RuntimeError, match="Cannot save multiple tensors or storages that view the same data as different types"):
        tp.save([a, a.view(tp.int32)], io.BytesIO())
    ta = torch.ones(4)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        torch.save([ta, ta.view(torch.int32)], io.BytesIO())


def test_strided_numpy_backed_storage_is_saved_faithfully():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = tp.from_numpy(base[:, 1::2])  # the storage's root array is itself a strided view
    obj = {"t": t, "row": t[2]}
    ref = torch.load(_bytes(obj, tp.save))
    np.testing.assert_array_equal(ref["t"].numpy(), base[:, 1::2])
    np.testing.assert_array_equal(ref["row"].numpy(), base[2, 1::2])
    assert ref["row"].untyped_storage().data_ptr() == ref["t"].untyped_storage().data_ptr()


def test_map_location_callable_is_called_once_per_storage():
    tb = torch.arange(6, dtype=torch.float32)
    seen = []
    out = tp.load(_bytes({"a": tb, "b": tb[1:], "c": torch.ones(2)}, torch.save),
                  map_location=lambda storage, loc: seen.append((loc, storage.numel())))
    assert sorted(seen) == [("cpu", 2), ("cpu", 6)]
    assert out["b"].untyped_storage() is out["a"].untyped_storage()
    moved = tp.load(_bytes({"a": tb}, torch.save), map_location=lambda storage, loc: storage.to("meta"))
    assert moved["a"].device.type == "meta"


def test_map_location_meta_keeps_sharing_and_reads_nothing():
    tb = torch.arange(6, dtype=torch.float32)
    out = tp.load(_bytes({"a": tb, "b": tb[2:]}, torch.save), map_location="meta")
    assert out["a"].device.type == "meta" and out["b"].untyped_storage() is out["a"].untyped_storage()
    assert out["b"].shape == (4,) and out["b"].storage_offset() == 2


def test_big_endian_checkpoint_is_byteswapped():
    from ckpt_craft import archive, pickle_of, storage, tensor

    values = np.array([1.5, -2.25, 3.0], dtype=">f8")
    cvals = np.array([1 + 2j], dtype=">c8")
    pkl = pickle_of(b"(" + tensor(storage("DoubleStorage", "0", 3), 0, [3], [1])
                    + tensor(storage("ComplexFloatStorage", "1", 1), 0, [1], [1]) + b"t")
    make = lambda: archive(pkl, {"0": values.tobytes(), "1": cvals.tobytes()}, byteorder="big")  # noqa: E731
    ours, ref = tp.load(make()), torch.load(make())
    assert to_np(ours[0]).tolist() == ref[0].tolist() == [1.5, -2.25, 3.0]
    assert ours[1].item() == ref[1].item() == 1 + 2j


def test_byteorder_record_can_be_left_out():
    buf = io.BytesIO()
    tp.save({"w": tp.ones(2)}, buf, _disable_byteorder_record=True)
    assert not any(n.endswith("byteorder") for n in zipfile.ZipFile(buf).namelist())
    buf.seek(0)
    assert torch.load(buf)["w"].tolist() == [1.0, 1.0]
