"""Executions written to the store in batches, each batch in one transaction.

A batch is written once it holds ``EXECUTION_BATCH`` executions or ``EXECUTION_FLUSH_S``
seconds have passed since the last write (checked as each result arrives), and the rest by
``flush`` in a ``finally``: an exception or Ctrl-C loses nothing, a hard crash (killed
process, power cut) at most the one unwritten batch, which a rerun executes again.
"""

from __future__ import annotations

import json
import time

from jury.errors import printable
from jury.execution.store import Store, encode_rows
from jury.inputs.records import ExecResult

#: An execution is written with at most this many others in one transaction ...
EXECUTION_BATCH = 64
#: ... or once this many seconds have passed since the last write, whichever comes first.
EXECUTION_FLUSH_S = 0.5
#: A failed query's error is stored with at most this many characters.
STORED_ERROR_CAP = 500


#: A result's stored form (encode_result): (status, columns as JSON, rows as encode_rows writes them,
#: row_count, truncated as 0 or 1, result_sha256, ordered_sha256, error, elapsed_s, raw_sha256).
EncodedResult = tuple[str, str, str, int, int, str | None, str | None, str | None, float, str | None]


def encode_result(result: ExecResult) -> EncodedResult:
    """The stored form of a result: (status, columns, rows, row_count, truncated,
    result_sha256, ordered_sha256, error, elapsed_s, raw_sha256). Cheap to pickle; workers encode.

    Of a query that failed or timed out only its status, its error (one line without control
    characters (`jury.errors.printable`: sqlglot's ANSI underline of a token it cannot parse
    goes), capped at STORED_ERROR_CAP characters) and its time are stored: nothing it may have
    read. This is the one place an execution's error is encoded for the store."""
    if result.status != "ok":
        error = " ".join(printable(result.error or "").split())
        if len(error) > STORED_ERROR_CAP:
            error = error[: STORED_ERROR_CAP - 1] + "…"
        return (result.status, "[]", encode_rows([]), 0, 0, None, None, error or None, result.elapsed_s, None)
    return (
        result.status,
        json.dumps(result.columns),
        encode_rows(result.rows),
        result.row_count,
        int(result.truncated),
        result.result_sha256,
        result.ordered_sha256,
        result.error,
        result.elapsed_s,
        result.raw_sha256,
    )


class ExecutionWriter:
    """Executions written in batches: each ``add`` buffers one, and the buffer is written in
    one transaction once it holds ``batch`` executions or ``interval_s`` has passed since the
    last write. ``flush`` writes the rest: call it in a ``finally`` so an exception or Ctrl-C
    loses nothing; a hard crash loses at most the one unwritten batch (a rerun executes it)."""

    def __init__(self, store: Store, *, batch: int | None = None, interval_s: float | None = None):
        self.store = store
        self.batch = EXECUTION_BATCH if batch is None else batch
        self.interval_s = EXECUTION_FLUSH_S if interval_s is None else interval_s
        self.pending: list[tuple[str | int | float | None, ...]] = []
        self.last = time.monotonic()

    def add(self, key: str, db_sha256: str, sql: str, encoded: EncodedResult, *, timeout_s: float, row_cap: int) -> None:
        self.pending.append((key, db_sha256, sql, *encoded, timeout_s, row_cap))
        if len(self.pending) >= self.batch or time.monotonic() - self.last >= self.interval_s:
            self.flush()

    def flush(self) -> None:
        rows, self.pending = self.pending, []  # a failed write is not retried by a later flush
        self.last = time.monotonic()
        if rows:
            self.store.put_executions(rows)
