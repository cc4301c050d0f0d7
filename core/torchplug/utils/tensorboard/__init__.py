"""``torchplug.utils.tensorboard``: PyTorch's ``SummaryWriter`` for torchplug tensors. Needs the ``tensorboard``
package (not a torchplug dependency): without it, importing this module raises the ImportError PyTorch's does."""

from __future__ import annotations

import tensorboard

if not hasattr(tensorboard, "__version__") or tuple(int(p) for p in tensorboard.__version__.split(".")[:2]) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from torchplug.utils.tensorboard._writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
