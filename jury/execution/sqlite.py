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

Huge values cannot exhaust memory: SQLite refuses to build any string or blob over
``MAX_VALUE_BYTES`` (``SQLITE_LIMIT_LENGTH``), and a result whose kept rows hold more
than ``MAX_RESULT_BYTES`` is an ``error`` naming the cap. Both are errors of that one
query; scoring goes on with the rest.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from jury.inputs.records import ExecResult
from jury.vocab import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

_PROGRESS_STEPS = 10_000
#: Longest string or blob (bytes) a query may produce or read (SQLite's SQLITE_LIMIT_LENGTH).
MAX_VALUE_BYTES = 16 * 1024 * 1024
#: Most bytes of values a result may keep (the rows under the row cap); more is an error.
MAX_RESULT_BYTES = 64 * 1024 * 1024
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


def _row_digest_bytes(row) -> bytes:
    blob = json.dumps([_value_token(v) for v in row], separators=(",", ":")).encode()
    return hashlib.sha256(blob).digest()


def row_digest(row: tuple) -> int:
    return int.from_bytes(_row_digest_bytes(row), "big")


def combine_digests(digests: set[int]) -> str:
    """Order-independent hash of a SET of row digests (duplicates ignored, like BIRD's rule)."""
    total = 0
    for digest in digests:
        total = (total + digest) % (1 << 256)
    return f"{total:064x}"


def result_hash(rows) -> str:
    return combine_digests({row_digest(tuple(r)) for r in rows})


def ordered_hash(rows) -> str:
    """Hash of the row LIST: order and duplicates count; 1 and 1.0 hash alike.

    >>> ordered_hash([(1,), (2,)]) == ordered_hash([(1.0,), (2,)])
    True
    >>> ordered_hash([(1,), (2,)]) == ordered_hash([(2,), (1,)])
    False
    """
    h = hashlib.sha256()
    for r in rows:
        h.update(_row_digest_bytes(tuple(r)))
    return h.hexdigest()


def _value_bytes(value) -> int:
    """About how many bytes a kept value costs (text and blobs by length, numbers 8)."""
    return len(value) if isinstance(value, (str, bytes)) else 8


def check_database(db_path: str | Path) -> str | None:
    """None when the file is a SQLite database that opens read-only and passes
    ``PRAGMA quick_check``; otherwise a one-line reason. The file is never modified."""
    path = Path(db_path).resolve()
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
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
        return _one_line(exc)
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
    value_limit = MAX_VALUE_BYTES
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, value_limit)
    kept: list[tuple] = []
    kept_bytes = 0
    digests: set[int] = set()
    ordered = hashlib.sha256()
    count = 0
    try:
        cursor = conn.execute(sql)
        if cursor.description is None:  # empty, a comment, or a statement that returns no result set
            raise sqlite3.ProgrammingError("not a query: the SQL returns no result set")
        columns = [d[0] for d in cursor.description]
        for row in cursor:  # one row at a time: a batch of huge rows would be held at once
            count += 1
            digest = _row_digest_bytes(row)
            digests.add(int.from_bytes(digest, "big"))
            ordered.update(digest)
            if count <= row_cap:
                kept_bytes += sum(_value_bytes(v) for v in row)
                if kept_bytes > MAX_RESULT_BYTES:
                    kept.clear()
                    raise _ResultTooLarge(
                        f"result too large: its first {count} rows hold more than "
                        f"{MAX_RESULT_BYTES:,} bytes of values (the cap on a kept result)"
                    )
                kept.append(tuple(row))
            if count % 1000 == 0 and time.monotonic() > deadline:
                timed_out = True
                raise sqlite3.OperationalError("interrupted")
    except (sqlite3.Error, ValueError, OverflowError, MemoryError, _ResultTooLarge) as exc:
        kept.clear()
        elapsed = time.monotonic() - start
        if timed_out:
            return ExecResult(status="timeout", error=f"exceeded {timeout_s:g} s", elapsed_s=elapsed)
        error = _one_line(exc)
        if isinstance(exc, sqlite3.DataError) or "too big" in error:
            error = f"{error}: a string or blob over {value_limit:,} bytes (the cap on one value)"
        return ExecResult(status="error", error=error, elapsed_s=elapsed)
    finally:
        conn.close()
    return ExecResult(
        status="ok",
        columns=columns,
        rows=kept,
        row_count=count,
        truncated=count > row_cap,
        result_sha256=combine_digests(digests),
        ordered_sha256=ordered.hexdigest(),
        elapsed_s=time.monotonic() - start,
    )


class _ResultTooLarge(Exception):
    """The kept rows of a result exceed MAX_RESULT_BYTES."""


def _one_line(exc: BaseException) -> str:
    plain = isinstance(exc, (sqlite3.Error, _ResultTooLarge))
    text = str(exc) if plain else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:500]


def execute_job(job: tuple[str, str, float, int]) -> dict:
    """Process-pool entry point: (db_path, sql, timeout_s, row_cap) -> ExecResult as a dict."""
    db_path, sql, timeout_s, row_cap = job
    return execute(db_path, sql, timeout_s=timeout_s, row_cap=row_cap).model_dump()
