"""Executing one query many times: the passes of the gold determinism check and the timed
repetitions of the efficiency scores. Read-only like every execution (jury.execution.sqlite).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from jury.execution.engine_urls import is_url
from jury.execution.engines import execute_any as execute
from jury.execution.engines import timed_runs as engine_timed_runs
from jury.execution.sqlite import open_readonly
from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

_PROGRESS_STEPS = 10_000


def run_passes(
    db_path: str | Path,
    sql: str,
    passes: Sequence[int],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
) -> tuple[list[list[ExecResult]], ExecResult | None]:
    """(the results of every pass, the result with ``PRAGMA reverse_unordered_selects=ON``;
    None on an engine URL, which has no such setting: its passes alone test determinism).

    Each pass is a list of ``passes[i]`` fresh executions (a new connection each). The first
    execution that does not succeed ends the run: its failure is the finding, and a query that
    times out is not run again 35 times (the reverse run is then None).
    """
    done: list[list[ExecResult]] = []
    for n in passes:
        current: list[ExecResult] = []
        done.append(current)
        for _ in range(n):
            result = execute(db_path, sql, timeout_s=timeout_s, row_cap=row_cap)
            current.append(result)
            if not result.ok:
                return done, None
    if is_url(db_path):  # PRAGMA reverse_unordered_selects is SQLite's: no reversed run on an engine
        return done, None
    return done, execute(db_path, sql, timeout_s=timeout_s, row_cap=row_cap, reverse_unordered=True)


def timed_runs(
    db_path: str | Path, sqls: Sequence[str], repeats: int, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[list[float] | None]:
    """Seconds each of ``sqls`` takes, ``repeats`` times, interleaved in one window.

    Round r executes every query once, in the order given, on one read-only connection; a
    time covers executing the statement and stepping through all its rows (none kept). A
    query that fails or times out in any round gets None (it has no timing). On an engine URL
    the engine's executor times them (jury.execution.engines.timed_runs: the client's clock
    around the statement and the fetch of every row).
    """
    if is_url(db_path):
        return engine_timed_runs(str(db_path), list(sqls), repeats, timeout_s=timeout_s)
    conn = open_readonly(db_path)
    times: list[list[float] | None] = [[] for _ in sqls]
    deadline = [0.0]

    def _progress() -> int:
        return 1 if time.perf_counter() > deadline[0] else 0

    conn.set_progress_handler(_progress, _PROGRESS_STEPS)
    try:
        for _ in range(repeats):
            for i, sql in enumerate(sqls):
                slot = times[i]
                if slot is None:
                    continue
                start = time.perf_counter()
                deadline[0] = start + timeout_s
                try:
                    for _row in conn.execute(sql):
                        pass
                except (sqlite3.Error, ValueError, OverflowError, MemoryError):
                    times[i] = None
                    continue
                slot.append(time.perf_counter() - start)
    finally:
        conn.close()
    return times
