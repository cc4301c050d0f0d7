"""Process groups: ``init_process_group``, ``new_group``, ``destroy_process_group`` and the queries.

A :class:`ProcessGroup` holds one backend instance per device family (``mpi`` for CPU tensors, ``nccl``
for cuda tensors) and the global ranks it spans.  ``init_process_group`` takes the rank and world size from
its arguments, else from an MPI launcher (``mpiexec``, ``torchplugrun``), else from ``RANK``/``WORLD_SIZE``
(``env://``), as PyTorch does; MPI makes the rendezvous, so ``MASTER_ADDR``/``MASTER_PORT`` are not needed.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from . import registry

__all__ = ["ProcessGroup", "GroupMember", "group", "Backend", "default_pg_timeout", "init_process_group",
           "is_initialized", "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend",
           "get_process_group_ranks", "get_global_rank", "get_group_rank", "get_node_local_rank", "is_available",
           "is_mpi_available", "is_nccl_available", "is_gloo_available", "is_backend_available",
           "is_torchelastic_launched", "get_pg_count", "get_default_backend_for_device"]

default_pg_timeout = timedelta(minutes=30)


def is_available() -> bool:
    """True: the distributed package is installed (whether a backend can run: :func:`is_mpi_available`...)."""
    return True


def is_backend_available(backend: str) -> bool:
    """Whether process-group backend ``backend`` (``mpi``, ``gloo``, ``nccl``, a plugin's) can be used here."""
    try:
        return bool(registry.backend_class(backend).is_available())
    except ValueError:
        return False


def is_mpi_available() -> bool:
    """Whether the ``mpi`` backend (mpi4py and an MPI library) is available."""
    return is_backend_available("mpi")


def is_gloo_available() -> bool:
    """Whether ``init_process_group("gloo")`` works: ``gloo`` names the CPU backend, ``mpi``."""
    return is_backend_available("gloo")


def is_nccl_available() -> bool:
    """Whether the ``nccl`` backend (CuPy with NCCL and a CUDA GPU) is available."""
    return is_backend_available("nccl")


def is_torchelastic_launched() -> bool:
    """Whether this process was started by ``torchplugrun`` (or torchrun): ``TORCHELASTIC_RUN_ID`` is set."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """``LOCAL_RANK`` from the launcher, else ``fallback_rank``; RuntimeError if neither."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


class Backend(str):
    """A backend name: ``Backend("GLOO") == "gloo"``; unknown names raise ValueError."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        lowered = name.lower()
        if lowered != cls.UNDEFINED and ":" not in lowered:
            registry.backend_class(lowered)
        return str.__new__(cls, lowered)

    @classmethod
    def register_backend(cls, name: str, func: Any, extended_api: bool = False, devices: Any = None) -> None:
        """Register a backend class (:class:`torchplug_distributed.backends.base.Backend`) under ``name``."""
        registry.register_backend(name, func)


class ProcessGroup:
    """A set of ranks that run collectives together; ``rank()``/``size()`` are this process's place in it."""

    def __init__(self, name: str, ranks: list[int], group_rank: int, backends: dict[str, Any], bootstrap: Any,
                 timeout: float) -> None:
        self._name = name
        self._ranks = ranks
        self._rank = group_rank
        self._backends = backends  # device type -> backend instance
        self._bootstrap = bootstrap  # the CPU backend: object collectives, nccl's bootstrap
        self._timeout = timeout

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._rank

    def size(self) -> int:
        """The number of ranks in the group."""
        return len(self._ranks)

    def name(self) -> str:
        """The backend name the group was made with (``"gloo"`` stays ``"gloo"``)."""
        return self._name

    @property
    def group_name(self) -> str:
        return f"{self._name}:{','.join(map(str, self._ranks))}"

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._name!r}, ranks={self._ranks}, rank={self._rank})"

    def _backend_for(self, tensor: Any, what: str) -> Any:
        device = tensor.device.type
        backend = self._backends.get(device)
        if backend is None and device != "meta":  # meta tensors have no data to send
            backend = self._backends.get("*")  # a backend that stages any device through the host
        if backend is None:
            raise RuntimeError(f"No backend type associated with device type {device}: {what} on this group "
                               f"(backend {self._name!r}) takes tensors on {', '.join(sorted(self._backends))}; "
                               f"move the tensor there or use init_process_group('cpu:mpi,cuda:nccl')")
        return backend

    def _group_rank(self, global_rank: int, what: str, role: str) -> int:
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what}: invalid {role} rank: {global_rank} is not part of the group "
                             f"(global ranks {self._ranks})") from None


