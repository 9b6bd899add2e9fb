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
   TRANSACTION READ ONLY`` and ``BEGIN READ ONLY`` (the query runs through a server-side
   cursor, which takes one SELECT only); MySQL/MariaDB ``SET SESSION TRANSACTION READ
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
from collections.abc import Iterable
from typing import Any, TypedDict, Unpack

from jury.errors import InputError
from jury.execution.engine_drivers import (
    DuckDBEngine,
    Engine,
    MySQLEngine,
    PostgresEngine,
    _driver_errors,
    _NotAQuery,
    _one_line,
    _password,
    engine_for,
)
from jury.execution.engine_urls import (
    DIALECTS,
    DUCKDB,
    ENGINES,
    INSTALL_HINTS,
    MYSQL,
    POSTGRESQL,
    DatabaseURLs,
    check_url,
    driver,
    engine_of,
    is_url,
    redact,
)
from jury.execution.engine_values import normalise
from jury.execution.sqlite import ResultAccumulator, RowSetDigest, _ResultTooLarge, _row_digest_bytes
from jury.execution.sqlite import execute as sqlite_execute
from jury.execution.statement_check import statement_problem
from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

# The engine layer's names, whichever focused module holds them (engine_urls, statement_check,
# engine_values, engine_drivers): callers import them from here. _password is the loader's.
__all__ = [
    "DIALECTS",
    "DUCKDB",
    "ENGINES",
    "INSTALL_HINTS",
    "MYSQL",
    "POSTGRESQL",
    "DatabaseURLs",
    "DuckDBEngine",
    "Engine",
    "MySQLEngine",
    "PostgresEngine",
    "_one_line",
    "_password",
    "check_url",
    "close_connections",
    "content_digest",
    "describe",
    "dialect_of",
    "driver",
    "engine_for",
    "engine_of",
    "execute",
    "execute_any",
    "fingerprint",
    "is_url",
    "normalise",
    "redact",
    "statement_problem",
    "table_columns",
]

# --- connections kept per thread -------------------------------------------------------------------


class _Connections(threading.local):
    def __init__(self) -> None:
        self.conns: dict[str, Any] = {}
        self.tables: dict[str, list[str]] = {}  # url -> the database's tables (the statement check's)


_kept = _Connections()


def _connection(engine: Engine, timeout_s: float, cached: bool):
    if cached and engine.url in _kept.conns:
        return _kept.conns[engine.url]
    conn = engine.connect(timeout_s)
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
    url: str, sql: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, row_cap: int = DEFAULT_ROW_CAP, cached: bool = False
) -> ExecResult:
    """Run one SQL text read-only on the database at ``url``; never raises for a bad query
    (as :func:`jury.execution.sqlite.execute`: an ``error`` or a ``timeout`` result)."""
    start = time.monotonic()
    engine = engine_for(url)
    try:
        conn = _connection(engine, timeout_s, cached)  # a privileged login raises InputError here
    except (ConnectionError, OSError) as exc:
        return ExecResult(status="error", error=f"cannot open database {redact(url)}: {_one_line(exc)}")
    problem = _checked(engine, conn, sql, cached)
    if problem is not None:
        if not cached:
            with contextlib.suppress(Exception):  # already closed
                conn.close()
        return ExecResult(status="error", error=problem, elapsed_s=time.monotonic() - start)
    errors = _driver_errors(engine.name)
    deadline = start + timeout_s
    fired = threading.Event()
    cancel = engine.canceller(conn)

    def on_deadline() -> None:
        fired.set()
        with contextlib.suppress(Exception):  # the query just finished: nothing to cancel
            cancel()

    timer = threading.Timer(timeout_s, on_deadline)
    timer.daemon = True
    acc = ResultAccumulator(row_cap)
    broken = False
    try:
        engine.begin(conn, timeout_s)
        timer.start()
        columns, rows = engine.stream(conn, sql)
        for raw in rows:
            acc.add(tuple(map(normalise, raw)))
            if acc.count % 1000 == 0 and time.monotonic() > deadline:
                fired.set()
                raise TimeoutError
    except (_ResultTooLarge, _NotAQuery, TimeoutError, ValueError, OverflowError, MemoryError, *errors) as exc:  # type: ignore[misc]
        acc.discard()
        elapsed = time.monotonic() - start
        timer.cancel()
        broken = _finish(engine, conn, cached)
        if fired.is_set() or engine.is_timeout(exc) or isinstance(exc, TimeoutError):
            return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed)
        if isinstance(exc, _NotAQuery):
            return ExecResult(status="error", error="not a query: the SQL returns no result set", elapsed_s=elapsed)
        return ExecResult(status="error", error=_error_line(exc), elapsed_s=elapsed)
    finally:
        timer.cancel()
        if not broken:
            broken = _finish(engine, conn, cached)
        if not cached:
            with contextlib.suppress(Exception):  # already closed by the failure
                conn.close()
    if fired.is_set():  # cancelled at the deadline, yet the driver returned rows (MySQL BENCHMARK, SLEEP)
        acc.discard()
        return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=time.monotonic() - start)
    return acc.result(columns, time.monotonic() - start)


