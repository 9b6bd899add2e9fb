"""`jury store merge`: several stores (one per machine or shard) into one.

Inputs are opened read-only (SQLite ``mode=ro``, and ``immutable`` when no ``-wal`` file
holds rows the main file lacks, so nothing is left beside them; merge stores no process is
writing to) and never migrated: a store of an older
jury is read as it is (a table it lacks is empty, a column it lacks is NULL — what its
migration would give); a store of a newer jury (a migration this one does not know) is
refused. The output is a jury store, created or migrated to this jury's schema; when it
already exists the inputs are merged into it. Everything is one transaction: on any
error the output is left as it was (a new output is removed).

Tables, each merged by its key (see README "Ballots across machines"):

- ``executions`` by key (database sha256 + SQL): the same key must carry the same status,
  digests, row count and truncation (elapsed time and limits may differ: the first kept);
- ``votes`` by request hash: the same reply (ok, reply, error); the vote's call id is
  mapped to the merged call log;
- ``calls`` (the call log) and ``review_decisions`` are append-only: every row is kept,
  a row identical in every column but its id is the same row (merging twice adds
  nothing), so costs and tokens survive: a merged store's ``call_costs`` is the sum of
  the inputs';
- ``gold_orders`` by SQL key (the same answer), ``checked_databases`` by database sha256;
- ``timings`` by key: measurements, not results, so the first store's row is kept;
- ``claims`` (leases of live processes) and ``files`` (this machine's path -> sha256
  cache) are not merged.

A disagreement is a one-line StoreError naming both files, the table and the key.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from jury.errors import StoreError

# table -> (key column, columns that must agree; None: nothing to compare, first row kept)
KEYED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "executions": ("key", ("status", "result_sha256", "ordered_sha256", "row_count", "truncated")),
    "votes": ("request_sha256", ("ok", "reply", "error")),
    "gold_orders": ("key", ("orders",)),
    "checked_databases": ("sha256", None),
    "timings": ("key", None),
}
APPEND_ONLY = ("calls", "review_decisions")
NOT_MERGED = ("claims", "files")
# columns compared only when both stores have a value (an older store's executions lack the ordered digest)
_NULL_IS_UNKNOWN = {"ordered_sha256"}
_JSON_COLUMNS = {"reply"}


@dataclass
class MergeReport:
    output: Path
    created: bool
    added: Counter = field(default_factory=Counter)  # table -> rows added to the output
    present: Counter = field(default_factory=Counter)  # table -> rows the output already held
    dropped: Counter = field(default_factory=Counter)  # table -> rows not merged (claims, files)


def _known_migrations() -> dict[str, set[str]]:
    from jury.execution.reviews import review_migrations
    from jury.execution.store import migrations

    return {
        migrations.name: {fn.__name__ for fn in migrations.functions},
        review_migrations.name: {m.name for m in review_migrations._migrations},
    }


def _applied(conn: sqlite3.Connection, path: Path) -> dict[str, set[str]]:
    try:
        rows = conn.execute("SELECT migration_set, name FROM _sqlite_migrations").fetchall()
    except sqlite3.DatabaseError:  # not SQLite, or SQLite without the table: not a store
        raise StoreError(f"{path}: is not a jury store (no migrations table); nothing merged") from None
    out: dict[str, set[str]] = {}
    for migration_set, name in rows:
        out.setdefault(migration_set, set()).add(name)
    return out


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """A jury store of this jury's schema or an older one; a newer one is refused."""
    applied = _applied(conn, path)
    if "jury" not in applied:
        raise StoreError(f"{path}: is not a jury store (no jury migrations); nothing merged")
    known = _known_migrations()
    for migration_set, names in applied.items():
        unknown = sorted(names - known.get(migration_set, names))
        if unknown:
            raise StoreError(
                f"{path}: was made by a newer jury (migration {migration_set}.{unknown[0]} unknown here); "
                "merge with that jury; nothing merged"
            )


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
    _check_schema(conn, path)
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _rows(conn: sqlite3.Connection, table: str, columns: list[str], order: str | None = None):
    """The rows of `table` as dicts of `columns` (a column the store lacks is None)."""
    have = set(_columns(conn, table))
    if not have:
        return
    select = ", ".join(c if c in have else "NULL" for c in columns)
    cur = conn.execute(f"SELECT {select} FROM {table}" + (f" ORDER BY {order}" if order else ""))
    for row in cur:
        yield dict(zip(columns, row))


def _same(column: str, a, b) -> bool:
    if column in _NULL_IS_UNKNOWN and (a is None or b is None):
        return True
    if column in _JSON_COLUMNS and a is not None and b is not None:
        return json.loads(a) == json.loads(b)
    return a == b


