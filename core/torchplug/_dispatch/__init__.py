"""The dispatcher: dispatch keys and key sets, the schema parser, operator entries and their per-keyset kernel
caches, the generated entry points (codegen), thread-local include/exclude sets, ``Library`` (scoped,
attributed registration) and ``A``, the namespace that calls an aten op through the dispatcher.

May import: ``_base``, ``_compat``.
"""
