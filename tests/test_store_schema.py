"""Opening a store checks it (jury.execution.store_schema): a store of another shape, of a
newer jury, or not a store at all is one line and exit 1, and nothing is written to it."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jury.errors import StoreError
from jury.execution import store_schema
from jury.execution.reviews import ReviewStore
from jury.execution.store import Store
from jury.version import __version__
from tests.support.badinput import basic_project, run_jury

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "bird-superhero"


def test_schema_is_what_the_migrations_make():
    """SCHEMA (what an up-to-date store is compared with, without sqlite-utils) is what every
    migration of each set makes when run on an empty database."""
    for migration_set, names in store_schema.known_migrations().items():
        assert store_schema.replayed({migration_set: set(names)}) == store_schema.SCHEMA[migration_set], migration_set


def _master(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()


def test_a_new_store_is_what_the_migrations_make(tmp_path):
    """A new store is made from NEW_STORE with plain sqlite3: the same sqlite_master, row for
    row, and the same migrations recorded in order, as sqlite-utils applying every migration."""
    import sqlite_utils

    from jury.execution.store_migrations import migrations

    migrated = sqlite_utils.Database(tmp_path / "migrated.db")
    migrations.apply(migrated)
    Store(tmp_path / "new.db").close()
    with sqlite3.connect(tmp_path / "new.db") as new:
        assert _master(new) == _master(migrated.conn)
        recorded = "SELECT id, migration_set, name FROM _sqlite_migrations ORDER BY rowid"
        assert new.execute(recorded).fetchall() == migrated.conn.execute(recorded).fetchall()
        stamps = [r[0] for r in new.execute("SELECT applied_at FROM _sqlite_migrations")]
    assert all(len(s) == len("2026-07-04 12:00:00.000000+00:00") and s.endswith("+00:00") for s in stamps)


def test_a_new_store_imports_no_sqlite_utils(tmp_path):
    """Making a new store (and hashing and checking a database in it) needs no sqlite-utils."""
    code = (
        "import sys; from jury.execution.store import Store; s = Store(sys.argv[1]); "
        "s.mark_database_checked('x'); s.file_sha256(sys.argv[2]); s.file_sha256(sys.argv[2]); "
        "print(sorted(m for m in ('sqlite_utils', 'numpy', 'pandas') if m in sys.modules))"
    )
    (tmp_path / "f.txt").write_text("some bytes")
    args = [sys.executable, "-c", code, str(tmp_path / "s.db"), str(tmp_path / "f.txt")]
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
    with Store(tmp_path / "s.db") as st:
        assert st.database_checked("x")
        assert st.file_sha256(tmp_path / "f.txt") == hashlib.sha256(b"some bytes").hexdigest()
        assert st.conn.execute("SELECT count(*) FROM files").fetchone() == (1,)


def _store(path: Path, *statements: str, reviews: bool = False) -> Path:
    """A store made by this jury, then changed by hand (or by another tool)."""
    Store(path).close()
    if reviews:
        ReviewStore(path)
    conn = sqlite3.connect(path)
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()
    return path


def _rebuilt(table: str, create: str) -> tuple[str, ...]:
    return (
        f"ALTER TABLE {table} RENAME TO old_{table}",
        create,
        f"INSERT INTO {table} SELECT * FROM old_{table}",
        f"DROP TABLE old_{table}",
    )


_EXEC_COLUMNS = (
    "key TEXT PRIMARY KEY, db_sha256 TEXT, sql TEXT, status {status}, columns TEXT, rows TEXT, row_count INTEGER, "
    "truncated INTEGER, result_sha256 TEXT, error TEXT, elapsed_s FLOAT, timeout_s FLOAT, row_cap INTEGER, "
    "created_at TEXT, ordered_sha256 TEXT, raw_sha256 TEXT"
)
_FUTURE = "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('{}', 'm999_future', 'now')"


def _bad(tmp: Path, name: str) -> Path:
    """The store called `name` (see BAD) in tmp."""
    path = tmp / "bad.db"
    if name == "no-status-column":
        _store(path, "ALTER TABLE executions DROP COLUMN status")
    elif name == "newer-jury":
        _store(path, _FUTURE.format("jury"))
    elif name == "newer-review-migrations":
        _store(path, _FUTURE.format("jury-review"), reviews=True)
    elif name == "no-votes-table":
        _store(path, "DROP TABLE votes")
    elif name == "status-is-integer":
        _store(path, *_rebuilt("executions", "CREATE TABLE executions (" + _EXEC_COLUMNS.format(status="INTEGER") + ")"))
    elif name == "status-not-null":
        _store(path, *_rebuilt("executions", "CREATE TABLE executions (" + _EXEC_COLUMNS.format(status="TEXT NOT NULL") + ")"))
    elif name == "executions-is-a-view":
        _store(path, "ALTER TABLE executions RENAME TO e2", "CREATE VIEW executions AS SELECT * FROM e2")
    elif name == "extra-not-null-column":
        _store(path, "ALTER TABLE votes ADD COLUMN mine TEXT NOT NULL DEFAULT 'x'")
        conn = sqlite3.connect(path)  # SQLite adds a NOT NULL column only with a default: rebuild without it
        with conn:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'votes'").fetchone()[0]
            conn.executescript(
                "ALTER TABLE votes RENAME TO v2;"
                + sql.replace("NOT NULL DEFAULT 'x'", "NOT NULL")
                + ";INSERT INTO votes SELECT * FROM v2; DROP TABLE v2;"
            )
        conn.close()
    elif name == "table-of-a-migration-not-recorded":
        _store(path, "DELETE FROM _sqlite_migrations WHERE name = 'm010_gold_checks'")
    elif name == "primary-key-lost":
        _store(
            path,
            *_rebuilt(
                "executions", "CREATE TABLE executions (" + _EXEC_COLUMNS.format(status="TEXT").replace(" PRIMARY KEY", "") + ")"
            ),
        )
    elif name == "not-sqlite":
        path.write_text("model,question_id,sql\nm,1,SELECT 1\n" * 40)
    elif name == "someone-elses-database":
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("CREATE TABLE superhero (id INTEGER PRIMARY KEY, name TEXT)")
            conn.execute("INSERT INTO superhero VALUES (1, 'A-Bomb')")
        conn.close()
    elif name == "unreadable-migrations-table":
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("CREATE TABLE _sqlite_migrations (id INTEGER)")
        conn.close()
    elif name == "a-directory":
        path.mkdir()
    else:
        raise AssertionError(name)
    return path


BAD = {  # name -> what the one line says (after "bad.db: ")
    "no-status-column": "is not a jury store (table executions lacks column status; jury's executions has key, db_sha256, sql, status,",
    "newer-jury": f"made by a newer jury (migration jury.m999_future unknown to jury {__version__}); nothing was written",
    "newer-review-migrations": f"made by a newer jury (migration jury-review.m999_future unknown to jury {__version__}); nothing was written",
    "no-votes-table": "is not a jury store (no votes table, which its migrations make); nothing was written",
    "status-is-integer": "is not a jury store (table executions's column status is INTEGER, not TEXT); nothing was written",
    "status-not-null": "is not a jury store (table executions's column status is NOT NULL, which jury's is not)",
    "executions-is-a-view": "is not a jury store (no executions table, which its migrations make: executions is a view)",
    "extra-not-null-column": "(table votes has column mine, NOT NULL without a default, which jury does not write)",
    "table-of-a-migration-not-recorded": "(it holds gold_checks, which a jury migration it has not applied would make)",
    "primary-key-lost": "(table executions's primary key is none, not key)",
    "not-sqlite": "is not a jury store (file is not a database); nothing was written",
    "someone-elses-database": "is not a jury store (no migrations table; it holds superhero); nothing was written",
    "unreadable-migrations-table": "is not a jury store (its migrations table cannot be read:",
    "a-directory": "is not a regular file",
}  # fmt: skip


def _state(path: Path) -> tuple:
    """The store file's bytes and mtime, and which files lie beside it."""
    if path.is_dir():
        return ("dir", sorted(p.name for p in path.iterdir()), path.stat().st_mtime_ns)
    siblings = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
    return (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns, siblings)


