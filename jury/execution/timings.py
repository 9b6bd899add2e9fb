"""The store's `timings` table (migration m005 in jury.execution.store): timed repetitions of
a (gold, candidate) pair for `jury score --efficiency`, with the CPU model they were measured on."""

from __future__ import annotations

import hashlib
import json
import sqlite3

from jury.errors import StoreError
from jury.execution.batch_store import now_iso
from jury.execution.store import Store


def timing_key(db_sha256: str, gold_sql: str, pred_sql: str, repeats: int) -> str:
    body = json.dumps([db_sha256, gold_sql, pred_sql, repeats], separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def get_timing(store: Store, key: str, cpu: str) -> tuple[list[float] | None, list[float] | None, str] | None:
    """(gold times, candidate times, measured_at) stored under `key` on a machine with this CPU, or None."""
    row = store.db.execute(
        "SELECT gold_times, pred_times, measured_at FROM timings WHERE key = ? AND cpu = ?", [key, cpu]
    ).fetchone()
    return None if row is None else (json.loads(row[0]), json.loads(row[1]), row[2])


def put_timing(
    store: Store,
    key: str,
    db_sha256: str,
    gold_sql: str,
    pred_sql: str,
    repeats: int,
    times: tuple[list[float] | None, list[float] | None],
    cpu: str,
) -> str:
    """Store one pair's timings (a side that failed is null); returns the measured_at stamp."""
    stamp = now_iso()
    try:
        store.db.table("timings").upsert(
            {
                "key": key,
                "db_sha256": db_sha256,
                "gold_sql": gold_sql,
                "pred_sql": pred_sql,
                "repeats": repeats,
                "gold_times": json.dumps(times[0]),
                "pred_times": json.dumps(times[1]),
                "cpu": cpu,
                "measured_at": stamp,
            },
            pk="key",
        )
    except sqlite3.Error as exc:
        raise StoreError(f"{store.path}: cannot write to the store: {exc}") from None
    return stamp
