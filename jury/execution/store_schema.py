"""Is this file a jury store this jury may use? One check for every opening of a store: the
store a run opens (jury.execution.store.Store, jury.execution.reviews.ReviewStore) and every
input and output of `jury store merge` (jury.execution.merge_checks).

A store records the migrations it applied (``_sqlite_migrations``). It is refused, in one
line (a StoreError) and before anything is written to it, when:

- it is not SQLite, or is SQLite without a migrations table but with tables of its own
  (someone else's database: an empty one, zero bytes included, is a new store);
- it records a migration this jury does not know (a newer jury made it);
- its tables are not what its recorded migrations make: a table missing (or a view in its
  place), a column missing, a column of another type (SQLite's type affinity: TEXT,
  INTEGER, REAL, NUMERIC, BLOB), NOT NULL where jury's column is not, another primary key;
  or a table that a migration it has not applied makes is there already;
- a column jury does not know is NOT NULL without a default (every row jury writes would
  fail). Another extra column, or an extra table, is left alone: jury names the columns it
  writes and reads.

What the migrations make is found by running them on an empty in-memory database
(sqlite-utils). A store with every migration applied is compared with SCHEMA instead, what
they make, kept here so that opening an up-to-date store needs no sqlite-utils (and so no
numpy); tests/test_store_schema.py keeps SCHEMA equal to the migrations.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jury.errors import StoreError
from jury.version import __version__

# table -> ([(column, affinity, not null)], primary key)
Tables = dict[str, tuple[list[tuple[str, str, bool]], list[str]]]

_T, _I, _R = "TEXT", "INTEGER", "REAL"
# migration set -> the tables all its migrations make (see the module's docstring)
SCHEMA: dict[str, Tables] = {
    "jury": {
        "files": ([("path", _T, False), ("size", _I, False), ("mtime_ns", _I, False), ("sha256", _T, False)], ["path"]),
        "executions": (
            [
                ("key", _T, False),
                ("db_sha256", _T, False),
                ("sql", _T, False),
                ("status", _T, False),
                ("columns", _T, False),
                ("rows", _T, False),
                ("row_count", _I, False),
                ("truncated", _I, False),
                ("result_sha256", _T, False),
                ("error", _T, False),
                ("elapsed_s", _R, False),
                ("timeout_s", _R, False),
                ("row_cap", _I, False),
                ("created_at", _T, False),
                ("ordered_sha256", _T, False),
                ("raw_sha256", _T, False),
            ],
            ["key"],
        ),
        "calls": (
            [
                ("id", _I, False),
                ("request_sha256", _T, False),
                ("kind", _T, False),
                ("juror", _T, False),
                ("juror_model", _T, False),
                ("messages", _T, False),
                ("params", _T, False),
                ("ok", _I, False),
                ("text", _T, False),
                ("parsed", _T, False),
                ("error", _T, False),
                ("attempts", _I, False),
                ("prompt_tokens", _I, False),
                ("completion_tokens", _I, False),
                ("cost_usd", _R, False),
                ("latency_s", _R, False),
                ("log", _T, False),
                ("created_at", _T, False),
            ],
            ["id"],
        ),
        "votes": (
            [
                ("request_sha256", _T, False),
                ("kind", _T, False),
                ("question_id", _T, False),
                ("model", _T, False),
                ("juror", _T, False),
                ("juror_model", _T, False),
                ("juror_family", _T, False),
                ("ok", _I, False),
                ("reply", _T, False),
                ("error", _T, False),
                ("call_id", _I, False),
                ("created_at", _T, False),
            ],
            ["request_sha256"],
        ),
        "claims": ([("request_sha256", _T, False), ("holder", _T, False), ("expires_at", _R, False)], ["request_sha256"]),
        "checked_databases": ([("sha256", _T, False), ("checked_at", _T, False)], ["sha256"]),
        "timings": (
            [
                ("key", _T, False),
                ("db_sha256", _T, False),
                ("gold_sql", _T, False),
                ("pred_sql", _T, False),
                ("repeats", _I, False),
                ("gold_times", _T, False),
                ("pred_times", _T, False),
                ("cpu", _T, False),
                ("measured_at", _T, False),
            ],
            ["key"],
        ),
        "gold_orders": ([("key", _T, False), ("orders", _I, False)], ["key"]),
        "merged_stores": (
            [
                ("id", _I, False),
                ("path", _T, False),
                ("sha256", _T, False),
                ("size", _I, False),
                ("signed_by", _T, False),
                ("trust_executions", _I, False),
                ("merged_at", _T, False),
            ],
            ["id"],
        ),
        "batches": (
            [
                ("id", _T, False),
                ("provider", _T, False),
                ("juror", _T, False),
                ("juror_model", _T, False),
                ("api_base", _T, False),
                ("api_key_env", _T, False),
                ("provider_batch_id", _T, False),
                ("input_file_id", _T, False),
                ("output_file_id", _T, False),
                ("error_file_id", _T, False),
                ("state", _T, False),
                ("requests", _I, False),
                ("error", _T, False),
                ("holder", _T, False),
                ("created_at", _T, False),
                ("updated_at", _T, False),
            ],
            ["id"],
        ),
        "batch_items": (
            [
                ("batch_id", _T, False),
                ("request_sha256", _T, False),
                ("state", _T, False),
                ("response", _T, False),
                ("error", _T, False),
            ],
            ["batch_id", "request_sha256"],
        ),
        "gold_checks": (
            [
                ("key", _T, False),
                ("question_id", _T, False),
                ("db_sha256", _T, False),
                ("inputs", _T, False),
                ("result", _T, False),
                ("digest", _T, False),
                ("created_at", _T, False),
            ],
            ["key"],
        ),
    },
    "jury-review": {
        "review_decisions": (
            [
                ("id", _I, False),
                ("verdict_sha256", _T, True),
                ("kind", _T, True),
                ("model", _T, False),
                ("question_id", _T, True),
                ("db_id", _T, False),
                ("reviewer", _T, True),
                ("item_order", _T, False),
                ("choice", _T, True),
                ("category", _T, False),
                ("defect_type", _T, False),
                ("corrected_sql", _T, False),
                ("corrected_result", _T, False),
                ("note", _T, False),
                ("jury_verdict", _T, False),
                ("answer_key", _T, False),
                ("gold_key", _T, False),
                ("decided_at", _T, True),
            ],
            ["id"],
        ),
    },
}


# migration set -> the statements that every one of its migrations, applied to an empty database
# by sqlite-utils, leave in sqlite_master (their text as sqlite-utils wrote it, in order): a new
# store runs these with plain sqlite3 (jury.execution.lazy_migrations.LazyMigrations.create_new),
# so that creating one imports neither sqlite-utils nor what it imports (numpy, pandas: ~0.35 s
# of CPU); tests/test_store_schema.py keeps them equal to what the migrations make.
NEW_STORE: dict[str, tuple[str, ...]] = {
    "jury": (
        'CREATE TABLE "files" (\n   "path" TEXT PRIMARY KEY,\n   "size" INTEGER,\n   "mtime_ns" INTEGER,\n   "sha256" TEXT\n)',
        'CREATE TABLE "executions" (\n   "key" TEXT PRIMARY KEY,\n   "db_sha256" TEXT,\n   "sql" TEXT,\n   "status" TEXT,\n   "columns" TEXT,\n   "rows" TEXT,\n   "row_count" INTEGER,\n   "truncated" INTEGER,\n   "result_sha256" TEXT,\n   "error" TEXT,\n   "elapsed_s" REAL,\n   "timeout_s" REAL,\n   "row_cap" INTEGER,\n   "created_at" TEXT\n, "ordered_sha256" TEXT, "raw_sha256" TEXT)',
        'CREATE TABLE "calls" (\n   "id" INTEGER PRIMARY KEY,\n   "request_sha256" TEXT,\n   "kind" TEXT,\n   "juror" TEXT,\n   "juror_model" TEXT,\n   "messages" TEXT,\n   "params" TEXT,\n   "ok" INTEGER,\n   "text" TEXT,\n   "parsed" TEXT,\n   "error" TEXT,\n   "attempts" INTEGER,\n   "prompt_tokens" INTEGER,\n   "completion_tokens" INTEGER,\n   "cost_usd" REAL,\n   "latency_s" REAL,\n   "log" TEXT,\n   "created_at" TEXT\n)',
        'CREATE INDEX "idx_calls_request_sha256"\n    ON "calls" ("request_sha256")',
        'CREATE TABLE "votes" (\n   "request_sha256" TEXT PRIMARY KEY,\n   "kind" TEXT,\n   "question_id" TEXT,\n   "model" TEXT,\n   "juror" TEXT,\n   "juror_model" TEXT,\n   "juror_family" TEXT,\n   "ok" INTEGER,\n   "reply" TEXT,\n   "error" TEXT,\n   "call_id" INTEGER,\n   "created_at" TEXT\n)',
        'CREATE TABLE "claims" (\n   "request_sha256" TEXT PRIMARY KEY,\n   "holder" TEXT,\n   "expires_at" REAL\n)',
        'CREATE TABLE "checked_databases" (\n   "sha256" TEXT PRIMARY KEY,\n   "checked_at" TEXT\n)',
        'CREATE TABLE "timings" (\n   "key" TEXT PRIMARY KEY,\n   "db_sha256" TEXT,\n   "gold_sql" TEXT,\n   "pred_sql" TEXT,\n   "repeats" INTEGER,\n   "gold_times" TEXT,\n   "pred_times" TEXT,\n   "cpu" TEXT,\n   "measured_at" TEXT\n)',
        'CREATE TABLE "gold_orders" (\n   "key" TEXT PRIMARY KEY,\n   "orders" INTEGER\n)',
        'CREATE TABLE "merged_stores" (\n   "id" INTEGER PRIMARY KEY,\n   "path" TEXT,\n   "sha256" TEXT,\n   "size" INTEGER,\n   "signed_by" TEXT,\n   "trust_executions" INTEGER,\n   "merged_at" TEXT\n)',
        'CREATE TABLE "batches" (\n   "id" TEXT PRIMARY KEY,\n   "provider" TEXT,\n   "juror" TEXT,\n   "juror_model" TEXT,\n   "api_base" TEXT,\n   "api_key_env" TEXT,\n   "provider_batch_id" TEXT,\n   "input_file_id" TEXT,\n   "output_file_id" TEXT,\n   "error_file_id" TEXT,\n   "state" TEXT,\n   "requests" INTEGER,\n   "error" TEXT,\n   "holder" TEXT,\n   "created_at" TEXT,\n   "updated_at" TEXT\n)',
        'CREATE TABLE "batch_items" (\n   "batch_id" TEXT,\n   "request_sha256" TEXT,\n   "state" TEXT,\n   "response" TEXT,\n   "error" TEXT,\n   PRIMARY KEY ("batch_id", "request_sha256")\n)',
        'CREATE INDEX "idx_batch_items_request_sha256"\n    ON "batch_items" ("request_sha256")',
        'CREATE TABLE "gold_checks" (\n   "key" TEXT PRIMARY KEY,\n   "question_id" TEXT,\n   "db_sha256" TEXT,\n   "inputs" TEXT,\n   "result" TEXT,\n   "digest" TEXT,\n   "created_at" TEXT\n)',
    ),
}


def known_migrations() -> dict[str, list[str]]:
    """Migration set -> the names of its migrations, in their order."""
    from jury.execution.store_migrations import migrations, review_migrations

    return {m.name: [fn.__name__ for fn in m.functions] for m in (migrations, review_migrations)}


def affinity(declared: str) -> str:
    """SQLite's type affinity of a declared column type (https://sqlite.org/datatype3.html, 3.1)."""
    t = declared.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if "BLOB" in t or not t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def tables(conn: sqlite3.Connection) -> Tables:
    """The tables of a database as they are: columns (name, affinity, not null) and primary key."""
    out: Tables = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        info = conn.execute(f"PRAGMA table_info({quoted(name)})").fetchall()
        pk = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
        out[name] = ([(r[1], affinity(r[2] or ""), bool(r[3])) for r in info], pk)
    return out


