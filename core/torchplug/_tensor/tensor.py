"""``torchplug.Tensor``: metadata, storage and version counter; op methods are attached by ``_bindings``."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._runtime.backends import backend_for
from torchplug._runtime.device import device
from torchplug._base.size import Size
from torchplug._dispatch.aten import A
from torchplug._dispatch.keys import CONJUGATE_BIT, INFERENCE_BIT, NEGATIVE_BIT
from torchplug._runtime.storage import Storage

__all__ = ["Tensor", "Storage", "Size", "make_tensor", "autograd_hooks"]


class _AutogradHooks:
    """How the core reaches the autograd plugin; every field is set by that plugin when it loads."""

    def __init__(self) -> None:
        self.set_requires_grad = None  # (tensor, bool) -> None
        self.status = "not loaded"  # e.g. "blocked by TORCHPLUG_BLOCK_PLUGINS"
        # The plugin's Tensor-side API (backward, register_hook, retain_grad, ...); None until loaded.
        self.tensor_api: Any = None
        # (view) -> None, raising when writing in place to this view is not allowed (a view made
        # under no_grad, an output of unbind/split); the core's ADInplaceOrView kernel calls it.
        self.check_view_write: Any = None

    def _missing(self, what: str) -> RuntimeError:
        if self.status == "not loaded":
            from torchplug._base.upcalls import ensure_plugin_loaded, plugin_status

            ensure_plugin_loaded("autograd")  # it loads on the first use of autograd
            if self.set_requires_grad is not None:
                return None  # type: ignore[return-value]
            found = plugin_status("autograd")
            if found is not None and found[0] != "loaded":
                self.status = found[1] or found[0]
        return RuntimeError(
            f"{what} needs the autograd plugin, which is {self.status}. Autograd is shipped "
            "with torchplug as the 'autograd' plugin: remove it from TORCHPLUG_BLOCK_PLUGINS and unset "
            "TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD (see `python -m torchplug`)."
        )

    def load(self) -> bool:
        """Load the autograd plugin if it is waiting for its first use; True when it is loaded.  For code that
        works without autograd but must use it when it is installed (``nn.Parameter``)."""
        if self.set_requires_grad is None and self.status == "not loaded":
            from torchplug._base.upcalls import ensure_plugin_loaded

            ensure_plugin_loaded("autograd")
        return self.set_requires_grad is not None

    def require(self, t: Tensor, flag: bool) -> None:
        if self.set_requires_grad is None and flag:
            err = self._missing("requires_grad=True")
            if err is not None:
                raise err
        if self.set_requires_grad is not None:
            self.set_requires_grad(t, flag)

    def api(self, name: str) -> Any:
        """The plugin's implementation of a Tensor autograd method, or an error saying how to load it."""
        if self.tensor_api is None:
            err = self._missing(f"Tensor.{name}()")
            if err is not None:
                raise err
        return getattr(self.tensor_api, name)


autograd_hooks = _AutogradHooks()
_INFERENCE_MASK = 1 << INFERENCE_BIT

_new = object.__new__


def make_tensor(payload: Any, dtype: D.dtype, dev: device, keyset: int, storage: Storage | None = None) -> Tensor:
    """Wrap a backend payload (an object with ``shape``/``strides``/``nbytes``) in a Tensor.

    Backends call this for every result; it does nothing but fill slots, because it is on the
    hot path of every op.  ``storage`` is shared for views and fresh otherwise.
    """
    t = _new(Tensor)
    t._data = payload
    t._dtype = dtype
    t._device = dev
    t._keyset = keyset
    t._storage = storage if storage is not None else Storage(payload.nbytes, dev, payload)
    t._base = None
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._autograd_meta = None
    return t


