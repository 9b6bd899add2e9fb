"""The embedded store: one SQLite file (default ``.jury/store.db``) for everything paid for.

Executions are keyed by the database file's sha256 and the exact SQL text, so the gold
query of a question runs once however many models are scored and a rerun executes
nothing. Model calls and votes (added by the jury) live here too, each committed as it
arrives, so a crash loses nothing that was paid for.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import socket
import sqlite3
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jury.errors import StoreError
from jury.execution.batch_store import BatchStoreMixin, StoreWrites, now_iso
from jury.execution.merged import MergedSource
from jury.execution.store_migrations import migrations
from jury.execution.store_schema import NEW_STORE, check_schema
from jury.inputs.records import ExecResult, constructed

if TYPE_CHECKING:
    import sqlite_utils


def _insert_sql(verb: str, table: str, row: Mapping[str, object]) -> str:
    """One plain INSERT of a row's columns (one statement, where sqlite-utils' insert runs several)."""
    return f"{verb} INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"


class JurorFields(Protocol):
    """What the store records of a juror (jury.judging.juror.Juror)."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def family(self) -> str: ...
    def public_dict(self) -> dict[str, Any]: ...


class CallFields(Protocol):
    """What the store records of a call's outcome (jury.judging.juror.CallResult)."""

    ok: bool
    parsed: dict[str, Any] | None
    text: str | None
    error: str | None
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    log: list[dict[str, Any]]


CLAIM_LEASE_S = 60.0  # a claim not renewed for this long is taken over (a crashed holder elsewhere)


def holder_is_dead(holder: str) -> bool:
    """True if a claim's holder ("host:pid:random") is a process of this host that is gone."""

    parts = holder.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError, OSError):
        return False
    return False