def replayed(applied: dict[str, set[str]]) -> Tables:
    """The tables that the migrations a store records as applied make: those migrations run,
    in their registered order, on an empty in-memory database."""
    import sqlite_utils

    from jury.execution.store_migrations import migrations, review_migrations

    db = sqlite_utils.Database(memory=True)
    for mset in (migrations, review_migrations):
        for fn in mset.functions:
            if fn.__name__ in applied.get(mset.name, set()):
                fn(db)
    return tables(db.conn)


def expected_tables(applied: dict[str, set[str]]) -> Tables:
    """What the recorded migrations make: SCHEMA when each recorded set is complete, else replayed."""
    known = known_migrations()
    if all(set(known.get(s, [])) == names for s, names in applied.items()):
        out: Tables = {}
        for s in applied:
            out.update(SCHEMA[s])
        return out
    return replayed(applied)


class _Check:
    def __init__(self, path: Path, merging: bool):
        self.path = path
        self.tail = "nothing merged" if merging else "nothing was written"
        self.merging = merging

    def refuse(self, why: str) -> StoreError:
        return StoreError(f"{self.path}: is not a jury store ({why}); {self.tail}")

    def applied(self, conn: sqlite3.Connection, objects: dict[str, str]) -> dict[str, set[str]]:
        if "_sqlite_migrations" not in objects:
            if not objects and not self.merging:
                return {}  # an empty SQLite file: a new store
            held = ", ".join(sorted(objects)[:5]) or "nothing"
            raise self.refuse(f"no migrations table; it holds {held}")
        try:
            rows = conn.execute("SELECT migration_set, name FROM _sqlite_migrations").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self.refuse(f"its migrations table cannot be read: {exc}") from None
        out: dict[str, set[str]] = {}
        for migration_set, name in rows:
            out.setdefault(str(migration_set), set()).add(str(name))
        return out

    def versions(self, applied: dict[str, set[str]]) -> None:

        known = known_migrations()
        for migration_set, names in sorted(applied.items()):
            unknown = sorted(names - set(known.get(migration_set, [])))
            if unknown:
                advice = "merge with that jury; " if self.merging else ""
                raise StoreError(
                    f"{self.path}: made by a newer jury (migration {migration_set}.{unknown[0]} unknown to jury "
                    f"{__version__}); {advice}{self.tail}"
                )

    def expected(self, applied: dict[str, set[str]]) -> Tables:
        try:
            return expected_tables(applied)
        except Exception:  # e.g. a later migration recorded without the one that makes its table
            names = ", ".join(sorted(n for s in applied.values() for n in s))[:200]
            raise self.refuse(f"its recorded migrations {names} are not a sequence jury makes") from None

    def table(
        self, name: str, want: tuple[list[tuple[str, str, bool]], list[str]], got: tuple[list[tuple[str, str, bool]], list[str]]
    ) -> None:
        columns, pk = want
        got_columns, got_pk = got
        have = {c: (aff, nn) for c, aff, nn in got_columns}
        for column, aff, not_null in columns:
            if column not in have:
                expected = ", ".join(c for c, _, _ in columns)
                raise self.refuse(f"table {name} lacks column {column}; jury's {name} has {expected}")
            got_aff, got_nn = have[column]
            if got_aff != aff:
                raise self.refuse(f"table {name}'s column {column} is {got_aff}, not {aff}")
            if got_nn and not not_null:
                raise self.refuse(f"table {name}'s column {column} is NOT NULL, which jury's is not")
        if got_pk != pk:
            raise self.refuse(f"table {name}'s primary key is {', '.join(got_pk) or 'none'}, not {', '.join(pk)}")

    def extras(self, conn: sqlite3.Connection, name: str, want_columns: set[str]) -> None:
        for r in conn.execute(f"PRAGMA table_info({quoted(name)})"):
            if r[1] not in want_columns and r[3] and r[4] is None and not r[5]:
                raise self.refuse(f"table {name} has column {r[1]}, NOT NULL without a default, which jury does not write")


