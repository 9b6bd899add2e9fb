"""How a long job reports progress: a job asks a ``ProgressFactory`` for a bar by description
and calls what it yields with (done, total); ``no_progress`` shows nothing (the library's
default; the command line passes rich's bars)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

Progress = Callable[[int, int], None]  # (done, total)
# description -> context manager yielding a (done, total) callback, or None for no progress shown
ProgressFactory = Callable[[str], AbstractContextManager[Progress | None]]


def no_progress(_description: str) -> AbstractContextManager[None]:
    """The progress of a job nobody watches: no bar."""
    return nullcontext(None)