def _device_copy(t: Tensor, dev_type: str) -> Any:
    """``t.cuda(device=None, non_blocking=False, memory_format=...)`` for device type ``dev_type``."""

    def copy_to(device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
        if device is None:
            target: Any = dev_type
        elif isinstance(device, int):
            target = f"{dev_type}:{device}"
        else:
            target = device if isinstance(device, str) else str(device)
            if target.split(":")[0] != dev_type:
                raise RuntimeError(f"Invalid device, must be {dev_type} device")
        kwargs = {"non_blocking": non_blocking}
        if memory_format is not None:
            kwargs["memory_format"] = memory_format
        return t.to(target, **kwargs)

    copy_to.__name__ = dev_type
    copy_to.__doc__ = f"A copy of this tensor on the {dev_type} device (``self`` if already there)."
    return copy_to


class Tensor:
    """A multi-dimensional array on a device, dispatched through the operator registry.

    Construct tensors with factory functions (``torchplug.tensor``, ``zeros``, ...).  All
    computation goes through ``torchplug.ops``; this class holds only metadata.
    """

    __slots__ = (
        "_data",
        "_dtype",
        "_device",
        "_keyset",
        "_storage",
        "_base",
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_autograd_meta",
        "__dict__",
        "__weakref__",
    )
    # NumPy must defer to our reflected operators (ndarray + Tensor -> Tensor.__radd__).
    __array_priority__ = 1000

    # -- metadata ---------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of one dimension."""
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements (not bytes)."""
        item = self._dtype.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self) -> int:
        """Offset of the first element into the storage, in elements."""
        return backend_for(self._device.type).storage_offset(self)

    @property
    def dtype(self) -> D.dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._data.shape)

    def dim(self) -> int:
        return len(self._data.shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    @property
    def is_meta(self) -> bool:
        return not backend_for(self._device.type).has_data

    @property
    def is_cpu(self) -> bool:
        return backend_for(self._device.type).is_host

    @property
    def layout(self) -> Any:
        from torchplug._base.layout import strided

        return strided

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def get_device(self) -> int:
        return -1 if self._device.index is None and self.is_cpu else (self._device.index or 0)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """True if the tensor is laid out in row-major order without gaps (size-1 dims ignored)."""
        if 0 in self._data.shape:
            return True
        expected = 1
        for size, stride in zip(reversed(self._data.shape), reversed(self.stride())):
            if size == 1:
                continue
            if stride != expected:
                return False
            expected *= size
        return True

    def data_ptr(self) -> int:
        """Address of the first element (0 for tensors without data)."""
        ptr = getattr(self._data, "data_ptr", None)
        if ptr is not None:
            return ptr() if callable(ptr) else int(ptr)
        iface = getattr(self._data, "__array_interface__", None)
        return iface["data"][0] if iface else 0

    def untyped_storage(self) -> Storage:
        return self._storage

    @property
    def _version(self) -> int:
        if self._keyset & _INFERENCE_MASK:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._storage.version

    def is_inference(self) -> bool:
        """True for a tensor made under ``inference_mode`` (or a view of one)."""
        return bool(self._keyset & _INFERENCE_MASK)

    def _bump_version(self) -> None:
        self._storage.version += 1

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        autograd_hooks.require(self, bool(flag))

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        autograd_hooks.require(self, bool(requires_grad))
        return self

    @property
    def grad(self) -> Tensor | None:
        if self._grad is None and self._grad_fn is not None and not self.__dict__.get("_retains_grad"):
            import warnings

            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
                "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
                "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
                "more informations.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        self._grad = value

    @property
    def grad_fn(self) -> Any:
        if self._base is not None and self._grad_fn is not None and "_vv" in self.__dict__:
            autograd_hooks.api("refresh_view")(self)  # a view whose base was modified in place
        return self._grad_fn

    # -- autograd (implemented by the autograd plugin) ----------------------------------------------
    def backward(self, gradient: Any = None, retain_graph: Any = None, create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate the gradient of this tensor w.r.t. the graph leaves into their ``.grad``."""
        api = autograd_hooks.tensor_api
        (api.backward if api is not None else autograd_hooks.api("backward"))(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Any) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new gradient."""
        return autograd_hooks.api("register_hook")(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call ``hook(tensor)`` after a gradient is accumulated into this leaf's ``.grad``."""
        return autograd_hooks.api("register_post_accumulate_grad_hook")(self, hook)

    def retain_grad(self) -> None:
        """Populate ``.grad`` for this non-leaf tensor during backward."""
        autograd_hooks.api("retain_grad")(self)

    @property
    def retains_grad(self) -> bool:
        return bool(self.__dict__.get("_retains_grad")) and self._grad_fn is not None

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place."""
        return autograd_hooks.api("detach_")(self)

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def output_nr(self) -> int:
        return self._autograd_meta if self._grad_fn is not None else 0

    @property
    def data(self) -> Tensor:
        """The same data without autograd history, with its own version counter."""
        t = make_tensor(self._data, self._dtype, self._device, self._keyset & ~_autograd_band())
        t._storage.data = self._storage.data
        return t

    @data.setter
    def data(self, other: Tensor) -> None:
        mine, theirs = self._device.type, other._device.type
        if mine != theirs and not (mine in _DENSE_DEVICE_TYPES and theirs in _DENSE_DEVICE_TYPES):
            # torch's set_data swaps storage only between tensor types of one kind (dense devices, or equal keys)
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                               f"incompatible tensor type ({mine} and {theirs}); move the tensor with .to() first.")
        self._data = other._data
        self._dtype = other._dtype
        self._device = other._device
        self._storage = other._storage
        # dispatch keys follow the new data (device, math bits); the autograd keys stay this tensor's own
        band = _autograd_band()
        self._keyset = (other._keyset & ~band) | (self._keyset & band)

    # -- host interop -----------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> Any:
        """A NumPy array sharing memory with this tensor (host devices only)."""
        backend = backend_for(self._device.type)
        # As in PyTorch, only while grad mode is on (custom op kernels run with it off).
        if self._requires_grad and not force and _grad_mode_on():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if not backend.is_host:
            if not force or not backend.has_data:
                raise TypeError(
                    f"can't convert {self._device.type} device type tensor to numpy. "
                    "Use Tensor.cpu() to copy the tensor to host memory first."
                )
        if self._keyset & _MATH_BITS:  # the buffer holds the values before the lazy conj/neg
            if self._keyset & _CONJ_MASK:
                raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. "
                                   "Use tensor.resolve_conj().numpy() instead.")
            raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. "
                               "Use tensor.resolve_neg().numpy() instead.")
        return backend.to_host(self)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        if self._keyset & _MATH_BITS:
            return self.numpy()  # PyTorch's refusal
        arr = backend_for(self._device.type).to_host(self)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def tolist(self) -> Any:
        """Nested Python lists (a Python number for 0-dim tensors)."""
        values = _resolved(self) if self._keyset & _MATH_BITS else self
        return backend_for(self._device.type).to_host(values).tolist()

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        if not backend_for(self._device.type).has_data:
            raise RuntimeError(f"Tensor.item() cannot be called on {self._device.type} tensors")
        values = _resolved(self) if self._keyset & _MATH_BITS else self
        return backend_for(self._device.type).to_host(values).reshape(()).item()

    def __len__(self) -> int:
        shape = self._data.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self) -> Any:
        if not self._data.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __int__(self) -> int:
        return int(_real_number(self.item(), "int64_t"))

    def __float__(self) -> float:
        return float(_real_number(self.item(), "double"))

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self.dim() == 0 and backend_for(self._device.type).has_data:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        new = self.clone()
        if self._requires_grad:
            new = new.detach().requires_grad_(True)
        memo[id(self)] = new
        return new

    def __dlpack__(self, stream: Any = None, *, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        """A DLPack capsule sharing this tensor's memory (``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``)."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if self._keyset & _CONJ_MASK:  # (a negated view exports its buffer as it is, as PyTorch's does)
            raise BufferError("Can't export tensors with the conjugate bit set")
        export = getattr(self._data, "__dlpack__", None)
        if export is None:
            return self.numpy().__dlpack__()  # PyTorch's error for a tensor without data
        # The payload exports itself: NumPy on the host, CuPy on a GPU (zero-copy either way); only
        # the arguments the consumer gave are passed on (older producers know fewer of them).
        given = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                   ("copy", copy)) if v is not None}
        try:
            return export(**given)
        except BufferError as exc:
            if self._dtype.numpy_dtype.kind == "V":  # ml_dtypes' bfloat16 / float8: NumPy cannot describe them
                raise BufferError(f"Cannot export a {self._dtype} tensor through DLPack: its NumPy payload "
                                  f"({self._dtype.numpy_dtype}) has no DLPack type code. Convert it first "
                                  "(t.float()) or export its bits (t.view(torchplug.int16) for bfloat16).") from exc
            raise

    def __dlpack_device__(self) -> Any:
        device = getattr(self._data, "__dlpack_device__", None)
        return device() if device is not None else self.numpy().__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> Any:
        """The payload's CUDA array interface (device tensors only; AttributeError elsewhere, so
        ``hasattr`` answers like PyTorch)."""
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable that doesn't require grad.")
        return self._data.__cuda_array_interface__


