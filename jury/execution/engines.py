"""Execution on server and embedded engines: PostgreSQL, MySQL/MariaDB and DuckDB.

A database is named by a URL (``postgresql://user@host:port/name``, ``mysql://…`` or
``mariadb://…``, ``duckdb:///path/file.duckdb``), never with a password in it: a password
comes from the environment (``PGPASSWORD``, ``MYSQL_PWD``, or the variable a
``?password_env=NAME`` query parameter names), so no store, verdict file or log holds it.
Each engine's driver is imported only when a URL of that engine is used; a missing one is
one line naming the extra to install.

Every engine runs the SQL as :func:`jury.execution.sqlite.execute` does, with the same row
cap, byte caps, timeout and digests (the row digests and :class:`RowSetDigest` of the SQLite
executor, over values normalised to what SQLite would return), so one result hashes alike
on every engine. Read-only for real, four ways on each engine:

0. the login itself can only read the benchmark's tables: at connect its privileges are read
   from the server's catalogue and a privileged login (a superuser, FILE, SUPER, a table's
   owner, ...) is refused before any model SQL runs (jury.execution.engine_privileges), unless
   the URL allows it (``--allow-privileged-login``);
1. a static check (jury.execution.statement_check) refuses anything but one query built of
   what the allow-list names: the syntax of a query, the database's own tables, and the
   engine's data functions called by their name; MySQL executable comments refused outright;
2. the engine's own read-only mode: PostgreSQL ``SET SESSION CHARACTERISTICS AS
   TRANSACTION READ ONLY`` and ``BEGIN READ ONLY`` (the query is sent through the extended
   protocol, which takes one statement only, and its rows streamed as a plain cursor gets them); MySQL/MariaDB ``SET SESSION TRANSACTION READ
   ONLY`` and ``START TRANSACTION READ ONLY`` on a connection without multi-statements;
   DuckDB a ``read_only`` connection with ``enable_external_access`` off and the
   configuration locked; every transaction is rolled back;
3. a timeout enforced by the server (PostgreSQL ``statement_timeout``, MariaDB
   ``max_statement_time``, MySQL ``max_execution_time``) and by the client (a timer that
   cancels the query: ``cancel()``, ``KILL QUERY``, ``interrupt()``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypedDict, Unpack

from jury.errors import InputError, JuryError, one_line
from jury.execution import engine_drivers
from jury.execution.engine_cancel import BoundCancel
from jury.execution.engine_drivers import DuckDBEngine, Engine, NotAQuery, driver_errors, engine_for
from jury.execution.engine_urls import (
    DIALECTS,
    DUCKDB,
    Connection,
    engine_of,
    is_url,
    redact,
)
from jury.execution.engine_values import equality_key, normalise
from jury.execution.rows import ResultAccumulator, ResultTooLarge, RowSetDigest, raw_row_digest, row_digest_bytes
from jury.execution.sqlite import execute as sqlite_execute
from jury.execution.statement_check import split_statements, statement_problem
from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

# --- connections kept per thread -------------------------------------------------------------------


class _Connections(threading.local):
    def __init__(self) -> None:
        self.conns: dict[str, Any] = {}
        self.tables: dict[str, list[str]] = {}  # url -> the database's tables (the statement check's)


_kept = _Connections()


class EngineUnavailable(JuryError):
    """Connecting or logging in failed: no outcome of any query, so nothing is recorded."""


def _connect(engine: Engine, timeout_s: float) -> Connection:
    """A new connection for statements of ``timeout_s``, logged in within the engine's own
    CONNECT_TIMEOUT_S; a failure is EngineUnavailable (a privileged login is InputError, from
    the engine's login check)."""
    try:
        return engine.connect(timeout_s)
    except (ConnectionError, OSError) as exc:
        raise EngineUnavailable(
            f"cannot connect to {redact(engine.url)} (connecting and the login check have {engine_drivers.CONNECT_TIMEOUT_S:g} s of "
            f"their own): {one_line(exc)}; nothing was recorded for the query: rerun once the server answers"
        ) from None


def _connection(engine: Engine, timeout_s: float, cached: bool) -> Connection:
    if cached and engine.url in _kept.conns:
        return _kept.conns[engine.url]
    conn = _connect(engine, timeout_s)
    if cached:
        _kept.conns[engine.url] = conn
    return conn


def close_connections() -> None:
    """Close every engine connection this thread keeps."""
    _kept.tables.clear()
    while _kept.conns:
        _, conn = _kept.conns.popitem()
        with contextlib.suppress(Exception):  # already broken: nothing to release
            conn.close()


def _drop(url: str) -> None:
    _kept.tables.pop(url, None)
    conn = _kept.conns.pop(url, None)
    if conn is not None:
        with contextlib.suppress(Exception):  # already broken
            conn.close()


# --- execution ------------------------------------------------------------------------------------


def execute(
    url: str,
    sql: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
    cached: bool = False,
    raw_rows: bool = False,
) -> ExecResult:
    """Run one SQL text read-only on the database at ``url``; never raises for a bad query
    (as :func:`jury.execution.sqlite.execute`: an ``error`` or a ``timeout`` result).

    With ``raw_rows`` the result's kept rows are the driver's own values as Python's ``==``
    sees them (jury.execution.engine_values.equality_key: ``Decimal('31.2000')`` stays unequal
    to ``31.2``, a date to its text) instead of their normalised values, for BIRD's Soft-F1
    (jury.compare.soft_f1); its digests are the usual ones. Never stored.

    A ``timeout`` is recorded only when the deadline really passed on this process's clock
    (whatever error code the server gave). A cancel the server reports before the deadline
    is no outcome of the query: it runs again on a fresh connection, and after
    PHANTOM_RETRIES such runs execute raises (JuryError), so no wrong outcome is stored."""
    for _ in range(PHANTOM_RETRIES):
        try:
            return _execute_once(url, sql, timeout_s=timeout_s, row_cap=row_cap, cached=cached, raw_rows=raw_rows)
        except _CancelledEarly:
            if cached:
                _drop(url)
    raise JuryError(
        f"{redact(url)}: the server cancelled a query before its {timeout_s:g} s deadline "
        f"{PHANTOM_RETRIES} times (another session cancelling jury's queries?); nothing was recorded for it"
    )


#: Runs of one query the server cancels before its deadline (no cancel of jury's own) before execute gives up.
PHANTOM_RETRIES = 3


class _CancelledEarly(Exception):
    """The server reported a cancel (or a statement timeout) before the deadline passed."""


def _execute_once(url: str, sql: str, *, timeout_s: float, row_cap: int, cached: bool, raw_rows: bool = False) -> ExecResult:
    engine = engine_for(url)
    conn = _connection(engine, timeout_s, cached)  # EngineUnavailable, or InputError for a privileged login
    try:
        problem = _checked(engine, conn, sql, cached)
    except _CancelledEarly:
        if not cached:  # a cached one the retry drops
            with contextlib.suppress(Exception):
                conn.close()
        raise
    if problem is not None:
        if not cached:
            with contextlib.suppress(Exception):  # already closed
                conn.close()
        return ExecResult(status="error", error=problem, elapsed_s=0.0)
    errors = driver_errors(engine.name)
    start = time.monotonic()  # the statement's clock starts as it is sent: connecting and the check are not its time
    deadline = start + timeout_s
    cancel = BoundCancel(engine.canceller(conn))
    timer = threading.Timer(timeout_s, cancel.fire)
    timer.daemon = True
    acc = ResultAccumulator(row_cap, raw=True)
    timed_out: Callable[[], bool] = lambda: time.monotonic() - start >= timeout_s  # noqa: E731  the deadline really passed
    try:
        engine.begin(conn, timeout_s)
        cancel.start()
        timer.start()
        try:
            *earlier, last = _statements(engine, sql)
            for piece in earlier:  # PostgreSQL, as BIRD's driver: each statement run, the last one's rows kept
                engine.run_and_discard(conn, piece, deadline)
            columns, rows = engine.stream(conn, last)
            for raw in rows:
                acc.add(tuple(map(normalise, raw)), raw_row_digest(raw), tuple(map(equality_key, raw)) if raw_rows else None)
                if acc.count % 1000 == 0 and time.monotonic() > deadline:
                    raise TimeoutError
        finally:
            cancel.finish()
            timer.cancel()
    except (ResultTooLarge, NotAQuery, TimeoutError, ValueError, OverflowError, MemoryError, *errors) as exc:  # type: ignore[misc]
        acc.discard()
        elapsed = time.monotonic() - start
        _finish(engine, conn, cached, cancel.sent)
        if cancel.sent or engine.is_timeout(exc) or isinstance(exc, TimeoutError):
            if timed_out():
                return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed)
            raise _CancelledEarly from None
        if isinstance(exc, NotAQuery):
            return ExecResult(status="error", error="not a query: the SQL returns no result set", elapsed_s=elapsed)
        return ExecResult(status="error", error=_error_line(exc, sql), elapsed_s=elapsed)
    except BaseException:
        _finish(engine, conn, cached, True)
        raise
    _finish(engine, conn, cached, cancel.sent)
    if cancel.sent or timed_out():  # rows came back, but past the deadline (MySQL's SLEEP returns 1 when killed)
        acc.discard()
        return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=time.monotonic() - start)
    return acc.result(columns, time.monotonic() - start)


