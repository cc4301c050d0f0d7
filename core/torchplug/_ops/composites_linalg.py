"""Linear-algebra composites: products over mm/bmm/mul (einsum, tensordot, kron, addmv...) and the
``linalg`` norms, pinv, matrix_rank and matrix_power over the linalg primitives (backend-generic)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import _broadcast_shapes, scalar_type_name
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._tensor.construct import unlink_view
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["COMPOSITES", "einsum", "vector_norm"]


def _fresh(t: Tensor) -> Tensor:
    return unlink_view(t)


def _scale(t: Tensor, factor: Any) -> Tensor:
    return t if factor == 1 else A.mul(t, factor)


def _axpby(prod: Tensor, self: Tensor, beta: Any, alpha: Any) -> Tensor:
    """``beta * self + alpha * prod`` with self expanded to the product's shape (beta=0 ignores self's values)."""
    bias = A.expand(self, list(prod.shape))
    prod = _scale(prod, alpha)
    if beta == 0:
        return prod
    return A.add(prod, _scale(bias, beta))


# ---- products ------------------------------------------------------------------------------------------
def outer(self: Tensor, vec2: Tensor, name: str = "outer") -> Tensor:
    if self.dim() != 1:
        raise RuntimeError(f"{name}: Expected 1-D argument self, but got {self.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"{name}: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return A.mul(A.reshape(self, [self.shape[0], 1]), vec2)


def addmv(self: Tensor, mat: Tensor, vec: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if mat.dim() == 2 and vec.dim() == 1 and self.dim() == 1 and self.shape[0] not in (1, mat.shape[0]):
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    return _axpby(A.mv(mat, vec), self, beta, alpha)


def addr(self: Tensor, vec1: Tensor, vec2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return _axpby(outer(vec1, vec2), self, beta, alpha)


def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _axpby(A.bmm(batch1, batch2), self, beta, alpha)


def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if batch1.dim() >= 2 and batch2.dim() >= 3:
        A.expand(self, [batch1.shape[1], batch2.shape[2]])  # PyTorch checks self's shape first
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, n, k = batch1.shape
    b2, k2, m = batch2.shape
    if b != b2 or k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}]."
        )
    # sum_b A_b @ B_b is one GEMM: [n, b*k] @ [b*k, m]
    lhs = A.reshape(A.permute(batch1, [1, 0, 2]), [n, b * k])
    rhs = A.reshape(batch2, [b * k, m])
    return _axpby(A.mm(lhs, rhs), self, beta, alpha)


def tensordot(self: Tensor, other: Tensor, dims_self: Sequence[int], dims_other: Sequence[int]) -> Tensor:
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    na, nb = self.dim(), other.dim()
    ca = [_wrap_dim(d, na) for d in dims_self]
    cb = [_wrap_dim(d, nb) for d in dims_other]
    a, b = self, other
    for da, db in zip(ca, cb):
        sa, sb = self.shape[da], other.shape[db]
        if sa != sb:
            if sa == 1:
                b = A.sum(b, [db], True, dtype=b.dtype)
            elif sb == 1:
                a = A.sum(a, [da], True, dtype=a.dtype)
            else:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {sa} in dim {da} and second has size "
                    f"{sb} in dim {db}"
                )
    free_a = [d for d in range(na) if d not in ca]
    free_b = [d for d in range(nb) if d not in cb]
    k = math.prod(a.shape[d] for d in ca)
    m = math.prod(a.shape[d] for d in free_a)
    n = math.prod(b.shape[d] for d in free_b)
    lhs = A.reshape(A.permute(a, free_a + ca), [m, k])
    rhs = A.reshape(A.permute(b, cb + free_b), [k, n])
    return A.reshape(A.mm(lhs, rhs), [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def inner(self: Tensor, other: Tensor) -> Tensor:
    if self.dim() == 0 or other.dim() == 0:
        return A.mul(self, other)
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(self.shape)} and "
            f"{list(other.shape)}"
        )
    return tensordot(self, other, [-1], [-1])


def kron(self: Tensor, other: Tensor) -> Tensor:
    n = max(self.dim(), other.dim())
    sa = [1] * (n - self.dim()) + list(self.shape)
    sb = [1] * (n - other.dim()) + list(other.shape)
    # ATen's KronImpl: _unsafe_view in and out, so the graph has its UnsafeViewBackward0 nodes
    a = _flat_view(self, [v for s in sa for v in (s, 1)])
    b = _flat_view(other, [v for s in sb for v in (1, s)])
    return A._unsafe_view(A.mul(a, b), [x * y for x, y in zip(sa, sb)])


def _flat_view(t: Tensor, shape: list[int]) -> Tensor:
    return A._unsafe_view(t, shape) if t.is_contiguous() else A.reshape(t, shape)


def linalg_cross(self: Tensor, other: Tensor, dim: int = -1) -> Tensor:
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(self.dtype)} but found {scalar_type_name(other.dtype)}")
    if self.dtype is D.bool_:  # PyTorch's cross kernel takes every numeric type but bool
        raise NotImplementedError(f"\"cross\" not implemented for '{scalar_type_name(self.dtype)}'")
    d = _wrap_dim(dim, self.dim())
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[d]} and {other.shape[d]}"
        )
    shape = _broadcast_shapes(list(self.shape), list(other.shape))
    a, b = A.expand(self, shape), A.expand(other, shape)
    x = [A.narrow(a, d, i, 1) for i in range(3)]
    y = [A.narrow(b, d, i, 1) for i in range(3)]
    parts = [A.sub(A.mul(x[(i + 1) % 3], y[(i + 2) % 3]), A.mul(x[(i + 2) % 3], y[(i + 1) % 3])) for i in range(3)]
    return A.cat(parts, d)


def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly or "
            "simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of linalg.cross "
            "in a future release.",
            UserWarning, stacklevel=3,
        )
        shape = _broadcast_shapes(list(self.shape), list(other.shape)) if self.dim() == other.dim() else list(self.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return A.linalg_cross(self, other, dim=dim)  # through the op: one LinalgCrossBackward0 node, as torch.cross


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: int | None = None) -> Tensor:
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(t.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.device.type == "cpu" and x1.dtype in (D.float16, D.bfloat16):  # PyTorch's cpu kernel: float/double
        raise NotImplementedError(f"\"cdist\" not implemented for '{scalar_type_name(x1.dtype)}'")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if not (p == 2 and (compute_mode == 1 or (not compute_mode and (r1 > 25 or r2 > 25)))):
        return A._cdist_forward(x1, x2, p, compute_mode)  # ATen's route without the matrix product: one node
    return _cdist_forward(x1, x2, p, compute_mode)


def _cdist_forward(x1: Tensor, x2: Tensor, p: float, compute_mode: int | None = None) -> Tensor:
    # the distances of the broadcast differences (cdist checked the arguments)
    batch = _broadcast_shapes(list(x1.shape[:-2]), list(x2.shape[:-2]))
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    a = A.expand(x1, batch + [r1, m])
    b = A.expand(x2, batch + [r2, m])
    if m == 0:
        return A.zeros(batch + [r1, r2], dtype=x1.dtype, device=x1.device)
    diff = A.abs(A.sub(A.unsqueeze(a, -2), A.unsqueeze(b, -3)))
    if p == 0:
        return A.sum(A.ne(diff, 0), [-1], dtype=x1.dtype)
    if p == math.inf:
        return A.amax(diff, [-1])
    if p == 1:
        return A.sum(diff, [-1])
    if p == 2:
        return A.sqrt(A.sum(A.mul(diff, diff), [-1]))
    return A.pow(A.sum(A.pow(diff, p), [-1]), 1.0 / p)


def _pdist_forward(self: Tensor, p: float = 2) -> Tensor:
    # the norms of the differences of the row pairs i < j, in row-major order of the pairs (pdist checked self)
    n = self.shape[0]
    if n <= 1:
        return A.empty([0], dtype=self._dtype, device=self._device)
    pairs = A.triu_indices(n, n, 1, device=self._device)
    first = A.index_select(self, 0, A.select(pairs, 0, 0))
    second = A.index_select(self, 0, A.select(pairs, 0, 1))
    return A.linalg_vector_norm(A.sub(first, second), p, [1])


def matrix_power(self: Tensor, n: int, name: str = "linalg.matrix_power") -> Tensor:
    if self.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {self.shape[-2]} by {self.shape[-1]} matrices"
        )
    if n == 0:
        # ATen: self.clone(contiguous).copy_(eye.expand_as(self)), so the result stays in the graph
        eye = A.eye(self.shape[-1], self.shape[-1], dtype=self.dtype, device=self.device)
        return A.copy_(A.clone(self, memory_format="contiguous_format"), A.expand(eye, list(self.shape)))
    base = self
    if n < 0:
        base, n = A.linalg_inv(self), -n
        if n == 1:
            return base  # PyTorch returns the inverse as computed (column-major)
    if n == 1:
        return A.clone(base, memory_format="contiguous_format")
    # ATen's order of products (so values round and the graph nests as torch's): small powers directly,
    # then the binary decomposition of n from its least significant bit
    if n == 2:
        return A.matmul(base, base)
    if n == 3:
        return A.matmul(A.matmul(base, base), base)
    z = result = None
    while n:
        z = base if z is None else A.matmul(z, z)
        if n & 1:
            result = z if result is None else A.matmul(result, z)
        n >>= 1
    assert result is not None
    return result


def linalg_multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {_cpp(first.dtype)} and tensor "
                f"{i} {_cpp(t.dtype)}"
            )
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = A.unsqueeze(first, 0)
    if last.dim() == 1:
        mats[-1] = A.unsqueeze(last, -1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    # ATen's order of products (the cheaper parenthesization for 3, the matrix-chain order beyond), so
    # values round and the graph nests as torch's; the result is viewed to the output shape
    if n == 2:
        out = A.mm(mats[0], mats[1])
    elif n == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            out = A.mm(mats[0], A.mm(mats[1], mats[2]))
        else:
            out = A.mm(A.mm(mats[0], mats[1]), mats[2])
    else:
        out = _chain_multiply(mats, _matrix_chain_order(mats), 0, n - 1)
    shape = ([] if first.dim() == 1 else [out.shape[0]]) + ([] if last.dim() == 1 else [out.shape[1]])
    return A.view(out, shape)


def _matrix_chain_order(mats: Sequence[Tensor]) -> list[list[int]]:
    """ATen's matrix_chain_order: split[i][j] is where the cheapest product of mats[i..j] splits."""
    n = len(mats)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None  # type: ignore[call-overload]
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain_multiply(mats: Sequence[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return A.mm(_chain_multiply(mats, split, i, k), _chain_multiply(mats, split, k + 1, j))


def _cpp(dtype: D.dtype) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(dtype.name, dtype.name)


def chain_matmul(matrices: Sequence[Tensor]) -> Tensor:
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use torch.linalg.multi_dot "
        "instead, which accepts a list of two or more tensors rather than multiple parameters.",
        UserWarning, stacklevel=3,
    )
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return A.clone(matrices[0])
    return linalg_multi_dot(matrices)


# ---- einsum -------------------------------------------------------------------------------------------------
_ELL = "..."


def _parse_einsum(equation: str, operands: Sequence[Tensor]) -> tuple[list[list[Any]], list[Any], int]:
    """Label lists per operand (ellipsis dims become ``('...', k)`` labels, right-aligned) and the output."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    pos = 0
    ell_dims = 0
    parsed: list[list[Any]] = []
    for i, (term, op) in enumerate(zip(terms, operands)):
        labels: list[Any] = []
        j = 0
        has_ell = False
        while j < len(term):
            if term.startswith(_ELL, j):
                if has_ell:
                    raise RuntimeError("einsum(): found '.' for operand {i} for which an ellipsis was already found")
                has_ell = True
                labels.append(_ELL)
                j += 3
                continue
            ch = term[j]
            if not ch.isascii() or not ch.isalpha():
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {pos + j} in the equation string, subscripts must be "
                    "in [a-zA-Z]"
                )
            labels.append(ch)
            j += 1
        pos += len(term) + 1
        n_named = len(labels) - (1 if has_ell else 0)
        if has_ell:
            if n_named > op.dim():
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({n_named}) is more than the number of "
                    f"dimensions ({op.dim()}) for operand {i}"
                )
            k = op.dim() - n_named
            ell_dims = max(ell_dims, k)
            at = labels.index(_ELL)
            labels[at : at + 1] = [(_ELL, k - 1 - e) for e in range(k)]  # (..., distance from the right)
        elif n_named != op.dim():
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) does not match the number of "
                f"dimensions ({op.dim()}) for operand {i} and no ellipsis was given"
            )
        parsed.append(labels)
    ell_labels = [(_ELL, ell_dims - 1 - e) for e in range(ell_dims)]
    if arrow:
        out: list[Any] = []
        j = 0
        seen_ell = False
        while j < len(rhs):
            if rhs.startswith(_ELL, j):
                if seen_ell:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                seen_ell = True
                out.extend(ell_labels)
                j += 3
                continue
            ch = rhs[j]
            if not ch.isascii() or not ch.isalpha():
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {len(lhs) + 2 + j} in the equation string, subscripts "
                    "must be in [a-zA-Z]"
                )
            if ch in out:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
            if not any(ch in p for p in parsed):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any input operand")
            out.append(ch)
            j += 1
    else:
        counts: dict[str, int] = {}
        for p in parsed:
            for lab in p:
                if isinstance(lab, str):
                    counts[lab] = counts.get(lab, 0) + 1
        out = ell_labels + sorted(lab for lab, c in counts.items() if c == 1)
    return parsed, out, ell_dims


def _einsum_path(labels: list[list[Any]], ops: list[Tensor], out: list[Any]) -> list[int] | None:
    """The contraction path opt_einsum gives 3+ operands, flattened (torch.einsum passes it to ATen); None
    (contract left to right) for fewer operands, when opt_einsum is not installed, is disabled with
    ``torchplug.backends.opt_einsum.enabled = False``, or declines."""
    if len(ops) <= 2:
        return None
    from torchplug._ops.einsum_path import get_opt_einsum, path_strategy

    strategy = path_strategy()  # torchplug.backends.opt_einsum: None when disabled or not installed
    if strategy is None:
        return None
    opt_einsum = get_opt_einsum()
    symbols: dict[Any, str] = {}
    for labs in labels + [out]:
        for lab in labs:
            if lab not in symbols:
                symbols[lab] = opt_einsum.get_symbol(len(symbols))
    eq = ",".join("".join(symbols[lab] for lab in labs) for labs in labels) + "->" + "".join(symbols[lab] for lab in out)
    try:
        path, _ = opt_einsum.contract_path(eq, *[tuple(t.shape) for t in ops], shapes=True, optimize=strategy)
    except Exception:  # noqa: BLE001 - opt_einsum rejects some broadcasts torch accepts: keep going without it
        return None
    if not all(len(p) == 2 for p in path):
        return None
    return [i for pair in path for i in pair]


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """ATen's sumproduct_pair (keepdim): ``(left * right).sum(sum_dims, keepdim=True)`` of two aligned operands
    by one bmm, with ATen's permutations and reshapes (so autograd records its nodes)."""
    if not sum_dims:
        return A.mul(left, right)
    summed = set(sum_dims)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    lshape, rshape = tuple(left.shape), tuple(right.shape)
    for i, (ls, rs) in enumerate(zip(lshape, rshape)):
        sl, sr = ls != 1, rs != 1
        if i in summed:
            if sl and sr:
                _same_size(ls, rs)
                sum_size *= ls
            elif sl:  # in one operand only: summed right away
                left = A.sum(left, [i], True, dtype=left.dtype)
            elif sr:
                right = A.sum(right, [i], True, dtype=right.dtype)
        elif sl and sr:
            _same_size(ls, rs)
            lro.append(i)
            lro_size *= ls
        elif sl:
            lo.append(i)
            lo_size *= ls
        else:
            ro.append(i)
            ro_size *= rs
    if lo and ro and ro[-1] < lo[0]:  # the right operand's dims come first in the output: bmm them first
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
        lshape, rshape = rshape, lshape
    out_size = [lshape[d] for d in lro + lo] + [1] * len(sum_dims) + [rshape[d] for d in ro]
    order = lro + lo + sum_dims + ro
    operm = [0] * len(order)
    for k, d in enumerate(order):
        operm[d] = k
    a = A.reshape(A.permute(left, order), [lro_size, lo_size, sum_size])
    b = A.reshape(A.permute(right, lro + sum_dims + ro + lo), [lro_size, sum_size, ro_size])
    return A.permute(A.view(A.bmm(a, b), out_size), operm)


def _same_size(a: int, b: int) -> None:
    if a != b:
        raise RuntimeError("non-broadcast dimensions must match")


def _aligned(t: Tensor, i: int, labs: list[Any], perm_index: dict[Any, int], sizes: dict[Any, int],
             dim_counts: list[int]) -> Tensor:
    """Operand ``i`` with its repeated labels' diagonals taken, a size-1 dim for each label it lacks, and its
    dims permuted to ``perm_index``'s order (ATen's alignment); counts the operands where each label is not 1."""
    permutation = [-1] * len(dim_counts)
    dim = 0
    shape = tuple(t.shape)
    for lab in labs:
        p = perm_index[lab]
        if permutation[p] == -1:
            size = shape[dim]
            if size != 1:
                seen = sizes.get(lab, 1)
                if seen != 1 and seen != size:
                    if isinstance(lab, str):
                        raise RuntimeError(f"einsum(): subscript {lab} has size {size} for operand {i} which does "
                                           f"not broadcast with previously seen size {seen}")
                    raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size {size} "
                                       f"which does not broadcast with previously seen ellipsis with size {seen} for "
                                       "the respective dimension")
                sizes[lab] = size
                dim_counts[p] += 1
            permutation[p] = dim
            dim += 1
        else:  # a repeated label: its diagonal, where the label first appeared
            prev = permutation[p]
            if shape[dim] != shape[prev]:
                raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {i} but the sizes don't match, "
                                   f"{shape[dim]} != {shape[prev]}")
            t = A["movedim.intlist"](A.diagonal(t, 0, prev, dim), [-1], [prev])
            shape = tuple(t.shape)
    for k in range(len(permutation)):
        if permutation[k] == -1:
            t = A.unsqueeze(t, dim)
            permutation[k] = dim
            dim += 1
    return A.permute(t, permutation)