def check_schema(conn: sqlite3.Connection, path: Path, *, merging: bool = False) -> None:
    """Refuse (a one-line StoreError, see the module's docstring) a store this jury may not use.
    Reads only. `merging`: an input or output of `jury store merge` (it must hold jury's own
    migrations: an empty file is not a store to merge), whose messages end "nothing merged"."""
    check = _Check(path, merging)
    try:
        objects = {
            name: kind for name, kind in conn.execute("SELECT name, type FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        }
    except sqlite3.DatabaseError as exc:  # not SQLite at all
        raise check.refuse(str(exc)) from None
    applied = check.applied(conn, objects)
    if merging and "jury" not in applied:
        raise check.refuse("no jury migrations")
    check.versions(applied)
    want = check.expected(applied)
    have = tables(conn)
    for name, spec in want.items():
        if name not in have:
            if objects.get(name) in ("view", "index", "trigger"):
                raise check.refuse(f"no {name} table, which its migrations make: {name} is a {objects[name]}")
            raise check.refuse(f"no {name} table, which its migrations make")
        check.table(name, spec, have[name])
        check.extras(conn, name, {c for c, _, _ in spec[0]})
    for migration_set, full in SCHEMA.items():
        for name in full:
            if name in objects and name not in want:
                raise check.refuse(f"it holds {name}, which a {migration_set} migration it has not applied would make")
