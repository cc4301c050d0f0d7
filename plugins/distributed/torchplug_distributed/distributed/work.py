"""``Work``: the handle of an asynchronous collective (``async_op=True``), and its timeout error."""

from __future__ import annotations

from typing import Any

__all__ = ["Work", "CompletedWork", "Future", "DistError", "DistBackendError"]


class DistError(RuntimeError):
    """A failed collective (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective the backend could not complete, e.g. a timeout (PyTorch's ``DistBackendError``)."""


class Future:
    """The subset of ``torch.futures.Future`` a Work's future needs: ``wait``, ``value``, ``done``, ``then``."""

    def __init__(self) -> None:
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None

    def done(self) -> bool:
        """Whether a result or an error was set."""
        return self._done

    def set_result(self, result: Any) -> None:
        """Complete the future with ``result``."""
        self._value, self._done = result, True

    def set_exception(self, exc: BaseException) -> None:
        """Complete the future with an error that ``wait``/``value`` raise."""
        self._exception, self._done = exc, True

    def wait(self) -> Any:
        """The result (raising the error it completed with)."""
        if self._exception is not None:
            raise self._exception
        return self._value

    value = wait

    def then(self, callback: Any) -> Future:
        """A future completed with ``callback(self)``."""
        out = Future()
        try:
            out.set_result(callback(self))
        except BaseException as exc:
            out.set_exception(exc)
        return out


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

    def get_future(self) -> Future:
        """A :class:`Future` completed with :meth:`result` (waits for the operation first)."""
        future = Future()
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