def einsum(equation: str, tensors: Sequence[Tensor], path: Sequence[int] | None = None) -> Tensor:
    """ATen's einsum, step for step (so autograd records its graph): every operand aligned to the output's
    labels followed by the contracted ones, then pairwise ``sumproduct_pair`` contractions, left to right or
    along ``path`` (opt_einsum's, for 3+ operands, as torch.einsum computes it)."""
    ops = list(tensors)
    if not ops:
        raise RuntimeError("einsum(): must provide at least one operand")
    if path is not None:
        path_size = 1 if len(ops) == 1 else (len(ops) - 1) * 2
        if len(path) != path_size:
            raise RuntimeError(f"einsum(): expected contraction path given in path parameter to have size {path_size} "
                               f"but got {len(path)}")
    labels, out, ell_dims = _parse_einsum(equation, ops)
    for t in ops[1:]:
        if t.dtype is not ops[0].dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_type_name(ops[0].dtype)} but found {scalar_type_name(t.dtype)}"
            )
    # permuted order: the output's labels, then the ellipsis dims it lacks, then the other labels (A-Z, a-z)
    perm_index = {lab: k for k, lab in enumerate(out)}
    for lab in [(_ELL, ell_dims - 1 - e) for e in range(ell_dims)] + sorted(
            {lab for labs in labels for lab in labs if isinstance(lab, str)}):
        perm_index.setdefault(lab, len(perm_index))
    out_num_dim, total = len(out), len(perm_index)
    dim_counts = [0] * total
    sizes: dict[Any, int] = {}
    ops = [_aligned(t, i, labs, perm_index, sizes, dim_counts) for i, (t, labs) in enumerate(zip(ops, labels))]
    if path is None:
        path = _einsum_path(labels, list(tensors), out)
        append = path is not None
    else:
        append = True
    steps = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if append:
            i, j = sorted((next(steps), next(steps)))
            if i == j or i < 0 or j >= len(ops):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) " + (
                    "cannot contract an operand with itself" if i == j else "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        # contracted dims: summed in the product once no later operand has them, or in one operand right away
        sum_dims, a_dims, b_dims = [], [], []
        ashape, bshape = tuple(a.shape), tuple(b.shape)
        for d in range(out_num_dim, total):
            sa, sb = ashape[d] != 1, bshape[d] != 1
            if sa and sb:
                _same_size(ashape[d], bshape[d])
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1 and (sa or sb):
                (a_dims if sa else b_dims).append(d)
                dim_counts[d] = 0
        if a_dims:
            a = A.sum(a, a_dims, True, dtype=a.dtype)
        if b_dims:
            b = A.sum(b, b_dims, True, dtype=b.dtype)
        result = _sumproduct_pair(a, b, sum_dims)
        if append:
            ops.append(result)
        else:
            ops.insert(0, result)
    result = ops[0]
    if total > out_num_dim:
        if len(tensors) > 1:  # every contracted dim has size 1 by now
            return A.view(result, list(result.shape[:out_num_dim]))
        return A.sum(result, list(range(out_num_dim, total)))
    return result


