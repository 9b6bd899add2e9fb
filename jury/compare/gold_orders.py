"""Whether each gold query orders its rows, remembered in the store.

:func:`jury.compare.comparators.gold_orders_rows` parses the gold SQL with sqlglot; a warm
``jury score`` reads the stored answers instead, so it neither parses nor imports sqlglot.
Answers are keyed by the SQL text and sqlglot's installed version (read from its package
metadata), so another sqlglot decides afresh. SQL without the word ORDER needs no parse and
is not stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

from jury.compare.comparators import gold_orders_rows
from jury.execution.store import Store


def _parser() -> str:
    try:
        return f"sqlglot {version('sqlglot')}"
    except PackageNotFoundError:  # pragma: no cover - sqlglot is a dependency
        return "sqlglot"


def _key(parser: str, sql: str) -> str:
    return hashlib.sha256(f"{parser}\0{sql}".encode()).hexdigest()


def gold_orders(store: Store, sqls: Iterable[str]) -> dict[str, bool]:
    """SQL text -> gold_orders_rows(SQL text), parsing only what the store does not know.

    New answers are stored in one transaction; a store that cannot be written to only
    means they are parsed again next time (the answers returned are the same).
    """
    texts = list(dict.fromkeys(sqls))
    out = {sql: False for sql in texts if "ORDER" not in sql.upper()}  # gold_orders_rows parses none of these
    if len(out) == len(texts):
        return out
    parser = _parser()
    unknown = {_key(parser, sql): sql for sql in texts if sql not in out}  # key -> sql
    keys = list(unknown)
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for key, orders in store.conn.execute(f"SELECT key, orders FROM gold_orders WHERE key IN ({marks})", chunk):
            out[unknown.pop(key)] = bool(orders)
    new = [(key, gold_orders_rows(sql)) for key, sql in unknown.items()]
    out.update((unknown[key], orders) for key, orders in new)
    if new:
        with contextlib.suppress(sqlite3.Error):
            store.conn.execute("BEGIN IMMEDIATE")
            try:
                store.conn.executemany("INSERT OR IGNORE INTO gold_orders (key, orders) VALUES (?, ?)", new)
                store.conn.execute("COMMIT")
            except BaseException:
                store.conn.execute("ROLLBACK")
                raise
    return {sql: out[sql] for sql in texts}