@pytest.mark.parametrize("name", list(BAD))
def test_a_store_jury_may_not_use_is_one_line_and_left_as_it_was(name, tmp_path):
    basic_project(tmp_path)
    path = _bad(tmp_path, name)
    before = _state(path)
    proc = run_jury(["score", "run.jsonl", "--store", "bad.db"], tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("Error: bad.db: ") and BAD[name] in lines[0], lines[0]
    assert _state(path) == before  # not a byte, not a touch, no -wal or -shm left beside it
    # the review decisions' store opens it with the same check
    with pytest.raises(StoreError) as exc:
        ReviewStore(path)
    assert BAD[name] in str(exc.value) or name == "a-directory"
    assert _state(path) == before


def test_the_bundled_example_with_a_store_lacking_status(tmp_path):
    """The issue's case: `jury score` on examples/bird-superhero with --store bad.db (a child
    process: the command as a user runs it)."""
    project = tmp_path / "ex"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".jury"))
    path = _bad(project, "no-status-column")
    before = _state(path)
    env = dict(os.environ, COLUMNS="200")
    proc = subprocess.run(
        [sys.executable, "-m", "jury", "score", "run.jsonl", "--store", "bad.db"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "Error: bad.db: is not a jury store (table executions lacks column status; jury's executions has key, db_sha256, sql, "
        "status, columns, rows, row_count, truncated, result_sha256, error, elapsed_s, timeout_s, row_cap, created_at, "
        "ordered_sha256, raw_sha256); nothing was written"
    ]
    assert _state(path) == before


def test_an_extra_nullable_column_or_table_is_accepted(tmp_path):
    """Decided: a column or table jury does not know is left alone (jury names the columns it
    reads and writes), unless it is NOT NULL without a default (every write would fail)."""
    basic_project(tmp_path)
    _store(tmp_path / "bad.db", "ALTER TABLE executions ADD COLUMN note TEXT", "CREATE TABLE mine (x INTEGER)")
    proc = run_jury(["score", "run.jsonl", "--store", "bad.db", "-f", "csv"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(tmp_path / "bad.db") as conn:
        assert conn.execute("SELECT count(*) FROM executions WHERE note IS NULL").fetchone()[0] > 0


def test_a_zero_byte_file_is_a_new_store(tmp_path):
    """Decided: to SQLite a zero-byte file is an empty database, and an empty database is a
    new store (as a path that does not exist is); it is migrated and used."""
    basic_project(tmp_path)
    (tmp_path / "empty.db").write_bytes(b"")
    proc = run_jury(["score", "run.jsonl", "--store", "empty.db", "-f", "csv"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(tmp_path / "empty.db") as conn:
        assert conn.execute("SELECT count(*) FROM executions").fetchone()[0] > 0


def test_an_older_store_is_checked_then_migrated(tmp_path):
    """A store of an older jury (its later migrations not applied) is checked against what its
    own migrations make, then migrated; the same store with a column of its own gone is refused."""
    path = _store(tmp_path / "old.db", "DROP TABLE gold_checks", "DELETE FROM _sqlite_migrations WHERE name = 'm010_gold_checks'")
    with Store(path) as st:
        assert st.conn.execute("SELECT count(*) FROM gold_checks").fetchone() == (0,)
    broken = _store(
        tmp_path / "broken.db",
        "DROP TABLE gold_checks",
        "DELETE FROM _sqlite_migrations WHERE name = 'm010_gold_checks'",
        "ALTER TABLE timings DROP COLUMN cpu",
    )
    before = _state(broken)
    with pytest.raises(StoreError, match=r"broken.db: is not a jury store \(table timings lacks column cpu;"):
        Store(broken)
    assert _state(broken) == before


def test_a_review_store_opens_as_a_store_and_the_other_way_round(tmp_path):
    """A file the review page made first (only review migrations) opens as a store, and back."""
    ReviewStore(tmp_path / "r.db")
    Store(tmp_path / "r.db").close()
    ReviewStore(tmp_path / "r.db")
    with sqlite3.connect(tmp_path / "r.db") as conn:
        sets = {r[0] for r in conn.execute("SELECT migration_set FROM _sqlite_migrations")}
    assert sets == {"jury", "jury-review"}


def test_merge_refuses_with_the_same_check(tmp_path):
    """`jury store merge` uses the same check: a newer input is refused, named alike."""
    from jury.execution.merge import merge_stores
    from jury.judging.vote_check import VoteCheck

    new = _store(tmp_path / "new.db", _FUTURE.format("jury"))
    with pytest.raises(StoreError) as exc:
        merge_stores([new], tmp_path / "out.db", votes=VoteCheck())
    assert str(exc.value) == (
        f"{new}: made by a newer jury (migration jury.m999_future unknown to jury {__version__}); merge with that jury; nothing merged"
    )
