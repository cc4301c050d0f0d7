"""Python bindings for linear-algebra ops: einsum/tensordot/chain_matmul signatures, the legacy ``torch.det``,
``torch.svd``, ``torch.qr``... spellings, and hiding the ``linalg_*`` aten names (they live in ``torchplug.linalg``)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

from torchplug._dispatch.aten import A
from torchplug._ops.surface import return_types
from torchplug._tensor.tensor import Tensor

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

HANDWRITTEN = {
    "linalg_inv", "linalg_solve", "linalg_det", "linalg_slogdet", "linalg_cholesky", "linalg_qr", "linalg_svd",
    "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh", "linalg_lstsq", "linalg_matrix_norm", "linalg_norm",
    "linalg_pinv", "linalg_matrix_rank", "linalg_matrix_power", "linalg_cross", "linalg_multi_dot",
    "einsum", "tensordot", "chain_matmul", "cdist",
}

for _name, _fields in (("slogdet", "sign logabsdet"), ("qr", "Q R"), ("svd", "U S V")):
    if not hasattr(return_types, _name):
        setattr(return_types, _name, namedtuple(_name, _fields.split()))


def einsum(*args: Any) -> Tensor:
    """Sum of products over the labelled dims of ``equation`` (``'ij,jk->ik'``, ellipsis ``...`` supported),
    or the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        return A.einsum(equation, operands)
    return A.einsum(*_sublist_equation(args))


def _sublist_equation(args: tuple[Any, ...]) -> tuple[str, list[Tensor]]:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` -> ``('ab,bc->ac', [a, b])``."""
    def letters(sub: Any) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {s}")
        return "".join(out)

    operands = list(args[0::2])
    subs = list(args[1::2])
    output = None
    if len(operands) > len(subs):
        output = operands.pop()
    eq = ",".join(letters(s) for s in subs)
    if output is not None:
        eq += "->" + letters(output)
    return eq, operands


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` (an int: the last/first ``dims`` dims; or two lists of dims) of ``a`` and ``b``."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.dim() == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = list(range(a.dim() - dims, a.dim()))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if out is not None:
        return A["tensordot.out"](a, b, dims_a, dims_b, out=out)
    return A.tensordot(a, b, dims_a, dims_b)


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Deprecated: the product of the given matrices (use ``linalg.multi_dot``)."""
    if out is not None:
        return A["chain_matmul.out"](list(matrices), out=out)
    return A.chain_matmul(list(matrices))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` and ``x2`` (batched)."""
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return A.cdist(x1, x2, p, modes.index(compute_mode) or None)


# ---- legacy spellings ---------------------------------------------------------------------------------------
def det(input: Tensor) -> Tensor:
    """Alias of ``linalg.det``."""
    return A.linalg_det(input)


def inverse(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of ``linalg.inv``."""
    from torchplug._ops.linalg import inv

    return inv(input, out=out)


def slogdet(input: Tensor) -> Any:
    """``(sign, logabsdet)`` of the determinant."""
    return return_types.slogdet(*A.linalg_slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """The log of the determinant (nan for a negative determinant)."""
    sign, logabs = A.linalg_slogdet(input)
    if input.dtype.is_complex:
        return A.add(A.log(sign), logabs)
    return A.where(A.lt(sign, 0), A.full([], float("nan"), dtype=logabs.dtype, device=logabs.device), logabs)


def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Deprecated spelling of ``linalg.cholesky``."""
    from torchplug._ops.linalg import cholesky as _cholesky

    return _cholesky(input, upper=upper, out=out)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """Deprecated ``(U, S, V)`` SVD (V, not Vh); ``some=False`` gives full U and V."""
    u, s, vh = A.linalg_svd(input, not some)
    v = A.transpose(vh, -2, -1)
    if input.dtype.is_complex:
        from torchplug._ops.composites_linalg import _conj

        v = _conj(v)
    if not compute_uv:
        u, v = A.mul(u, 0), A.mul(v, 0)
    return return_types.svd(u, s, v)


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """Deprecated QR (``some=False`` is mode 'complete')."""
    return return_types.qr(*A.linalg_qr(input, "reduced" if some else "complete"))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with relative cut-off ``rcond``."""
    return A["linalg_pinv.atol_rtol_float"](input, atol=None, rtol=rcond)


def ger(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`outer`."""
    if out is not None:
        return A["outer.out"](input, vec2, out=out)
    return A.outer(input, vec2)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "einsum": einsum, "tensordot": tensordot, "chain_matmul": chain_matmul, "cdist": cdist,
    "det": det, "inverse": inverse, "slogdet": slogdet, "logdet": logdet, "cholesky": cholesky, "svd": svd,
    "qr": qr, "pinverse": pinverse, "ger": ger,
}


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


METHODS: dict[str, Any] = {
    name: _method(FUNCTIONS[name]) for name in ("det", "inverse", "slogdet", "logdet", "cholesky", "svd", "qr",
                                                "pinverse", "ger")
}
