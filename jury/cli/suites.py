"""`jury suites`: PLSQLBench's test-suite metrics of runs that record test outcomes."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import check_format, emit, handle_errors, job_options, option, progress_bar, table_width

# the help of `jury suites`' own options
_HELP = {
    "output": "Write the metrics to this file instead of stdout.",
    "verdicts": "Locked suite verdict file(s) (from --adjudicate): adds the adjudicated metrics (repeatable).",
    "adjudicate": (
        "Send failing tests whose expected and actual outputs differ as text (no error) to the jury as "
        "format-equivalence ballots, lock the verdicts, and add the adjudicated metrics."
    ),
    "classify": (
        "With --taxonomy: send failing tests whose error the taxonomy's rules leave unclassified to the "
        "jury for one category each, lock the verdicts, and count the errors by category from rules and "
        "jurors."
    ),
    "panel": "With --adjudicate or --classify: panel TOML file, or a name in panels/ (default: default).",
    "families": "With --adjudicate or --classify: family registry TOML (default panels/families.toml).",
    "seed": (
        "With --adjudicate: seed of the output-order shuffle; with --classify: of the order categories are listed in (default 0)."
    ),
    "early_stop": "With --adjudicate or --classify: stop asking once a majority is settled.",
    "max_cost": "With --adjudicate or --classify: stop before total spend passes USD.",
    "batch": (
        "With --adjudicate: send the ballots of OpenAI, Anthropic and Gemini jurors through their batch APIs "
        "(about half the price; results within 24 h): exits 3 while ballots are pending, rerun to "
        "collect (jury batch status)."
    ),
    "plan": "With --adjudicate or --classify: make no calls; print the ballots and estimated cost.",
    "verdicts_out": ("With --adjudicate or --classify: verdict file to write (default verdicts/adjudication-<time>.json)."),
    "taxonomy": (
        "Error taxonomy (a name in panels/taxonomies/, e.g. plsqlbench, or a TOML path): count each "
        "model's failing tests that raised an error by the category the taxonomy's rules give the error "
        "string (and, with --classify or --classify verdicts, the jurors give the rest)."
    ),
}


@handle_errors
def suites(
    ctx: typer.Context,
    runs: list[Path] = typer.Argument(..., help="Run JSONL files whose records carry `tests` (recorded test outcomes)."),
    fmt: str = option("fmt"),
    output: Path | None = typer.Option(None, "-o", "--output", writable=True, help=_HELP["output"]),
    verdicts: list[Path] = typer.Option([], "--verdicts", help=_HELP["verdicts"]),
    adjudicate: bool = typer.Option(False, "--adjudicate", help=_HELP["adjudicate"]),
    classify: bool = typer.Option(False, "--classify", help=_HELP["classify"]),
    panel: str | None = typer.Option(None, help=_HELP["panel"]),
    families: Path | None = typer.Option(None, help=_HELP["families"]),
    seed: int | None = typer.Option(None, help=_HELP["seed"]),
    early_stop: bool = typer.Option(False, "--early-stop", help=_HELP["early_stop"]),
    max_cost: float | None = typer.Option(None, min=0, help=_HELP["max_cost"]),
    batch: bool = typer.Option(False, "--batch", help=_HELP["batch"]),
    plan: bool = typer.Option(False, "--plan", help=_HELP["plan"]),
    verdicts_out: Path | None = typer.Option(None, "--verdicts-out", writable=True, help=_HELP["verdicts_out"]),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db)."),
    allow_superseded: bool = typer.Option(False, "--allow-superseded", help="Use --verdicts files a newer file supersedes."),
    taxonomy: str | None = typer.Option(None, help=_HELP["taxonomy"]),
) -> None:
    """PLSQLBench's metrics per model, with 95% intervals (Wilson or bootstrap).

    Single-turn tasks: MeanTestPass@1 (mean of tests passed / tests) and SuitePass@1 (share of
    tasks whose every test passed). Episodes (records sharing `episode`): EpisodePass@1,
    TurnSuitePass@1 and MeanTestPass@1 (of each episode's tests passed / tests); each task or
    episode weighs equally. Shares of units (SuitePass, EpisodePass) get Wilson intervals,
    means of fractions (MeanTestPass, TurnSuitePass) a seeded bootstrap over units.
    Records with `reference_error: true` are excluded and listed.
    Records naming their `subset` (e.g. Spider2-ST) and `split` (e.g. test) add PLSQLBench's
    tables: each subset's metrics, and per split the unweighted mean over its subsets
    (docs/suites.md).
    With --adjudicate or --verdicts, the adjudicated metrics count a failing test the jury
    judged format-equivalent as passed. With --taxonomy, errored failing tests are counted
    by category: by the taxonomy's rules, and (--classify, or its --verdicts file) by the
    jurors' majority for the errors the rules leave.
    """
    from jury.api.suites import suites as run
    from jury.results.render import safe

    check_format(fmt)
    found = run(
        **job_options(ctx, "fmt", "output"),
        progress=progress_bar,
        outputs=[output],
    )
    for line in found.notes:
        typer.echo(safe(line, newlines=True), err=True)
    if found.plan_only:  # the plan is printed, whatever the format and output
        emit(found.render("table", width=table_width(None)))
    else:
        emit(found.render(fmt), output)
