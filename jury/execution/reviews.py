"""Review decisions: what people decided in `jury review`, stored the moment they decide.

Decisions live in the embedded store file (``.jury/store.db``), in their own table with
their own migration set (``jury-review``), so the store's own migrations are untouched
and the store stays the one place where everything worth keeping is committed at once.
The table is append-only: a reviewer who changes their mind adds a row, and the latest
row per (verdict file, item, reviewer) is their decision. Each call opens its own
connection (WAL, 30 s busy timeout), so several review servers may share one store.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import sqlite_utils

from jury.errors import StoreError
from jury.execution.store_migrations import DECISION_COLUMNS, review_migrations
from jury.execution.store_schema import check_schema

__all__ = ["DECISION_COLUMNS", "Decision", "ReviewStore", "review_migrations"]

#: One decision: a review_decisions row by column name (DECISION_COLUMNS), values as SQLite gives
#: them, except question_id (its JSON read back) and corrected_result (a dict, its JSON read back).
Decision = dict[str, Any]


def _qid_text(question_id: object) -> str:
    return json.dumps(question_id)


class ReviewStore:
    """Decisions in the store file at ``path`` (created, and migrated, on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self._db(check=True) as db:
            if review_migrations.pending(db.conn):
                review_migrations.apply(db)

    def _db(self, check: bool = False) -> AbstractContextManager[sqlite_utils.Database]:
        outer = self

        class _Conn:
            def __enter__(self) -> sqlite_utils.Database:
                from jury.execution.store import refuse_non_file

                refuse_non_file(outer.path)
                try:
                    outer.path.parent.mkdir(parents=True, exist_ok=True)
                    conn = sqlite3.connect(str(outer.path), timeout=30, isolation_level=None)
                except (sqlite3.Error, OSError) as exc:
                    raise StoreError(f"{outer.path}: cannot open the store: {exc}") from None
                try:
                    if check:  # reads only: a store this jury may not use is left as it was
                        check_schema(conn, outer.path)
                    conn.execute("PRAGMA journal_mode=WAL")
                except (StoreError, sqlite3.Error) as exc:
                    conn.close()
                    if isinstance(exc, StoreError):
                        raise
                    raise StoreError(f"{outer.path}: cannot open the store: {exc}") from None
                self.conn = conn
                return sqlite_utils.Database(conn)

            def __exit__(self, *exc: object) -> None:
                self.conn.close()

        return _Conn()

    def record(self, decision: Decision) -> int:
        """Commit one decision at once; its row id."""
        row = {c: decision.get(c) for c in DECISION_COLUMNS}
        row["question_id"] = _qid_text(decision["question_id"])
        row["model"] = decision.get("model") or ""
        if isinstance(row["corrected_result"], dict):
            row["corrected_result"] = json.dumps(row["corrected_result"], sort_keys=True)
        try:
            with self._db() as db:
                table = db.table("review_decisions")
                table.insert(row)
                assert table.last_pk is not None  # sqlite_utils sets it on every insert
                return int(table.last_pk)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot store the decision: {exc}") from None

    def decisions(self, verdict_sha256s: Iterable[str], reviewer: str | None = None) -> list[Decision]:
        """The current decision of each reviewer on each item of the given verdict files, in
        the order they were first made."""
        shas = list(dict.fromkeys(verdict_sha256s))
        if not shas:
            return []
        where = f"verdict_sha256 IN ({', '.join('?' * len(shas))})"
        params: list[str] = list(shas)
        if reviewer is not None:
            where += " AND reviewer = ?"
            params.append(reviewer)
        with self._db() as db:
            rows = list(db.query(f"SELECT * FROM review_decisions WHERE {where} ORDER BY id", params))
        latest: dict[tuple[object, ...], dict[str, Any]] = {}
        for r in rows:
            key = (r["verdict_sha256"], r["kind"], r["model"], r["question_id"], r["reviewer"])
            latest[key] = r  # a later row replaces the decision but keeps its first position
        out = []
        for r in latest.values():
            d = dict(r)
            d["question_id"] = json.loads(d["question_id"])
            d["model"] = d["model"] or None
            if d.get("corrected_result"):
                d["corrected_result"] = json.loads(d["corrected_result"])
            out.append(d)
        return out
