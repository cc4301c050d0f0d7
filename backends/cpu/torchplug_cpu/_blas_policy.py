"""``matmul``: NumPy's matmul with small products kept on one BLAS thread, larger ones on the count measured faster.

OpenBLAS splits even small GEMMs across its threads, where the hand-off costs more than it
saves.  Measured on 2 vCPUs (one OpenBLAS pool in the process): a 64x64x64 product takes the
same time on one or two threads; from about a million multiply-adds two threads win
(64x128x128: 0.78x the one-thread time, 64x512x256: 0.56x).  So products below ``SMALL_WORK``
multiply-adds run with one thread and larger ones with the count ``torchplug.set_num_threads``
(or the library default) gives, when it is the faster one now (below).  (An earlier limit of 2^24 had been set while SciPy's second
OpenBLAS pool was also in the process, which made two threads look slower than they are: the
784-256-10 MLP step went from 0.67-0.70x to 0.91-0.93x PyTorch's steps/s at default threads
when its 64x784x256 products moved to two threads.)

Products from ``SMALL_WORK`` multiply-adds up pick their thread count by
measurement: on a host whose other cores are busy with other processes, OpenBLAS's second thread
waits for a core and a two-thread product took 3-30x the one-thread time (256x256: 1.5 ms on one
thread, 3.8-30 ms on two, load average 8 on 2 vCPUs), while on an idle host two threads take about
0.6x the time.  The policy keeps a running mean of the seconds per multiply-add on one thread and
on the user's count, per power-of-two size class, runs each product on the faster, and re-measures
the other every ``PROBE_EVERY`` products of the class, so it follows the host's load.  OpenBLAS
blocks some shapes differently on one and two threads (64x784x256 differs in the last bits, 256x256x256
does not), so a mid-size product's last bits can depend on the host's load; with
``torchplug.use_deterministic_algorithms(True)`` the count is the user's, always.

The switch is OpenBLAS's own ``openblas_set_num_threads`` on NumPy's copy of the library, found
through threadpoolctl; with another BLAS (MKL, Accelerate) or no threadpoolctl it is a plain
``np.matmul``.

Two float32/float64 matrices of ``SMALL_WORK`` multiply-adds or more go to the C extension's pool
instead (``_gemm``: one single-threaded GEMM per block of the result, MKL's or NumPy's OpenBLAS kept at
one thread); there the measured count is the number of blocks (``_pooled``), a probe after the pool's
workers slept runs two products and measures the second, and probes come less often while they
confirm the choice.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

import numpy as np

from torchplug._base.flags import are_deterministic_algorithms_enabled

__all__ = ["matmul", "small_dot", "axpy_kernels", "set_user_threads", "user_threads", "numpy_blas_path",
           "numpy_openblas", "SMALL_WORK", "PROBE_EVERY", "PROBE_MAX"]

SMALL_WORK = 1 << 21  # multiply-adds: below this one thread is as fast (and leaves the other core free)
PROBE_EVERY = 16  # products of a size class between re-measurements of the count not chosen
PROBE_MAX = 512  # ... growing up to this while the measurements keep confirming the choice (pooled products)
_perf = time.perf_counter
_rates: dict[int, list[float]] = {}  # size class -> [seconds per multiply-add on 1 thread, on the user's count]
_seen: dict[int, int] = {}  # size class -> products run

_np_matmul = np.matmul
_setter: Any = None  # ctypes function: openblas_set_num_threads of NumPy's OpenBLAS
_threads = 1  # the user's thread count (what large products use)
_path = ""  # the file of NumPy's OpenBLAS the policy controls
_lib: Any = None  # its threadpoolctl controller (for the cblas symbols)
_current = 1  # the count last set on the library
_POOL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_gemm_pool: Any = None  # _gemm.gemm where the C extension is built (a library is bound on first use)
_gemm_library: Any = None  # _gemm.library: which one (binds it on the first call)
_last_parts = 0  # the part count of the last pooled product


def _find_setter() -> tuple[Any, int, str, Any]:
    """(openblas_set_num_threads, its current count, library file, controller) of NumPy's OpenBLAS."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None, 1, "", None
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    for lib in ThreadpoolController().lib_controllers:
        path = getattr(lib, "filepath", "") or ""
        if lib.internal_api != "openblas" or not path.startswith(numpy_dir) or "numpy" not in path:
            continue
        try:
            name = f"{lib._symbol_prefix}openblas_set_num_threads{lib._symbol_suffix}"
            fn = getattr(lib.dynlib, name)
        except AttributeError:  # an OpenBLAS without the symbols threadpoolctl expects
            return None, 1, "", None
        fn.argtypes = [ctypes.c_int]
        fn.restype = None
        return fn, int(lib.num_threads), path, lib
    return None, 1, "", None


