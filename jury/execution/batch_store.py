"""The store's record of ballots sent through providers' batch APIs (tables of migration m008).

A batch is written with its ballots' request hashes (state ``submitting``) before anything is
sent, then given the provider's id once it exists, so a process that stops at any point leaves
a row the next run can pick up. A ballot whose hash is ``pending`` in a batch still open is
never submitted again; a collected reply waits (``answered``) until a run turns it into a vote
the way a synchronous reply is turned into one, and is then ``used``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from jury.errors import StoreError

if TYPE_CHECKING:
    import sqlite_utils

OPEN_STATES = ("submitting", "in_progress")
_COLUMNS = (
    "id, provider, juror, juror_model, api_base, api_key_env, provider_batch_id, input_file_id, "
    "output_file_id, error_file_id, state, requests, error, holder, created_at, updated_at"
)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class StoreWrites:
    """How every part of the store (jury.execution.store.Store) writes: a write that fails (disk
    full, read-only file) is one StoreError line, and every row committed before it stays."""

    conn: sqlite3.Connection

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"{getattr(self, 'path', 'the store')}: cannot write to the store: {exc}") from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on the connection (BEGIN IMMEDIATE), committed when the block
        ends (a return included) and rolled back when it raises."""
        with self._writing():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise


class BatchJuror(Protocol):
    """What a batch records of its juror (jury.judging.juror.Juror)."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def api_base(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...


class BatchStoreMixin(StoreWrites):
    db: sqlite_utils.Database

    def _batch_tx(self, statements: Iterable[tuple[str, list[object]]]) -> None:
        with self._transaction() as conn:
            for sql, args in statements:
                conn.execute(sql, args)

    def record_batch(self, batch_id: str, provider: str, juror: BatchJuror, request_hashes: list[str], holder: str) -> None:
        """The batch and its ballots, in one transaction, before anything is sent."""
        now = now_iso()
        statements: list[tuple[str, list[object]]] = [
            (
                "INSERT INTO batches (id, provider, juror, juror_model, api_base, api_key_env, state, requests, holder, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'submitting', ?, ?, ?, ?)",
                [
                    batch_id,
                    provider,
                    juror.name,
                    juror.model,
                    juror.api_base,
                    juror.api_key_env,
                    len(request_hashes),
                    holder,
                    now,
                    now,
                ],
            )
        ]
        statements += [
            ("INSERT INTO batch_items (batch_id, request_sha256, state) VALUES (?, ?, 'pending')", [batch_id, h])
            for h in request_hashes
        ]
        self._batch_tx(statements)

    def update_batch(self, batch_id: str, **fields: object) -> None:
        fields["updated_at"] = now_iso()
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self._writing():
            self.conn.execute(f"UPDATE batches SET {sets} WHERE id = ?", [*fields.values(), batch_id])

    def finish_batch(
        self,
        batch_id: str,
        state: str,
        *,
        answers: Iterable[tuple[str, str]] = (),
        failures: dict[str, str] | None = None,
        unusable: dict[str, str] | None = None,
        missing: str | None = None,
        **fields: object,
    ) -> None:
        """A batch that ended (or expired, failed): in one transaction, its replies stored
        (`answers`: request hash and reply JSON, read one at a time), its failed items (a rerun
        submits them again) and unusable ones (a reply over the size cap: stored as answered
        with no reply, it becomes the synchronous path's final abstention), every item still
        pending failed with `missing` (or "no result in the <state> batch")."""

        def statements() -> Iterator[tuple[str, list[object]]]:
            for h, body in answers:
                yield (
                    "UPDATE batch_items SET state = 'answered', response = ?, error = NULL WHERE batch_id = ? "
                    "AND request_sha256 = ? AND state = 'pending'",
                    [body, batch_id, h],
                )
            for h, why in (unusable or {}).items():
                yield (
                    "UPDATE batch_items SET state = 'answered', response = NULL, error = ? WHERE batch_id = ? "
                    "AND request_sha256 = ? AND state = 'pending'",
                    [why, batch_id, h],
                )
            for h, error in (failures or {}).items():
                yield (
                    "UPDATE batch_items SET state = 'failed', error = ? WHERE batch_id = ? AND request_sha256 = ? "
                    "AND state = 'pending'",
                    [error, batch_id, h],
                )
            yield (
                "UPDATE batch_items SET state = 'failed', error = ? WHERE batch_id = ? AND state = 'pending'",
                [missing or f"no result in the {state} batch", batch_id],
            )
            values = fields | {"state": state, "updated_at": now_iso()}
            sets = ", ".join(f"{k} = ?" for k in values)
            yield (f"UPDATE batches SET {sets} WHERE id = ?", [*values.values(), batch_id])

        self._batch_tx(statements())

    def batch_requests(self, batch_id: str) -> list[str]:
        """The request hashes the batch was recorded with."""
        rows = self.conn.execute("SELECT request_sha256 FROM batch_items WHERE batch_id = ? ORDER BY rowid", [batch_id])
        return [h for (h,) in rows.fetchall()]

    def fail_batch_item(self, batch_id: str, request_sha256: str, error: str) -> None:
        """A collected reply that could not be turned into a vote (unreadable): failed, so that
        a rerun submits its ballot again instead of reading the same reply."""
        with self._writing():
            self.conn.execute(
                "UPDATE batch_items SET state = 'failed', response = NULL, error = ? WHERE batch_id = ? "
                "AND request_sha256 = ? AND state = 'answered'",
                [error, batch_id, request_sha256],
            )

    def batches(self, states: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """Every batch (or those in `states`), oldest first, with its items counted by state."""
        where = f"WHERE state IN ({','.join('?' * len(states))})" if states else ""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM batches {where} ORDER BY created_at, id", list(states or ())).fetchall()
        names = [c.strip() for c in _COLUMNS.split(",")]
        out = []
        for row in rows:
            batch = dict(zip(names, row, strict=True))
            counts = dict(
                self.conn.execute(
                    "SELECT state, count(*) FROM batch_items WHERE batch_id = ? GROUP BY state", [batch["id"]]
                ).fetchall()
            )
            batch["items"] = {k: counts.get(k, 0) for k in ("pending", "answered", "used", "failed")}
            out.append(batch)
        return out

    def has_batches(self) -> bool:
        return self.conn.execute("SELECT 1 FROM batches LIMIT 1").fetchone() is not None

    def pending_batch(self, request_sha256: str) -> dict[str, Any] | None:
        """The open batch this ballot waits in (id, provider, provider_batch_id, juror), or None."""
        row = self.conn.execute(
            "SELECT b.id, b.provider, b.provider_batch_id, b.juror FROM batch_items i JOIN batches b ON b.id = i.batch_id "
            f"WHERE i.request_sha256 = ? AND i.state = 'pending' AND b.state IN ({','.join('?' * len(OPEN_STATES))}) "
            "ORDER BY b.created_at DESC LIMIT 1",
            [request_sha256, *OPEN_STATES],
        ).fetchone()
        return None if row is None else {"id": row[0], "provider": row[1], "provider_batch_id": row[2], "juror": row[3]}

    def batch_answer(self, request_sha256: str) -> tuple[str, str | None, str | None] | None:
        """(batch id, reply JSON, error) of a collected reply not yet turned into a vote; the
        reply is None (and the error says why) for one over the size cap."""
        row = self.conn.execute(
            "SELECT batch_id, response, error FROM batch_items WHERE request_sha256 = ? AND state = 'answered' LIMIT 1",
            [request_sha256],
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _latest_item(self, request_sha256: str) -> tuple[Any, ...] | None:
        """(batch id, item state, item error, provider batch id) of the latest batch the ballot
        was recorded in, or None."""
        row: tuple[Any, ...] | None = self.conn.execute(
            "SELECT b.id, i.state, i.error, b.provider_batch_id FROM batch_items i JOIN batches b ON b.id = i.batch_id "
            "WHERE i.request_sha256 = ? ORDER BY b.created_at DESC, b.rowid DESC LIMIT 1",
            [request_sha256],
        ).fetchone()
        return row

    def batch_failure(self, request_sha256: str) -> str | None:
        """Why the ballot's latest batch gave it no reply (None when it has none that failed)."""
        row = self._latest_item(request_sha256)
        if row is None or row[1] != "failed":
            return None
        return f"batch {row[3] or '(never submitted)'}: {row[2]}"

    def latest_batch(self, request_sha256: str) -> str | None:
        """The id of the latest batch the ballot was recorded in (None if none)."""
        row = self._latest_item(request_sha256)
        return None if row is None else row[0]

    def mark_batch_used(self, batch_id: str, request_sha256: str) -> None:
        with self._writing():
            self.conn.execute(
                "UPDATE batch_items SET state = 'used' WHERE batch_id = ? AND request_sha256 = ?", [batch_id, request_sha256]
            )

    def voted_by_batch(self, request_sha256: str) -> bool:
        """True when the ballot's stored vote came from a batch reply."""
        return (
            self.conn.execute(
                "SELECT 1 FROM batch_items WHERE request_sha256 = ? AND state = 'used' LIMIT 1", [request_sha256]
            ).fetchone()
            is not None
        )
