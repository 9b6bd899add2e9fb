"""The store's migrations (jury/execution/store.py, jury/execution/lazy_migrations.py): one
ordered list, applied once under a write lock however many processes open a new store."""

from __future__ import annotations

import multiprocessing
import re
import sqlite3
from pathlib import Path

import pytest

from jury.execution.store import Store, migrations


def _number(name: str) -> int:
    m = re.match(r"m(\d{3})_", name)
    assert m, name
    return int(m.group(1))


def test_migrations_are_registered_in_order():
    names = [fn.__name__ for fn in migrations.functions]
    numbers = [_number(n) for n in names]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), names
    assert numbers == list(range(1, len(numbers) + 1)), names  # no gap: each number once, in order


def test_a_store_migrated_in_the_old_order_still_opens(tmp_path):
    """Stores made before the list was ordered applied m006 before m005: they open as they are."""
    import sqlite_utils
    from sqlite_utils.migrations import Migrations

    by_name = {fn.__name__: fn for fn in migrations.functions}
    old = Migrations("jury")
    for name in ("m001_executions", "m002_calls_and_votes", "m003_claims", "m004_ordered_digest_and_db_checks"):
        old()(by_name[name])
    old()(by_name["m006_gold_orders"])
    old()(by_name["m005_timings"])
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    old.apply(sqlite_utils.Database(conn))
    conn.close()
    applied_before = _applied(path)
    assert [n for n in applied_before if n.startswith(("m005", "m006"))] == ["m006_gold_orders", "m005_timings"]
    with Store(path) as st:
        assert not migrations.pending(st.conn) or _applied(path)[: len(applied_before)] == applied_before
        st.conn.execute("INSERT INTO timings (key, repeats) VALUES ('k', 1)")
        st.conn.execute("INSERT INTO gold_orders (key, orders) VALUES ('k', 1)")
    assert _applied(path)[: len(applied_before)] == applied_before  # what was recorded keeps its meaning


def _applied(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = 'jury' ORDER BY id")]


def _open(path: str, start, results) -> None:
    start.wait()
    try:
        with Store(path) as st:
            st.conn.execute("SELECT count(*) FROM votes").fetchone()
        results.put("ok")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow  # three spawned processes importing jury, three times
def test_concurrent_processes_create_one_new_store(tmp_path):
    """Three runs started at once on a store that does not exist yet all open it (no
    'database is locked', no 'table already exists'); each migration is recorded once."""
    ctx = multiprocessing.get_context("spawn")
    for attempt in range(3):
        path = tmp_path / f"new{attempt}" / "store.db"
        start, results = ctx.Barrier(3), ctx.Queue()
        procs = [ctx.Process(target=_open, args=(str(path), start, results)) for _ in range(3)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert outcomes == ["ok"] * 3, outcomes
        names = _applied(path)
        assert sorted(names) == sorted(fn.__name__ for fn in migrations.functions) and len(names) == len(set(names))
