"""Hooks on a leaf's ``AccumulateGrad`` node (``register_prehook``, ``register_hook``) run as PyTorch's: after
the tensor's hooks, around the accumulation and the post-accumulate hooks, in plain backward and in
``backward(inputs=...)``, and not in ``autograd.grad`` (which accumulates nothing)."""

from __future__ import annotations

from typing import Any

import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _accumulator(t: Any) -> Any:
    return t.view_as(t).grad_fn.next_functions[0][0]


def _hooked(T: Any, log: list, prehook_result: Any = None) -> tuple[Any, Any]:
    t = T.ones(3, requires_grad=True)
    acc = _accumulator(t)
    t.register_hook(lambda g: log.append(("tensor", g.tolist())))
    acc.register_prehook(lambda go: (log.append(("pre", [g.tolist() for g in go])), prehook_result(go)
                                     if prehook_result else None)[1])
    t.register_post_accumulate_grad_hook(lambda p: log.append(("post_acc", None if p.grad is None else p.grad.tolist())))
    acc.register_hook(lambda gi, go: log.append(("hook", gi, [None if g is None else g.tolist() for g in go])))
    return t, acc


def _each(fn: Any) -> tuple[Any, Any]:
    return fn(torch), fn(tp)


@pytest.mark.parametrize("how", ["backward", "backward_inputs", "autograd_grad", "twice"])
def test_order_and_arguments_as_torch(how: str) -> None:
    def run(T: Any) -> Any:
        log: list = []
        t, acc = _hooked(T, log)
        assert type(acc).__name__ == "AccumulateGrad"
        loss = (t * T.tensor([1.0, 2.0, 3.0])).sum()
        if how == "backward":
            loss.backward()
        elif how == "backward_inputs":
            loss.backward(inputs=[t])
        elif how == "autograd_grad":
            T.autograd.grad(loss, t)
        else:
            loss.backward(retain_graph=True)
            loss.backward()
        return log, None if t.grad is None else t.grad.tolist()

    ref, got = _each(run)
    assert got == ref


@pytest.mark.parametrize("answer", ["scaled", "none_inside"])
def test_prehook_replaces_the_gradient(answer: str) -> None:
    def run(T: Any) -> Any:
        log: list = []
        replace = (lambda go: (go[0] * 10,)) if answer == "scaled" else (lambda go: (None,))
        t, _ = _hooked(T, log, replace)
        (t * 2).sum().backward()
        return log, None if t.grad is None else t.grad.tolist()

    ref, got = _each(run)
    assert got == ref


def test_removed_prehook_does_not_run() -> None:
    def run(T: Any) -> Any:
        log: list = []
        t = T.ones(2, requires_grad=True)
        acc = _accumulator(t)
        handle = acc.register_prehook(lambda go: log.append("pre"))
        hook = acc.register_hook(lambda gi, go: log.append("hook"))
        (t * 2).sum().backward()
        handle.remove()
        hook.remove()
        (t * 2).sum().backward()
        return log, t.grad.tolist()

    ref, got = _each(run)
    assert got == ref