# ---- linalg composites --------------------------------------------------------------------------------------
def _check_float(name: str, t: Tensor, what: str = "input") -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as {what}. Got {scalar_type_name(t.dtype)}")


def _real_dtype(dtype: D.dtype) -> D.dtype:
    return {"complex64": D.float32, "complex128": D.float64}.get(dtype.name, dtype)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """``linalg.vector_norm``: aten's op when one is registered, else this composite."""
    if DISPATCHER.find("aten::linalg_vector_norm") is not None:
        return A.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)
    _check_float("linalg.vector_norm", x)
    if dtype is not None:
        x = A._to_copy(x, dtype=dtype)
    if isinstance(dim, int):
        dim = [dim]
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else [_wrap_dim(d, x.dim()) for d in dim]
    a = A.abs(x)
    if ord == math.inf:
        return A.amax(a, dims, keepdim) if dims else a
    if ord == -math.inf:
        return A.amin(a, dims, keepdim) if dims else a
    if ord == 0:
        return A.sum(A.ne(a, 0), dims, keepdim, dtype=a.dtype)
    if ord == 1:
        return A.sum(a, dims, keepdim)
    if ord == 2:
        return A.sqrt(A.sum(A.mul(a, a), dims, keepdim))
    return A.pow(A.sum(A.pow(a, ord), dims, keepdim), 1.0 / ord)


