"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` (multi-layer, bidirectional, batch_first) and their cells."""

from __future__ import annotations

import math
from typing import Any

import torchplug

from .. import functional as F, init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _pad_packed_sorted
from ._factory import empty
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode: str, x: Any, h: Any, c: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, w_hr: Any = None) -> tuple[Any, Any]:
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, c
    if mode == "GRU":
        return _gru_cell(gi, h, gh), None
    pre = gi + gh
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


def _gru_cell(gi: Any, h: Any, gh: Any) -> Any:
    """ATen's GRUCell on the input and hidden projections ``gi``/``gh``: (h - n) * z + n over their
    ``unsafe_chunk`` pieces, in ATen's order of operations (so the graph has its nodes).  ATen writes most of
    these in place; the out-of-place ops record the same nodes (an in-place op on a fresh tensor is named as its
    functional op), cost less here, and work under vmap, where a piece of an unbatched hidden state cannot take
    a batched sum in place."""
    ir, iz, in_ = gi.unsafe_chunk(3, -1)
    hr, hz, hn = gh.unsafe_chunk(3, -1)
    r = hr.add(ir).sigmoid()
    z = hz.add(iz).sigmoid()
    n = in_.add(hn.mul(r)).tanh()
    return (h - n).mul(z).add(n)


def _simple_layer_cpu(mode: str, inputs: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
                      reverse: bool) -> tuple[Any, Any]:
    """One direction of an RNN_TANH/RNN_RELU/GRU layer as ATen's CPU FullLayer runs it (so the graph has its
    nodes): the input projection of the whole sequence at once, unbound into steps, then per step
    ``act(linear_hh(h).add_(x_w))`` (the GRU cell on the step's projection)."""
    steps = list(F.linear(inputs, w_ih, b_ih).unbind(0))
    if reverse:
        steps.reverse()
    outs = []
    for x_w in steps:
        if mode == "GRU":
            h = _gru_cell(x_w, h, F.linear(h, w_hh, b_hh))
        else:
            pre = F.linear(h, w_hh, b_hh).add_(x_w)
            h = pre.tanh() if mode == "RNN_TANH" else pre.relu()
        outs.append(h)
    if reverse:
        outs.reverse()
    return torchplug.stack(outs, 0), h


