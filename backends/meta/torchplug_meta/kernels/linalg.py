"""meta kernels for matrix products: shape and dtype checks with PyTorch's messages."""

from __future__ import annotations

from typing import Any

from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")


def _name(t: C.Tensor) -> str:
    return C.type_name(t._dtype)


@TABLE.impl("aten::mm")
def mm(self: C.Tensor, mat2: C.Tensor) -> C.Tensor:
    if self.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    (n, k), (k2, m) = C.shape(self), C.shape(mat2)
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_name(self)} != {_name(mat2)}")
    return C.new((n, m), self._dtype)


@TABLE.impl("aten::bmm")
def bmm(self: C.Tensor, mat2: C.Tensor) -> C.Tensor:
    if self.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), (b2, k2, m) = C.shape(self), C.shape(mat2)
    if (b2, k2) != (b, k):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: [{b2}, {k2}]."
        )
    if self._dtype is not mat2._dtype:
        raise RuntimeError(
            f"expected scalar type {C.scalar_type_name(self._dtype)} but found {C.scalar_type_name(mat2._dtype)}"
        )
    return C.new((b, n, m), self._dtype)


@TABLE.impl("aten::mv")
def mv(self: C.Tensor, vec: C.Tensor) -> C.Tensor:
    if self.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.dim()}, {vec.dim()}")
    (n, k), (k2,) = C.shape(self), C.shape(vec)
    if k != k2:
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{k}), vec ({k2})")
    if self._dtype is not vec._dtype:
        names = [C.scalar_type_name(t._dtype) for t in (vec, self, vec)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {', '.join(names[:2])}, and {names[2]}")
    return C.new((n,), self._dtype)


@TABLE.impl("aten::dot")
def dot(self: C.Tensor, tensor: C.Tensor) -> C.Tensor:
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D tensors")
    if self._dtype is not tensor._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {C.scalar_type_name(self._dtype)} and "
            f"{C.scalar_type_name(tensor._dtype)}"
        )
    n, n2 = self.numel(), tensor.numel()
    if n != n2:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{n2}] to have the same number of elements, "
            f"but got {n} and {n2} elements respectively"
        )
    return C.new((), self._dtype)


@TABLE.impl("aten::addmm")
def addmm(self: C.Tensor, mat1: C.Tensor, mat2: C.Tensor, beta: Any = 1, alpha: Any = 1) -> C.Tensor:
    if mat1.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.dim()}-D tensor")
    (n, k), (k2, m) = C.shape(mat1), C.shape(mat2)
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {C.scalar_type_name(mat1._dtype)} "
                           f"and {C.scalar_type_name(mat2._dtype)}")
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {C.scalar_type_name(self._dtype)} "
                           f"and {C.scalar_type_name(mat2._dtype)}")
    size = C.broadcast_shapes((n, m), C.shape(self))
    if size != (n, m):
        raise RuntimeError(f"The expanded size of the tensor ({n if len(size) > 1 else m}) must match the existing "
                           f"size ({C.shape(self)[0]}) at non-singleton dimension 0.  Target sizes: [{n}, {m}].  "
                           f"Tensor sizes: {list(C.shape(self))}")
    return C.new((n, m), mat1._dtype)
