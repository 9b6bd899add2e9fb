"""`jury suites`: PLSQLBench's test-suite metrics of runs that record test outcomes.

The command is generated from SuitesCommand (jury.options.command): jury.suites' options
(jury.options.suites.SuitesOptions), then how the metrics are shown; the run files are its
argument."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jury.cli.common import check_format, emit, handle_errors, progress_bar, table_width
from jury.options import Flag
from jury.options.command import argument, command
from jury.options.groups import Output
from jury.options.suites import SuitesOptions


class Shown(Output):
    """How `jury suites` shows the metrics."""

    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Write the metrics to this file instead of stdout."""


# pydantic orders the fields of the bases last base first: jury.suites' options come first
class SuitesCommand(Shown, SuitesOptions):
    """Every option of `jury suites`."""


def run(runs: list[Path], o: SuitesCommand) -> None:
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
    from jury.jobs.suites import suites as job
    from jury.results.render import safe

    check_format(o.fmt)
    found = job(runs, o, progress=progress_bar, outputs=[o.output])
    for line in found.notes:
        typer.echo(safe(line, newlines=True), err=True)
    if found.plan_only:  # the plan is printed, whatever the format and output
        emit(found.render("table", width=table_width(None)))
    else:
        emit(found.render(o.fmt), o.output)


RUNS_HELP = "Run JSONL files whose records carry `tests` (recorded test outcomes)."
RUNS = argument("runs", RUNS_HELP, list[Path])
suites = handle_errors(command(SuitesCommand, run, arguments=[RUNS]))
