"""Module semantics: registration, traversal, state_dict, modes, hooks, conversion, repr, containers."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn

from nn_helpers import to_np


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.l1 = nn.Linear(3, 2)
        self.register_buffer("steps", tp.zeros(1))
        self.register_buffer("scratch", tp.zeros(2), persistent=False)
        self.scale = nn.Parameter(tp.ones(1))

    def forward(self, x):
        return self.l1(self.act(self.l0(x))) * self.scale


def test_registration_and_traversal():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "l0.weight", "l0.bias", "l1.weight", "l1.bias"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["l0", "act", "l1"]
    assert [n for n, _ in net.named_modules()] == ["", "l0", "act", "l1"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert isinstance(net.l0.weight, nn.Parameter) and isinstance(net.l0.weight, tp.Tensor)
    assert net.l0.weight.requires_grad
    assert list(net.state_dict()) == ["scale", "steps", "l0.weight", "l0.bias", "l1.weight", "l1.bias"]
    assert net.get_submodule("l0") is net.l0 and net.get_parameter("l1.bias") is net.l1.bias
    del net.l1
    assert "l1" not in dict(net.named_children())


def test_shared_parameters_reported_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, a)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.named_modules(remove_duplicate=False))) == 3


def test_registration_errors():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tp.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()
    net = Net()
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'scale' \(torch.nn.Parameter or None expected\)"):
        net.scale = tp.ones(1)
    with pytest.raises(KeyError, match="contain"):
        net.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="already exists"):
        net.register_buffer("forward", None)
    net.scale = None
    assert "scale" not in dict(net.named_parameters())


def test_state_dict_roundtrip_and_strict():
    a, b = Net(), Net()
    sd = a.state_dict()
    assert all(not isinstance(v, nn.Parameter) for v in sd.values())
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(to_np(b.l0.weight), to_np(a.l0.weight))
    sd2 = OrderedDict(sd)
    del sd2["l0.bias"]
    sd2["extra.weight"] = tp.ones(1)
    with pytest.raises(RuntimeError) as info:
        b.load_state_dict(sd2)
    msg = str(info.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "l0.bias"' in msg and 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    res = b.load_state_dict(sd2, strict=False)
    assert res.missing_keys == ["l0.bias"] and res.unexpected_keys == ["extra.weight"]
    sd3 = dict(sd)
    sd3["l0.weight"] = tp.ones(5, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for l0.weight: copying a param with shape torch.Size\(\[5, 4\]\)"):
        b.load_state_dict(sd3)


def test_load_state_dict_assign_keeps_parameter():
    a = nn.Linear(2, 2)
    new = {"weight": tp.ones(2, 2), "bias": tp.zeros(2)}
    a.load_state_dict(new, assign=True)
    assert isinstance(a.weight, nn.Parameter) and to_np(a.weight).tolist() == [[1, 1], [1, 1]]


def test_train_eval_apply_zero_grad_requires_grad():
    net = Net()
    assert net.training and net.l0.training
    assert net.eval() is net and not net.l0.training
    net.train()
    assert net.l1.training
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    for p in net.parameters():
        p.grad = tp.ones_like(p)
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_dtype_device_and_to_empty():
    net = Net()
    w = net.l0.weight
    assert net.to(tp.float64) is net
    assert net.l0.weight is w and w.dtype == tp.float64 and net.steps.dtype == tp.float64
    net.double().float()
    assert net.l0.weight.dtype == tp.float32
    with pytest.raises(TypeError, match="floating point or complex"):
        net.to(tp.int64)
    meta = nn.Linear(3, 3, device="meta")
    meta.to_empty(device="cpu")
    assert meta.weight.device.type == "cpu" and meta.weight.shape == (3, 3)
    moved = nn.Linear(2, 2).to("meta")
    assert moved.weight.device.type == "meta" and isinstance(moved.weight, nn.Parameter)
    net.to(tp.empty(0, dtype=tp.float64))
    assert net.l1.bias.dtype == tp.float64


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre") or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append("post") or out + 1)
    h3 = lin.register_forward_hook(lambda m, args, kwargs, out: calls.append("kw"), with_kwargs=True, prepend=True)
    out = lin(tp.ones(1, 2))
    assert calls == ["pre", "kw", "post"]
    np.testing.assert_allclose(to_np(out), to_np(lin.bias.detach().reshape(1, 2) + 1), rtol=1e-6)
    for h in (h1, h2, h3):
        h.remove()
    calls.clear()
    lin(tp.ones(1, 2))
    assert calls == []


def test_always_call_hook_runs_on_error():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Boom()
    m.register_forward_hook(lambda mod, a, o: seen.append(o), always_call=True)
    with pytest.raises(ValueError):
        m(1)
    assert seen == [None]


def test_repr_matches_torch_format():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16, 10, bias=False), nn.Dropout(0.1), nn.LSTM(4, 8, 2, batch_first=True),
                         nn.LayerNorm(8), nn.Embedding(10, 3, padding_idx=0), nn.GELU(), nn.LeakyReLU(0.2),
                         nn.Softmax(dim=1), nn.CrossEntropyLoss())
    ref = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(inplace=True),
                              torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 10, bias=False),
                              torch.nn.Dropout(0.1), torch.nn.LSTM(4, 8, 2, batch_first=True), torch.nn.LayerNorm(8),
                              torch.nn.Embedding(10, 3, padding_idx=0), torch.nn.GELU(), torch.nn.LeakyReLU(0.2),
                              torch.nn.Softmax(dim=1), torch.nn.CrossEntropyLoss())
    assert repr(ours) == repr(ref)
    assert repr(nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])) == repr(torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)]))


def test_containers():
    seq = nn.Sequential(OrderedDict([("a", nn.Linear(2, 3)), ("b", nn.ReLU())]))
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.ReLU) and len(seq) == 2
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    seq.append(nn.Linear(3, 1))
    assert seq(tp.ones(4, 2)).shape == (4, 1)
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 1)).extend([nn.ReLU()])
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "Linear", "Linear", "ReLU"]
    assert len(list(ml.parameters())) == 4
    del ml[0]
    assert type(ml[0]).__name__ == "Linear"
    md = nn.ModuleDict({"x": nn.Linear(1, 1)})
    md["y"] = nn.ReLU()
    assert list(md.keys()) == ["x", "y"] and "x" in md and isinstance(md.pop("y"), nn.ReLU)
    pl = nn.ParameterList([tp.ones(2), nn.Parameter(tp.zeros(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(list(pl.parameters())) == 2
    pd = nn.ParameterDict({"a": tp.ones(1)})
    pd["b"] = tp.zeros(2)
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["b"], nn.Parameter)
    holder = nn.Module()
    holder.p = pd
    assert [n for n, _ in holder.named_parameters()] == ["p.a", "p.b"]


def test_buffer_marker_and_extra_repr():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = nn.Buffer(tp.ones(1), persistent=False)

        def extra_repr(self):
            return "hello"

    m = M()
    assert "b" in dict(m.named_buffers()) and "b" not in m.state_dict()
    assert repr(m) == "M(hello)"


def test_parameter_repr_and_deepcopy():
    import copy

    p = nn.Parameter(tp.ones(2))
    assert repr(p).startswith("Parameter containing:\ntensor([1., 1.]")
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and to_np(q).tolist() == [1.0, 1.0]
    net = copy.deepcopy(Net())
    assert isinstance(net.l0.weight, nn.Parameter)


def test_init_functions():
    t = tp.empty(30, 20)
    nn.init.xavier_uniform_(t)
    assert np.abs(to_np(t)).max() <= np.sqrt(6 / 50) + 1e-6
    nn.init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert 0.1 < to_np(t).std() < 0.5
    nn.init.constant_(t, 3.0)
    assert float(t.mean()) == 3.0
    nn.init.eye_(t)
    assert float(t.sum()) == 20
    nn.init.orthogonal_(t)
    m = to_np(t).astype(np.float64)
    np.testing.assert_allclose(m.T @ m, np.eye(20), atol=1e-5)
    nn.init.trunc_normal_(t, std=0.02, a=-0.04, b=0.04)
    assert np.abs(to_np(t)).max() <= 0.04
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(np.sqrt(2 / 1.04))
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("foo")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tp.empty(3))


def test_clip_grad_norm():
    torch = pytest.importorskip("torch")
    ps = [nn.Parameter(tp.ones(3)), nn.Parameter(tp.ones(2))]
    rs = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2))]
    g = [np.array([3.0, -4.0, 1.0], np.float32), np.array([2.0, 2.0], np.float32)]
    for p, r, gi in zip(ps, rs, g):
        p.grad = tp.tensor(gi)
        r.grad = torch.tensor(gi)
    n1 = nn.utils.clip_grad_norm_(ps, 1.5)
    n2 = torch.nn.utils.clip_grad_norm_(rs, 1.5)
    assert float(n1) == pytest.approx(float(n2), rel=1e-6)
    for p, r in zip(ps, rs):
        np.testing.assert_allclose(to_np(p.grad), r.grad.numpy(), rtol=1e-6)
