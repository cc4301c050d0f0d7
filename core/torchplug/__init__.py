"""torchplug: the PyTorch programming model as a small core plus plugins.

``import torchplug as torch`` runs ordinary PyTorch code.  The core defines tensors, dtypes,
devices, dispatch keys, operator schemas and the dispatcher; backends (cpu, meta, ...) and
core-layer plugins arrive through entry points.  ``python -m torchplug`` shows what is installed.

The core's layers, lowest first; each imports only the ones before it (checked by import-linter,
``.importlinter``), and this module assembles the public API from all of them:

``_base``      dtypes, layouts, Size, global flags, the upcall slots
``_compat``    PyTorch's public names and the "not supported yet" errors
``_dispatch``  keys, schemas' parser, the dispatcher, codegen, ``Library``, the aten call namespace
``_schemas``   the aten operator table (data)
``_runtime``   devices, the backend registry and contract, storage, allocator, streams, generators,
               device modules, the accelerator choice
``_tensor``    Tensor, views' metadata, creation, printing, indexing, methods, legacy types
``_ops``       composites, kernels the core registers, the generated and hand-written functions
``_plugins``   plugin discovery and hooks, exposure of plugin modules, introspection
``_library``   custom operators (``torchplug.library.custom_op`` and friends)
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

from torchplug._base import dtype as _dtype
from torchplug._tensor.converters import install_converters as _install_converters


def _wire_layers() -> None:
    """The composition root.  The core's layers (listed in the module docstring) import only downwards; the few
    calls a lower layer makes upwards are plugged in here, once: plugin loading, plugin status and exposed
    names for the runtime, tensor and op layers (:mod:`torchplug._base.upcalls`), the Tensor's
    per-device members for the backend registry's listeners, and device modules' legacy names for exposure's."""
    from torchplug._base import upcalls
    from torchplug._plugins.exposure import EXPOSE_LISTENERS
    from torchplug._plugins.lookup import after_expose, resolve
    from torchplug._plugins.manager import MANAGER
    from torchplug._runtime.registration import DEVICE_TYPE_LISTENERS
    from torchplug._tensor.tensor import install_device_members, uninstall_device_members

    def plugin_status(name: str) -> tuple[str, str] | None:
        record = MANAGER.records.get(name)
        return None if record is None else (record.status, record.reason or "")

    upcalls.register(load=MANAGER.ensure_loaded, status=plugin_status, exposed=resolve,
                     load_backends=MANAGER.ensure_ready, load_one=MANAGER.ensure_plugin)
    DEVICE_TYPE_LISTENERS.append((install_device_members, uninstall_device_members))
    EXPOSE_LISTENERS.append(after_expose)


_wire_layers()

_install_converters()

from torchplug._ops import namespace as _ops  # noqa: E402  (registers the op-object factory before any define)
from torchplug._ops.core_kernels import CORE_OWNER as _CORE_OWNER, register_core as _register_core  # noqa: E402
from torchplug._dispatch.library import Library as _Library  # noqa: E402

_register_core(_Library("aten", "DEF", owner=_CORE_OWNER))

from torchplug._ops.bindings import install_bindings as _install_bindings, return_types  # noqa: E402
from torchplug._tensor.methods import install_tensor_methods as _install_tensor_methods  # noqa: E402

_install_bindings(globals())
_install_tensor_methods()

from torchplug._tensor.indexing import install_indexing as _install_indexing  # noqa: E402

_install_indexing()

