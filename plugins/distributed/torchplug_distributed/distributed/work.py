"""``Work``: the handle of an asynchronous collective (``async_op=True``), and its timeout error."""

from __future__ import annotations

from typing import Any

__all__ = ["Work", "CompletedWork", "DistError", "DistBackendError"]


class DistError(RuntimeError):
    """A failed collective (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective the backend could not complete, e.g. a timeout (PyTorch's ``DistBackendError``)."""


class Work:
    """A pending collective: ``wait()`` blocks until it finished (or raises after the group's timeout)."""

    def __init__(self) -> None:
        self._exception: BaseException | None = None
        self._result: list[Any] = []

    def is_completed(self) -> bool:
        """Whether the operation finished (it may still have failed: see :meth:`is_success`)."""
        return True

    def is_success(self) -> bool:
        """Whether the operation finished without error."""
        return self.is_completed() and self._exception is None

    def exception(self) -> BaseException | None:
        """The error the operation failed with, or None."""
        return self._exception

    def wait(self, timeout: Any = None) -> bool:
        """Block until the operation finished; raise its error (e.g. a timeout naming the rank)."""
        if self._exception is not None:
            raise self._exception
        return True

    def synchronize(self) -> None:
        """Same as :meth:`wait` on these backends (there is no separate device stream to join)."""
        self.wait()

    def result(self) -> list[Any]:
        """The output tensors of the operation, once it finished."""
        self.wait()
        return self._result

    def get_future(self) -> Any:
        """A future completed with :meth:`result` (waits for the operation first)."""
        from concurrent.futures import Future

        future: Future = Future()
        try:
            future.set_result(self.result())
        except BaseException as exc:  # the future carries the failure, as PyTorch's does
            future.set_exception(exc)
        return future


class CompletedWork(Work):
    """A Work that was done when it was made (e.g. a collective on a group of one)."""

    def __init__(self, result: list[Any] | None = None) -> None:
        super().__init__()
        self._result = result or []
