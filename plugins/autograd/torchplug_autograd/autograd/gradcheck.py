"""``gradcheck``/``gradgradcheck``: compare autograd's gradients with central finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._tensor.tensor import Tensor

from torchplug_autograd._engine import grad as _grad
from torchplug_autograd.autograd.grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _T() -> Any:
    import torchplug

    return torchplug


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_outputs(out: Any) -> list[Tensor]:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _dofs(t: Tensor) -> int:
    """Real degrees of freedom: a complex element is two (real, imaginary), as PyTorch's gradcheck sees it."""
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _real_values(t: Tensor) -> np.ndarray:
    """The values as a flat float64 array, complex elements as interleaved (real, imaginary) pairs."""
    if t.dtype.is_complex:
        return np.array(t.detach().cpu().tolist(), dtype=np.complex128).reshape(-1).view(np.float64)
    return np.array(t.detach().cpu().tolist(), dtype=np.float64).reshape(-1)


def _unit(t: Tensor, k: int) -> np.ndarray:
    """A one-hot value array shaped like ``t`` for real dof ``k`` (1 or 1j at its element)."""
    if t.dtype.is_complex:
        onehot = np.zeros(t.numel(), dtype=np.complex128)
        onehot[k // 2] = 1j if k % 2 else 1.0
    else:
        onehot = np.zeros(t.numel())
        onehot[k] = 1.0
    return onehot.reshape(tuple(t.shape))


def get_numerical_jacobian(func: Any, inputs: Any, eps: float = 1e-6) -> list[list[np.ndarray]]:
    """jac[i][j]: d output j / d input i as an (input dofs, output dofs) float64 array.

    Complex tensors count two real dofs per element (real, imaginary), so the Jacobian is the one of
    the realified function; autograd's conjugate-Wirtinger gradients are compared against it.
    """
    T = _T()
    inputs = _as_tuple(inputs)
    with enable_grad():  # func may differentiate internally (gradgradcheck): its outputs exist only then
        base_out = _diff_outputs(func(*inputs))
    jac: list[list[np.ndarray]] = []
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        kind = np.complex128 if x.dtype.is_complex else np.float64
        base = np.array(x.detach().cpu().tolist(), dtype=kind).reshape(tuple(x.shape))
        cols = [np.zeros((_dofs(x), _dofs(o))) for o in base_out]
        for k in range(_dofs(x)):
            vals = []
            for sign in (1.0, -1.0):
                arr = base.copy()
                if x.dtype.is_complex:
                    arr.flat[k // 2] += sign * eps * (1j if k % 2 else 1.0)
                else:
                    arr.flat[k] += sign * eps
                xp = T.tensor(arr, dtype=x.dtype, device=x.device).requires_grad_(True)
                args = list(inputs)
                args[i] = xp
                with enable_grad():  # func may differentiate internally (gradgradcheck)
                    outs = _diff_outputs(func(*args))
                vals.append([_real_values(o) for o in outs])
            for j in range(len(base_out)):
                cols[j][k] = (vals[0][j] - vals[1][j]) / (2 * eps)
        jac.append(cols)
    return jac


def get_analytical_jacobian(func: Any, inputs: Any) -> tuple[list[list[np.ndarray]], list[Tensor]]:
    T = _T()
    inputs = _as_tuple(inputs)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    with enable_grad():
        outs = _diff_outputs(func(*inputs))
    jac = [[np.zeros((_dofs(x), _dofs(o))) for o in outs] for x in diff_inputs]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(_dofs(o)):
            # grad_output 1 (1j) at an element: the gradient of its real (imaginary) part
            go = T.tensor(_unit(o, k), dtype=o.dtype, device=o.device)
            gs = _grad([o], diff_inputs, [go], retain_graph=True, allow_unused=True)
            for i, g in enumerate(gs):
                if g is not None:
                    if tuple(g.shape) != tuple(diff_inputs[i].shape):
                        raise GradcheckError(f"Gradient for input {i} has shape {tuple(g.shape)}, expected "
                                             f"{tuple(diff_inputs[i].shape)}")
                    if g.dtype.is_complex != diff_inputs[i].dtype.is_complex:
                        raise GradcheckError(f"Gradient for input {i} has dtype {g.dtype}, expected {diff_inputs[i].dtype}")
                    jac[i][j][:, k] = _real_values(g)
    return jac, outs


def get_forward_jacobian(func: Any, inputs: Any) -> list[list[np.ndarray]]:
    """jac[i][j] like ``get_numerical_jacobian``'s, each row the output tangents of one forward-AD jvp
    along a unit direction of input i's real dofs."""
    T = _T()
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    inputs = _as_tuple(inputs)
    with enable_grad():
        base_out = _diff_outputs(func(*inputs))
    jac: list[list[np.ndarray]] = []
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        cols = [np.zeros((_dofs(x), _dofs(o))) for o in base_out]
        for k in range(_dofs(x)):
            lid = enter_level()
            try:
                dual = x.view_as(x)  # still requiring grad: func may differentiate (gradgradcheck)
                set_tangent(dual, lid, T.tensor(_unit(x, k), dtype=x.dtype, device=x.device))
                args = list(inputs)
                args[i] = dual
                outs = _diff_outputs(func(*args))
                for j, o in enumerate(outs):
                    tan = tangent_of(o, lid)
                    if tan is not None:
                        cols[j][k] = _real_values(tan)
            finally:
                exit_level(lid)
        jac.append(cols)
    return jac


def gradcheck(func: Any, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """True if the analytical Jacobian of ``func`` matches finite differences at ``inputs``.

    ``check_backward_ad`` compares the Jacobian backward mode gives, ``check_forward_ad`` the one
    forward-mode AD gives (one jvp per input dof).
    """
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have "
                         "requires_grad=True.")
    numerical = get_numerical_jacobian(func, inputs, eps)
    checks = []
    if check_backward_ad:
        checks.append(("Jacobian mismatch", get_analytical_jacobian(func, inputs)[0]))
    if check_forward_ad:
        checks.append(("Jacobian computed with forward mode mismatch", get_forward_jacobian(func, inputs)))
    for what, analytical in checks:
        for i, (num_cols, ana_cols) in enumerate(zip(numerical, analytical)):
            for j, (n, a) in enumerate(zip(num_cols, ana_cols)):
                if n.shape != a.shape or not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"{what} for output {j} with respect to input {i},\nnumerical:{n}\nanalytical:{a}\n")
    return True


def _random_like(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    """Standard normal values shaped like ``t`` (complex ones for a complex ``t``)."""
    shape = tuple(t.shape)
    if t.dtype.is_complex:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return rng.standard_normal(shape)


def gradgradcheck(func: Any, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the gradients of ``func`` (second derivatives), w.r.t. inputs and grad_outputs."""
    T = _T()
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with no_grad():
            outs = _diff_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(T.tensor(_random_like(rng, o), dtype=o.dtype, device=o.device).requires_grad_(True)
                             for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def new_func(*args: Any) -> Any:
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _diff_outputs(func(*ins)) if o.requires_grad]
        diff_ins = [ins[i] for i in diff_idx]
        gs = _grad(outs, diff_ins, list(gos[: len(outs)]), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    # check_fwd_over_rev: the gradients' Jacobian by forward AD over the backward pass
    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