def _checked(engine: Engine, conn, sql: str, cached: bool) -> str | None:
    """The statement check on ``sql`` with the database's own tables (read from its catalogue
    once per kept connection) and the URL's allowed functions."""
    tables = _kept.tables.get(engine.url) if cached else None
    if tables is None:
        try:
            tables = engine.tables(conn)
        except _driver_errors(engine.name) as exc:
            return f"refused: the database's tables cannot be read ({_one_line(exc)})"
        if cached:
            _kept.tables[engine.url] = tables
    return statement_problem(
        sql, engine.name, tables=tables, allow_functions=engine.allow_functions, ansi_quotes=engine.ansi_quotes
    )


def _finish(engine: Engine, conn, cached: bool) -> bool:
    """Roll the transaction back; a connection that cannot is dropped (True)."""
    try:
        engine.end(conn)
        return False
    except Exception:
        if cached:
            _drop(engine.url)
        return True


def _error_line(exc: BaseException) -> str:
    """The error a failed query is stored with: its class and the driver's one-line message
    (PostgreSQL: the primary message and SQLSTATE, never the DETAIL or CONTEXT lines that can
    quote values), capped (jury.execution.batches caps it again as the store writes it)."""
    if isinstance(exc, _ResultTooLarge):
        return str(exc)
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    if primary and getattr(exc, "sqlstate", None):  # psycopg
        return f"{_one_line(Exception(primary))[:300]} (SQLSTATE {exc.sqlstate})"  # type: ignore[attr-defined]
    text = _one_line(exc)
    if text.startswith("(") and "," in text:  # PyMySQL: (1064, "You have an error …")
        code, _, rest = text[1:].partition(",")
        text = f"{rest.strip().rstrip(')').strip(chr(34)).strip(chr(39))} ({code})"
    return text


# --- catalogue, fingerprint, content ---------------------------------------------------------------


def _open(url: str, timeout_s: float = 30.0):
    engine = engine_for(url)
    try:
        return engine, engine.connect(timeout_s)
    except ConnectionError as exc:
        raise InputError(f"cannot open database {redact(url)}: {exc}") from None


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
    """sha256 of the engine name, every table's columns and types, and every table's row
    count: the execution key's stand-in for a SQLite file's sha256 (a changed schema or row
    count is a changed database, so verdicts bound to the old one are stale)."""
    engine, conn = _open(url)
    try:
        shape = []
        for table in engine.tables(conn):
            (count,) = engine.query_rows(conn, f"SELECT COUNT(*) FROM {engine.quote(table)}")[0]
            shape.append([table, engine.columns(conn, table), int(count)])
    except _driver_errors(engine.name) as exc:
        raise InputError(f"cannot read the catalogue of {redact(url)}: {_one_line(exc)}") from None
    finally:
        conn.close()
    doc: dict[str, Any] = {"engine": engine.name, "tables": shape}
    if engine.allow_functions:  # what the statement check allows is part of what a query returns
        doc["allow_functions"] = sorted({n.lower() for n in engine.allow_functions})
    body = json.dumps(doc, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


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
                    digest.add(_row_digest_bytes(tuple(map(normalise, raw))))
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
    db: str | os.PathLike, sql: str, *, reverse_unordered: bool = False, **options: Unpack[ExecOptions]
) -> ExecResult:
    """Execute on a SQLite file (:func:`jury.execution.sqlite.execute`) or an engine URL
    (:func:`execute`; ``reverse_unordered`` is SQLite's alone and ignored there)."""
    if is_url(db):
        return execute(str(db), sql, **options)
    return sqlite_execute(os.fspath(db), sql, reverse_unordered=reverse_unordered, **options)


def dialect_of(db: str | os.PathLike) -> str:
    """The sqlglot dialect of the database's SQL: sqlite for a file, else the engine's."""
    return DIALECTS[engine_of(str(db))] if is_url(db) else "sqlite"
