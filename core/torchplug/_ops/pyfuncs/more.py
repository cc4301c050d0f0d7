"""Python bindings of ``_schemas/more.py`` and of Tensor methods that change a tensor's metadata in place:
``fill_diagonal_`` (a method only, as in torch), ``pdist``, ``t_``/``unsqueeze_``/``squeeze_``/``transpose_``
(and the ``swapdims_``/``swapaxes_`` aliases), ``resize_``/``resize_as_`` and ``set_``."""

from __future__ import annotations

from typing import Any

from torchplug._dispatch.aten import A
from torchplug._ops.composites import scalar_type_name
from torchplug._tensor.tensor import Tensor, _grad_mode_on, autograd_hooks

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

# fill_diagonal_ is a Tensor method only: torch has no torch.fill_diagonal_
HANDWRITTEN = {"fill_diagonal_"}


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place (every dim equal; ``wrap`` restarts it below a tall matrix's square)."""
    return A.fill_diagonal_(self, fill_value, wrap)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between every pair of rows of a 2-D tensor (``torch.pdist``)."""
    from torchplug._ops.nn_functional_more import pdist as impl

    return impl(input, p)


# ---- metadata changed in place -----------------------------------------------------------------------------
def _grad_recording(t: Tensor) -> bool:
    api = autograd_hooks.tensor_api
    if api is None or not t._requires_grad:
        return False
    return _grad_mode_on()


def _adopt(self: Tensor, view: Tensor) -> Tensor:
    """Give ``self`` the sizes/strides (and autograd history) of ``view``, a view of ``self``'s storage."""
    self._data = view._data
    cls = type(view)
    if cls is not Tensor and cls is type(self):  # a subclass's own slots (vmap's batched value and its dim)
        for slot in cls.__dict__.get("__slots__", ()):
            setattr(self, slot, getattr(view, slot))
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        self._autograd_meta = view._autograd_meta
    fw = view.__dict__.get("_fw")
    if fw:  # forward-AD tangents (the autograd plugin's): the view's are the same view of self's
        self.__dict__["_fw"] = fw
    return self


def _inplace_view(name: str, make: Any, overload: Any = None) -> Any:
    """The method ``name``: ``make``'s view adopted by ``self``; its node takes the type PyTorch gives the in-place
    op (``overload(*args)``, the aten overload: ``squeeze_.dim`` records SqueezeBackward4, not squeeze's
    SqueezeBackward1)."""
    op = name if overload is None else overload

    qualified = None if callable(op) else "aten::" + op

    def method(self: Tensor, *args: Any) -> Tensor:
        recording = _grad_recording(self)
        if recording and self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        _adopt(self, make(self, *args))
        if recording and self._grad_fn is not None:
            autograd_hooks.tensor_api.rename_node(self._grad_fn, qualified or "aten::" + op(*args))
        _bump_inplace_view(self)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: ``self`` itself takes the new sizes and strides."
    return method


def _bump_inplace_view(self: Tensor) -> None:
    """Bump ``self``'s version counter as PyTorch does for an in-place view op (saved tensors of ``self`` and its
    other views are then stale).  ``self``'s own history was just recorded at the new geometry, so a view whose
    recorded version was current stays current: it must not be regenerated as an as_strided view of its base."""
    d = self.__dict__
    current = d.get("_vv") == self._storage.version
    self._bump_version()
    if current:
        d["_vv"] = self._storage.version


def _t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return A.t(self)


def _squeeze(self: Tensor, dim: Any = None) -> Tensor:
    return A.squeeze(self, dim)


def _squeeze_overload(dim: Any = None) -> str:
    return "squeeze_" if dim is None else "squeeze_.dims" if isinstance(dim, (list, tuple)) else "squeeze_.dim"


# ---- resize_ / set_ ------------------------------------------------------------------------------------------
def _contiguous_strides(size: list[int]) -> list[int]:
    strides, step = [], 1
    for s in reversed(size):
        strides.append(step)
        step *= max(s, 1)
    return strides[::-1]


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Resize in place: keeps the storage (and its data) when it is large enough, else grows it."""
    size = [int(s) for s in (sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)) else sizes)]
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {size}")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    offset = self.storage_offset()
    numel = 1
    for s in size:
        numel *= s
    item = self._dtype.itemsize
    available = self._storage.nbytes // item
    if offset + numel > available:
        grown = A.empty([offset + numel], dtype=self._dtype, device=self._device)
        from torchplug._tensor.empty import fill_if_deterministic

        fill_if_deterministic(grown)  # the added part (torch fills it under deterministic algorithms)
        if available:
            old = A.as_strided(self, [available], [1], 0)
            A.copy_(A.narrow(grown, 0, 0, available), old)
        self._storage = grown._storage
        self._data = A.as_strided(grown, size, _contiguous_strides(size), offset)._data
        return self
    self._data = A.as_strided(self, size, _contiguous_strides(size), offset)._data
    return self


def _resize_as_(self: Tensor, the_template: Tensor, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    return _resize_(self, list(the_template.shape))


def _set_(self: Tensor, source: Any = None, storage_offset: int | None = None, size: Any = None,
          stride: Any = None) -> Tensor:
    """Make ``self`` a view of ``source``'s storage (a Tensor or a Storage), or empty with ``set_()``."""
    if source is None:
        empty = A.empty([0], dtype=self._dtype, device=self._device)
        self._storage, self._data = empty._storage, empty._data
        return self
    if isinstance(source, Tensor):
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type {_cpp(source)} to a tensor of type {_cpp(self)}")
        if source._device != self._device:
            raise RuntimeError(f"Attempted to call `set_` on a tensor on device {self._device} with a source on "
                               f"device {source._device}; move one of them first.")
        base = source
        if storage_offset is None:
            self._storage, self._data = source._storage, source._data
            return self
    else:
        base = _tensor_over(self, source)
        if storage_offset is None:
            storage_offset = 0
            size = [source.nbytes // self._dtype.itemsize]
    size = [int(s) for s in size]
    stride = _contiguous_strides(size) if not stride else [int(s) for s in stride]
    view = A.as_strided(base, size, stride, int(storage_offset))
    self._storage, self._data = base._storage, view._data
    return self


def _tensor_over(self: Tensor, storage: Any) -> Tensor:
    """A tensor of ``self``'s dtype whose storage is ``storage`` (one of this tensor's or a sibling's)."""
    if storage is self._storage:
        return self
    root = getattr(storage, "data", None)
    if getattr(root, "dtype", None) is None or root.dtype.itemsize != self._dtype.itemsize:
        raise NotImplementedError("set_(storage, ...) needs a storage whose buffer has this tensor's element size; "
                                  "pass a tensor of that storage instead: t.set_(other, offset, size, stride).")
    from torchplug._tensor.tensor import make_tensor

    return make_tensor(root.view(self._dtype.numpy_dtype), self._dtype, storage.device, self._keyset, storage)


_CPP = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
        "int8": "signed char", "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16"}


def _cpp(t: Tensor) -> str:
    return _CPP.get(t._dtype.name, scalar_type_name(t._dtype))


FUNCTIONS = {"pdist": pdist}

METHODS = {
    "fill_diagonal_": _fill_diagonal_,
    "t_": _inplace_view("t_", _t),
    "unsqueeze_": _inplace_view("unsqueeze_", lambda self, dim: A.unsqueeze(self, dim)),
    "squeeze_": _inplace_view("squeeze_", _squeeze, _squeeze_overload),
    "transpose_": _inplace_view("transpose_", lambda self, dim0, dim1: A.transpose(self, dim0, dim1)),
    "swapdims_": _inplace_view("swapdims_", lambda self, dim0, dim1: A.transpose(self, dim0, dim1), "transpose_"),
    "swapaxes_": _inplace_view("swapaxes_", lambda self, axis0, axis1: A.transpose(self, axis0, axis1), "transpose_"),
    "resize_": _resize_,
    "resize_as_": _resize_as_,
    "set_": _set_,
}