def _matrix_dims(name: str, self: Tensor, dim: Sequence[int]) -> tuple[int, int]:
    if self.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = _wrap_dim(dim[0], self.dim()), _wrap_dim(dim[1], self.dim())
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _keep(result: Tensor, dims: tuple[int, int], keepdim: bool) -> Tensor:
    if not keepdim:
        return result
    for d in sorted(dims):
        result = A.unsqueeze(result, d)
    return result


def linalg_matrix_norm(self: Tensor, ord: Any, dim: Sequence[int] = (-2, -1), keepdim: bool = False, dtype: Any = None) -> Tensor:
    name = "linalg.matrix_norm"
    d0, d1 = _matrix_dims(name, self, dim)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{name}: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    _check_float(name, self)
    x = self if dtype is None else A._to_copy(self, dtype=dtype)
    if ord == "fro":
        return vector_norm(x, 2, [d0, d1], keepdim)
    if ord in ("nuc", 2, -2):
        moved = A["movedim.intlist"](x, [d0, d1], [-2, -1])
        sv = A.linalg_svdvals(moved)
        if ord == "nuc":
            r = A.sum(sv, [-1])
        else:
            r = A.amax(sv, [-1]) if ord == 2 else A.amin(sv, [-1])
        return _keep(r, (d0, d1), keepdim)
    # 1 / inf: max column / row sum of |x|, as ATen: the 1-norm over one dim, then amax/amin over the other
    sum_dim, red_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    if not keepdim and sum_dim < red_dim:
        red_dim -= 1  # the first reduction removed a dim in front of it
    sums = A.linalg_vector_norm(x, 1.0, [sum_dim], keepdim)
    return A.amax(sums, [red_dim], keepdim) if ord > 0 else A.amin(sums, [red_dim], keepdim)


