"""PyTorch's default DDP communication hooks: plain all-reduce, and all-reduce of a float16/bfloat16 copy.

Each takes ``(process_group, bucket)`` (the state passed to ``register_comm_hook`` is the group, None for
the default one), averages the bucket over the group's ranks, and returns a future of the reduced flat
tensor without waiting, so the reduction overlaps the rest of backward.
"""

from __future__ import annotations

from typing import Any

import torchplug

from ... import collectives, distributed_c10d

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def allreduce_hook(process_group: Any, bucket: Any) -> Any:
    """All-reduce the bucket's gradients averaged over the group (what DDP does without a hook)."""
    tensor = bucket.buffer().div_(distributed_c10d.get_world_size(process_group))
    work = collectives.all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compressed(dtype: Any, process_group: Any, bucket: Any) -> Any:
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(distributed_c10d.get_world_size(process_group))
    work = collectives.all_reduce(compressed, group=process_group, async_op=True)

    def decompress(fut: Any) -> Any:
        buffer.copy_(fut.value()[0])  # back to the gradients' dtype, in place
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: Any, bucket: Any) -> Any:
    """All-reduce a float16 copy of the bucket (half the bytes), averaged; the result is cast back."""
    return _compressed(torchplug.float16, process_group, bucket)


def bf16_compress_hook(process_group: Any, bucket: Any) -> Any:
    """All-reduce a bfloat16 copy of the bucket, averaged; the result is cast back."""
    return _compressed(torchplug.bfloat16, process_group, bucket)
