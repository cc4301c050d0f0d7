"""Child-process entry points for test_multiprocessing.py (importable by spawned children)."""

from __future__ import annotations

import sys

import torchplug
import torchplug.nn.functional as F


def add_one_and_reply(inq, outq):
    t = inq.get()
    t.add_(1)
    outq.put(torchplug.arange(4.0).reshape(2, 2)[:, 1])  # a strided view of a child-made tensor
    inq.get()  # the sender outlives the hand-over (as with torch's strategies): wait until the parent has it


def fill_slot(i, t):
    t[i] = 100 + i


def hogwild_train(rank, model, steps):
    torchplug.manual_seed(rank)
    opt = torchplug.optim.SGD(model.parameters(), lr=0.05)
    x = torchplug.randn(32, 4)
    y = x.sum(1, keepdim=True)
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


def raise_in_one(i):
    if i == 1:
        raise ValueError(f"failure in process {i}")


def exit_with_index(i):
    sys.exit(i)
