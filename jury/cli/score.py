"""`jury score`: strict execution match per model, with every comparator side by side.

The command is generated from ScoreCommand (jury.options.command): jury.score's options
(jury.options.score.ScoreOptions), then how the result is shown and what is written beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import Field

from jury.cli.common import RUNS_HELP, check_format, cycle_collector_paused, emit, handle_errors, progress_bar, table_width
from jury.errors import InputError
from jury.options import Flag, Options
from jury.options.command import argument, command
from jury.options.groups import Output
from jury.options.score import ScoreOptions


class ScoreShown(Output):
    """How `jury score` shows the score, and the per-question lines it writes beside it."""

    per_question: Annotated[Path | None, Flag(writable=True)] = None
    """Also write one JSONL line per (model, question) here."""
    wide: bool = False
    """Table and md: also show the routing accuracy (shown anyway when a model misrouted), the routed
    count and every other comparator's accuracy (rank); csv and json always hold every column."""


class ErrorSampleDraw(Options):
    """`jury score --error-sample`: jury.error_sample's draw on the score, written beside it."""

    error_sample: Annotated[Path | None, Flag(writable=True)] = None
    """Also write Spider 2.0-AIFunc's stratified error-analysis sample here (JSONL, one question a
    line, for taxonomy labelling): questions stratified by which --group solves them, --per-stratum
    drawn from each."""
    group: list[str] = []
    """--error-sample: a model group, NAME=MODEL[,MODEL...] (repeatable; e.g. strong=a,b weak=c)."""
    per_stratum: int = Field(10, ge=1)
    """--error-sample: questions drawn per stratum."""
    seed: int = 0
    """--error-sample: the draw's seed (same seed, same sample)."""


# pydantic orders the fields of the bases last base first: jury.score's options come first
class ScoreCommand(ErrorSampleDraw, ScoreShown, ScoreOptions):
    """Every option of `jury score`."""


def run(runs: list[Path], o: ScoreCommand) -> None:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    Accuracy is over the questions each model routed to the right database, with a
    Wilson 95% interval. Each answer gets one outcome: match, near_miss, mismatch
    (eligible for the jury), error, timeout, missing, misrouted or gold_error (the gold
    fails: left out of every denominator). Executions are cached in the store, so a
    rerun executes nothing.
    """
    with cycle_collector_paused():  # its objects live until it ends, as report's (issue 46)
        _run(runs, o)


def _run(runs: list[Path], o: ScoreCommand) -> None:
    """`jury score` (:func:`run`), with the cyclic garbage collector paused around it."""
    from jury.jobs.score import score as run_score

    check_format(o.fmt)
    if (o.error_sample is None) != (not o.group):
        raise InputError("--error-sample and --group go together: the sample's strata are the groups' successes")
    if o.group:
        from jury.compare.error_strata import parse_groups

        parse_groups(o.group)  # the form, before any work (the models once the runs are read)
    result = run_score(runs, o, progress=progress_bar, outputs=[o.output, o.per_question, o.error_sample])
    typer.echo("".join(f"{note}\n" for note in result.notes), err=True, nl=False)
    if o.per_question is not None:
        emit(result.per_question_jsonl(), o.per_question)
    if o.error_sample is not None:
        from jury.jobs.error_sample import error_sample as draw

        sample = draw(result, group=o.group, per_stratum=o.per_stratum, seed=o.seed)
        sample.write(o.error_sample)
        typer.echo(f"{sample.summary()}; written to {o.error_sample}", err=True)
    width = table_width(o.output) if o.fmt == "table" else None  # only a table has a width (rich measures it)
    emit(result.render(o.fmt, width=width, wide=o.wide), o.output)


RUNS = argument("runs", RUNS_HELP, list[Path])
score = handle_errors(command(ScoreCommand, run, arguments=[RUNS]))
