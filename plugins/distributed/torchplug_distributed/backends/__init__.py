"""Process-group backends of ``torchplug.distributed`` (entry-point group ``torchplug.distributed_backends``)."""

__all__: list[str] = []