class VoteStoreMixin(StoreWrites):
    """Every model call logged; every vote (or abstention) committed as it arrives.

    A write that fails (disk full, read-only file) raises StoreError, one line; every row
    committed before it stays.
    """

    db: sqlite_utils.Database
    conn: sqlite3.Connection  # the same connection as db.conn: votes and call logs are written through it directly

    # ------------------------------------------------------------ claims
    def claim(self, request_sha256: str, holder: str, lease_s: float) -> str | None:
        """Take the claim on a request: None if this holder has it now, else the live holder's id.

        A claim whose holder's lease expired, or whose holder is a dead process on this
        host, is taken over.
        """
        now = time.time()
        with self._transaction() as conn:
            row = conn.execute("SELECT holder, expires_at FROM claims WHERE request_sha256 = ?", [request_sha256]).fetchone()
            if row is not None and row[0] != holder and row[1] >= now and not holder_is_dead(row[0]):
                live: str = row[0]
                return live
            conn.execute(
                "INSERT OR REPLACE INTO claims (request_sha256, holder, expires_at) VALUES (?, ?, ?)",
                [request_sha256, holder, now + lease_s],
            )
        return None

    def renew_claims(self, request_hashes: Iterable[str], holder: str, lease_s: float) -> None:
        hashes = list(request_hashes)
        with self._writing():
            for i in range(0, len(hashes), 500):
                chunk = hashes[i : i + 500]
                self.conn.execute(
                    f"UPDATE claims SET expires_at = ? WHERE holder = ? AND request_sha256 IN ({','.join('?' * len(chunk))})",
                    [time.time() + lease_s, holder, *chunk],
                )

    def release_claim(self, request_sha256: str, holder: str) -> None:
        """Best effort: a claim left behind expires (or its holder is seen to be dead)."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("DELETE FROM claims WHERE request_sha256 = ? AND holder = ?", [request_sha256, holder])

    # ------------------------------------------------------------ calls and votes
    def record_call(
        self, request_sha256: str, kind: str, juror: JurorFields, messages: list[dict[str, Any]], result: CallFields
    ) -> int:
        row = {
            "request_sha256": request_sha256,
            "kind": kind,
            "juror": juror.name,
            "juror_model": juror.model,
            "messages": json.dumps(messages, ensure_ascii=False),
            "params": json.dumps(juror.public_dict(), sort_keys=True),
            "ok": int(result.ok),
            "text": result.text,
            "parsed": json.dumps(result.parsed) if result.parsed is not None else None,
            "error": result.error,
            "attempts": result.attempts,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "cost_usd": result.cost_usd,
            "latency_s": result.latency_s,
            "log": json.dumps(result.log),
            "created_at": now_iso(),
        }
        with self._writing():
            call_id = self.conn.execute(_insert_sql("INSERT", "calls", row), list(row.values())).lastrowid
        assert isinstance(call_id, int), call_id  # "id" is the integer primary key: its rowid
        return call_id

    def link_vote_call(self, request_sha256: str, call_id: int) -> None:
        """Point a vote stored before its call log at that log (first call only)."""
        with self._writing():
            self.conn.execute(
                "UPDATE votes SET call_id = ? WHERE request_sha256 = ? AND call_id IS NULL", [call_id, request_sha256]
            )

    def record_vote(
        self,
        request_sha256: str,
        kind: str,
        question_id: object,
        model: str | None,
        juror: JurorFields,
        result: CallFields,
        call_id: int | None = None,
    ) -> None:
        """Store a vote unless one is already stored for this request: a stored vote never changes.

        The runner stores the vote before the call's log (the smaller row first: on a full
        disk the answer is what must not be lost), then links the two with link_vote_call.
        """
        row = {
            "request_sha256": request_sha256,
            "kind": kind,
            "question_id": json.dumps(question_id),
            "model": model,
            "juror": juror.name,
            "juror_model": juror.model,
            "juror_family": juror.family,
            "ok": int(result.ok),
            "reply": json.dumps(result.parsed) if result.parsed is not None else None,
            "error": result.error,
            "call_id": call_id,
            "created_at": now_iso(),
        }
        with self._writing():
            self.conn.execute(_insert_sql("INSERT OR IGNORE", "votes", row), list(row.values()))

    def get_vote(self, request_sha256: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT ok, reply, error, call_id FROM votes WHERE request_sha256 = ?", [request_sha256]
        ).fetchone()
        if row is None:
            return None
        return {"ok": bool(row[0]), "reply": json.loads(row[1]) if row[1] else None, "error": row[2], "call_id": row[3]}

    def call_costs(self, request_hashes: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Per request hash: attempts, tokens and cost of every logged call (failed ones too)."""
        out: dict[str, dict[str, Any]] = {}
        hashes = sorted(set(request_hashes))
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for h, attempts, pt, ct, cost in self.conn.execute(
                "SELECT request_sha256, coalesce(sum(attempts), 0), coalesce(sum(prompt_tokens), 0), "
                "coalesce(sum(completion_tokens), 0), coalesce(sum(cost_usd), 0) FROM calls "
                f"WHERE request_sha256 IN ({marks}) GROUP BY request_sha256",
                chunk,
            ).fetchall():
                out[h] = {"calls": attempts, "prompt_tokens": pt, "completion_tokens": ct, "cost_usd": cost}
        return out

    def call_totals(self, request_hashes: Iterable[str]) -> dict[str, float]:
        """Calls, tokens and cost of every logged call for these requests, each request once."""
        totals: dict[str, float] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
        for row in self.call_costs(request_hashes).values():
            for k in totals:
                totals[k] += row[k]
        return totals


def execution_key(db_sha256: str, sql: str) -> str:
    return hashlib.sha256(f"{db_sha256}\0{sql}".encode()).hexdigest()


def _encode_value(v: object) -> object:
    if isinstance(v, bytes):
        return {"$bytes": base64.b64encode(v).decode()}
    return v


def _decode_value(v: object) -> object:
    if isinstance(v, dict) and "$bytes" in v:
        return base64.b64decode(v["$bytes"])
    return v


def encode_rows(rows: Sequence[Sequence[object]]) -> str:
    """Compact JSON of the rows, a blob as ``{"$bytes": base64}``.

    Without blobs json.dumps takes the rows as they are (tuples are arrays: the same text);
    a blob makes it raise TypeError, and then every value is wrapped first.
    """
    try:
        return json.dumps(rows, separators=(",", ":"))
    except TypeError:
        return json.dumps([[_encode_value(v) for v in r] for r in rows], separators=(",", ":"))


