"""`jury adjudicate`: send jury-eligible failures to a blind, family-disjoint jury."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors, juror_option, option, run_job


@handle_errors
def adjudicate(
    ctx: typer.Context,
    runs: list[Path] = typer.Argument(
        ..., help="Run JSONL files, or BIRD prediction files as published, NAME=PATH naming one's model (see jury score)."
    ),
    gold: Path | None = typer.Option(None, help="Gold file. Default: jury.toml's gold."),
    db_root: Path | None = option("db_root"),
    db: list[str] = option("db", "Adjudicate only the questions of this db_id (repeatable; recorded in the verdict file)."),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    panel: str | None = typer.Option(None, help="Panel TOML file, or the name of one in panels/ (default: default)."),
    model: list[str] = typer.Option([], "--model", help="Adjudicate only this model (repeatable)."),
    plan: bool = typer.Option(
        False, "--plan", help="Make no calls: print ballots, estimated tokens and cost per model and juror."
    ),
    max_cost: float | None = juror_option("max_cost"),
    early_stop: bool = typer.Option(
        False, "--early-stop", help="Stop asking once a majority is settled (e.g. two of three agree)."
    ),
    seed: int | None = typer.Option(None, help="Seed of the answer-order shuffle (default 0); recorded in the verdict file."),
    swap: bool | None = typer.Option(
        None,
        "--swap/--no-swap",
        help="Each juror judges both answer orders; a juror whose two votes disagree abstains as inconsistent. "
        "Doubles the calls (see --plan). Default: the panel's swap.",
    ),
    review_passes: float = typer.Option(
        0.0,
        "--review-passes",
        min=0.0,
        max=1.0,
        help="Also send this fraction of each model's strict matches (a seeded sample) to the jury on the same "
        "blind ballot; a sampled pass judged a genuine error is a false pass (see jury report).",
    ),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        help="Ask the panel R times (test-retest): each repeat draws its own answer orders from the seed and is "
        "stored as its own votes (resumable; a rerun asks none again; --plan prices all R). The verdicts are "
        "repeat 0's, as with R = 1; jury report gives each juror's test-retest kappa, the verdicts that change "
        "between repeats and the adjudicated column's spread. Not `score --efficiency --repeats` (timing runs).",
    ),
    taxonomy: str | None = typer.Option(
        None,
        help="Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench or spider2-aifunc, or a TOML path): a juror "
        "voting genuine error also picks a category. Default: the panel's taxonomy, else none.",
    ),
    families: Path | None = typer.Option(None, help="Family registry TOML (default panels/families.toml)."),
    comparator: str | None = typer.Option(None, help="Comparator deciding a match (default strict)."),
    near_miss: float | None = typer.Option(
        None, help="Overlap at or above which a mismatch is a near miss and skips the jury (default 0.5)."
    ),
    workers: int | None = option("workers"),
    executor: str | None = option("executor"),
    ray_address: str | None = option("ray_address"),
    output: Path | None = typer.Option(
        None, "-o", "--output", writable=True, help="Verdict file to write (default verdicts/adjudication-<time>.json)."
    ),
    store: Path | None = juror_option("store"),
    sign: Path | None = juror_option("sign"),
    shard: str | None = juror_option("shard", "verdict file"),
    batch: bool = juror_option("batch"),
    positions_from: Path | None = option("positions_from"),
) -> None:
    """Execute (or reuse) every query, then ask each model's jury-eligible failures of its jurors.

    Only mismatches reach the jury: strict failures on correctly routed questions whose
    SQL executed and whose rows overlap the gold's below the near-miss threshold. Each
    goes to the first k jurors of the panel whose families differ from the model's, blind
    and with answer positions shuffled. Votes are stored as they arrive: a killed run
    resumes without repeating a call. Writes a hash-locked verdict file and prints
    strict vs adjudicated accuracy per model, then one line of juror agreement
    (Krippendorff's alpha, pairwise Cohen's kappa, position bias on blind ballots).
    """
    from jury.api.adjudicate import adjudicate as job

    run_job(job, ctx)
