"""`jury score`: strict execution match per model, with every comparator side by side."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
    EXECUTOR_HELP,
    FORMAT_HELP,
    MISSING_HELP,
    POSITIONS_HELP,
    RAY_ADDRESS_HELP,
    check_format,
    emit,
    handle_errors,
    job_options,
    privileged_option,
    progress_bar,
    table_width,
)
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS


@handle_errors
def score(
    ctx: typer.Context,
    runs: list[Path] = typer.Argument(
        ...,
        help="Run JSONL files (one line per model and question), or BIRD prediction files as published "
        "(predict_dev.json, one SQL per line): each is one model, named after the file.",
    ),
    gold: Path | None = typer.Option(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    allow_privileged_login: bool = privileged_option(),
    comparator: str | None = typer.Option(
        None,
        help="Comparator deciding a match: strict (default), bird (BIRD's rule: on an engine, the driver's values), "
        "bird_normalized (the set rule on values as SQLite returns them), relaxed, subset or spider2.",
    ),
    near_miss: float | None = typer.Option(None, help="Overlap at or above which a mismatch is a near miss (default 0.5)."),
    timeout: float | None = typer.Option(None, help="Per-query timeout in seconds (default 30, as BIRD)."),
    row_cap: int | None = typer.Option(None, help="Rows kept per result (default 100000); beyond it only count and hash."),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    executor: str | None = typer.Option(None, "--executor", help=EXECUTOR_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    casefold: bool = typer.Option(False, help="Compare strings case-insensitively (off by default)."),
    float_digits: int | None = typer.Option(
        None, help="Round every number (ints too) to N significant digits before comparing (off by default)."
    ),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(
        None, "-o", "--output", writable=True, help="Write the report to this file instead of stdout."
    ),
    per_question: Path | None = typer.Option(None, writable=True, help="Also write one JSONL line per (model, question) here."),
    audit: Path | None = typer.Option(None, help="Locked audit file: adds the gold-clean column (flagged questions removed)."),
    verdicts: list[Path] = typer.Option(
        [], "--verdicts", help="Locked adjudication file(s): adds the adjudicated column (repeatable)."
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db beside jury.toml or in the cwd)."),
    wide: bool = typer.Option(
        False,
        "--wide",
        help="Table and md: also show the routing accuracy (shown anyway when a model misrouted), the routed count and "
        "every other comparator's accuracy (rank); csv and json always hold every column.",
    ),
    allow_superseded: bool = typer.Option(
        False,
        "--allow-superseded",
        help="Use --audit/--verdicts files that a newer file in their folder supersedes (refused by default).",
    ),
    efficiency: bool = typer.Option(
        False,
        "--efficiency",
        help="Time every matched pair: BIRD's VES and R-VES, Spider 2.0-AIFunc's t_pred/t_gold and faster share.",
    ),
    repeats: int = typer.Option(
        DEFAULT_EFFICIENCY_REPEATS,
        "--repeats",
        min=1,
        help="--efficiency: timed runs of each side of a matched pair (default 100, as BIRD's script); "
        "BIRD's 3-sigma outlier rule can drop nothing at 10 or fewer.",
    ),
    function_set: str | None = typer.Option(
        None, "--function-set", help="Function-set accuracy over names matching this glob (AI_*) or re:REGEX, case-insensitive."
    ),
    dialect: str = typer.Option("sqlite", "--dialect", help="--function-set: the SQL dialect sqlglot parses (default sqlite)."),
    review: Path | None = typer.Option(
        None, "--review", help="Locked review file (`jury review lock`): people's decisions take precedence over the jury's."
    ),
    soft_f1: bool = typer.Option(
        False,
        "--soft-f1",
        help="BIRD mini-dev's Soft-F1 per model (its evaluation_f1.py: rows matched by position after dropping "
        "duplicates, a partial credit per value; errors score 0), beside strict.",
    ),
    missing: str | None = typer.Option(None, "--missing", help=MISSING_HELP),
    positions_from: Path | None = typer.Option(None, "--positions-from", help=POSITIONS_HELP),
) -> None:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    Accuracy is over the questions each model routed to the right database, with a
    Wilson 95% interval. Each answer gets one outcome: match, near_miss, mismatch
    (eligible for the jury), error, timeout, missing, misrouted or gold_error (the gold
    fails: left out of every denominator). Executions are cached in the store, so a
    rerun executes nothing.
    """
    from jury.api.score import score as run_score

    check_format(fmt)
    options = job_options(ctx, "fmt", "output", "per_question", "wide")
    result = run_score(**options, progress=progress_bar, outputs=[output, per_question])
    for note in result.notes:
        typer.echo(note, err=True)
    if per_question is not None:
        emit(result.per_question_jsonl(), per_question)
    emit(result.render(fmt, width=table_width(output), wide=wide), output)