class GroupMember:
    """``GroupMember.WORLD`` (the default group once initialized) and ``NON_GROUP_MEMBER``."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


class group:  # noqa: N801 - PyTorch's name
    """``dist.group.WORLD``: the default process group (None before ``init_process_group``)."""

    WORLD: ProcessGroup | None = None


_GROUPS: list[ProcessGroup] = []


def _set_world(pg: ProcessGroup | None) -> None:
    GroupMember.WORLD = pg
    group.WORLD = pg


def is_initialized() -> bool:
    """Whether the default process group exists."""
    return GroupMember.WORLD is not None


def _world(what: str = "") -> ProcessGroup:
    pg = GroupMember.WORLD
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return pg


def resolve_group(group_: Any, what: str) -> ProcessGroup | None:
    """The group to run on (None: the default), or None if this rank is not a member."""
    world = _world(what)
    if group_ is None:
        return world
    if group_ is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group_, ProcessGroup):
        raise TypeError(f"{what}: group must be a ProcessGroup from new_group() (or None), got {group_!r}")
    return group_


def _timeout_seconds(timeout: Any) -> float:
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")


def _parse_backend(backend: str | None) -> dict[str, str]:
    """``{device: backend name}`` from ``"mpi"``, ``"cpu:gloo,cuda:nccl"`` or None."""
    if backend is None:
        mapping = {"cpu": "mpi"}
        if is_nccl_available():
            mapping["cuda"] = "nccl"
        return mapping
    if not isinstance(backend, str):
        raise ValueError(f"Backend name must be a string, but got: {backend}")
    if ":" in backend:
        mapping = {}
        for part in backend.split(","):
            device, _, name = part.partition(":")
            if not name:
                raise ValueError(f"Invalid backend string {backend!r}: expected 'device:backend,...'")
            mapping[device.strip().lower()] = name.strip().lower()
        return mapping
    cls = registry.backend_class(backend)
    return {device: backend.lower() for device in (getattr(cls, "devices", ()) or ("cpu",))}


def _make_backends(mapping: dict[str, str], rank: int, world_size: int, timeout: float) -> tuple[dict[str, Any], Any]:
    """One backend instance per distinct name; the CPU backend (made first) bootstraps the others."""
    from ..backends.mpi import MPIBackend

    instances: dict[str, Any] = {}
    by_device: dict[str, Any] = {}
    bootstrap = None
    ordered = sorted(set(mapping.values()), key=lambda n: registry.canonical_name(n) != "mpi")
    for name in ordered:
        cls = registry.backend_class(name)
        if not cls.is_available():
            raise RuntimeError(f"Distributed package doesn't have {name} built in: the {name!r} backend is "
                               f"installed but cannot run here ({getattr(cls, 'unavailable_reason', lambda: '')()})")
        instances[name] = cls(rank, world_size, timeout, bootstrap=bootstrap)
        if bootstrap is None and registry.canonical_name(name) == "mpi":
            bootstrap = instances[name]
    if bootstrap is None:  # e.g. backend="nccl" alone: MPI still carries the objects and the bootstrap
        bootstrap = MPIBackend(rank, world_size, timeout)
    for device, name in mapping.items():
        by_device[device] = instances[name]
        if registry.canonical_name(name) == "mpi":
            by_device["*"] = instances[name]  # the host path also serves devices no other backend claims
    return by_device, bootstrap


def _rank_and_size(rank: int, world_size: int, init_method: str | None, mapping: dict[str, str]) -> tuple[int, int]:
    if init_method and "?" in init_method:  # tcp://host:port?rank=0&world_size=2, as PyTorch parses it
        from urllib.parse import parse_qs

        query = parse_qs(init_method.partition("?")[2])
        rank = int(query["rank"][0]) if rank < 0 and "rank" in query else rank
        world_size = int(query["world_size"][0]) if world_size < 0 and "world_size" in query else world_size
    launched = None
    for name in set(mapping.values()):
        launched = registry.backend_class(name).launch_info() or launched
    if launched is not None:
        rank = launched[0] if rank < 0 else rank
        world_size = launched[1] if world_size < 0 else world_size
    if rank < 0:
        if "RANK" not in os.environ:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment variable "
                             "RANK expected, but not set. Start the processes with `torchplugrun --nproc-per-node "
                             "N script.py` (or mpiexec -n N), or pass rank= and world_size=")
        rank = int(os.environ["RANK"])
    if world_size < 0:
        if "WORLD_SIZE" not in os.environ:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: environment variable "
                             "WORLD_SIZE expected, but not set. Start the processes with `torchplugrun "
                             "--nproc-per-node N script.py` (or mpiexec -n N), or pass rank= and world_size=")
        world_size = int(os.environ["WORLD_SIZE"])
    if world_size > 1 and launched is None:
        raise RuntimeError(f"init_process_group: world_size={world_size} but this process was not started by an "
                           "MPI launcher, which the mpi/nccl backends rendezvous through: start the ranks with "
                           f"`torchplugrun --nproc-per-node {world_size} script.py` or `mpiexec -n {world_size} "
                           "python script.py`")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]")
    return rank, world_size


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Create the default process group (``backend``: ``"mpi"``, ``"gloo"`` (= mpi), ``"nccl"``, None for both).

    Operations on the group raise a ``DistBackendError`` naming the rank after ``timeout`` (default 30 min)
    instead of waiting forever for a rank that failed.
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    seconds = _timeout_seconds(timeout)
    mapping = _parse_backend(backend)
    if store is not None and (rank < 0 or world_size < 0):
        raise ValueError("world_size and rank must be specified when store is given")
    rank, world_size = _rank_and_size(rank, world_size, init_method, mapping)
    by_device, bootstrap = _make_backends(mapping, rank, world_size, seconds)
    name = backend.lower() if isinstance(backend, str) else "cpu:mpi" + (",cuda:nccl" if "cuda" in mapping else "")
    pg = ProcessGroup(name, list(range(world_size)), rank, by_device, bootstrap, seconds)
    _GROUPS.append(pg)
    _set_world(pg)


def new_group(ranks: list[int] | None = None, timeout: Any = None, backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None, device_id: Any = None) -> Any:
    """A group of the given global ``ranks`` (all ranks call it); ``GroupMember.NON_GROUP_MEMBER`` elsewhere."""
    world = _world("new_group")
    members = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}: new_group's ranks must be in [0, {world.size() - 1}]")
    seconds = world._timeout if timeout is None else _timeout_seconds(timeout)
    bootstrap = world._bootstrap.new_group(members)  # None on ranks outside the group
    made: dict[int, Any] = {id(world._bootstrap): bootstrap}
    by_device: dict[str, Any] = {}
    for device, instance in world._backends.items():
        if id(instance) not in made:
            made[id(instance)] = instance.new_group(members, bootstrap=bootstrap)
        by_device[device] = made[id(instance)]
    if world.rank() not in members:
        return GroupMember.NON_GROUP_MEMBER
    for instance in {id(b): b for b in by_device.values()}.values():
        instance.timeout = seconds
    name = world.name() if backend is None else backend.lower()
    pg = ProcessGroup(name, members, members.index(world.rank()), by_device, bootstrap, seconds)
    _GROUPS.append(pg)
    return pg


def destroy_process_group(group: Any = None) -> None:
    """Destroy ``group``, or every group (and the default one) when None."""
    if group is None:
        for pg in reversed(_GROUPS):
            _shutdown(pg)
        _GROUPS.clear()
        _set_world(None)
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _GROUPS:
        raise ValueError("Invalid process group specified")
    _shutdown(group)
    _GROUPS.remove(group)
    if group is GroupMember.WORLD:
        _set_world(None)


def _shutdown(pg: ProcessGroup) -> None:
    for instance in {id(b): b for b in [*pg._backends.values(), pg._bootstrap]}.values():
        instance.shutdown()


def get_pg_count() -> int:
    """How many process groups exist (the default one included)."""
    return len(_GROUPS)


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (the default group: its global rank); -1 if not a member."""
    pg = resolve_group(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    """The number of ranks in ``group``; -1 if this process is not a member."""
    pg = resolve_group(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group: Any = None) -> str:
    """The backend name of ``group`` as given to ``init_process_group``/``new_group``."""
    pg = resolve_group(group, "get_backend")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.name()


def get_default_backend_for_device(device: Any) -> str:
    """The backend a tensor on ``device`` uses by default: ``mpi`` for cpu, ``nccl`` for cuda."""
    device_type = device if isinstance(device, str) else device.type
    device_type = device_type.split(":")[0]
    if device_type == "cpu":
        return "mpi"
    if device_type == "cuda":
        return "nccl"
    raise ValueError(f"Default backend not registered for device : {device_type}")


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of ``group``."""
    pg = resolve_group(group, "get_process_group_ranks")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return list(pg._ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    pg = resolve_group(group, "get_global_rank")
    if pg is None or not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return pg._ranks[group_rank]


def get_group_rank(group: Any, global_rank: int) -> int:
    """``global_rank``'s rank in ``group``."""
    pg = resolve_group(group, "get_group_rank")
    if pg is None or global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return pg._ranks.index(global_rank)