# The Conjugate and Negative dispatch keys' bits (lazily conjugated / negated views: the buffer
# holds the values before that operation).
_CONJ_MASK = 1 << CONJUGATE_BIT
_NEG_MASK = 1 << NEGATIVE_BIT
_MATH_BITS = _CONJ_MASK | _NEG_MASK
# the device types whose dense tensors torch's set_data treats as one kind (TensorImpl::has_compatible_shallow_copy_type)
_DENSE_DEVICE_TYPES = frozenset(("cpu", "cuda", "mps", "hip", "xpu", "hpu"))


def _resolved(t: Tensor) -> Tensor:
    """``t``, or its materialised values if it is a conjugate or negated view (for reading its buffer directly)."""
    if t._keyset & _MATH_BITS:
        with _no_grad():
            return resolve_neg(resolve_conj(t))
    return t


def resolve_conj(t: Tensor) -> Tensor:
    """``t`` itself if its conjugate bit is clear, else a new tensor holding its (conjugated) values."""
    if not t._keyset & _CONJ_MASK:
        return t
    return A.conj_physical(A._conj(t))


def resolve_neg(t: Tensor) -> Tensor:
    """``t`` itself if its negative bit is clear, else a new tensor holding its (negated) values."""
    if not t._keyset & _NEG_MASK:
        return t
    return A.neg(A._neg_view(t))


