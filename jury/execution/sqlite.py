"""Safe execution of gold and candidate SQL on a real SQLite database.

Three independent locks keep the database byte-identical whatever the SQL says:
1. the file is opened read-only through a ``mode=ro`` URI;
2. ``PRAGMA query_only = 1``;
3. an authorizer that denies every write, schema change, ATTACH/DETACH, pragma change
   and the ``load_extension`` function.

A progress handler checks a wall-clock deadline every few thousand VM steps and
interrupts the statement (a runaway recursive CTE stops within the timeout plus a few
milliseconds). Rows beyond a cap are counted and hashed but not kept: every result
carries an order-independent digest of its row set and an ordered digest of its row
list, so two results over the cap can still be compared exactly as sets or as lists.
The set digest ignores duplicates exactly in bounded memory (:class:`RowSetDigest`
moves distinct row digests to a temporary on-disk table past a threshold), so a
runaway query that streams millions of distinct rows until its timeout stays flat.

Huge values cannot exhaust memory: SQLite refuses to build any string or blob over
``MAX_VALUE_BYTES`` (``SQLITE_LIMIT_LENGTH``), and a result whose kept rows hold more
than ``MAX_RESULT_BYTES`` is an ``error`` naming the cap. Both are errors of that one
query; scoring goes on with the rest.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from pathlib import Path

from jury.errors import JuryError, one_line
from jury.execution.rows import ResultAccumulator, ResultTooLarge
from jury.inputs.reader import open_input
from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

_PROGRESS_STEPS = 10_000
#: Longest string or blob (bytes) a query may produce or read (SQLite's SQLITE_LIMIT_LENGTH).
MAX_VALUE_BYTES = 16 * 1024 * 1024
_SQLITE_MAGIC = b"SQLite format 3\x00"

# Pragmas that only read (with or without an argument naming a table or index).
_READ_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "database_list",
        "collation_list",
        "function_list",
        "compile_options",
    }
)

_DENIED_ACTIONS = {
    getattr(sqlite3, name)
    for name in (
        "SQLITE_INSERT",
        "SQLITE_UPDATE",
        "SQLITE_DELETE",
        "SQLITE_CREATE_INDEX",
        "SQLITE_CREATE_TABLE",
        "SQLITE_CREATE_TEMP_INDEX",
        "SQLITE_CREATE_TEMP_TABLE",
        "SQLITE_CREATE_TEMP_TRIGGER",
        "SQLITE_CREATE_TEMP_VIEW",
        "SQLITE_CREATE_TRIGGER",
        "SQLITE_CREATE_VIEW",
        "SQLITE_CREATE_VTABLE",
        "SQLITE_DROP_INDEX",
        "SQLITE_DROP_TABLE",
        "SQLITE_DROP_TEMP_INDEX",
        "SQLITE_DROP_TEMP_TABLE",
        "SQLITE_DROP_TEMP_TRIGGER",
        "SQLITE_DROP_TEMP_VIEW",
        "SQLITE_DROP_TRIGGER",
        "SQLITE_DROP_VIEW",
        "SQLITE_DROP_VTABLE",
        "SQLITE_ALTER_TABLE",
        "SQLITE_REINDEX",
        "SQLITE_ANALYZE",
        "SQLITE_ATTACH",
        "SQLITE_DETACH",
    )
    if hasattr(sqlite3, name)
}


def _authorizer(action: int, arg1: str | None, arg2: str | None, dbname: str | None, source: str | None) -> int:
    if action in _DENIED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _READ_PRAGMAS:
            return sqlite3.SQLITE_OK
        # `PRAGMA x` reads a setting; `PRAGMA x = v` (arg2 set) changes it.
        return sqlite3.SQLITE_DENY if arg2 is not None else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def open_readonly(db_path: str | Path, *, reverse_unordered: bool = False) -> sqlite3.Connection:
    """Open a database so that nothing executed on the connection can change the file.

    ``reverse_unordered`` (for the determinism check of `jury check-gold` only) sets this new
    connection's ``PRAGMA reverse_unordered_selects`` before the authorizer is installed: a
    per-connection setting that writes nothing; the authorizer stays as strict."""
    path = Path(db_path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no database file at {path}")
    return _connect_readonly(path, reverse_unordered=reverse_unordered)


def _connect_readonly(path: Path, *, reverse_unordered: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    if reverse_unordered:  # never on a cached connection: only open_readonly passes it
        conn.execute("PRAGMA reverse_unordered_selects = ON")
    conn.set_authorizer(_authorizer)
    return conn


#: Most databases whose connection one thread keeps open (the least recently used is closed).
MAX_CACHED_CONNECTIONS = 32


class _ConnectionCache(threading.local):
    """Per thread (so per worker process): path text -> resolved path, and resolved path ->
    (file identity, open read-only connection). A path is resolved once; a file replaced or
    rewritten (device, inode, size or mtime differ) gets a fresh connection."""

    def __init__(self) -> None:
        self.resolved: dict[str, Path] = {}
        self.conns: dict[Path, tuple[tuple[int, int, int, int], sqlite3.Connection]] = {}


_cache = _ConnectionCache()


def cached_connection(db_path: str | Path) -> sqlite3.Connection:
    """The read-only connection to `db_path` this thread keeps open (opened on first use,
    with the same three locks as :func:`open_readonly`)."""
    key = str(db_path)
    path = _cache.resolved.get(key)
    if path is None:
        path = _cache.resolved[key] = Path(db_path).resolve()
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        _drop_connection(path)
        raise FileNotFoundError(f"no database file at {path}")
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    held = _cache.conns.pop(path, None)
    if held is not None and held[0] != ident:
        held[1].close()
        held = None
    if held is None:
        held = (ident, _connect_readonly(path))
    _cache.conns[path] = held  # most recently used last
    while len(_cache.conns) > MAX_CACHED_CONNECTIONS:
        _cache.conns.pop(next(iter(_cache.conns)))[1].close()
    return held[1]


def _drop_connection(path: Path) -> None:
    held = _cache.conns.pop(path, None)
    if held is not None:
        held[1].close()


def close_connections() -> None:
    """Close every connection this thread keeps (the next query opens a fresh one)."""
    while _cache.conns:
        _cache.conns.popitem()[1][1].close()
    _cache.resolved.clear()


def check_database(db_path: str | Path) -> str | None:
    """None when the file is a SQLite database that opens read-only and passes
    ``PRAGMA quick_check``; otherwise a one-line reason. The file is never modified."""
    path = Path(db_path).resolve()
    try:
        with open_input(path, contained=False, os_errors=True) as fh:  # a FIFO or device: refused, never waited on
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    except JuryError as exc:
        return str(exc).removeprefix(f"{path}: ")
    if not head:
        return "the file is empty"
    if head != _SQLITE_MAGIC:
        return "no SQLite header (not a database file)"
    try:
        conn = open_readonly(path)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except (sqlite3.Error, FileNotFoundError) as exc:
        return _error_line(exc)
    if rows != [("ok",)]:
        detail = " ".join(str(rows[0][0] if rows else "no result").split())[:200]
        return f"fails PRAGMA quick_check: {detail}"
    return None


def execute(
    db_path: str | Path,
    sql: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    reverse_unordered: bool = False,
    cached: bool = False,
) -> ExecResult:
    """Run one SQL text on a database read-only; never raises for a bad query.

    A query that fails (syntax, missing column, a denied write, more than one
    statement) is an ``error``; one that runs past ``timeout_s`` is a ``timeout``.
    ``reverse_unordered``: see :func:`open_readonly` (gold determinism checks only).
    ``cached``: run on this thread's kept connection (:func:`cached_connection`) instead of
    a new one, closed after; the statement is finished and any transaction it began rolled
    back, so nothing carries over to the next query.
    """
    start = time.monotonic()
    cached = cached and not reverse_unordered
    cursor: sqlite3.Cursor | None = None
    try:
        conn = cached_connection(db_path) if cached else open_readonly(db_path, reverse_unordered=reverse_unordered)
    except (sqlite3.Error, FileNotFoundError) as exc:
        return ExecResult(status="error", error=f"cannot open database: {exc}")
    deadline = _Deadline(start + timeout_s)
    conn.set_progress_handler(deadline.progress, _PROGRESS_STEPS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    rows = ResultAccumulator(row_cap)
    try:
        cursor = conn.execute(sql)
        if cursor.description is None:  # empty, a comment, or a statement that returns no result set
            raise sqlite3.ProgrammingError("not a query: the SQL returns no result set")
        columns = [d[0] for d in cursor.description]
        for row in cursor:  # one row at a time: a batch of huge rows would be held at once
            rows.add(tuple(row))
            if rows.count % 1000 == 0 and deadline.passed():
                raise sqlite3.OperationalError("interrupted")
    except (sqlite3.Error, ValueError, OverflowError, MemoryError, ResultTooLarge) as exc:
        rows.discard()
        return _failed(exc, deadline.timed_out, timeout_s, time.monotonic() - start)
    finally:
        if cached:
            _release(conn, cursor)
        else:
            conn.close()
    return rows.result(columns, time.monotonic() - start)


class _Deadline:
    """A query's deadline: SQLite's progress handler interrupts the query once it has passed, and
    ``timed_out`` says that it did (an error after it is a timeout, not the query's error)."""

    __slots__ = ("at", "timed_out")

    def __init__(self, at: float) -> None:
        self.at = at
        self.timed_out = False

    def passed(self) -> bool:
        if time.monotonic() > self.at:
            self.timed_out = True
        return self.timed_out

    def progress(self) -> int:
        return 1 if self.passed() else 0


def _failed(exc: BaseException, timed_out: bool, timeout_s: float, elapsed: float) -> ExecResult:
    """The result of a query that stopped on ``exc``: a timeout past its deadline, else an error
    in one line (a value over the cap on one value said so)."""
    if timed_out:
        return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed)
    error = _error_line(exc)
    if isinstance(exc, sqlite3.DataError) or "too big" in error:
        error = f"{error}: a string or blob over {MAX_VALUE_BYTES:,} bytes (the cap on one value)"
    return ExecResult(status="error", error=error, elapsed_s=elapsed)


def _release(conn: sqlite3.Connection, cursor: sqlite3.Cursor | None) -> None:
    """Leave a kept connection as it was opened: no statement, transaction or handler left."""
    try:
        if cursor is not None:
            cursor.close()
        if conn.in_transaction:  # `BEGIN` or `SAVEPOINT` as the "query"
            conn.rollback()
        conn.set_progress_handler(None, 0)
    except sqlite3.Error:
        close_connections()


def _error_line(exc: BaseException) -> str:
    """SQLite's own error (or the result cap's) as it says it; any other failure named by its type."""
    return one_line(exc, named=not isinstance(exc, (sqlite3.Error, ResultTooLarge)))
