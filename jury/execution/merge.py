"""`jury store merge`: several stores (one per machine or shard) into one.

Inputs are opened read-only (SQLite ``mode=ro``, and ``immutable`` when no ``-wal`` file
holds rows the main file lacks, so nothing is left beside them; merge stores no process is
writing to) and never migrated: a store of an older
jury is read as it is (a table it lacks is empty, a column it lacks is NULL — what its
migration would give); a store of a newer jury (a migration this one does not know) is
refused. The output is a jury store, created or migrated to this jury's schema; when it
already exists the inputs are merged into it. Everything is one transaction: on any
error the output is left as it was (a new output is removed).

An input is untrusted: a store crosses machines and anyone can edit it with sqlite3. So
every row read is checked against the column types a jury store holds (a NULL where jury
always writes a value, a number where it writes text, text that is not the JSON jury
writes: refused, one line naming the file, table, row and value); the live run's size caps
apply (a call's reply text, a vote's reply: see jury.judging.vote_check); and every vote must
be what jury's parser makes of its own call log's stored reply (the check is passed in by
the caller, from the judging layer, as a ``VoteCheck``). These checks are in
jury.execution.merge_checks. Results computed from databases (``executions``, ``timings``,
``gold_orders``, ``checked_databases``, ``gold_checks``) are not merged unless ``trust_executions``: a run on
the merged store computes them again from the databases here. Each input's sha256 (and
signer, when the caller checked its signature) is recorded in the output's ``merged_stores``
table, with the trust choice; verdict files written from the merged store list them in
their provenance.

Tables, each merged by its key (see docs/execution.md, "Ballots across machines"):

- ``executions`` by key (database sha256 + SQL), only with ``trust_executions``: the same
  key must carry the same status, digests, row count and truncation (elapsed time and
  limits may differ: the first kept);
- ``votes`` by request hash: the same reply (ok, reply, error); the vote's call id is
  mapped to the merged call log;
- ``calls`` (the call log) and ``review_decisions`` are append-only: every row is kept,
  a row identical in every column but its id is the same row (merging twice adds
  nothing), so costs and tokens survive: a merged store's ``call_costs`` is the sum of
  the inputs';
- ``gold_orders`` by SQL key (the same answer), ``checked_databases`` by database sha256,
  only with ``trust_executions``;
- ``timings`` by key, only with ``trust_executions``: measurements, not results, so the
  first store's row is kept;
- ``gold_checks`` by key, only with ``trust_executions``: the first store's row is kept (two
  runs of a check differ in their times), and it is checked against its key when read
  (jury.compare.gold_check_store);
- ``merged_stores`` (the stores merged into an input before) is append-only too;
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
from typing import Any, Protocol

from jury.errors import StoreError
from jury.execution.merge_checks import (
    COLUMN_TYPES,
    check_sizes,
    checked_rows,
    open_read_only,
    short_repr,
    table_columns,
    table_rows,
)
from jury.execution.merge_checks import (
    MAX_VALUE_BYTES as MAX_VALUE_BYTES,
)

# table -> (key column, columns that must agree; None: nothing to compare, first row kept)
KEYED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "executions": ("key", ("status", "result_sha256", "ordered_sha256", "raw_sha256", "row_count", "truncated")),
    "votes": ("request_sha256", ("ok", "reply", "error")),
    "gold_orders": ("key", ("orders",)),
    "checked_databases": ("sha256", None),
    "timings": ("key", None),
    "gold_checks": ("key", None),
}
APPEND_ONLY = ("calls", "review_decisions", "merged_stores")
NOT_MERGED = ("claims", "files")
# computed from the databases: merged only with trust_executions, else computed again here
COMPUTED = ("executions", "timings", "gold_orders", "checked_databases", "gold_checks")


class VoteChecker(Protocol):
    """jury.judging.vote_check.VoteCheck: the live run's caps and parser check (this layer may
    not import the judging layer; the caller passes it in)."""

    @property
    def text_cap(self) -> int: ...  # a call's stored reply text, characters

    @property
    def reply_cap(self) -> int: ...  # a vote's stored reply JSON, characters

    def check(self, vote: dict[str, Any], calls: list[dict[str, Any]]) -> str | None: ...  # None: the vote is its call's reply


# columns compared only when both stores have a value (an older store's executions lack the ordered digest)
_NULL_IS_UNKNOWN = {"ordered_sha256", "raw_sha256"}
_JSON_COLUMNS = {"reply"}


@dataclass
class MergeReport:
    output: Path
    created: bool
    added: Counter[str] = field(default_factory=Counter)  # table -> rows added to the output
    present: Counter[str] = field(default_factory=Counter)  # table -> rows the output already held
    dropped: Counter[str] = field(default_factory=Counter)  # table -> rows not merged (claims, files)
    untrusted: Counter[str] = field(default_factory=Counter)  # table -> rows not merged: computed again here
    votes_checked: int = 0  # votes checked against their call logs
    sources: list[dict[str, Any]] = field(default_factory=list)  # the merged_stores rows recorded for the inputs


def _same(column: str, a: Any, b: Any) -> bool:  # two SQLite values of the column
    if column in _NULL_IS_UNKNOWN and (a is None or b is None):
        return True
    if column in _JSON_COLUMNS and a is not None and b is not None:
        a, b = json.loads(a), json.loads(b)
    same: bool = a == b
    return same


def _identity(row: dict[str, Any]) -> str:
    """An append-only row's identity: every column but its id."""
    body = json.dumps([row[c] for c in sorted(row) if c != "id"], separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _insert(out: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    marks = ", ".join("?" * len(row))
    cur = out.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", list(row.values()))
    assert cur.lastrowid is not None
    return cur.lastrowid


class _Merger:
    def __init__(self, out: sqlite3.Connection, output: Path, report: MergeReport, votes: VoteChecker, trust: bool):
        self.out, self.output, self.report = out, output, report
        self.votes, self.trust = votes, trust
        self.origin: dict[tuple[str, str], Path] = {}  # (table, key) -> the input it came from in this merge
        self.identities: dict[str, dict[str, list[int]]] = {}  # table -> identity -> output ids

    def append_only(self, src: sqlite3.Connection, path: Path, table: str) -> dict[int, int]:
        """Copy the rows of `table` the output lacks (as a multiset of identities); input id -> output id."""
        columns = table_columns(self.out, table)
        if table not in self.identities:
            known: dict[str, list[int]] = {}
            for row in table_rows(self.out, table, columns, order="id"):
                known.setdefault(_identity(row), []).append(row["id"])
            self.identities[table] = known
        known = self.identities[table]
        seen: Counter[str] = Counter()
        ids: dict[int, int] = {}
        for _, row in checked_rows(src, path, table, columns, order="id"):
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

    def check_vote(self, src: sqlite3.Connection, path: Path, rowid: int, row: dict[str, Any]) -> None:
        """The vote must be what jury's parser makes of its own call log's stored reply."""
        call_columns = list(COLUMN_TYPES["calls"])
        have = set(table_columns(src, "calls"))
        select = ", ".join(c if c in have else "NULL" for c in call_columns)
        linked = []
        if row.get("call_id") is not None:
            linked = src.execute(f"SELECT {select} FROM calls WHERE id = ?", [row["call_id"]]).fetchall()
        others = src.execute(
            f"SELECT {select} FROM calls WHERE request_sha256 = ? ORDER BY id", [row["request_sha256"]]
        ).fetchall()
        calls: list[dict[str, Any]] = []
        for values in [*linked, *others]:
            call = dict(zip(call_columns, values))
            if call["request_sha256"] != row["request_sha256"] or any(c["id"] == call["id"] for c in calls):
                continue  # a linked call of another request is no evidence for this vote
            for column in ("log", "parsed", "messages", "params"):
                call[column] = json.loads(call[column]) if call[column] is not None else None  # checked as JSON already
            calls.append(call)
        vote = {**row, "reply": json.loads(row["reply"]) if row["reply"] is not None else None}
        if vote["ok"] and vote["reply"] is None:
            why: str | None = "an answered vote with no reply"
        else:
            why = self.votes.check(vote, calls)
        if why:
            raise StoreError(
                f"{path}: votes row {rowid} (request {row['request_sha256']}, juror {row['juror']}): "
                f"reply {short_repr(row['reply'] if row['ok'] else row['error'], 80)} is not what jury's parser makes of "
                f"its call log: {why}; nothing merged"
            )
        self.report.votes_checked += 1

    def keyed(self, src: sqlite3.Connection, path: Path, table: str, call_ids: dict[int, int]) -> None:
        key, compared = KEYED[table]
        columns = table_columns(self.out, table)
        for rowid, row in checked_rows(src, path, table, columns):
            if table == "votes":
                self.check_vote(src, path, rowid, row)
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
        check_sizes(src, path, "calls", {"text": self.votes.text_cap})
        check_sizes(src, path, "votes", {"reply": self.votes.reply_cap})
        for table in ("review_decisions", "merged_stores"):
            check_sizes(src, path, table, {})
        call_ids = self.append_only(src, path, "calls")
        for table in ("review_decisions", "merged_stores"):
            if table_columns(src, table):
                self.append_only(src, path, table)
        for table in KEYED:
            if table in COMPUTED and not self.trust:
                if table_columns(src, table):
                    self.report.untrusted[table] += src.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                continue
            self.keyed(src, path, table, call_ids)
        for table in NOT_MERGED:
            if table_columns(src, table):
                self.report.dropped[table] += src.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def record_source(self, path: Path, signed_by: str | None) -> None:
        """The input's sha256 (its main file: merge stores nobody writes to), in merged_stores."""
        from jury.execution.batch_store import now_iso
        from jury.inputs.io import sha256_file

        row = {
            "path": str(path.resolve()),
            "sha256": sha256_file(path),
            "size": path.stat().st_size,
            "signed_by": signed_by,
            "trust_executions": int(self.trust),
            "merged_at": now_iso(),
        }
        self.report.sources.append(row)
        exists = self.out.execute(
            "SELECT 1 FROM merged_stores WHERE sha256 = ? AND trust_executions = ? AND signed_by IS ?",
            [row["sha256"], row["trust_executions"], signed_by],
        ).fetchone()
        if exists is None:  # merging the same file again records nothing new
            _insert(self.out, "merged_stores", row)


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


def merge_stores(
    inputs: list[Path],
    output: Path,
    *,
    votes: VoteChecker,
    trust_executions: bool = False,
    signers: dict[Path, str] | None = None,
) -> MergeReport:
    """Merge the input stores into `output` (created if absent) in one transaction.

    `votes`: the live run's caps and vote check (jury.judging.vote_check.VoteCheck());
    `trust_executions`: merge the results computed from databases too (else a run on the
    output computes them again); `signers`: input -> the trusted key that signed it (the
    caller checked the signature), recorded with the input's sha256.
    """
    sources = [(Path(p), open_read_only(Path(p))) for p in inputs]
    try:
        with_reviews = any(table_columns(conn, "review_decisions") for _, conn in sources)
        created = _prepare_output(output, with_reviews)
        report = MergeReport(output, created)
        try:
            out = sqlite3.connect(str(output), timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{output}: cannot open the store: {exc}") from None
        try:
            out.execute("BEGIN IMMEDIATE")
            merger = _Merger(out, output, report, votes, trust_executions)
            for path, conn in sources:
                merger.merge(conn, path)
                merger.record_source(path, (signers or {}).get(path))
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