def set_user_threads(n: int) -> None:
    """Record the thread count large products use (called by ``torchplug.set_num_threads``, which
    has just set the library to ``n``)."""
    global _threads, _current
    _threads = _current = n
    _rates.clear()  # the measurements were of another count
    _seen.clear()


def numpy_blas_path() -> str:
    """The file of NumPy's OpenBLAS when the policy controls it ('' otherwise)."""
    return _path if _setter is not None else ""


def user_threads() -> int:
    """The thread count large products use (what ``torchplug.get_num_threads`` reports)."""
    return _threads


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``, on one BLAS thread when the product is small (see the module docstring).

    Two float matrices of ``SMALL_WORK`` multiply-adds or more go to the C pool (``_gemm``: one
    single-threaded GEMM per block of the result) when the C extension and a library are there.

    The library's count is changed only when the wanted one differs from the last one set, so a
    run of small products (a training loop) switches once, not twice per call: waking the pool
    back up after every product cost more than it saved.

    Two float matrices go through ``ndarray.dot``: the same GEMM call (a transposed operand, such as
    ``nn.Linear``'s ``weight.t()``, is passed to BLAS with its transpose flag, not copied; an operand
    without a unit stride is copied by both), with about a microsecond less set-up than the matmul
    ufunc, which is most of an 8x8 product's time.
    """
    global _current
    if a.ndim == 2 and b.ndim == 2:
        work = a.size * b.shape[-1]
        if work >= SMALL_WORK and _gemm_pool is not None and a.dtype is b.dtype and a.dtype in _POOL_DTYPES \
                and (a.flags.c_contiguous or a.flags.f_contiguous) and (b.flags.c_contiguous or b.flags.f_contiguous):
            out = _pooled(a, b, work)
            if out is not None:
                return out
    if _threads > 1 and _setter is not None:
        work = a.size * b.shape[-1] if a.ndim >= 2 and b.ndim >= 2 else 0
        if work >= SMALL_WORK and not are_deterministic_algorithms_enabled():
            return _measured(a, b, work)
        want = 1 if a.ndim >= 2 and b.ndim >= 2 and work < SMALL_WORK else _threads
        if want != _current:
            _setter(want)
            _current = want
    return _product(a, b)


def _pooled(a: np.ndarray, b: np.ndarray, work: int) -> np.ndarray | None:
    """A large 2-d float product on the C pool, on the part count measured faster (as ``_measured``);
    None when no library could be bound (then never again: NumPy's matmul serves)."""
    global _gemm_pool
    library = _gemm_library()
    if not library:
        _gemm_pool = None
        return None
    if library == "openblas" and _current != 1:
        _one_thread()  # OpenBLAS's own pool stays asleep: the C pool's threads call it single-threaded
    if _threads < 2 or are_deterministic_algorithms_enabled():
        return _gemm_pool(a, b, _threads)
    key = -work.bit_length()  # (negative: apart from the OpenBLAS-thread classes of ``_measured``)
    state = _rates.get(key)
    if state is None:  # [s per multiply-add on 1 thread, on the user's count, products to the next probe, interval]
        state = _rates[key] = [0.0, 0.0, 0, PROBE_EVERY]
    probe = True
    if not state[1]:
        pick = 1  # the user's count first: what an idle host runs fastest
    elif not state[0]:
        pick = 0
    else:
        pick = 0 if state[0] < state[1] else 1
        state[2] -= 1
        probe = state[2] <= 0
        if probe:
            pick = 1 - pick  # re-measure the other count: the host's load moves
    global _last_parts
    parts = _threads if pick else 1
    warm = parts == 1 or _last_parts == parts
    _last_parts = parts
    start = _perf()
    out = _gemm_pool(a, b, parts)
    rate = (_perf() - start) / work
    if probe:
        if not warm:
            # the pool's workers were asleep (on a VM waking an idle vCPU took longer than a 256x256
            # product): this product only wakes them, and the next one, still a probe, is measured
            return out
        before = state[0] < state[1] if state[0] and state[1] else None
        state[pick] = rate  # a probe replaces its count's old figure
        # probes that confirm the choice come half as often each time (a probe runs one product on the
        # slower count: 1 in 16 cost an idle host about 6% on back-to-back 256x256 products); one that
        # changes it brings them back to every PROBE_EVERY products
        state[3] = min(state[3] * 2, PROBE_MAX) if before == (state[0] < state[1]) else PROBE_EVERY
        state[2] = state[3]
    else:
        # the count in use keeps a running mean, each sample capped at twice it: one product stalled by a
        # preemption (milliseconds) no longer flips the choice, while a lasting slowdown (the host got
        # busy) still raises the figure by up to 1.25x per product
        state[pick] = 0.75 * state[pick] + 0.25 * min(rate, 2.0 * state[pick])
    return out


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim == 2 and b.ndim == 2 and a.dtype.kind in "fc" and a.dtype is b.dtype:
        return a.dot(b)
    return _np_matmul(a, b)


def _measured(a: np.ndarray, b: np.ndarray, work: int) -> np.ndarray:
    """A mid-size product on the thread count measured faster for its size class (see the module docstring)."""
    global _current
    size_class = work.bit_length()
    rates = _rates.get(size_class)
    if rates is None:
        rates = _rates[size_class] = [0.0, 0.0]
    seen = _seen[size_class] = _seen.get(size_class, 0) + 1
    probe = True
    if not rates[1]:
        pick = 1  # the user's count first: what an idle host runs fastest
    elif not rates[0]:
        pick = 0
    else:
        pick = 0 if rates[0] < rates[1] else 1
        probe = seen % PROBE_EVERY < 2  # two products: the first after a switch also wakes OpenBLAS's threads
        if probe:
            pick = 1 - pick  # re-measure the other count: the host's load moves
    want = _threads if pick else 1
    switched = want != _current
    if switched:
        _setter(want)
        _current = want
    start = _perf()
    out = _product(a, b)
    rate = (_perf() - start) / work
    if not switched:  # (a product right after a switch pays the pool's wake-up: it would bias the figure)
        # a probe replaces its count's old figure; the count in use keeps a running mean (timing noise)
        rates[pick] = rate if probe else 0.75 * rates[pick] + 0.25 * rate
    return out



def small_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a.dot(b)`` on one BLAS thread, for two 2-d float matrices whose product the caller found
    smaller than ``SMALL_WORK`` multiply-adds: the lean path of an 8x8 ``mm``, where set-up is the cost."""
    if _current != 1 and _setter is not None:
        _one_thread()
    return a.dot(b)


def _one_thread() -> None:
    global _current
    if _current != 1:
        _setter(1)
        _current = 1


def axpy_kernels() -> dict[np.dtype, Any]:
    """``{dtype: axpy(alpha, x, y)}`` (y += alpha * x in place, contiguous float32/float64 arrays of
    one size) on NumPy's own OpenBLAS, one thread; empty when that library cannot be reached.

    Using NumPy's library keeps a second OpenBLAS (SciPy's) and its thread pool out of the
    training loop: two pools on a small machine made steps several times slower.
    """
    if _setter is None or _lib is None:
        return {}
    index = ctypes.c_int64 if "64" in _lib._symbol_suffix else ctypes.c_int  # ILP64 builds take 64-bit sizes
    found = {}
    for dtype, name, scalar in ((np.float32, "cblas_saxpy", ctypes.c_float), (np.float64, "cblas_daxpy", ctypes.c_double)):
        try:
            fn = getattr(_lib.dynlib, f"{_lib._symbol_prefix}{name}{_lib._symbol_suffix}")
        except AttributeError:
            return {}
        fn.argtypes = [index, scalar, ctypes.c_void_p, index, ctypes.c_void_p, index]
        fn.restype = None

        def axpy(alpha: float, x: np.ndarray, y: np.ndarray, _fn: Any = fn) -> None:
            _one_thread()  # a memory-bound loop: threads only add hand-off cost
            _fn(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)

        found[np.dtype(dtype)] = axpy
    return found


def numpy_openblas() -> Any:
    """The threadpoolctl controller of NumPy's OpenBLAS, or None (another BLAS, or no threadpoolctl)."""
    return _lib if _setter is not None else None


def _init() -> None:
    global _setter, _threads, _current, _path, _lib, _gemm_pool, _gemm_library
    _setter, _threads, _path, _lib = _find_setter()
    _current = _threads
    from torchplug_cpu import _gemm

    if _gemm.available():
        _gemm_pool, _gemm_library = _gemm.gemm, _gemm.library


_init()
