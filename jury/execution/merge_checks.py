"""Checks on an input store of `jury store merge` (jury.execution.merge), before and while its rows are read.

An input is untrusted: it is opened read-only and never migrated, refused when a newer jury
made it (a migration this one does not know) or when its tables are not what its migrations
make (jury.execution.store_schema, the check every opening of a store runs), and every row read is checked against the
column types a jury store holds and against the size caps of a live run: a row that is not
what jury writes is a one-line StoreError naming the file, table, row and value.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jury.errors import StoreError
from jury.execution.store_schema import check_schema

MAX_VALUE_BYTES = 16 << 20  # any other stored text or blob: more is not a jury store (and memory stays bounded)

# column -> (type, nullable): what jury writes. Types: text, int, num, bool (0/1), sha256 (64 hex),
# json (any JSON text), json_object, json_list. A column an older store lacks reads as NULL.
_TEXT, _INT, _NUM, _BOOL, _SHA, _JSON, _OBJ, _LIST = "text", "int", "num", "bool", "sha256", "json", "json_object", "json_list"
COLUMN_TYPES: dict[str, dict[str, tuple[str, bool]]] = {
    "calls": {
        "id": (_INT, False),
        "request_sha256": (_SHA, False),
        "kind": (_TEXT, False),
        "juror": (_TEXT, False),
        "juror_model": (_TEXT, True),
        "messages": (_LIST, True),
        "params": (_OBJ, True),
        "ok": (_BOOL, False),
        "text": (_TEXT, True),
        "parsed": (_OBJ, True),
        "error": (_TEXT, True),
        "attempts": (_INT, True),
        "prompt_tokens": (_INT, True),
        "completion_tokens": (_INT, True),
        "cost_usd": (_NUM, True),
        "latency_s": (_NUM, True),
        "log": (_LIST, True),
        "created_at": (_TEXT, True),
    },
    "votes": {
        "request_sha256": (_SHA, False),
        "kind": (_TEXT, False),
        "question_id": (_JSON, False),
        "model": (_TEXT, True),
        "juror": (_TEXT, False),
        "juror_model": (_TEXT, True),
        "juror_family": (_TEXT, True),
        "ok": (_BOOL, False),
        "reply": (_OBJ, True),
        "error": (_TEXT, True),
        "call_id": (_INT, True),
        "created_at": (_TEXT, True),
    },
    "executions": {
        "key": (_SHA, False),
        "db_sha256": (_SHA, False),
        "sql": (_TEXT, False),
        "status": (_TEXT, False),
        "columns": (_LIST, False),
        "rows": (_LIST, False),
        "row_count": (_INT, False),
        "truncated": (_BOOL, False),
        "result_sha256": (_TEXT, True),
        "ordered_sha256": (_TEXT, True),
        "raw_sha256": (_TEXT, True),
        "error": (_TEXT, True),
        "elapsed_s": (_NUM, True),
        "timeout_s": (_NUM, True),
        "row_cap": (_INT, True),
        "created_at": (_TEXT, True),
    },
    "gold_orders": {"key": (_TEXT, False), "orders": (_BOOL, False)},
    "checked_databases": {"sha256": (_SHA, False), "checked_at": (_TEXT, True)},
    "timings": {
        "key": (_TEXT, False),
        "db_sha256": (_TEXT, True),
        "gold_sql": (_TEXT, True),
        "pred_sql": (_TEXT, True),
        "repeats": (_INT, False),
        "gold_times": (_LIST, False),
        "pred_times": (_LIST, False),
        "cpu": (_TEXT, True),
        "measured_at": (_TEXT, True),
    },
    "gold_checks": {
        "key": (_SHA, False),
        "question_id": (_JSON, False),
        "db_sha256": (_TEXT, False),
        "inputs": (_OBJ, False),
        "result": (_OBJ, False),
        "digest": (_SHA, False),
        "created_at": (_TEXT, True),
    },
    "merged_stores": {
        "id": (_INT, False),
        "path": (_TEXT, False),
        "sha256": (_SHA, False),
        "size": (_INT, True),
        "signed_by": (_TEXT, True),
        "trust_executions": (_BOOL, False),
        "merged_at": (_TEXT, True),
    },
}
_EXEC_STATUSES = ("ok", "error", "timeout")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def open_read_only(path: Path) -> sqlite3.Connection:
    """An input store, read-only: nothing is written to it, not even a migration."""
    if not path.is_file():
        raise StoreError(f"{path}: no such store file; nothing merged")
    # without a -wal file every row is in the main file: `immutable` reads it without the -wal
    # and -shm files a read-only WAL reader would leave beside it (the store must not be in use)
    mode = "mode=ro" if Path(f"{path}-wal").exists() else "mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=30)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: is not a jury store ({exc}); nothing merged") from None
    check_schema(conn, path, merging=True)
    return conn


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _numbered_rows(
    conn: sqlite3.Connection, table: str, columns: list[str], order: str | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(rowid, dict of `columns`) for each row of `table`: a column the store lacks is None, a
    table it lacks has no rows."""
    have = set(table_columns(conn, table))
    if not have:
        return
    select = ", ".join(["rowid", *(c if c in have else "NULL" for c in columns)])
    cur = conn.execute(f"SELECT {select} FROM {table}" + (f" ORDER BY {order}" if order else ""))
    for rowid, *values in cur:
        yield rowid, dict(zip(columns, values))