def _identity(row: dict) -> str:
    """An append-only row's identity: every column but its id."""
    body = json.dumps([row[c] for c in sorted(row) if c != "id"], separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _insert(out: sqlite3.Connection, table: str, row: dict) -> int:
    marks = ", ".join("?" * len(row))
    cur = out.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))
    assert cur.lastrowid is not None
    return cur.lastrowid


class _Merger:
    def __init__(self, out: sqlite3.Connection, output: Path, report: MergeReport):
        self.out, self.output, self.report = out, output, report
        self.origin: dict[tuple[str, str], Path] = {}  # (table, key) -> the input it came from in this merge
        self.identities: dict[str, dict[str, list[int]]] = {}  # table -> identity -> output ids

    def append_only(self, src: sqlite3.Connection, table: str) -> dict[int, int]:
        """Copy the rows of `table` the output lacks (as a multiset of identities); input id -> output id."""
        columns = _columns(self.out, table)
        if table not in self.identities:
            known: dict[str, list[int]] = {}
            for row in _rows(self.out, table, columns, order="id"):
                known.setdefault(_identity(row), []).append(row["id"])
            self.identities[table] = known
        known = self.identities[table]
        seen: Counter = Counter()
        ids: dict[int, int] = {}
        for row in _rows(src, table, columns, order="id"):
            ident = _identity(row)
            nth = seen[ident]
            seen[ident] += 1
            have = known.setdefault(ident, [])
            if nth < len(have):
                ids[row["id"]] = have[nth]
                self.report.present[table] += 1
                continue
            new_id = _insert(self.out, table, {k: v for k, v in row.items() if k != "id"})
            have.append(new_id)
            ids[row["id"]] = new_id
            self.report.added[table] += 1
        return ids

    def keyed(self, src: sqlite3.Connection, path: Path, table: str, call_ids: dict[int, int]) -> None:
        key, compared = KEYED[table]
        columns = _columns(self.out, table)
        for row in _rows(src, table, columns):
            k = row[key]
            have = self.out.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {key} = ?", [k]).fetchone()
            if have is not None:
                have_row = dict(zip(columns, have))
                for c in compared or ():
                    if not _same(c, have_row[c], row[c]):
                        other = self.origin.get((table, k), self.output)
                        raise StoreError(
                            f"{other} and {path} disagree on {table} {key} {k} ({c}: {have_row[c]!r} vs {row[c]!r}); "
                            "nothing merged"
                        )
                self.report.present[table] += 1
                continue
            if table == "votes" and row.get("call_id") is not None:
                row["call_id"] = call_ids.get(row["call_id"])  # a log missing from its store: no link
            _insert(self.out, table, row)
            self.origin[(table, k)] = path
            self.report.added[table] += 1

    def merge(self, src: sqlite3.Connection, path: Path) -> None:
        call_ids = self.append_only(src, "calls")
        if _columns(src, "review_decisions"):
            self.append_only(src, "review_decisions")
        for table in KEYED:
            self.keyed(src, path, table, call_ids)
        for table in NOT_MERGED:
            if _columns(src, table):
                self.report.dropped[table] += src.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _prepare_output(output: Path, with_reviews: bool) -> bool:
    """Check (an existing) or create the output store at this jury's schema; True if created."""
    from jury.execution.store import Store

    created = not output.exists()
    if not created:
        if not output.is_file():
            raise StoreError(f"{output}: exists and is not a file; choose another -o (nothing merged)")
        conn = open_read_only(output)  # a jury store (not a newer one), else refused before any write
        conn.close()
    Store(output).close()  # created, or migrated to this jury's schema
    if with_reviews:
        from jury.execution.reviews import ReviewStore

        ReviewStore(output)
    return created


def _remove(output: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{output}{suffix}").unlink(missing_ok=True)


def merge_stores(inputs: list[Path], output: Path) -> MergeReport:
    """Merge the input stores into `output` (created if absent) in one transaction."""
    sources = [(Path(p), open_read_only(Path(p))) for p in inputs]
    try:
        with_reviews = any(_columns(conn, "review_decisions") for _, conn in sources)
        created = _prepare_output(output, with_reviews)
        report = MergeReport(output, created)
        try:
            out = sqlite3.connect(str(output), timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{output}: cannot open the store: {exc}") from None
        try:
            out.execute("BEGIN IMMEDIATE")
            merger = _Merger(out, output, report)
            for path, conn in sources:
                merger.merge(conn, path)
            out.execute("COMMIT")
        except BaseException as exc:
            out.execute("ROLLBACK")
            out.close()
            if created:
                _remove(output)
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{output}: cannot write the merged store: {exc}; nothing merged") from None
            raise
        out.close()
        return report
    finally:
        for _, conn in sources:
            conn.close()
