"""torchplug-func: ``torchplug.func`` (function transforms) and ``torchplug.vmap``, as ``torch.func``.

``vmap`` batches through the ``Batched`` dispatch key (batching rules, a per-sample fallback); the
autodiff transforms build on the autograd plugin's reverse mode and forward-mode AD.
"""

from __future__ import annotations

from ._autodiff import grad, grad_and_value, hessian, jacrev, vjp
from ._extras import debug_unwrap, functionalize, replace_all_batch_norm_modules_
from ._forward import jacfwd, jvp, linearize
from ._rearrange import rearrange
from ._module import functional_call, stack_module_state
from ._vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "hessian", "functional_call", "stack_module_state",
           "jvp", "jacfwd", "linearize", "functionalize", "replace_all_batch_norm_modules_", "debug_unwrap",
           "rearrange"]
