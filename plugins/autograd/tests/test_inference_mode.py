"""torch.inference_mode: inference tensors (is_inference), the mode's nesting with the grad modes, and
PyTorch's refusals of inference tensors outside the mode (in-place writes, saving for backward,
requires_grad, the version counter) — each compared with the installed torch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        result = fn()
    except RuntimeError as exc:
        return "RuntimeError", str(exc)
    return "ok", result


def both(fn):
    """``fn(module)`` run on torchplug and on torch; returns the two results."""
    return fn(tp), fn(torch)


def test_tensors_made_in_the_mode_are_inference_tensors():
    def facts(m):
        p = m.ones(3, requires_grad=True)
        n = m.ones(2, 3)
        with m.inference_mode():
            made = {
                "factory": m.ones(3), "op of a grad tensor": p * 2, "tensor()": m.tensor([1.0, 2.0]),
                "from_numpy": m.from_numpy(np.ones(2)), "as_tensor": m.as_tensor([1.0]),
                "random": m.randn(3), "op of a normal tensor": n + 1, "split piece": n.split(1)[0],
                "cat": m.cat([n, n]), "nn": m.nn.functional.relu(p),
                "view of a normal tensor": n[0], "in-place on a normal tensor": n.add_(1),
            }
            made["view of an inference tensor"] = made["factory"][:2]
            enabled = (m.is_inference_mode_enabled(), m.is_grad_enabled())
        return ({k: (t.is_inference(), m.is_inference(t), t.requires_grad) for k, t in made.items()},
                enabled, m.is_inference_mode_enabled(), m.is_grad_enabled())

    ours, theirs = both(facts)
    assert ours == theirs
    assert theirs[0]["factory"] == (True, True, False) and theirs[0]["view of a normal tensor"][0] is False


def test_nesting_with_grad_modes_matches_torch():
    def facts(m):
        p = m.ones(2, requires_grad=True)
        out = []
        with m.inference_mode():
            with m.inference_mode(False):
                out.append((m.is_inference_mode_enabled(), m.is_grad_enabled(), m.ones(1).is_inference(),
                            (p * 2).requires_grad))
            with m.no_grad():
                out.append((m.is_inference_mode_enabled(), m.is_grad_enabled(), m.ones(1).is_inference()))
            with m.enable_grad():
                out.append((m.is_inference_mode_enabled(), m.is_grad_enabled(), (p * 2).requires_grad))
            out.append((m.is_inference_mode_enabled(), m.is_grad_enabled()))
        with m.no_grad():
            with m.inference_mode(False):
                out.append((m.is_inference_mode_enabled(), m.is_grad_enabled()))
            with m.inference_mode():
                out.append((m.is_inference_mode_enabled(), m.is_grad_enabled()))
            out.append(m.is_grad_enabled())
        out.append((m.is_inference_mode_enabled(), m.is_grad_enabled(), (p * 2).requires_grad))
        return out

    ours, theirs = both(facts)
    assert ours == theirs


def test_decorator_forms_match_torch():
    def facts(m):
        @m.inference_mode()
        def called(a):
            return a * 2, m.is_inference_mode_enabled()

        @m.inference_mode
        def bare(a):
            return a * 2

        @m.inference_mode(False)
        def off(a):
            return a * 2

        @m.inference_mode()
        def gen():
            yield m.ones(1).is_inference()
            yield m.is_inference_mode_enabled()

        p = m.ones(2, requires_grad=True)
        y, on = called(p)
        return y.is_inference(), on, bare(p).is_inference(), off(p).requires_grad, list(gen()), \
            m.is_inference_mode_enabled()

    ours, theirs = both(facts)
    assert ours == theirs


OUTSIDE = {
    "in-place": lambda m, x, p, n: x.add_(1),
    "setitem": lambda m, x, p, n: x.__setitem__(0, 5.0),
    "out=": lambda m, x, p, n: m.add(n, n, out=x),
    "in-place of a view": lambda m, x, p, n: x[:2].mul_(2),
    "saved for backward (mul)": lambda m, x, p, n: x * p,
    "saved for backward (linear)": lambda m, x, p, n: m.nn.functional.linear(x.unsqueeze(0), p.unsqueeze(0)),
    "saved, in place on a normal tensor": lambda m, x, p, n: (p * 1).mul_(x),
    "requires_grad_": lambda m, x, p, n: x.requires_grad_(),
    "version counter": lambda m, x, p, n: x._version,
    "not saved (add)": lambda m, x, p, n: (x + p).requires_grad,
    "op makes a normal tensor": lambda m, x, p, n: ((x + 1).is_inference(), x.clone().is_inference()),
    "view stays inference": lambda m, x, p, n: (x[:1].is_inference(), x.detach().is_inference()),
    "no_grad op": lambda m, x, p, n: m.no_grad()(lambda: (x * p).requires_grad)(),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_inference_tensors_outside_the_mode_match_torch(name):
    def run(m):
        p = m.ones(3, requires_grad=True)
        n = m.ones(3)
        with m.inference_mode():
            x = m.ones(3)
        return _outcome(lambda: OUTSIDE[name](m, x, p, n))

    ours, theirs = both(run)
    assert ours == theirs


def test_autograd_through_inference_tensors_matches_torch():
    def run(m):
        lin = m.nn.Linear(3, 2)
        with m.inference_mode():
            features = m.ones(4, 3)
        loss = _outcome(lambda: lin(features).sum())
        p = m.ones(3, requires_grad=True)
        (m.cat([features[0], p]) * 2).sum().backward()  # cat saves no input: allowed
        return loss, p.grad.tolist()

    ours, theirs = both(run)
    assert ours == theirs


def test_views_made_in_the_mode_of_a_grad_tensor_are_refused_like_torch():
    def run(m):
        q = m.ones(3, requires_grad=True) * 1
        with m.inference_mode():
            v, w, u = q[:2], q[:2], q[:2]
        return (v.requires_grad, v.is_inference(), _outcome(lambda: v.mul_(2)),
                _outcome(lambda: w.unsqueeze(0).mul_(2)), q.mul_(2) is q, _outcome(lambda: u * 2))

    ours, theirs = both(run)
    assert ours == theirs
    assert theirs[2][1].startswith("A view was created in inference mode and is being modified inplace")


def test_inference_tensor_may_require_grad_inside_the_mode():
    def run(m):
        with m.inference_mode():
            x = m.ones(2)
            x.requires_grad_()
            inside = (x.requires_grad, (x * 2).requires_grad)
        return inside, x.requires_grad, x.is_leaf, (x + 1).requires_grad

    ours, theirs = both(run)
    assert ours == theirs
