"""A client-side cancel bound to the one statement it was meant for (jury.execution.engines
sends it at a query's deadline): a late cancel can never reach a later statement."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable


class BoundCancel:
    """A cancel bound to one statement: the deadline's timer cancels only while that statement
    runs (``start`` .. ``finish``, under one lock), and ``finish`` waits for a cancel in flight,
    so a late cancel can never reach a later statement on the connection. A connection a cancel
    was sent to (``sent``) is never used again: the caller closes it."""

    def __init__(self, cancel: Callable[[], object]) -> None:
        self._cancel = cancel
        self._lock = threading.Lock()
        self._active = False
        self.sent = False

    def start(self) -> None:
        with self._lock:
            self._active = True

    def finish(self) -> None:
        with self._lock:  # waits for a cancel being sent right now (PostgreSQL's cancel(), MySQL's KILL QUERY)
            self._active = False

    def fire(self) -> None:
        with self._lock:
            if not self._active:
                return  # the statement already ended: nothing of it left to cancel
            self.sent = True
            with contextlib.suppress(Exception):  # the server may refuse or the statement just ended
                self._cancel()
