"""The Tensor: the class (metadata, storage, version counter, autograd hooks), its construction fast path,
creation from Python data and factories, printing, indexing, conversions, the lazy conjugate/negative bits,
memory-overlap checks, legacy typed constructors, and the installer of the members built on these.

May import: ``_base``, ``_compat``, ``_dispatch``, ``_schemas``, ``_runtime``.
"""
