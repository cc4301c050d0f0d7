"""The error a non-reentrant checkpoint raises (its own module: the frame and the debug log both raise it)."""

__all__ = ["CheckpointError"]


class CheckpointError(RuntimeError):
    """A non-reentrant checkpoint's recomputation did not save what its forward saved."""