def _checked(engine: Engine, conn: Connection, sql: str, cached: bool) -> str | None:
    """The statement check on ``sql`` with the database's own tables (read from its catalogue
    once per kept connection) and the URL's allowed functions."""
    tables = _kept.tables.get(engine.url) if cached else None
    if tables is None:
        try:
            tables = engine.tables(conn)
        except driver_errors(engine.name) as exc:
            if engine.is_timeout(exc):  # another session cancelled the catalogue read: no outcome of the query
                raise _CancelledEarly from None
            return f"refused: the database's tables cannot be read ({one_line(exc)})"
        if cached:
            _kept.tables[engine.url] = tables
    return _check(engine, sql, tables)


def _check(engine: Engine, sql: str, tables: list[str]) -> str | None:
    """The statement check on ``sql``; on an engine whose BIRD driver runs every statement of a
    text (PostgreSQL), on each of its statements (all must pass: then each runs, in order)."""
    pieces = _statements(engine, sql)
    for i, piece in enumerate(pieces, 1):
        problem = statement_problem(
            piece, engine.name, tables=tables, allow_functions=engine.allow_functions, ansi_quotes=engine.ansi_quotes
        )
        if problem is not None:
            return problem if len(pieces) == 1 else f"{problem} (statement {i} of {len(pieces)})"
    return None