def linalg_norm(self: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is None and ord is not None and self.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {self.dim()}D."
        )
    if ord is None:
        return vector_norm(self, 2, dim, keepdim, dtype)
    is_matrix = (dim is not None and len(dim) == 2) or (dim is None and self.dim() == 2)
    if is_matrix:
        return linalg_matrix_norm(self, ord, list(dim) if dim is not None else [-2, -1], keepdim, dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord} is not supported for vectors")  # pragma: no cover
    return vector_norm(self, ord, dim, keepdim, dtype)


def _tolerance(sv: Tensor, self: Tensor, atol: Any, rtol: Any) -> Tensor:
    """PyTorch's rank/pinv cut-off: max(atol, rtol * largest singular value)."""
    real = _real_dtype(self.dtype)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else D.finfo(real).eps * max(self.shape[-2], self.shape[-1])
    atol = 0.0 if atol is None else atol
    top = A.amax(sv, [-1], True) if sv.shape[-1] else A.zeros(list(sv.shape[:-1]) + [1], dtype=sv.dtype, device=sv.device)
    return A.maximum(A.mul(top, rtol), A.full([], atol, dtype=sv.dtype, device=sv.device))


def linalg_pinv(self: Tensor, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    if self.dim() < 2 or not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            f"linalg.pinv({scalar_type_name(self.dtype)}{{{list(self.shape)}}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types"
        )
    if hermitian:
        w, v = A.linalg_eigh(self)
        tol = _tolerance(A.abs(w), self, atol, rtol)
        keep = A.gt(A.abs(w), tol)
        inv_w = A.where(keep, A.reciprocal(w), A.zeros([], dtype=w.dtype, device=w.device))
        return A.matmul(A.mul(v, A.unsqueeze(inv_w, -2)), A.transpose(_conj(v), -2, -1))
    u, s, vh = A.linalg_svd(self, False)
    tol = _tolerance(s, self, atol, rtol)
    keep = A.gt(s, tol)
    inv_s = A.where(keep, A.reciprocal(s), A.zeros([], dtype=s.dtype, device=s.device))
    vs = A.mul(A.transpose(_conj(vh), -2, -1), A.unsqueeze(_to(inv_s, vh.dtype), -2))
    return A.matmul(vs, A.transpose(_conj(u), -2, -1))


