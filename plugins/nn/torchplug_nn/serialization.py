"""``torchplug.save`` / ``torchplug.load`` in PyTorch's zip format (real torch reads our files and vice versa).

Layout: ``<root>/data.pkl`` (protocol-2 pickle whose tensors refer to storages through persistent
ids ``('storage', torch.<Type>Storage, key, location, numel)`` and are rebuilt by
``torch._utils._rebuild_tensor_v2``), ``<root>/data/<key>`` (raw storage bytes, 64-byte aligned),
``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``.

``load`` defaults to ``weights_only=True``: the pickle runs in a restricted interpreter
(``_weights_only_unpickler``) that resolves only an explicit allow-list of globals and never
imports, so an untrusted file cannot run code; ``add_safe_globals`` / ``safe_globals`` extend the
list as in PyTorch.  ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` are
honoured with PyTorch's precedence.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import struct
import sys
import warnings
import zipfile
import zlib
from typing import Any, Iterator

from ._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals, user_allowed_globals

# The pickler, the unpicklers and the allow-list are imported by the functions that use them, so
# loading the nn plugin (every `import torchplug`) does not pay for them.  Absolute imports: this
# module is also `torchplug.serialization`, where a relative import inside a function is ambiguous.

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "register_package"]

_ALIGN = 64
_TRUE_VALUES = ("1", "y", "yes", "true")


# ---- saving -------------------------------------------------------------------------------------
def _zip_write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Write one stored record whose data starts at a 64-byte-aligned offset (as torch does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell()
    header = 30 + len(name.encode("utf-8"))
    pad = (-(offset + header + 4)) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, data)


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, state_dicts, optimizer states, ...) to a path or binary file.

    Tensors that view one storage are written as one record, so ties and views survive a round trip.
    """
    from torchplug_nn._pickler import CheckpointPickler

    buf = io.BytesIO()
    pickler = CheckpointPickler(buf, pickle_protocol)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        root = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as fh:
            _write_archive(fh, root, buf.getvalue(), pickler, not _disable_byteorder_record)
    else:
        _write_archive(f, "archive", buf.getvalue(), pickler, not _disable_byteorder_record)


def _write_archive(fh: Any, root: str, data_pkl: bytes, pickler: Any, byteorder: bool) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _zip_write(zf, f"{root}/data.pkl", data_pkl)
        _zip_write(zf, f"{root}/.format_version", b"1")
        _zip_write(zf, f"{root}/.storage_alignment", str(_ALIGN).encode())
        if byteorder:
            _zip_write(zf, f"{root}/byteorder", sys.byteorder.encode())
        for record in pickler.records:
            _zip_write(zf, f"{root}/data/{record.key}", record.data())
        _zip_write(zf, f"{root}/version", b"3\n")
    fh.write(out.getvalue())


# ---- loading ------------------------------------------------------------------------------------
_UNSAFE_MESSAGE = (
    "Since PyTorch 2.6 (and in torchplug) the default value of the `weights_only` argument of `load` is `True`. "
    "Re-running `load` with `weights_only=False` will likely succeed, but it can result in arbitrary code "
    "execution. Do it only if you got the file from a trusted source."
)


def _weights_only_message(message: str) -> str:
    """PyTorch's framing of a weights-only refusal: what to do, then the unpickler's reason."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "do those steps only if you trust the source of the checkpoint. "
            f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\nWeightsUnpickler error: \n\n{message}"


def _resolve_weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    """``weights_only`` after the default and the environment overrides, with PyTorch's precedence."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force_on = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_off = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force_on and force_off:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, "
            "but both were set."
        )
    if force_on:
        return True
    if force_off and not_set:  # an explicit weights_only= at the call site wins over this variable
        warnings.warn(
            "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected; since the `weights_only` argument "
            "was not passed to `load`, forcing weights_only=False.",
            UserWarning,
            stacklevel=3,
        )
        return False
    return bool(weights_only)


@contextlib.contextmanager
def _open_archive(f: Any) -> Iterator[zipfile.ZipFile]:
    if isinstance(f, (bytes, bytearray)):
        raise TypeError("load expects a file path or a binary file-like object, got bytes; wrap it in io.BytesIO")
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else None
    fh = opened if opened is not None else f
    try:
        if opened is None and not (hasattr(fh, "seekable") and fh.seekable()):
            fh = io.BytesIO(fh.read())
        try:
            zf = zipfile.ZipFile(fh)
        except zipfile.BadZipFile:
            raise RuntimeError(
                "load: the file is not a zip checkpoint (the format torch.save writes since PyTorch 1.6); "
                "the legacy format is not supported. Re-save it with torch.save in PyTorch >= 1.6."
            ) from None
        with zf:
            yield zf
    finally:
        if opened is not None:
            opened.close()


def _root(zf: zipfile.ZipFile) -> str:
    """The archive's top folder: PyTorch names every record ``<root>/...`` after the first one."""
    names = zf.namelist()
    if not names:
        raise RuntimeError("load: the checkpoint archive is empty")
    first = names[0]
    return first.split("/", 1)[0] if "/" in first else ""


