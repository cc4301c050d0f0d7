"""Reading a checkpoint's storage records: the persistent ids of its pickle, checked before any allocation.

A persistent id is ``('storage', storage_type, key, location, numel)``; the record is
``<root>/data/<key>``.  The record's size in the zip directory must equal ``numel`` times the
element size before a byte is read or decompressed, one key names one dtype, and a key is read
once: every tensor that refers to it views the same torchplug storage.
"""

from __future__ import annotations

import pickle
import sys
import zipfile
import zlib
from typing import Any

import numpy as np

import torchplug
from torchplug._tensor.tensor import Tensor

from ._rebuild import LoadedStorage, StorageType, describe

__all__ = ["StorageLoader", "restore_location_name"]

_CHUNK = 16 << 20  # decompress in bounded pieces straight into the record's array


def _as_str(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def restore_location_name(location: str, map_location: Any) -> str:
    """Where a record saved at ``location`` goes under a str/device/dict ``map_location``."""
    if map_location is None or callable(map_location) and not isinstance(map_location, (str, torchplug.device)):
        return location
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    return str(map_location)


class StorageLoader:
    """``persistent_load`` for one checkpoint: validates each storage reference and loads it once."""

    def __init__(self, zf: zipfile.ZipFile, root: str, map_location: Any, byteorder: str) -> None:
        self.zf, self.root, self.map_location = zf, root, map_location
        self.swap = byteorder != sys.byteorder
        self.loaded: dict[str, LoadedStorage] = {}

    def __call__(self, pid: Any) -> LoadedStorage:
        if type(pid) is not tuple or len(pid) != 5:
            raise pickle.UnpicklingError(
                f"malformed storage reference {describe(pid)}: expected ('storage', storage_type, key, location, numel)"
            )
        typename, storage_type, key, location, numel = pid
        if _as_str(typename) != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got {describe(typename)}")
        if not isinstance(storage_type, StorageType):
            raise pickle.UnpicklingError(f"storage reference names {describe(storage_type)} as its storage type, not a storage class")
        key, location = _as_str(key), _as_str(location)
        if type(key) is int and key >= 0:
            key = str(key)  # torch names the record f"data/{key}", so an int key reads data/<int>
        if not isinstance(key, str) or not key:
            raise pickle.UnpicklingError(f"storage reference has key {describe(key)}; keys are non-empty strings")
        if not isinstance(location, str):
            raise pickle.UnpicklingError(f"storage reference has location {describe(location)}; locations are device strings")
        if type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"storage reference has size {describe(numel)}; sizes are non-negative ints")
        dtype = storage_type.dtype
        done = self.loaded.get(key)
        if done is not None:
            if done.dtype is not dtype:
                raise RuntimeError(
                    f"storage record data/{key} is referenced as {done.dtype} and as {dtype}; a checkpoint stores "
                    "each storage with one dtype, so the file is corrupted or crafted."
                )
            return done
        rec = LoadedStorage(key, dtype, self._load(dtype, key, location, numel))
        self.loaded[key] = rec
        return rec

    def _load(self, dtype: Any, key: str, location: str, numel: int) -> Tensor:
        name = f"{self.root}/data/{key}" if self.root else f"data/{key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise RuntimeError(f"the checkpoint has no storage record {name} (the file is truncated or corrupted)") from None
        nbytes = numel * dtype.itemsize
        if info.file_size != nbytes:
            # Checked before reading: a tiny compressed record must not be inflated into a huge buffer.
            raise RuntimeError(
                f"record size ({info.file_size} bytes) does not match expected size ({nbytes} bytes = {numel} "
                f"elements * {dtype.itemsize} bytes/element) for dtype {dtype} of storage record {name}; "
                "the checkpoint is corrupted or crafted."
            )
        target = restore_location_name(location, self.map_location)
        if _device_type(target) == "meta":
            return torchplug.empty((numel,), dtype=dtype, device="meta")  # nothing to read, as in torch
        flat = torchplug.from_numpy(self._read(info, nbytes, dtype))
        mapper = self.map_location
        if callable(mapper) and not isinstance(mapper, (str, dict, torchplug.device)):
            out = mapper(flat, location)
            if out is not None:
                if not isinstance(out, Tensor) or out.dtype is not dtype or out.shape != flat.shape:
                    raise RuntimeError(
                        f"map_location returned {describe(out)} for storage {name}; it must return the storage it "
                        f"was given ({numel} x {dtype}), possibly moved to another device, or None"
                    )
                return out
        if _device_type(target) == "cpu" and target in ("cpu", "cpu:0"):
            return flat
        try:
            return flat.to(target)
        except Exception as exc:  # noqa: BLE001 - add what to do about it
            raise RuntimeError(
                f"Attempting to deserialize storage {name} on device {target!r}, which is not available here: {exc}. "
                "Pass map_location (e.g. map_location='cpu' or torch.device('cpu')) to load it elsewhere."
            ) from exc

    def _read(self, info: zipfile.ZipInfo, nbytes: int, dtype: Any) -> np.ndarray:
        buf = np.empty(nbytes, dtype=np.uint8)
        view = memoryview(buf)
        try:
            with self.zf.open(info) as fp:
                pos = 0
                while pos < nbytes:
                    chunk = fp.read(min(_CHUNK, nbytes - pos))
                    if not chunk:
                        raise EOFError("record ended early")
                    view[pos:pos + len(chunk)] = chunk
                    pos += len(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as exc:
            raise RuntimeError(f"could not read storage record {info.filename}: {exc}") from exc
        arr = buf.view(dtype.numpy_dtype)
        if self.swap and dtype.itemsize > 1:
            # complex values are two floats, each stored in the writer's byte order
            unit = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
            arr = buf.reshape(-1, unit)[:, ::-1].copy().reshape(-1).view(dtype.numpy_dtype)
        return arr


def _device_type(location: str) -> str:
    return location.split(":", 1)[0]