def _statements(engine: Engine, sql: str) -> list[str]:
    """The statements ``sql`` runs as: its statements in order where the engine runs every one
    (PostgreSQL, as BIRD's psycopg2 does: the last one's rows are the result), else ``sql``."""
    if not engine.runs_every_statement:
        return [sql]
    pieces = split_statements(sql, engine.name, ansi_quotes=engine.ansi_quotes)
    return pieces if pieces is not None and len(pieces) > 1 else [sql]


def timed_runs(url: str, sqls: list[str], repeats: int, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[list[float] | None]:
    """Seconds each of ``sqls`` takes on the engine at ``url``, ``repeats`` times, interleaved
    (round r runs every query once, in the order given) on one read-only connection: this
    process's monotonic clock from sending the statement to its last row fetched, every row
    streamed and dropped (the read-only transaction around it, the static check and the
    connection are not timed). The same deadline and statement-bound cancel as :func:`execute`;
    a query that is refused, fails or times out in any round gets None."""
    engine = engine_for(url)
    try:
        conn = _connect(engine, timeout_s)  # a privileged login raises InputError here, as in execute
    except EngineUnavailable:
        return [None for _ in sqls]
    errors = driver_errors(engine.name)
    try:
        try:  # the statement check with the database's own tables, as in execute
            tables = engine.tables(conn)
        except errors:
            return [None for _ in sqls]
        times: list[list[float] | None] = [[] if _check(engine, sql, tables) is None else None for sql in sqls]
        for _ in range(repeats):
            for i, sql in enumerate(sqls):
                slot = times[i]
                if slot is None:
                    continue
                cancel = BoundCancel(engine.canceller(conn))
                timer = threading.Timer(timeout_s, cancel.fire)
                timer.daemon = True
                failed = False
                try:
                    engine.begin(conn, timeout_s)
                    cancel.start()
                    timer.start()
                    start = time.perf_counter()
                    try:
                        _, rows = engine.stream(conn, sql)
                        for _row in rows:
                            pass
                        took = time.perf_counter() - start
                    finally:
                        cancel.finish()
                        timer.cancel()
                except (NotAQuery, ValueError, OverflowError, MemoryError, *errors):  # type: ignore[misc]
                    failed = True
                with contextlib.suppress(Exception):
                    engine.end(conn)
                if failed or cancel.sent or took >= timeout_s:
                    times[i] = None
                    if cancel.sent or failed:  # a connection a cancel or a failure reached is not used again
                        with contextlib.suppress(Exception):
                            conn.close()
                        conn = _connect(engine, timeout_s)
                    continue
                slot.append(took)
    finally:
        with contextlib.suppress(Exception):
            conn.close()
    return times


def _finish(engine: Engine, conn: Connection, cached: bool, discard: bool = False) -> None:
    """Roll the transaction back; a connection that cannot, or one a cancel was sent to
    (``discard``), is closed and never used again. An uncached connection is closed."""
    try:
        engine.end(conn)
    except Exception:
        discard = True
    if discard and cached:
        _drop(engine.url)
    if discard or not cached:
        with contextlib.suppress(Exception):  # already closed by the failure
            conn.close()


def _error_line(exc: BaseException, sql: str = "") -> str:
    """The error a failed query is stored with: its class and the driver's one-line message
    (PostgreSQL: the primary message, placed in the query as written, and its SQLSTATE, never the DETAIL, HINT or CONTEXT lines that can quote
    values), capped (jury.execution.batches caps it again as the store writes it)."""
    if isinstance(exc, ResultTooLarge):
        return str(exc)
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    if primary and getattr(exc, "sqlstate", None):  # psycopg
        text = one_line(Exception(primary))[:300]
        pos = getattr(diag, "statement_position", None)
        at = int(pos) - 1 if pos and str(pos).isdigit() else -1
        if 0 <= at < len(sql):  # the user's own SQL, which the store holds anyway
            snippet = sql[at : at + 40]
            text += f" (at character {at + 1} of the query: {snippet!r}{'…' if at + 40 < len(sql) else ''})"
        return f"{text} (SQLSTATE {exc.sqlstate})"  # type: ignore[attr-defined]
    text = one_line(exc)
    if text.startswith("(") and "," in text:  # PyMySQL: (1064, "You have an error …")
        code, _, rest = text[1:].partition(",")
        text = f"{rest.strip().rstrip(')').strip(chr(34)).strip(chr(39))} ({code})"
    return text


# --- catalogue, fingerprint, content ---------------------------------------------------------------


def _open(url: str, timeout_s: float = 30.0) -> tuple[Engine, Connection]:
    engine = engine_for(url)
    return engine, _connect(engine, timeout_s)


def table_columns(url: str, tables: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(column, type) of each named table that exists, from the engine's catalogue, matched
    case-insensitively (as :func:`jury.execution.schema.table_columns` on SQLite)."""
    engine, conn = _open(url)
    try:
        existing = {t.lower(): t for t in engine.tables(conn)}
        out: dict[str, list[tuple[str, str]]] = {}
        for t in tables:
            real = existing.get(t.lower())
            if real is not None and real not in out:
                out[real] = engine.columns(conn, real)
        return out
    finally:
        conn.close()


def fingerprint(url: str) -> str:
    """The execution key's stand-in for a SQLite file's sha256: a changed database is a changed
    fingerprint, so results and verdicts bound to the old one are stale. One catalogue query per
    database (the engine's ``state``): PostgreSQL every table's columns, storage file and
    insert/update/delete counters, with the server's start and statistics-reset times; MySQL and
    MariaDB every table's columns and CHECKSUM TABLE; DuckDB the file's sha256 (and its WAL's)."""
    engine = engine_for(url)
    if isinstance(engine, DuckDBEngine):
        return _duckdb_fingerprint(engine.path, engine.allow_functions)
    engine, conn = _open(url)
    try:
        state = engine.state(conn)
    except driver_errors(engine.name) as exc:
        raise InputError(f"cannot read the catalogue of {redact(url)}: {one_line(exc)}") from None
    finally:
        conn.close()
    doc: dict[str, Any] = {"engine": engine.name, "state": state}
    if engine.allow_functions:  # what the statement check allows is part of what a query returns
        doc["allow_functions"] = sorted({n.lower() for n in engine.allow_functions})
    body = json.dumps(doc, separators=(",", ":"), sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


_duck_hashed: dict[
    tuple[tuple[str, int, int, int], ...], list[str]
] = {}  # (path, size, mtime_ns, inode) of the file and its WAL -> their sha256


def _duckdb_fingerprint(path: str, allow_functions: tuple[str, ...] = ()) -> str:
    """sha256 over the DuckDB file and its write-ahead log (absent: none), hashed once per process
    while their sizes and times stay, and the URL's allowed functions."""
    from jury.inputs.io import sha256_file

    files = [f for f in (path, path + ".wal") if os.path.exists(f)]
    if not files:
        raise InputError(f"no DuckDB file at {path}")
    ident = tuple((f, st.st_size, st.st_mtime_ns, st.st_ino) for f in files for st in [os.stat(f)])
    if ident not in _duck_hashed:
        _duck_hashed[ident] = [sha256_file(f) for f in files]
    doc: dict[str, Any] = {"engine": DUCKDB, "files": _duck_hashed[ident]}
    if allow_functions:
        doc["allow_functions"] = sorted({n.lower() for n in allow_functions})
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def content_digest(url: str) -> str:
    """sha256 of every table's name, columns and full row set (normalised values, order-
    independent): what the tests compare before and after hostile SQL."""
    engine, conn = _open(url)
    try:
        h = hashlib.sha256(engine.name.encode())
        for table in engine.tables(conn):
            cols = engine.columns(conn, table)
            h.update(json.dumps([table, cols]).encode())
            rows = engine.query_rows(conn, f"SELECT * FROM {engine.quote(table)}")
            digest = RowSetDigest()
            try:
                for raw in rows:
                    digest.add(row_digest_bytes(tuple(map(normalise, raw))))
                h.update(digest.hexdigest().encode() + str(len(rows)).encode())
            finally:
                digest.close()
        return h.hexdigest()
    finally:
        conn.close()


def describe(url: str, tables: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    return table_columns(url, list(tables))


class ExecOptions(TypedDict, total=False):
    """What both executors take (defaults: DEFAULT_TIMEOUT_S, DEFAULT_ROW_CAP, not cached)."""

    timeout_s: float
    row_cap: int
    cached: bool


def execute_any(
    db: str | os.PathLike[str], sql: str, *, reverse_unordered: bool = False, **options: Unpack[ExecOptions]
) -> ExecResult:
    """Execute on a SQLite file (:func:`jury.execution.sqlite.execute`) or an engine URL
    (:func:`execute`; ``reverse_unordered`` is SQLite's alone and ignored there)."""
    if is_url(db):
        return execute(str(db), sql, **options)
    return sqlite_execute(os.fspath(db), sql, reverse_unordered=reverse_unordered, **options)


def dialect_of(db: str | os.PathLike[str]) -> str:
    """The sqlglot dialect of the database's SQL: sqlite for a file, else the engine's."""
    return DIALECTS[engine_of(str(db))] if is_url(db) else "sqlite"