def table_rows(conn: sqlite3.Connection, table: str, columns: list[str], order: str | None = None) -> Iterator[dict[str, Any]]:
    """The rows of `table` as dicts of `columns` (a column the store lacks is None)."""
    for _, row in _numbered_rows(conn, table, columns, order):
        yield row


def _column_types(table: str) -> dict[str, tuple[str, bool]]:
    if table == "review_decisions":
        from jury.execution.reviews import DECISION_COLUMNS

        required = {"verdict_sha256", "kind", "question_id", "reviewer", "choice", "decided_at"}
        return {"id": (_INT, False), **{c: (_TEXT, c not in required) for c in DECISION_COLUMNS}}
    return COLUMN_TYPES[table]


def short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _type_error(kind: str, value: Any) -> str | None:
    """Why `value` is not of the stored type `kind`; None if it is."""
    if kind in (_TEXT, _SHA, _JSON, _OBJ, _LIST) and not isinstance(value, str):
        return f"expected text, got {type(value).__name__}"
    if kind == _SHA and not _HEX64.fullmatch(value):
        return "expected a sha256 (64 lowercase hex digits)"
    if kind in (_JSON, _OBJ, _LIST):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return "expected JSON text"
        if kind == _OBJ and not isinstance(decoded, dict):
            return "expected a JSON object"
        if kind == _LIST and not isinstance(decoded, list):
            return "expected a JSON array"
    if kind in (_INT, _BOOL) and (not isinstance(value, int) or isinstance(value, bool)):
        return f"expected an integer, got {type(value).__name__}"
    if kind == _BOOL and value not in (0, 1):
        return "expected 0 or 1"
    if kind == _NUM and (not isinstance(value, (int, float)) or not math.isfinite(value)):
        return f"expected a finite number, got {type(value).__name__}"
    if kind in (_INT, _NUM) and value < 0:
        return "expected a number >= 0"
    return None


def check_sizes(conn: sqlite3.Connection, path: Path, table: str, caps: dict[str, int]) -> None:
    """Refuse a value past its cap before any row is read (a 300 MiB reply is never loaded)."""
    have = set(table_columns(conn, table))
    for column in _column_types(table):
        if column not in have:
            continue
        cap = caps.get(column, MAX_VALUE_BYTES)
        # length() of text counts characters; of a blob, bytes: the caps are characters for
        # text (the live run cuts characters) and bytes otherwise
        row = conn.execute(f"SELECT rowid, length({column}) FROM {table} WHERE length({column}) > ? LIMIT 1", [cap]).fetchone()
        if row is not None:
            raise StoreError(
                f"{path}: {table} row {row[0]}: {column} is {row[1]:,} long, more than a live run stores "
                f"({cap:,}); nothing merged"
            )


def checked_rows(
    conn: sqlite3.Connection, path: Path, table: str, columns: list[str], order: str | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows of `table` (as table_rows), each checked against the types jury writes: a row that
    is not is a one-line StoreError naming the file, table, row and value."""
    types = _column_types(table)
    have = set(table_columns(conn, table))
    for rowid, row in _numbered_rows(conn, table, columns, order):
        for column, value in row.items():
            kind, nullable = types.get(column, (None, True))
            if value is None:
                if not nullable and column in have:
                    raise StoreError(f"{path}: {table} row {rowid}: {column} is NULL (jury always writes it); nothing merged")
                continue
            why = _type_error(kind, value) if kind else None
            if why is None and table == "executions" and column == "status" and value not in _EXEC_STATUSES:
                why = f"expected one of {', '.join(_EXEC_STATUSES)}"
            if why:
                raise StoreError(f"{path}: {table} row {rowid}: {column} {short_repr(value)}: {why}; nothing merged")
        yield rowid, row