def decode_rows(text: str) -> list[tuple[Any, ...]]:  # values of JSON: Any
    """The rows of encode_rows' text (with no ``{`` in it there is no blob to unwrap)."""
    if "{" not in text:
        return list(map(tuple, json.loads(text)))
    return [tuple(_decode_value(v) for v in r) for r in json.loads(text)]


_PUT_EXECUTION = (
    "INSERT OR REPLACE INTO executions (key, db_sha256, sql, status, columns, rows, row_count, truncated, result_sha256, "
    "ordered_sha256, error, elapsed_s, raw_sha256, timeout_s, row_cap, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


_EXEC_FIELDS = (
    "status",
    "columns",
    "rows",
    "row_count",
    "truncated",
    "result_sha256",
    "error",
    "elapsed_s",
    "ordered_sha256",
    "raw_sha256",
)
"""The stored columns an ExecResult is read back from, each named as its field."""
_EXEC_COLUMNS = ", ".join(_EXEC_FIELDS)


class _Decoded:
    """The columns and rows decoded so far, by their stored text: results with the same text
    share one decoded list (many queries give the same rows; issue 46). Nothing changes a
    result's rows or columns in place (models are replaced with model_copy), so sharing is safe."""

    def __init__(self) -> None:
        self.columns: dict[str, list[str]] = {}
        self.rows: dict[str, list[tuple[Any, ...]]] = {}

    def result(self, row: Sequence[Any]) -> ExecResult:  # a SQLite row: key, then _EXEC_COLUMNS
        columns, rows = row[2], row[3]
        if columns not in self.columns:
            self.columns[columns] = json.loads(columns)
        if rows not in self.rows:
            self.rows[rows] = decode_rows(rows)
        return _stored_result(row, self.columns[columns], self.rows[rows])


def _stored_result(row: Sequence[Any], columns: list[str], rows: list[tuple[Any, ...]]) -> ExecResult:  # a SQLite row
    """An ExecResult from its stored row (key, then _EXEC_COLUMNS; its columns and rows decoded),
    written from a validated one: rebuilt without validating again."""
    stored = dict(zip(_EXEC_FIELDS, row[1:], strict=True))
    stored.update(columns=columns, rows=rows, truncated=bool(stored["truncated"]), recorded_preview=None)
    return constructed(ExecResult, **stored)


def set_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
    """WAL journal mode, waiting for other processes that hold the file (a new store opened by
    several at once): switching modes needs the file to itself and SQLite does not wait for
    that; once a process has switched, the mode is the file's and the pragma changes nothing."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def refuse_non_file(path: Path) -> None:
    """A store is a regular SQLite file (or a link to one): a device, FIFO, folder or socket
    at its path is a one-line StoreError before SQLite opens it (or creates -wal files beside it)."""

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"{path}: cannot open the store: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise StoreError(f"{path}: is not a regular file (a device, FIFO, folder or socket); a store is a SQLite file")


class Store(VoteStoreMixin, BatchStoreMixin):
    """A handle on the store file. Cheap to open; every write commits at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        refuse_non_file(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            try:
                check_schema(conn, self.path)  # reads only: a store this jury may not use is left as it was
            except StoreError:
                conn.close()
                raise
            set_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            self.conn = conn
            self._db: sqlite_utils.Database | None = None
            if migrations.pending(conn) and not migrations.create_new(conn, NEW_STORE[migrations.name]):
                migrations.apply(self.db)  # an older store (sqlite-utils' migrations, imported now)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: cannot open the store: {exc}") from None

    @property
    def db(self) -> sqlite_utils.Database:  # type: ignore[override]
        """The connection wrapped by sqlite-utils, imported on first use (see LazyMigrations)."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def close(self) -> None:
        """Close the store's connection (``with Store(path) as store:`` closes it too)."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ file hashes
    def file_sha256(self, path: str | Path) -> str:
        """sha256 of a file, cached by (path, size, mtime) so big databases hash once."""
        from jury.inputs.io import sha256_file

        p = Path(path).resolve()
        st = p.stat()
        row = self.conn.execute("SELECT size, mtime_ns, sha256 FROM files WHERE path = ?", [str(p)]).fetchone()
        if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
            cached: str = row[2]
            return cached
        digest = sha256_file(p)
        self.conn.execute(
            "INSERT INTO files (path, size, mtime_ns, sha256) VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE "
            "SET size = excluded.size, mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256",
            [str(p), st.st_size, st.st_mtime_ns, digest],
        )
        return digest

    # ------------------------------------------------------------ provenance
    def merged_sources(self) -> list[MergedSource]:
        """The stores `jury store merge` merged into this one (empty for a store never merged
        into): path, sha256, size, signer and whether their executions were trusted."""
        rows = self.conn.execute(
            "SELECT path, sha256, size, signed_by, trust_executions FROM merged_stores ORDER BY id"
        ).fetchall()
        return [{"path": p, "sha256": h, "size": n, "signed_by": who, "trust_executions": bool(t)} for p, h, n, who, t in rows]

    # ------------------------------------------------------------ database checks
    def database_checked(self, sha256: str) -> bool:
        """True when a database with this content already passed the integrity check."""
        return self.conn.execute("SELECT 1 FROM checked_databases WHERE sha256 = ?", [sha256]).fetchone() is not None

    def mark_database_checked(self, sha256: str) -> None:
        """Record that the database with this sha256 passed the integrity check (not checked again).

        Args:
            sha256: the database file's sha256.
        """
        self.conn.execute(
            "INSERT INTO checked_databases (sha256, checked_at) VALUES (?, ?) "
            "ON CONFLICT (sha256) DO UPDATE SET checked_at = excluded.checked_at",
            [sha256, now_iso()],
        )

    # ------------------------------------------------------------ executions
    def get_execution(self, key: str) -> ExecResult | None:
        """The stored result of one execution key, or None when it never ran.

        Args:
            key: the execution key (the database's fingerprint, the SQL and the settings that change a result).
        """
        row = self.conn.execute(f"SELECT key, {_EXEC_COLUMNS} FROM executions WHERE key = ?", [key]).fetchone()
        return None if row is None else _Decoded().result(row)

    def get_executions(self, keys: Iterable[str]) -> dict[str, ExecResult]:
        """The stored results of many keys at once (500 per query): key -> result, as get_execution."""
        wanted = list(dict.fromkeys(keys))
        out: dict[str, ExecResult] = {}
        decoded = _Decoded()  # results with the same stored rows share their decoded list
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT key, {_EXEC_COLUMNS} FROM executions WHERE key IN ({marks})", chunk):
                out[row[0]] = decoded.result(row)
        return out

    def known_executions(self, keys: list[str], *, timeout_s: float = 0.0, row_cap: int = 0) -> set[str]:
        """Keys whose stored result is what a run under these settings would give.

        Not reusable: a timeout under a shorter limit, a timeout recorded before its own deadline
        passed (a late cancel meant for another query, which engine runs could store before
        cancels were bound to their statement), a result truncated under a smaller row cap, a success that took longer than
        ``timeout_s`` (it would time out now), and a success stored before the ordered digest
        existed (it could not be compared as a list).
        """
        found: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT key FROM executions WHERE key IN ({marks}) "
                    "AND NOT (status = 'timeout' AND timeout_s < ?) "
                    "AND NOT (status = 'timeout' AND elapsed_s < timeout_s) "
                    "AND NOT (truncated AND row_cap < ?) "
                    "AND NOT (status = 'ok' AND elapsed_s > ?) "
                    "AND NOT (status = 'ok' AND ordered_sha256 IS NULL)",
                    [*chunk, timeout_s, row_cap, timeout_s],
                ).fetchall()
            )
        return found

    def put_executions(self, rows: Sequence[tuple[object, ...]]) -> None:
        """Write executions in one transaction: each row is (key, db_sha256, sql,
        *batches.encode_result(result), timeout_s, row_cap); a stored key is replaced."""
        created = now_iso()
        with self._transaction() as conn:
            conn.executemany(_PUT_EXECUTION, [(*r, created) for r in rows])