def _real_number(value: Any, ctype: str) -> Any:
    """A complex item as a real number, as PyTorch converts it (refused unless its imaginary part is 0)."""
    if isinstance(value, complex):
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return value.real
    return value


def _no_grad() -> Any:
    from torchplug._dispatch.tls import exclude_keys

    return exclude_keys(_autograd_band())


def _autograd_band() -> int:
    from torchplug._dispatch.keys import AUTOGRAD_BAND

    return AUTOGRAD_BAND


def _grad_mode_on() -> bool:
    """True unless no_grad (or a kernel running below autograd) excluded the autograd keys."""
    from torchplug._dispatch.tls import tls

    return bool(tls.mask & _autograd_band())


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalize a possibly negative dim, with PyTorch's IndexError text."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


# ---- per-device-type members --------------------------------------------------------------------
_INSTALLED: dict[str, tuple[str, ...]] = {}


def install_device_members(dev_type: str) -> None:
    """Give Tensor ``is_<dev_type>`` and ``<dev_type>()`` (PyTorch generates the same for a renamed
    PrivateUse1 backend); members Tensor defines itself (``is_cpu``, ``cpu()``) are kept.

    They are class attributes set when a device type becomes known, not a ``__getattr__``: a class
    with ``__getattr__`` makes every attribute load on its instances take CPython's slow path.
    """
    if dev_type in _INSTALLED or not dev_type.isidentifier():
        return
    added = []
    flag = f"is_{dev_type}"
    if not hasattr(Tensor, flag):
        setattr(Tensor, flag, property(lambda self, _t=dev_type: self._device.type == _t,
                                       doc=f"True if the tensor is on the {dev_type} device."))
        added.append(flag)
    if not hasattr(Tensor, dev_type):
        def copy_method(self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
            return _device_copy(self, dev_type)(device, non_blocking, memory_format)

        copy_method.__name__ = copy_method.__qualname__ = dev_type
        copy_method.__doc__ = f"A copy of this tensor on the {dev_type} device (``self`` if already there)."
        setattr(Tensor, dev_type, copy_method)
        added.append(dev_type)
    _INSTALLED[dev_type] = tuple(added)


def uninstall_device_members(dev_type: str) -> None:
    """Remove what :func:`install_device_members` added for ``dev_type``."""
    for name in _INSTALLED.pop(dev_type, ()):
        delattr(Tensor, name)



def _install_well_known() -> None:
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES

    for dev_type in WELL_KNOWN_DEVICE_TYPES:  # named even before (or without) their backend
        install_device_members(dev_type)


_install_well_known()
