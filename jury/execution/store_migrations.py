"""The store's schema: the ordered list of migrations a new store applies (jury.execution.store).

sqlite-utils is imported only when a migration is pending (jury.execution.lazy_migrations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jury.execution.lazy_migrations import LazyMigrations

if TYPE_CHECKING:
    import sqlite_utils

# One ordered list, each migration registered in the order of its number (as simonw/llm does):
# a new store applies them in that order. A store records the names it applied, so one that
# applied them in another order (m006 before m005, before the list was ordered) is complete
# and opens as it is; tests/test_store_migrations.py keeps the list in order.
migrations = LazyMigrations("jury")


@migrations()
def m001_executions(db: sqlite_utils.Database) -> None:
    db.table("files").create({"path": str, "size": int, "mtime_ns": int, "sha256": str}, pk="path")
    db.table("executions").create(
        {
            "key": str,
            "db_sha256": str,
            "sql": str,
            "status": str,
            "columns": str,
            "rows": str,
            "row_count": int,
            "truncated": int,
            "result_sha256": str,
            "error": str,
            "elapsed_s": float,
            "timeout_s": float,
            "row_cap": int,
            "created_at": str,
        },
        pk="key",
    )


@migrations()
def m002_calls_and_votes(db: sqlite_utils.Database) -> None:
    db.table("calls").create(
        {
            "id": int,
            "request_sha256": str,
            "kind": str,
            "juror": str,
            "juror_model": str,
            "messages": str,
            "params": str,
            "ok": int,
            "text": str,
            "parsed": str,
            "error": str,
            "attempts": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "cost_usd": float,
            "latency_s": float,
            "log": str,
            "created_at": str,
        },
        pk="id",
    )
    db.table("calls").create_index(["request_sha256"])
    db.table("votes").create(
        {
            "request_sha256": str,
            "kind": str,
            "question_id": str,
            "model": str,
            "juror": str,
            "juror_model": str,
            "juror_family": str,
            "ok": int,
            "reply": str,
            "error": str,
            "call_id": int,
            "created_at": str,
        },
        pk="request_sha256",
    )


@migrations()
def m003_claims(db: sqlite_utils.Database) -> None:
    """Who is asking which ballot right now: one process per request, across processes."""
    db.table("claims").create({"request_sha256": str, "holder": str, "expires_at": float}, pk="request_sha256")


@migrations()
def m004_ordered_digest_and_db_checks(db: sqlite_utils.Database) -> None:
    """Executions gain the ordered digest of their full row list (older successes, which
    lack it, are executed again); databases that passed the integrity check, by sha256."""
    db.table("executions").add_column("ordered_sha256", str)
    db.table("checked_databases").create({"sha256": str, "checked_at": str}, pk="sha256")


# efficiency timings (jury score --efficiency)
@migrations()
def m005_timings(db: sqlite_utils.Database) -> None:
    """Timed repetitions of a (gold, candidate) pair, measured together in one window, and the
    machine (CPU model) they were measured on: timings are reused only on that machine."""
    db.table("timings").create(
        {
            "key": str,
            "db_sha256": str,
            "gold_sql": str,
            "pred_sql": str,
            "repeats": int,
            "gold_times": str,
            "pred_times": str,
            "cpu": str,
            "measured_at": str,
        },
        pk="key",
    )


@migrations()
def m006_gold_orders(db: sqlite_utils.Database) -> None:
    """Whether a gold SQL text orders its rows, by the parser that decided it (jury.compare.gold_orders)."""
    db.table("gold_orders").create({"key": str, "orders": int}, pk="key")


@migrations()
def m007_merged_stores(db: sqlite_utils.Database) -> None:
    """The stores `jury store merge` merged into this one: each file's sha256 (and signer when
    its signature was checked) and whether its executions were trusted; a verdict file written
    from this store lists them in its provenance."""
    db.table("merged_stores").create(
        {
            "id": int,
            "path": str,
            "sha256": str,
            "size": int,
            "signed_by": str,
            "trust_executions": int,
            "merged_at": str,
        },
        pk="id",
    )


@migrations()
def m008_batches(db: sqlite_utils.Database) -> None:
    """Ballots sent through a provider's batch API (--batch): each batch, recorded with its
    ballots' request hashes before it is submitted, and each ballot's result once collected."""
    db.table("batches").create(
        {
            "id": str,  # jury's own id, known before the provider's
            "provider": str,  # openai | anthropic
            "juror": str,
            "juror_model": str,
            "api_base": str,
            "api_key_env": str,  # the NAME of the variable, never a key
            "provider_batch_id": str,
            "input_file_id": str,
            "output_file_id": str,
            "error_file_id": str,
            "state": str,  # submitting | in_progress | ended | expired | failed | cancelled | lost
            "requests": int,
            "error": str,
            "holder": str,
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
    )
    db.table("batch_items").create(
        {
            "batch_id": str,
            "request_sha256": str,
            "state": str,  # pending | answered | failed | used
            "response": str,  # the reply as an OpenAI chat.completion (JSON), once collected
            "error": str,
        },
        pk=("batch_id", "request_sha256"),
    )
    db.table("batch_items").create_index(["request_sha256"])


@migrations()
def m009_raw_digest(db: sqlite_utils.Database) -> None:
    """Executions on an engine gain the set digest of their rows as the driver returned them
    (BIRD's rule compares those values: ``Decimal('31.20') != 31.2``); null on SQLite."""
    db.table("executions").add_column("raw_sha256", str)


@migrations()
def m010_gold_checks(db: sqlite_utils.Database) -> None:
    """The deterministic gold checks' results (jury.compare.gold_check_store), keyed by all
    they depend on: the gold item, the database's fingerprint, the passes and options and the
    checks' code; each row holds those inputs and a digest of its key and result."""
    db.table("gold_checks").create(
        {"key": str, "question_id": str, "db_sha256": str, "inputs": str, "result": str, "digest": str, "created_at": str},
        pk="key",
    )


# review decisions (jury.execution.reviews) have their own migration set, applied by ReviewStore
review_migrations = LazyMigrations("jury-review")

DECISION_COLUMNS = (
    "verdict_sha256",
    "kind",
    "model",
    "question_id",
    "db_id",
    "reviewer",
    "item_order",
    "choice",
    "category",
    "defect_type",
    "corrected_sql",
    "corrected_result",
    "note",
    "jury_verdict",
    "answer_key",
    "gold_key",
    "decided_at",
)


@review_migrations()
def m001_review_decisions(db: sqlite_utils.Database) -> None:
    db.table("review_decisions").create(
        {"id": int, **{c: str for c in DECISION_COLUMNS}},
        pk="id",
        not_null={"verdict_sha256", "kind", "question_id", "reviewer", "choice", "decided_at"},
    )
    db.table("review_decisions").create_index(["verdict_sha256", "kind", "model", "question_id", "reviewer"])
