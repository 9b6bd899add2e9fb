"""`jury reaudit`: re-run locked verdict files whose panel, prompts or inputs changed."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors, juror_option, run_job


@handle_errors
def reaudit(
    ctx: typer.Context,
    files: list[Path] = typer.Argument(None, help="Locked verdict files (default: the current ones in the verdicts folder)."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Call nothing: exit 1 if any file is stale, 4 if one cannot be checked (a bound file is absent), 0 if all are current (for cron and CI).",
    ),
    max_cost: float | None = juror_option("max_cost", "Stop cleanly before this run's spend would pass USD."),
    batch: bool = juror_option("batch"),
    store: Path | None = juror_option("store"),
    sign: Path | None = juror_option("sign"),
) -> None:
    """Compare each locked file's bindings (panel, prompt templates, gold, runs, databases)
    with the files as they are now; re-run the stale ones.

    Votes of unchanged jurors come from the store; only changed jurors are called. Each
    re-run writes a new locked file naming its predecessor (the old file is never
    touched) and prints the difference: questions newly flagged or cleared, verdicts
    that flipped, and how far the old and new panels agree.
    """
    from jury.api.reaudit import reaudit as job

    result = run_job(job, ctx)
    if result.exit_code:
        raise typer.Exit(result.exit_code)
