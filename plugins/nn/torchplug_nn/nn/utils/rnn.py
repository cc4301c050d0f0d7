"""``nn.utils.rnn``: padding and packing helpers for variable-length sequences (``PackedSequence``)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """Time-major concatenation of the steps of a batch of sequences sorted by decreasing length.

    ``data`` holds step 0 of every sequence, then step 1 of every sequence still running, and so on;
    ``batch_sizes[t]`` (an int64 cpu tensor) is how many sequences step ``t`` has.  ``sorted_indices``
    maps the packed order to the caller's batch order (``None`` when the batch came sorted).
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(data, batch_sizes) given as one tuple, as torch allows
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same packing with ``data`` (and the indices, to its device) moved or cast by ``Tensor.to``."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=torchplug.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=torchplug.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=torchplug.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (``None`` stays ``None``)."""
    if permutation is None:
        return None
    output = torchplug.empty_like(permutation)
    output.scatter_(0, permutation, torchplug.arange(0, permutation.numel(), device=permutation.device))
    return output


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (``T x B x *``, or ``B x T x *`` with ``batch_first``) of sequences of ``lengths``."""
    if not isinstance(lengths, Tensor):
        lengths = torchplug.as_tensor(lengths, dtype=torchplug.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=torchplug.int64, device="cpu")
    if enforce_sorted:
        sorted_indices = None
        if lengths.numel() > 1 and bool((lengths[:-1] < lengths[1:]).any()):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    else:
        lengths, sorted_indices = torchplug.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths.numel() and int(lengths.min()) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    lens = lengths.tolist()
    if lens and lens[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the largest length "
                           f"({lens[0]}), but got {input.shape[0]} (pad the input to the longest sequence)")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0] if lens else 0)]
    data = torchplug.cat([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, torchplug.tensor(batch_sizes, dtype=torchplug.int64), sorted_indices, None)


def _pad_packed_sorted(sequence: PackedSequence, padding_value: float, total_length: int | None) -> tuple[Tensor, list[int]]:
    """Time-major padded tensor in the packed (sorted) batch order, and the sorted lengths."""
    sizes = sequence.batch_sizes.tolist()
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    data = sequence.data
    batch = sizes[0] if sizes else 0
    steps, start = [], 0
    for bs in sizes:
        step = data[start:start + bs]
        start += bs
        if bs < batch:
            filler = torchplug.full((batch - bs, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
            step = torchplug.cat([step, filler], 0)
        steps.append(step)
    for _ in range(total_length - max_len):
        steps.append(torchplug.full((batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device))
    lengths = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    return torchplug.stack(steps, 0), lengths


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: the padded batch (in the caller's order) and its lengths."""
    padded, lengths = _pad_packed_sorted(sequence, padding_value, total_length)
    lengths_t = torchplug.tensor(lengths, dtype=torchplug.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t[sequence.unsorted_indices.cpu()]
    return (padded.transpose(0, 1) if batch_first else padded), lengths_t


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack variable-length sequences into one tensor padded with ``padding_value``."""
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        if extra:
            filler = torchplug.full((extra, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = torchplug.cat([s, filler] if padding_side == "right" else [filler, s])
        padded.append(s)
    out = torchplug.stack(padded, 0)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences of ``lengths``."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length tensors (``L x *``)."""
    sequences = list(sequences)
    lengths = torchplug.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """Undo :func:`pack_sequence`: the list of tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
