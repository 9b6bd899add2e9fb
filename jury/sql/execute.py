"""Safe execution of gold and candidate SQL on a real SQLite database.

Three independent locks keep the database byte-identical whatever the SQL says:
1. the file is opened read-only through a ``mode=ro`` URI;
2. ``PRAGMA query_only = 1``;
3. an authorizer that denies every write, schema change, ATTACH/DETACH, pragma change
   and the ``load_extension`` function.

A progress handler checks a wall-clock deadline every few thousand VM steps and
interrupts the statement (a runaway recursive CTE stops within the timeout plus a few
milliseconds). Rows beyond a cap are counted and hashed but not kept.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from jury.records import ExecResult

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_ROW_CAP = 100_000
_PROGRESS_STEPS = 10_000

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


def _authorizer(action: int, arg1, arg2, dbname, source) -> int:
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


def open_readonly(db_path: str | Path) -> sqlite3.Connection:
    """Open a database so that nothing executed on the connection can change the file."""
    path = Path(db_path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no database file at {path}")
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    conn.set_authorizer(_authorizer)
    return conn


def _value_token(value) -> list:
    """A JSON-able, type-tagged form of one SQLite value (bytes would not survive JSON)."""
    if value is None:
        return ["n"]
    if isinstance(value, bytes):
        return ["b", value.hex()]
    if isinstance(value, bool):
        return ["i", int(value)]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        # 1 and 1.0 are one value to Python's set equality; hash them alike.
        return ["i", int(value)] if value.is_integer() else ["f", repr(value)]
    return ["s", str(value)]


def row_digest(row: tuple) -> int:
    blob = json.dumps([_value_token(v) for v in row], separators=(",", ":")).encode()
    return int.from_bytes(hashlib.sha256(blob).digest(), "big")


def combine_digests(digests: set[int]) -> str:
    """Order-independent hash of a SET of row digests (duplicates ignored, like BIRD's rule)."""
    total = 0
    for digest in digests:
        total = (total + digest) % (1 << 256)
    return f"{total:064x}"


def result_hash(rows) -> str:
    return combine_digests({row_digest(tuple(r)) for r in rows})


def execute(
    db_path: str | Path,
    sql: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    row_cap: int = DEFAULT_ROW_CAP,
) -> ExecResult:
    """Run one SQL text on a database read-only; never raises for a bad query.

    A query that fails (syntax, missing column, a denied write, more than one
    statement) is an ``error``; one that runs past ``timeout_s`` is a ``timeout``.
    """
    start = time.monotonic()
    try:
        conn = open_readonly(db_path)
    except (sqlite3.Error, FileNotFoundError) as exc:
        return ExecResult(status="error", error=f"cannot open database: {exc}")
    deadline = start + timeout_s
    timed_out = False

    def _progress() -> int:
        nonlocal timed_out
        if time.monotonic() > deadline:
            timed_out = True
            return 1
        return 0

    conn.set_progress_handler(_progress, _PROGRESS_STEPS)
    kept: list[tuple] = []
    digests: set[int] = set()
    count = 0
    try:
        cursor = conn.execute(sql)
        if cursor.description is None:  # empty, a comment, or a statement that returns no result set
            raise sqlite3.ProgrammingError("not a query: the SQL returns no result set")
        columns = [d[0] for d in cursor.description]
        while True:
            batch = cursor.fetchmany(1000)
            if not batch:
                break
            for row in batch:
                count += 1
                digests.add(row_digest(row))
                if count <= row_cap:
                    kept.append(tuple(row))
            if time.monotonic() > deadline:
                timed_out = True
                raise sqlite3.OperationalError("interrupted")
    except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
        elapsed = time.monotonic() - start
        if timed_out:
            return ExecResult(
                status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed
            )
        return ExecResult(status="error", error=_one_line(exc), elapsed_s=elapsed)
    finally:
        conn.close()
    return ExecResult(
        status="ok",
        columns=columns,
        rows=kept,
        row_count=count,
        truncated=count > row_cap,
        result_sha256=combine_digests(digests),
        elapsed_s=time.monotonic() - start,
    )


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, sqlite3.Error) else str(exc)
    return " ".join(text.split())[:500]


def execute_job(job: tuple[str, str, float, int]) -> dict:
    """Process-pool entry point: (db_path, sql, timeout_s, row_cap) -> ExecResult as a dict."""
    db_path, sql, timeout_s, row_cap = job
    return execute(db_path, sql, timeout_s=timeout_s, row_cap=row_cap).model_dump()