def _to(t: Tensor, dtype: D.dtype) -> Tensor:
    return t if t.dtype is dtype else A._to_copy(t, dtype=dtype)


def _conj(t: Tensor) -> Tensor:
    """The complex conjugate (a copy); ``t`` itself for real dtypes."""
    if not t.dtype.is_complex:
        return t
    for name in ("conj_physical", "conj"):
        if DISPATCHER.find(f"aten::{name}") is not None:
            return getattr(A, name)(t)
    # No conj op in the table yet: rebuild re - i*im from real casts (i*z has real part -im).
    real_dtype = _real_dtype(t.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        re = A._to_copy(t, dtype=real_dtype)
        im = A._to_copy(A.mul(t, -1j), dtype=real_dtype)
    return A._to_copy(A.add(re, A.mul(im, -1j)), dtype=t.dtype)


def linalg_matrix_rank(self: Tensor, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    _check_float("torch.linalg.matrix_rank", self)
    sv = A.abs(A.linalg_eigvalsh(self)) if hermitian else A.linalg_svdvals(self)
    tol = _tolerance(sv, self, atol, rtol)
    return A.sum(A.gt(sv, tol), [-1])


def linalg_matrix_power(self: Tensor, n: int) -> Tensor:
    return matrix_power(self, n)


def _matrix_norm_str(self: Tensor, ord: str = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False, dtype: Any = None) -> Tensor:
    return linalg_matrix_norm(self, ord, dim, keepdim, dtype)


def _norm_str(self: Tensor, ord: str, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return linalg_norm(self, ord, dim, keepdim, dtype)


COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "outer": ("CompositeImplicitAutograd", outer),
    "addmv": ("CompositeExplicitAutograd", addmv),
    "addr": ("CompositeExplicitAutograd", addr),
    "baddbmm": ("CompositeExplicitAutograd", baddbmm),
    "addbmm": ("CompositeExplicitAutograd", addbmm),
    "einsum": ("CompositeImplicitAutograd", einsum),
    "tensordot": ("CompositeImplicitAutograd", tensordot),
    "kron": ("CompositeImplicitAutograd", kron),
    "linalg_cross": ("CompositeExplicitAutograd", linalg_cross),
    "cross": ("CompositeImplicitAutograd", cross),
    "cdist": ("CompositeImplicitAutograd", cdist),
    "_cdist_forward": ("CompositeExplicitAutograd", _cdist_forward),
    "_pdist_forward": ("CompositeExplicitAutograd", _pdist_forward),
    "inner": ("CompositeImplicitAutograd", inner),
    "matrix_power": ("CompositeImplicitAutograd", lambda self, n: matrix_power(self, n)),
    "chain_matmul": ("CompositeImplicitAutograd", chain_matmul),
    "linalg_multi_dot": ("CompositeImplicitAutograd", linalg_multi_dot),
    "linalg_matrix_norm": ("CompositeImplicitAutograd", linalg_matrix_norm),
    "linalg_matrix_norm.str_ord": ("CompositeImplicitAutograd", _matrix_norm_str),
    "linalg_norm": ("CompositeImplicitAutograd", linalg_norm),
    "linalg_norm.ord_str": ("CompositeImplicitAutograd", _norm_str),
    "linalg_pinv.atol_rtol_float": ("CompositeExplicitAutograd", linalg_pinv),  # one LinalgPinvBackward0 node
    "linalg_matrix_rank.atol_rtol_float": ("CompositeImplicitAutograd", linalg_matrix_rank),
    "linalg_matrix_power": ("CompositeImplicitAutograd", linalg_matrix_power),
}