from torchplug._runtime.backends import Backend  # noqa: E402
from torchplug._tensor.creation import (  # noqa: E402
    arange, as_tensor, asarray, bernoulli, empty, empty_like, empty_strided, eye, from_numpy, full, full_like,
    linspace, logspace, multinomial, normal, ones, ones_like, rand, rand_like, randint, randint_like, randn,
    randn_like, randperm, scalar_tensor, tensor, zeros, zeros_like,
)
from torchplug._runtime.device import device, get_default_device, set_default_device  # noqa: E402
from torchplug._base.dtype import (  # noqa: E402
    bfloat16, can_cast, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float8_e4m3fn, float8_e5m2,
    float16, float32, float64, get_default_dtype, half, iinfo, int8, int16, int32, int64, long, promote_types,
    set_default_dtype, short, uint8,
)
from torchplug._base.dtype import bool_ as bool  # noqa: E402, A001
from torchplug._base.dtype import float as float  # noqa: E402, A001
from torchplug._base.dtype import int as int  # noqa: E402, A001
from torchplug._ops.namespace import list_ops, ops  # noqa: E402
from torchplug._base.layout import channels_last, channels_last_3d, contiguous_format, layout, memory_format, preserve_format, strided  # noqa: E402
from torchplug._tensor.printing import get_printoptions, set_printoptions  # noqa: E402
from torchplug._runtime.generator import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402
from torchplug._tensor.tensor import Size, Tensor  # noqa: E402
from torchplug import library, plugins, random, version  # noqa: E402
from torchplug._plugins.introspect import explain, result_type  # noqa: E402
from torchplug._compile import compile  # noqa: E402, A004  (eager: see torchplug._compile)
from torchplug._base.flags import (  # noqa: E402
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode, set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from torchplug._tensor.legacy_types import host_tensor_types as _host_tensor_types  # noqa: E402
from torchplug.utils.dlpack import from_dlpack  # noqa: E402

globals().update(_host_tensor_types())  # FloatTensor, LongTensor, ... (PyTorch's legacy typed constructors)

inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e


def is_tensor(obj: object) -> _builtins.bool:
    """True if ``obj`` is a torchplug Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> _builtins.bool:
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> _builtins.bool:
    return input.dtype.is_complex


def numel(input: Tensor) -> _builtins.int:
    return input.numel()


def _thread_backends() -> list:
    from torchplug._runtime.backends import registered_backends
    from torchplug._plugins.manager import MANAGER

    MANAGER.ensure_ready()
    return [b for b in registered_backends().values() if b.intra_op_threads is not None]


def get_num_threads() -> _builtins.int:
    """The number of threads host kernels use inside one op (their BLAS), as the host backend reports."""
    for backend in _thread_backends():
        return backend.intra_op_threads(None)
    return 1  # no host backend installed: nothing runs threads


def set_num_threads(n: _builtins.int) -> None:
    """Set the number of threads host kernels use inside one op (each host backend's BLAS pool)."""
    if n.__class__ is not _builtins.int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    for backend in _thread_backends():
        backend.intra_op_threads(n)


from torchplug._plugins.lookup import install_finder as _install_finder, resolve as _resolve_exposed  # noqa: E402

_install_finder()

from torchplug._compat.missing import attach_loaded as _compat_attach_loaded  # noqa: E402


def _install_compat_placeholders() -> None:
    # Tensor attributes PyTorch has and torchplug lacks raise "not supported yet" (see torchplug._compat)
    from torchplug._compat.missing import install_tensor_placeholders
    from torchplug._compat.reference import names

    install_tensor_placeholders(Tensor, names("torch.Tensor"))


_install_compat_placeholders()


def __getattr__(name: str) -> object:
    # torchplug.autograd, torchplug.nn, torchplug.no_grad, ... come from plugins (loaded lazily).
    if name == "__version__":  # read from the installed metadata on first use (importlib.metadata costs ~30 ms)
        value = globals()["__version__"] = version.__version__
        return value
    if name in ("__future__", "_dynamo"):  # PyTorch imports these on first use too (``from __future__`` binds no name)
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__"):
        raise AttributeError(name)
    if name in ("has_mkl", "has_openmp"):  # torch's build flags: what torchplug.backends.mkl/openmp report
        from torchplug.backends import mkl, openmp

        value = globals()[name] = (mkl if name == "has_mkl" else openmp).is_available()
        return value
    import importlib.util

    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        import importlib

        module = importlib.import_module(f"{__name__}.{name}")  # a core submodule, imported on first use
        _compat_attach_loaded()  # its missing names (and its submodules') say they are not supported yet
        return module
    value = _resolve_exposed(name)
    globals()[name] = value  # cached: later lookups are plain attribute hits (dropped if the plugin unloads)
    return value


del annotations  # the __future__ import binds this name; it is not part of the torch API
