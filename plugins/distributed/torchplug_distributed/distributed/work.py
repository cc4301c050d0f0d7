"""``Work``: the handle of an asynchronous collective (``async_op=True``), and its timeout error."""

from __future__ import annotations

from typing import Any

__all__ = ["Work", "CompletedWork", "Future", "DistError", "DistBackendError"]


class DistError(RuntimeError):
    """A failed collective (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective the backend could not complete, e.g. a timeout (PyTorch's ``DistBackendError``)."""


class Future:
    """The part of ``torch.futures.Future`` that collectives and DDP communication hooks use.

    A future of a pending operation resolves when first waited on (``wait``/``value``), so chaining
    ``then`` keeps the operation asynchronous; ``done`` polls without blocking.
    """

    def __init__(self, resolve: Any = None, poll: Any = None) -> None:
        self._resolve = resolve
        self._poll = poll
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None

    def done(self) -> bool:
        """Whether the result is available (without waiting)."""
        if not self._done and self._poll is not None and self._poll():
            self.wait_quietly()
        return self._done

    def set_result(self, result: Any) -> None:
        """Complete the future with ``result``."""
        self._value, self._done, self._resolve = result, True, None

    def set_exception(self, exc: BaseException) -> None:
        """Complete the future with an error that ``wait``/``value`` raise."""
        self._exception, self._done, self._resolve = exc, True, None

    def wait_quietly(self) -> None:
        if not self._done:
            try:
                self.set_result(self._resolve() if self._resolve is not None else None)
            except BaseException as exc:  # kept for wait()/value(), as PyTorch's future keeps it
                self.set_exception(exc)

    def wait(self) -> Any:
        """Block until the result is available and return it (raising the error it completed with)."""
        self.wait_quietly()
        if self._exception is not None:
            raise self._exception
        return self._value

    value = wait

    def then(self, callback: Any) -> Future:
        """A future of ``callback(self)``, run once this one completed."""
        return Future(lambda: (self.wait_quietly(), callback(self))[1], self.done)


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
        """A :class:`Future` of :meth:`result`: resolved when waited on, so the operation stays asynchronous."""
        return Future(self.result, self.is_completed)


class CompletedWork(Work):
    """A Work that was done when it was made (e.g. a collective on a group of one)."""

    def __init__(self, result: list[Any] | None = None) -> None:
        super().__init__()
        self._result = result or []
