"""The operators the core implements and the public function surface: composite kernels (ops written once
in terms of others), the kernels the core registers, ``torchplug.nn.functional``'s implementations, the
``torchplug.ops`` namespace, and the bindings that generate ``torchplug.<op>`` and ``Tensor.<op>`` from the
schemas plus the hand-written ones (``pyfuncs``).

May import: ``_base``, ``_compat``, ``_dispatch``, ``_schemas``, ``_runtime``, ``_tensor``.
"""