def _record(zf: zipfile.ZipFile, root: str, name: str) -> bytes | None:
    full = f"{root}/{name}" if root else name
    try:
        info = zf.getinfo(full)
    except KeyError:
        return None
    try:
        return zf.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as exc:
        raise RuntimeError(f"load: could not read record {full} of the checkpoint: {exc}") from exc


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved by ``torchplug.save`` or ``torch.save``.

    ``weights_only`` defaults to True unless ``pickle_module`` is given (then it defaults to False,
    and passing both is an error), as in PyTorch; ``TORCH_FORCE_WEIGHTS_ONLY_LOAD=1`` forces it on,
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` turns it off where the call does not pass it.
    ``map_location`` is a device (string), a ``{saved: new}`` dict or ``fn(storage, location)``
    returning the storage to use (None: the default).  Views of one saved storage come back as
    views of one storage.  ``mmap=True`` (a path only, as in PyTorch) is accepted; the records
    are read into memory rather than mapped, which gives the same tensors.
    """
    from torchplug_nn._rebuild import load_context
    from torchplug_nn._storage_loader import StorageLoader
    from torchplug_nn._weights_only_unpickler import WeightsOnlyUnpickler

    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _open_archive(f) as zf:
        root = _root(zf)
        if _record_exists(zf, root, "constants.pkl"):
            raise RuntimeError(
                ("Cannot use ``weights_only=True`` with TorchScript archives passed to ``load``. " if weights_only else "")
                + "This is a TorchScript archive (written by torch.jit.save), which torchplug cannot load; "
                "save the model's state_dict() with torch.save instead."
            )
        byteorder = _record(zf, root, "byteorder")
        if byteorder is None:
            byteorder = b"little"  # PyTorch's default for files written before the record existed
        if byteorder not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + byteorder.decode("ascii", "replace"))
        data = _record(zf, root, "data.pkl")
        if data is None:
            raise RuntimeError(f"load: the checkpoint has no {root + '/' if root else ''}data.pkl record")
        loader = StorageLoader(zf, root, map_location, byteorder.decode())
        previous, load_context.map_location = load_context.map_location, map_location
        try:
            if weights_only:
                try:
                    return WeightsOnlyUnpickler(data, loader, encoding=pickle_load_args["encoding"]).load()
                except pickle.UnpicklingError as exc:
                    raise pickle.UnpicklingError(_weights_only_message(str(exc))) from None
            return _full_unpickler(pickle_module, data, loader, pickle_load_args).load()
        finally:
            load_context.map_location = previous


def _record_exists(zf: zipfile.ZipFile, root: str, name: str) -> bool:
    try:
        zf.getinfo(f"{root}/{name}" if root else name)
    except KeyError:
        return False
    return True


def _full_unpickler(pickle_module: Any, data: bytes, loader: Any, kwargs: dict[str, Any]) -> Any:
    """``weights_only=False``: ``pickle_module``'s Unpickler, which imports what the file names (trusted files only).

    torch's own names resolve to torchplug's equivalents first; other ``torch.*`` modules are
    looked up under ``torchplug.*``.
    """
    from torchplug_nn._checkpoint_globals import allowed_globals

    table = allowed_globals()

    class _Unpickler(pickle_module.Unpickler):  # type: ignore[misc, name-defined]
        def find_class(self, module: str, name: str) -> Any:
            entry = table.get((module, name))
            if entry is not None:
                return entry.value
            if module == "torch" or module.startswith("torch."):
                module = "torchplug" + module[len("torch"):]
            return super().find_class(module, name)

        def persistent_load(self, pid: Any) -> Any:
            return loader(pid)

    return _Unpickler(io.BytesIO(data), **kwargs)


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The ``module.name`` globals a checkpoint names that ``weights_only`` loading would refuse.

    A static scan of the pickle (nothing is loaded): globals built dynamically during unpickling are
    not seen.  Globals allowed by default or through :func:`add_safe_globals` are not listed.
    """
    from torchplug_nn import _checkpoint_globals as G
    from torchplug_nn._weights_only_unpickler import globals_in_pickle

    try:
        with _open_archive(f) as zf:
            root = _root(zf)
            if _record_exists(zf, root, "constants.pkl"):
                raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript checkpoint")
            data = _record(zf, root, "data.pkl")
    except RuntimeError:
        raise ValueError("Expected input to be a checkpoint returned by torch.save") from None
    if data is None:
        raise ValueError("Expected input to be a checkpoint returned by torch.save (it has no data.pkl record)")
    safe = {f"{m}.{n}" for m, n in G.allowed_globals()} | G.TORCH_ALLOWED_UNSUPPORTED | set(user_allowed_globals())
    return sorted(globals_in_pickle(data) - safe)


_package_registry: list[tuple[int, Any, Any]] = []


def register_package(priority: int, tagger: Any, deserializer: Any) -> None:
    """Register a device tagger/deserializer pair (kept for API compatibility; cpu and mapped devices are built in)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda e: e[0])
