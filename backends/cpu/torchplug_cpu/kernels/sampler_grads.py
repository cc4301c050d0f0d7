"""cpu kernels: ``_standard_gamma_grad`` and ``_dirichlet_grad``, the reparameterisation gradients of
gamma and Dirichlet samples (the math is :mod:`torchplug_cpu._sampler_math`, on the host)."""

from __future__ import annotations

import numpy as np

from torchplug.library import KernelTable
from torchplug_cpu import _sampler_math as M

from .core import fresh
from .random import H, _check_floating, _host

TABLE = KernelTable("CPU")


@TABLE.impl("aten::_standard_gamma_grad")
def _standard_gamma_grad(self, output):
    _check_floating("_standard_gamma_grad_cpu", self._dtype)
    alpha, x = _host(self._data), _host(output._data)
    res = M.gamma_grad(alpha.astype(H.float64), x.astype(H.float64))
    return fresh(np.asarray(H.ascontiguousarray(res.astype(alpha.dtype))))


@TABLE.impl("aten::_dirichlet_grad")
def _dirichlet_grad(x, alpha, total):
    _check_floating("_dirichlet_grad_cpu", x._dtype)
    xs, al, tot = (_host(t._data) for t in (x, alpha, total))
    if xs.shape != al.shape:
        raise RuntimeError(f"_dirichlet_grad: expected x and alpha to have the same shape, got {list(xs.shape)} and "
                           f"{list(al.shape)}")
    if xs.shape != tot.shape:
        raise RuntimeError(f"_dirichlet_grad: expected x and total to have the same shape, got {list(xs.shape)} and "
                           f"{list(tot.shape)}")
    res = M.beta_grad(*(v.astype(H.float64) for v in (xs, al, tot)))
    return fresh(np.asarray(H.ascontiguousarray(res.astype(xs.dtype))))
