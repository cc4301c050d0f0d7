"""``nn.utils.rnn`` packing (``PackedSequence``) and RNN layers on packed input, compared with torch."""

import numpy as np
import pytest

import torchplug as tp
from torchplug.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                    unpack_sequence)

torch = pytest.importorskip("torch")


def _same(ours, theirs, atol=1e-5):
    np.testing.assert_allclose(np.asarray(ours.detach().tolist()), theirs.detach().numpy(), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
def test_pack_pad_round_trip_as_torch(batch_first, enforce_sorted):
    x = np.random.default_rng(0).standard_normal((3, 5, 2)).astype(np.float32)
    if not batch_first:
        x = x.transpose(1, 0, 2).copy()
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    ours = pack_padded_sequence(tp.tensor(x), lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=batch_first,
                                                     enforce_sorted=enforce_sorted)
    assert isinstance(ours, PackedSequence)
    _same(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist() and ours.batch_sizes.dtype == tp.int64
    for a, b in ((ours.sorted_indices, theirs.sorted_indices), (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    p1, l1 = pad_packed_sequence(ours, batch_first=batch_first, padding_value=-1.0, total_length=6)
    p2, l2 = torch.nn.utils.rnn.pad_packed_sequence(theirs, batch_first=batch_first, padding_value=-1.0,
                                                     total_length=6)
    _same(p1, p2)
    assert l1.tolist() == l2.tolist()


def test_pack_sequence_and_unpack_as_torch():
    seqs = [[1.0, 2.0, 3.0], [4.0, 5.0], [6.0]]
    ours = pack_sequence([tp.tensor(s) for s in seqs])
    theirs = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs])
    _same(ours.data, theirs.data)
    assert [t.tolist() for t in unpack_sequence(ours)] == seqs
    unsorted = pack_sequence([tp.tensor(s) for s in seqs[::-1]], enforce_sorted=False)
    assert [t.tolist() for t in unpack_sequence(unsorted)] == seqs[::-1]


def test_packing_errors_as_torch():
    x = tp.zeros(3, 4)
    with pytest.raises(RuntimeError, match="^`lengths` array must be sorted in decreasing order"):
        pack_padded_sequence(x, [2, 4, 3], batch_first=True)
    with pytest.raises(RuntimeError, match="^Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [4, 0, 0], batch_first=True)
    packed = pack_padded_sequence(x, [4, 3, 2], batch_first=True)
    with pytest.raises(ValueError, match="^Expected total_length to be at least the length of the longest"):
        pad_packed_sequence(packed, total_length=2)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_rnn_on_packed_input_matches_torch(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    lengths = [2, 5, 3]
    ref = getattr(torch.nn, name)(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    ours = getattr(tp.nn, name)(4, 6, num_layers=2, bidirectional=True, batch_first=True)
    ours.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    h0 = rng.standard_normal((4, 3, 6)).astype(np.float32)
    hx_t = (torch.tensor(h0), torch.tensor(h0)) if name == "LSTM" else torch.tensor(h0)
    hx_o = (tp.tensor(h0), tp.tensor(h0)) if name == "LSTM" else tp.tensor(h0)
    out_t, h_t = ref(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first=True,
                                                               enforce_sorted=False), hx_t)
    out_o, h_o = ours(pack_padded_sequence(tp.tensor(x), lengths, batch_first=True, enforce_sorted=False), hx_o)
    assert isinstance(out_o, PackedSequence)
    _same(out_o.data, out_t.data)
    h_t, h_o = (h_t[0], h_o[0]) if name == "LSTM" else (h_t, h_o)
    _same(h_o, h_t)
    pad_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True)[0]
    pad_o = pad_packed_sequence(out_o, batch_first=True)[0]
    (pad_t.sum() + h_t.pow(2).sum()).backward()
    (pad_o.sum() + h_o.pow(2).sum()).backward()
    for (k, p_o), p_t in zip(ours.named_parameters(), ref.parameters()):
        _same(p_o.grad, p_t.grad, atol=1e-4)


def test_inter_layer_dropout_on_packed_input_draws_as_torch():
    # torch drops out the packed steps only; the same seed must give the same masks and outputs.
    x = np.random.default_rng(2).standard_normal((4, 3, 5)).astype(np.float32)
    ref = torch.nn.GRU(5, 4, num_layers=3, dropout=0.5)
    ours = tp.nn.GRU(5, 4, num_layers=3, dropout=0.5)
    ours.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    torch.manual_seed(7)
    out_t, _ = ref(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [4, 2, 1]))
    tp.manual_seed(7)
    out_o, _ = ours(pack_padded_sequence(tp.tensor(x), [4, 2, 1]))
    _same(out_o.data, out_t.data)
