"""torchplug.multiprocessing: tensors through queues and process arguments arrive with their data in shared
memory (both ways), the Hogwild pattern trains one shared model from several processes, and spawn reports a
child's failure as torch.multiprocessing does."""

from __future__ import annotations

import os
import sys
from multiprocessing.reduction import ForkingPickler

import pytest

import torchplug
import torchplug.multiprocessing as mp

sys.path.insert(0, os.path.dirname(__file__))  # spawned children import the helpers by name
import _mp_helpers as helpers  # noqa: E402

TIMEOUT = 120


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_tensors_share_memory_both_ways(method):
    ctx = mp.get_context(method)
    inq, outq = ctx.Queue(), ctx.Queue()
    sent = torchplug.zeros(3)
    inq.put(sent)
    p = ctx.Process(target=helpers.add_one_and_reply, args=(inq, outq))
    p.start()
    back = outq.get(timeout=TIMEOUT)  # before join: a sender must outlive the hand-over
    inq.put("received")
    p.join(TIMEOUT)
    assert p.exitcode == 0
    assert sent.tolist() == [1.0, 1.0, 1.0] and sent.is_shared()  # the child wrote into our memory
    assert back.tolist() == [1.0, 3.0] and back.stride() == (2,) and back.is_shared()


def test_hogwild_trains_one_shared_model():
    torchplug.manual_seed(0)
    model = torchplug.nn.Linear(4, 1)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    x = torchplug.randn(64, 4)
    y = x.sum(1, keepdim=True)
    loss_before = torchplug.nn.functional.mse_loss(model(x), y).item()
    processes = [mp.Process(target=helpers.hogwild_train, args=(rank, model, 30)) for rank in range(2)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(TIMEOUT)
        assert p.exitcode == 0
    loss_after = torchplug.nn.functional.mse_loss(model(x), y).item()
    assert loss_after < 0.5 * loss_before  # the children's updates landed in the parent's parameters


def test_start_processes_with_a_shared_argument():
    for method in ("fork", "spawn"):
        t = torchplug.zeros(2).share_memory_()
        mp.start_processes(helpers.fill_slot, args=(t,), nprocs=2, start_method=method)
        assert t.tolist() == [100.0, 101.0]


def test_spawn_raises_the_childs_exception():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(helpers.raise_in_one, nprocs=2)
    assert info.value.error_index == 1
    assert str(info.value).startswith("\n\n-- Process 1 terminated with the following error:\nTraceback")
    assert "ValueError: failure in process 1" in str(info.value)


def test_spawn_reports_an_exit_code():
    context = mp.start_processes(helpers.exit_with_index, nprocs=2, join=False, start_method="fork")
    assert len(context.pids()) == 2
    with pytest.raises(mp.ProcessExitedException, match="process 1 terminated with exit code 1") as info:
        while not context.join(TIMEOUT):
            pass
    assert info.value.exit_code == 1 and info.value.error_index == 1


def test_share_memory_moves_the_storage_in_place():
    t = torchplug.arange(6.0).reshape(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    view = t[:, 1]
    assert view.is_shared()
    view.mul_(10)
    assert t[:, 1].tolist() == [10.0, 40.0]
    t.share_memory_()  # again: a no-op
    assert t.tolist() == [[0.0, 10.0, 2.0], [3.0, 40.0, 5.0]]


def test_pickled_tensor_shares_memory_in_the_same_process():
    t = torchplug.arange(4.0)
    copy = ForkingPickler.loads(ForkingPickler.dumps(t[1:]))
    copy.add_(10)
    assert t.tolist() == [0.0, 11.0, 12.0, 13.0]
    leaf = torchplug.ones(2, requires_grad=True)
    back = ForkingPickler.loads(ForkingPickler.dumps(leaf))
    assert back.requires_grad and back.is_leaf


def test_non_leaf_refused_like_torch():
    torch = pytest.importorskip("torch")
    import torch.multiprocessing  # noqa: F401  (registers torch's reducers)

    messages = []
    for lib in (torchplug, torch):
        x = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            ForkingPickler.dumps(x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_parameter_keeps_its_class():
    p = torchplug.nn.Parameter(torchplug.ones(2))
    back = ForkingPickler.loads(ForkingPickler.dumps(p))
    assert isinstance(back, torchplug.nn.Parameter) and back.requires_grad
    back.data.add_(1)
    assert p.tolist() == [2.0, 2.0]


def test_public_names_cover_torchs():
    pytest.importorskip("torch")
    import torch.multiprocessing as torch_mp

    assert set(torch_mp.__all__) <= set(mp.__all__)
    assert mp.get_sharing_strategy() == torch_mp.get_sharing_strategy()
    assert mp.get_all_sharing_strategies() == torch_mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="Invalid sharing strategy"):
        mp.set_sharing_strategy("nope")
