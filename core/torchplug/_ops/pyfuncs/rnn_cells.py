"""The functional recurrent cells of ``torch``'s namespace: ``rnn_tanh_cell``, ``rnn_relu_cell``, ``lstm_cell``
and ``gru_cell`` (one time step, PyTorch's gate layouts), compositions autograd differentiates."""

from __future__ import annotations

from typing import Any

from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    out = x.matmul(w.t())
    return out if b is None else out + b


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``hx = (h, c)``; gates ``i, f, g, o`` in that order along dim 1; returns ``(h', c')``."""
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: Expected hx to have 2 tensors (h, c), but got {len(hx)}")
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step: gates ``r, z, n`` in that order; ``h' = n + z * (hx - n)``."""
    i_r, i_z, i_n = _linear(input, w_ih, b_ih).chunk(3, 1)
    h_r, h_z, h_n = _linear(hx, w_hh, b_hh).chunk(3, 1)
    reset = (i_r + h_r).sigmoid()
    update = (i_z + h_z).sigmoid()
    new = (i_n + reset * h_n).tanh()
    return new + update * (hx - new)


FUNCTIONS: dict[str, Any] = {
    "rnn_tanh_cell": rnn_tanh_cell, "rnn_relu_cell": rnn_relu_cell, "lstm_cell": lstm_cell, "gru_cell": gru_cell,
}
METHODS: dict[str, Any] = {}
