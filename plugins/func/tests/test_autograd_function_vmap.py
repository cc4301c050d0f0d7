"""autograd.Function under torch.func transforms, against torch: a hand-written ``vmap`` staticmethod,
the rule ``generate_vmap_rule = True`` generates (forward, setup_context, backward and jvp run batched),
composed with grad/jacrev/jacfwd/hessian, nested vmaps, and PyTorch's errors for Functions without
vmap support."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug
from func_helpers import close, pair

torch = pytest.importorskip("torch")


def functions(M):
    """The same Functions written against library ``M`` (torch or torchplug)."""

    class Cube(M.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx + g_dx * 6 * x

    class Exp(M.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[0]

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.saved_tensors[0]

    class Scale(M.autograd.Function):  # two tensor inputs and a non-tensor one; the scale is often unbatched
        generate_vmap_rule = True

        @staticmethod
        def forward(x, s, k):
            return x * s * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, s, k = inputs
            ctx.save_for_backward(x, s)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, s = ctx.saved_tensors
            return g * s * ctx.k, g * x * ctx.k, None

    class NumpyDouble(M.autograd.Function):  # NumPy inside: only a hand-written vmap rule can batch it
        @staticmethod
        def forward(x):
            return M.tensor(np.asarray(x.numpy()) * 2)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return NumpyDouble.apply(g)

        @staticmethod
        def vmap(info, in_dims, x):
            sizes.append(info.batch_size)
            return NumpyDouble.apply(x), in_dims[0]

    sizes = []
    return Cube, Exp, Scale, NumpyDouble, sizes


@pytest.fixture(scope="module")
def fns():
    return {torchplug: functions(torchplug), torch: functions(torch)}


def both(fns, make, *arrays):
    """``make(M, fns)(*tensors)`` under torchplug and torch, compared."""
    mine = make(torchplug, fns[torchplug])(*[a[0] for a in arrays])
    with warnings.catch_warnings():  # torch's jacfwd over a Function warns that torch.jit.script is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = make(torch, fns[torch])(*[a[1] for a in arrays])
    close(mine, theirs, atol=1e-10, rtol=1e-10)
    return mine


def test_generated_rule_forward_and_per_sample_grads(fns):
    x = pair(4)
    both(fns, lambda M, f: M.vmap(lambda v: f[0].apply(v)[0]), x)
    both(fns, lambda M, f: M.vmap(M.func.grad(lambda v: f[0].apply(v)[0])), x)
    both(fns, lambda M, f: M.func.jacrev(lambda v: f[0].apply(v)[0]), x)
    # second order through the backward, which the generated rule runs batched
    both(fns, lambda M, f: M.vmap(M.func.grad(M.func.grad(lambda v: f[0].apply(v)[0]))), x)


def test_generated_rule_in_dims_and_unbatched_inputs(fns):
    x, s = pair(4, 3), pair(4, seed=1)
    # x mapped along dim 1, s shared: the gradient of s sums over the batch
    both(fns, lambda M, f: M.vmap(lambda a, b: f[2].apply(a, b, 2.0), in_dims=(1, None)), x, s)
    both(fns, lambda M, f: M.vmap(M.func.grad(lambda a, b: f[2].apply(a, b, 2.0).sum(), argnums=(0, 1)),
                                  in_dims=(1, None)), x, s)
    both(fns, lambda M, f: M.func.grad(lambda a, b: M.vmap(lambda u: f[2].apply(u, b, 2.0), in_dims=1)(a).sum(),
                                       argnums=1), x, s)


def test_generated_rule_jvp_jacfwd_hessian(fns):
    x, t = pair(5), pair(5, seed=2)
    both(fns, lambda M, f: M.vmap(f[1].apply), x)
    both(fns, lambda M, f: lambda a, b: M.func.jvp(f[1].apply, (a,), (b,)), x, t)
    both(fns, lambda M, f: M.func.jacfwd(f[1].apply), x)
    both(fns, lambda M, f: M.func.hessian(lambda v: f[1].apply(v).sum()), x)
    both(fns, lambda M, f: M.vmap(lambda a, b: M.func.jvp(f[1].apply, (a,), (b,))), pair(3, 5), pair(3, 5, seed=4))


def test_nested_vmap_generated_rule(fns):
    both(fns, lambda M, f: M.vmap(M.vmap(lambda v: f[0].apply(v)[0])), pair(2, 3))
    both(fns, lambda M, f: M.vmap(M.vmap(M.func.grad(lambda v: f[0].apply(v)[0]))), pair(2, 3))


def test_custom_vmap_staticmethod(fns):
    x = pair(3, 4)
    both(fns, lambda M, f: M.vmap(f[3].apply), x)
    both(fns, lambda M, f: M.vmap(f[3].apply, in_dims=1), x)
    both(fns, lambda M, f: M.vmap(M.func.grad(lambda v: f[3].apply(v).sum())), x)
    assert fns[torchplug][4][:2] == fns[torch][4][:2] == [3, 4]  # info.batch_size


def _errors(M):
    class NoRule(M.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Both(NoRule):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, 0

    class OldStyle(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return NoRule, Both, OldStyle


@pytest.mark.parametrize("which", range(3))
def test_errors_for_functions_without_vmap_support(which):
    msgs = []
    for M in (torch, torchplug):
        with pytest.raises(RuntimeError) as info:
            M.vmap(_errors(M)[which].apply)(M.ones(3))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_plain_calls_are_untouched(fns):
    # outside vmap a Function runs as before, including an old-style one
    close(fns[torchplug][0].apply(pair(3)[0])[0], fns[torch][0].apply(pair(3)[1])[0])
    old = _errors(torchplug)[2]
    x = torchplug.ones(3, requires_grad=True)
    old.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