def _packed_data(padded: Any, packed: PackedSequence) -> Any:
    """The rows of a time-major padded batch that ``packed``'s batch sizes keep, packed."""
    return torchplug.cat([padded[t, :bs] for t, bs in enumerate(packed.batch_sizes.tolist())], 0)


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element being zeroed")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden = proj_size if proj_size > 0 else hidden_size
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                if proj_size > 0:
                    names += [f"weight_hr_l{layer}{suffix}"]
                    shapes += [(proj_size, hidden_size)]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Any]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Any]]:
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self) -> None:
        pass

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _layer_weights(self, layer: int, direction: int) -> tuple[Any, ...]:
        suffix = "_reverse" if direction == 1 else ""
        g = lambda n: getattr(self, f"{n}_l{layer}{suffix}", None)  # noqa: E731
        return g("weight_ih"), g("weight_hh"), g("bias_ih"), g("bias_hh"), g("weight_hr")

    def forward(self, input: Any, hx: Any = None) -> Any:
        mode = self.mode
        is_lstm = mode == "LSTM"
        packed = input if isinstance(input, PackedSequence) else None
        masks = None
        if packed is not None:
            # Run the padded (sorted, time-major) batch; a finished sequence keeps its hidden state,
            # so each direction's final state is the one at that sequence's own last step.
            input, lengths = _pad_packed_sorted(packed, 0.0, None)
            lens = torchplug.tensor(lengths, dtype=torchplug.int64, device=input.device)
            masks = [(lens > t).unsqueeze(1) for t in range(input.shape[0])]
            if hx is not None and packed.sorted_indices is not None:
                hx = tuple(h.index_select(1, packed.sorted_indices) for h in hx) if is_lstm else \
                    hx.index_select(1, packed.sorted_indices)
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:  # as torch: unbatched input gains its batch dim where batch_first puts it
            input = input.unsqueeze(batch_dim)
        if self.batch_first and packed is None:
            input = input.transpose(0, 1)
        seq_len, batch = input.shape[0], input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = torchplug.zeros((self.num_layers * num_directions, batch, real_hidden), dtype=input.dtype, device=input.device)
            c0 = torchplug.zeros((self.num_layers * num_directions, batch, self.hidden_size), dtype=input.dtype, device=input.device)
        elif is_lstm:
            h0, c0 = hx
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        else:
            h0 = hx.unsqueeze(1) if not batched else hx
            c0 = None
        layer_input = input
        h_n, c_n = [], []
        simple_cpu = mode in ("RNN_TANH", "RNN_RELU", "GRU") and input.device.type == "cpu" and seq_len > 0 and masks is None
        h0s = h0.unbind(0) if simple_cpu else None  # ATen unpacks the hidden state with unbind
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                if simple_cpu:
                    out, h = _simple_layer_cpu(mode, layer_input, h0s[idx], w_ih, w_hh, b_ih, b_hh, direction == 1)
                    outs.append(out)
                    h_n.append(h)
                    continue
                h = h0[idx]
                c = c0[idx] if is_lstm else None
                steps = range(seq_len - 1, -1, -1) if direction == 1 else range(seq_len)
                ys: list[Any] = [None] * seq_len
                for t in steps:
                    h_t, c_t = _rnn_step(mode, layer_input[t], h, c, w_ih, w_hh, b_ih, b_hh, w_hr)
                    if masks is not None:
                        h_t = torchplug.where(masks[t], h_t, h)
                        c_t = torchplug.where(masks[t], c_t, c) if is_lstm else None
                    h, c = h_t, c_t
                    ys[t] = h
                outs.append(torchplug.stack(ys, 0))
                h_n.append(h)
                if is_lstm:
                    c_n.append(c)
            layer_input = outs[0] if num_directions == 1 else torchplug.cat(outs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                if packed is None:
                    layer_input = F.dropout(layer_input, self.dropout, True)
                else:  # on the packed steps only, as torch: the same random draws as its packed run
                    data = F.dropout(_packed_data(layer_input, packed), self.dropout, True)
                    layer_input = _pad_packed_sorted(packed._replace(data=data), 0.0, None)[0]
        output = layer_input
        h_n_t = torchplug.stack(h_n, 0)
        c_n_t = torchplug.stack(c_n, 0) if is_lstm else None
        if packed is not None:
            output = packed._replace(data=_packed_data(output, packed))
            if packed.unsorted_indices is not None:
                h_n_t = h_n_t.index_select(1, packed.unsorted_indices)
                c_n_t = c_n_t.index_select(1, packed.unsorted_indices) if is_lstm else None
        elif self.batch_first:
            output = output.transpose_(0, 1)  # in place, as ATen's _rnn_impl: TransposeBackward1
        if not batched:
            output = output.squeeze(batch_dim)
            h_n_t = h_n_t.squeeze(1)
            c_n_t = c_n_t.squeeze(1) if is_lstm else None
        return (output, (h_n_t, c_n_t)) if is_lstm else (output, h_n_t)


class RNN(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + f", nonlinearity={self.nonlinearity}"


class LSTM(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _zeros(self, input: Any) -> Any:
        shape = (input.shape[0], self.hidden_size) if input.dim() == 2 else (self.hidden_size,)
        return torchplug.zeros(shape, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> Any:
        if hx is None:
            hx = self._zeros(input)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return _rnn_step(mode, input, hx, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)[0]


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        if hx is None:
            z = self._zeros(input)
            hx = (z, z)
        return _rnn_step("LSTM", input, hx[0], hx[1], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Any, hx: Any = None) -> Any:
        if hx is None:
            hx = self._zeros(input)
        return _rnn_step("GRU", input, hx, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)[0]
