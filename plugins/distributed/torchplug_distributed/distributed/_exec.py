"""``torchplugrun --no-python``: set torchrun's per-rank environment, then exec the target program."""

from __future__ import annotations

import os
import sys

from ._worker import set_rank_environment

__all__ = ["main"]


def main() -> None:
    """Replace this process with ``argv[1:]`` after filling RANK, LOCAL_RANK... from the MPI launch."""
    set_rank_environment(os.environ)  # type: ignore[arg-type]
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
