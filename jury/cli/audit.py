"""`jury audit-gold`: a panel of one juror per family judges every gold query."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors, juror_option, option, run_job


@handle_errors
def audit_gold(
    ctx: typer.Context,
    gold: Path | None = typer.Argument(None, help="Gold file (BIRD dev.json / train.json). Default: jury.toml's gold."),
    db_root: Path | None = option("db_root"),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    panel: str | None = typer.Option(None, help="Audit panel TOML, or a name in panels/ (default: audit)."),
    db: list[str] = typer.Option([], "--db", help="Audit only questions of this db_id (repeatable)."),
    question_id: list[str] = typer.Option([], "--question-id", "--question", help="Audit only this question (repeatable)."),
    split: str | None = typer.Option(None, help="Split label (e.g. train, dev) for items without a `split` field."),
    quorum: int | None = typer.Option(
        None, min=1, help="Defective votes needed to flag (default: a strict majority of the panel, abstentions included)."
    ),
    plan: bool = typer.Option(False, "--plan", help="Make no calls: print ballots, estimated tokens and cost per juror."),
    max_cost: float | None = juror_option("max_cost"),
    output: Path | None = typer.Option(
        None, "-o", "--output", writable=True, help="Verdict file to write (default verdicts/audit-<time>.json)."
    ),
    store: Path | None = juror_option("store"),
    sign: Path | None = juror_option("sign"),
    checks: bool = typer.Option(
        True,
        "--checks/--no-checks",
        help="First run the deterministic gold checks of `jury check-gold` (no model, no cost) and record them in "
        "the audit file; the panel's show_checks shows them to the jurors as facts.",
    ),
    against_gold: Path | None = typer.Option(
        None,
        "--against-gold",
        help="With the checks: also the cross-engine check of `jury check-gold --against-gold` (the same questions' "
        "gold for another engine, on --against-db-url or --against-db-root), recorded in the audit file.",
    ),
    against_db_url: str | None = typer.Option(None, "--against-db-url", help="--against-gold runs on this engine URL."),
    against_db_root: Path | None = typer.Option(None, "--against-db-root", help="--against-gold runs on SQLite files here."),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        help="Ask the panel R times (test-retest): each repeat is stored as its own votes (resumable; a rerun asks "
        "none again; --plan prices all R). Each gold query's flag is repeat 0's, as with R = 1; jury report gives "
        "each juror's test-retest kappa on its flag votes, the flags that change between repeats and the gold-clean "
        "column's spread. Not `score --efficiency --repeats` (timing runs).",
    ),
    shard: str | None = juror_option(
        "shard",
        "I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no audit "
        "file (exit 0); merge the shards' stores with `jury store merge`, then run without --shard.",
    ),
    batch: bool = juror_option("batch"),
) -> None:
    """Audit the gold SQL itself: each juror judges each gold query alone, never seeing model output.

    A juror sees the question, the evidence (panel option), the gold SQL and the column
    lists of the tables it touches (optionally a preview of the gold result). A query is
    flagged when a strict majority of the panel says defective (abstentions that could
    have flagged it make it undecided, not flagged). Prints flag rates
    overall, by difficulty, by split and per juror, Fleiss' kappa, defect types and
    agreement (Krippendorff's alpha, the range of pairwise Cohen's kappa), and
    writes a hash-locked audit file (use it with `jury score --audit`).
    """
    from jury.api.audit import audit_gold as job

    run_job(job, ctx)
