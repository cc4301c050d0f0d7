"""The Autograd kernel of a custom op: ``register_autograd``'s formula as an autograd.Function.

The core never imports the autograd plugin: this kernel only runs for tensors that carry an
autograd key, which exist only once that plugin is loaded, so it looks the plugin up then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER

__all__ = ["make_autograd_kernel"]

_BELOW_AUTOGRAD = K.AFTER_AUTOGRAD


def make_autograd_kernel(opdef: Any) -> Callable[..., Any]:
    """A keyset-taking kernel for the ``Autograd`` alias key of ``opdef``'s operator."""
    entry = opdef._entry
    schema = entry.schema
    cache_get = entry.cache.get
    n_pos = len(schema.positional_arguments)
    kw_names = [a.name for a in schema.kwarg_only_arguments]
    n_kw = len(kw_names)
    name = opdef._qualname
    # The key set to run below autograd, handed from the kernel to Function.forward (which
    # cannot take it as an argument without showing up as an input of the graph).
    pending = threading.local()
    function_cls: list[Any] = []

    def redispatch(*args: Any) -> Any:
        ks = pending.ks
        kernel = cache_get(ks)
        if kernel is None:
            kernel = DISPATCHER.lookup(entry, ks)
        return kernel(*args)

    def build() -> Any:
        from torchplug._plugins.lookup import resolve

        Function = resolve("autograd").Function  # the autograd plugin's

        def forward(*args: Any) -> Any:
            return redispatch(*args)

        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            setup = opdef._setup_context_fn
            if setup is None:
                return
            if n_kw:
                setup(ctx=ctx, inputs=inputs[:n_pos], keyword_only_inputs=dict(zip(kw_names, inputs[n_pos:])),
                      output=output)
            else:
                setup(ctx=ctx, inputs=inputs, output=output)

        def backward(ctx: Any, *grads: Any) -> Any:
            formula = opdef._backward_fn
            if formula is None:
                raise RuntimeError(
                    f"Trying to backward through {name} but no autograd formula was registered. Please use "
                    f"register_autograd to add one."
                )
            result = formula(ctx, *grads)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) != n_pos:
                raise RuntimeError(
                    f"{name}: the backward registered with register_autograd returned {len(result)} gradient(s), "
                    f"but the operator has {n_pos} positional input(s). Return one gradient (or None) per "
                    "positional input, in order."
                )
            return result + (None,) * n_kw

        # PyTorch's name, so grad_fn reads <GeneratedBackwardFor_ns_op_defaultBackward>.
        cls_name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name}_default"
        CustomOpFunction = type(cls_name, (Function,), {
            "forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward), "__module__": __name__,
        })
        function_cls.append(CustomOpFunction)
        return CustomOpFunction

    def autograd_kernel(ks: int, *args: Any) -> Any:
        fn = function_cls[0] if function_cls else build()
        pending.ks = ks & _BELOW_AUTOGRAD
        return fn.apply(*args)

    def mutable_kernel(ks: int, *args: Any) -> Any:
        from torchplug._tensor.tensor import _grad_mode_on

        if _grad_mode_on():
            raise RuntimeError(
                f"{name} mutates its inputs and an input requires grad: autograd through mutable custom ops is not "
                "supported. Call it under torchplug.no_grad(), or write a functional op (returning new tensors) and "
                "register_autograd for it."
            )
        pending.ks = ks & _BELOW_AUTOGRAD
        return redispatch(*args)

    kernel = mutable_kernel if schema.is_mutable else autograd_kernel
    kernel.__qualname__ = f"autograd[{name}]"
    return kernel
