"""`jury score`: strict execution match per model, with every comparator side by side."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import RUNS_HELP, check_format, emit, handle_errors, job_options, option, progress_bar, table_width
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS


@handle_errors
def score(
    ctx: typer.Context,
    runs: list[Path] = typer.Argument(..., help=RUNS_HELP),
    gold: Path | None = option("gold"),
    db_root: Path | None = option("db_root"),
    db: list[str] = option("db"),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    comparator: str | None = option("comparator"),
    near_miss: float | None = option("near_miss"),
    timeout: float | None = option("timeout"),
    row_cap: int | None = option("row_cap"),
    workers: int | None = option("workers"),
    executor: str | None = option("executor"),
    ray_address: str | None = option("ray_address"),
    casefold: bool = option("casefold"),
    float_digits: int | None = option("float_digits"),
    fmt: str = option("fmt"),
    output: Path | None = option("output"),
    per_question: Path | None = typer.Option(None, writable=True, help="Also write one JSONL line per (model, question) here."),
    audit: Path | None = typer.Option(None, help="Locked audit file: adds the gold-clean column (flagged questions removed)."),
    verdicts: list[Path] = typer.Option(
        [], "--verdicts", help="Locked adjudication file(s): adds the adjudicated column (repeatable)."
    ),
    store: Path | None = option("store"),
    wide: bool = typer.Option(
        False,
        "--wide",
        help="Table and md: also show the routing accuracy (shown anyway when a model misrouted), the routed count and "
        "every other comparator's accuracy (rank); csv and json always hold every column.",
    ),
    allow_superseded: bool = option("allow_superseded"),
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
        "BIRD's 3-sigma outlier rule can drop nothing at 10 or fewer. Timings only: not `adjudicate --repeats` "
        "(a panel asked again).",
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
    missing: str | None = option("missing"),
    gold_errors: str | None = option("gold_errors"),
    positions_from: Path | None = option("positions_from"),
    timeout_retries: int = typer.Option(
        0,
        "--timeout-retries",
        help="Run a prediction that times out again, up to N times, before it counts as a timeout "
        "(Spider 2.0-AIFunc retries transient failures; recorded in the JSON and CSV).",
    ),
    same_window: bool = typer.Option(
        False,
        "--same-window",
        help="Reuse nothing from the store: every gold and prediction is executed in this run, so the two sides of a "
        "pair come from one time window (results that drift: AI functions calling models).",
    ),
    error_sample: Path | None = typer.Option(
        None,
        "--error-sample",
        writable=True,
        help="Also write Spider 2.0-AIFunc's stratified error-analysis sample here (JSONL, one question a line, "
        "for taxonomy labelling): questions stratified by which --group solves them, --per-stratum drawn from each.",
    ),
    group: list[str] = typer.Option(
        [], "--group", help="--error-sample: a model group, NAME=MODEL[,MODEL...] (repeatable; e.g. strong=a,b weak=c)."
    ),
    per_stratum: int = typer.Option(10, "--per-stratum", min=1, help="--error-sample: questions drawn per stratum."),
    seed: int = typer.Option(0, "--seed", help="--error-sample: the draw's seed (same seed, same sample)."),
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
    shown = ("fmt", "output", "per_question", "wide")  # how the result is shown, not what is scored
    drawn = ("error_sample", "group", "per_stratum", "seed")  # jury.error_sample's, drawn after the score
    if (error_sample is None) != (not group):
        from jury.errors import InputError

        raise InputError("--error-sample and --group go together: the sample's strata are the groups' successes")
    if group:
        from jury.compare.error_strata import parse_groups

        parse_groups(group)  # the form, before any work (the models once the runs are read)
    options = job_options(ctx, *shown, *drawn)
    result = run_score(**options, progress=progress_bar, outputs=[output, per_question, error_sample])
    typer.echo("".join(f"{note}\n" for note in result.notes), err=True, nl=False)
    if per_question is not None:
        emit(result.per_question_jsonl(), per_question)
    if error_sample is not None:
        from jury.api.error_sample import error_sample as draw

        sample = draw(result, group=group, per_stratum=per_stratum, seed=seed)
        sample.write(error_sample)
        typer.echo(f"{sample.summary()}; written to {error_sample}", err=True)
    emit(result.render(fmt, width=table_width(output), wide=wide), output)
