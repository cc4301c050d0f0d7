"""The allocator's OOM policy (free the cache, retry once, then a catchable error with figures),
driven with a fake pool: the same code CuPy's pool goes through on a GPU."""

from __future__ import annotations

import pytest

from torchplug._runtime.allocator import OutOfMemoryError
from torchplug_cuda._allocator import PoolFigures, malloc_with_retry, oom_message


class FakeOOM(Exception):
    pass


class FakePool:
    """A pool of ``capacity`` bytes whose cache (``cached``) is released by free_all_blocks."""

    def __init__(self, capacity: int, cached: int = 0) -> None:
        self.capacity, self.used, self.cached, self.freed = capacity, 0, cached, 0

    def malloc(self, n: int) -> int:
        if self.used + self.cached + n > self.capacity:
            raise FakeOOM(n)
        self.used += n
        return n

    def free_all_blocks(self) -> None:
        self.freed += 1
        self.cached = 0

    def used_bytes(self) -> int:
        return self.used

    def total_bytes(self) -> int:
        return self.used + self.cached


def _malloc(pool: FakePool, n: int, figures: PoolFigures) -> int:
    return malloc_with_retry(pool, n, figures, lambda e: isinstance(e, FakeOOM), lambda k: f"no room for {k}")


def test_success_tracks_peaks():
    pool, fig = FakePool(100), PoolFigures()
    _malloc(pool, 40, fig)
    _malloc(pool, 30, fig)
    assert (fig.mallocs, fig.peak_used, fig.peak_total, fig.retries, fig.ooms) == (2, 70, 70, 0, 0)


def test_cache_is_freed_and_the_retry_succeeds():
    pool, fig = FakePool(100, cached=80), PoolFigures()
    assert _malloc(pool, 50, fig) == 50
    assert pool.freed == 1 and fig.retries == 1 and fig.ooms == 0


def test_second_failure_raises_catchable_oom():
    pool, fig = FakePool(100), PoolFigures()
    with pytest.raises(OutOfMemoryError, match="no room for 500"):
        _malloc(pool, 500, fig)
    assert fig.retries == 1 and fig.ooms == 1 and pool.freed == 1


def test_other_errors_pass_through():
    class Broken(FakePool):
        def malloc(self, n: int) -> int:
            raise ValueError("driver says no")

    with pytest.raises(ValueError, match="driver says no"):
        _malloc(Broken(10), 1, PoolFigures())


def test_message_gives_the_figures():
    msg = oom_message(3 << 20, 0, 80 << 30, 1 << 20, 10 << 20, 12 << 20, 40 << 30)
    assert msg.startswith("CUDA out of memory. Tried to allocate 3.00 MiB. GPU 0 has a total capacity of 81920.00 MiB "
                          "of which 1.00 MiB is free.")
    assert "10.00 MiB is allocated" in msg and "2.00 MiB is reserved but unallocated" in msg
    assert "limited to 40960.00 MiB by set_per_process_memory_fraction" in msg
