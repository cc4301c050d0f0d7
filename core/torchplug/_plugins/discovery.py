"""Entry-point discovery without ``importlib.metadata``: the plugin manager's first step, on every first op.

``importlib.metadata`` costs ~30 ms to import (its email parser, zipfile, csv...), a tenth of a first op; the
entry points of two groups take a directory listing per ``sys.path`` entry and a couple of small files.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.machinery import PathFinder

__all__ = ["read_entry_points"]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")  # importlib.metadata's Prepared.normalize


def read_entry_points(groups: tuple[str, ...]) -> list[tuple[str, str, str, str, str]] | None:
    """``(group, name, value, distribution, version)`` of the entry points of ``groups``, read from the
    ``*.dist-info`` directories on ``sys.path`` exactly as ``importlib.metadata.entry_points()`` finds them
    (path order, each directory's listing order, the first distribution of a normalized name shadowing the
    others), without importing ``importlib.metadata``.  None when something this reader does not handle is
    there (a zip or egg on the path, an ``.egg-info``, a finder of its own distributions, a malformed file):
    the caller then asks ``importlib.metadata`` itself."""
    if any(getattr(f, "find_distributions", None) is not None and f is not PathFinder for f in sys.meta_path):
        return None
    found: list[tuple[str, str, str, str, str]] = []
    seen: set[str] = set()
    for entry in sys.path:
        if not isinstance(entry, str):
            return None  # (bytes or path objects: rare, left to importlib.metadata)
        root = entry or "."
        if os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return None  # a zip file: importlib.metadata reads its listing
        except OSError:
            continue
        by_name: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith(".egg-info"):
                return None
            if low.endswith(".dist-info"):
                if not child.endswith(".dist-info"):
                    return None  # importlib.metadata would read the name from the metadata file
                by_name.setdefault(_normalize(low.rpartition(".")[0].partition("-")[0]), []).append(child)
        for normalized, dirs in by_name.items():
            for child in dirs:
                if normalized in seen:
                    continue
                seen.add(normalized)
                read = _read_dist_info(os.path.join(root, child), groups)
                if read is None:
                    return None
                found.extend(read)
    return found


def _read_dist_info(path: str, groups: tuple[str, ...]) -> list[tuple[str, str, str, str, str]] | None:
    """The entry points of ``groups`` one ``.dist-info`` directory declares (parsed as importlib.metadata's
    ``Sectioned`` does), with the distribution's Name and Version; None for a file this reader cannot vouch for."""
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    except UnicodeDecodeError:
        return []
    points = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section not in groups:
            continue
        name, eq, value = line.partition("=")
        if not eq:
            return None
        points.append((section, name.strip(), value.strip()))
    if not points:
        return []
    meta: dict[str, str] = {}
    try:
        with open(os.path.join(path, "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line in ("\n", "\r\n"):
                    break  # the end of the headers
                key, colon, value = line.partition(":")
                if colon and key in ("Name", "Version") and key not in meta:
                    meta[key] = value.lstrip(" \t").rstrip("\r\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(meta) != 2:
        return None
    return [(group, name, value, meta["Name"], meta["Version"]) for group, name, value in points]
