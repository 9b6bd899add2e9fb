"""`jury report`: strict, gold-clean and adjudicated columns with intervals, ranks and figures.

The command is generated from ReportCommand (jury.options.command): jury.report's options
(jury.options.report.ReportOptions), then how the report is shown, its figures and the
--gold-defects job."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jury.cli.common import check_format, cycle_collector_paused, emit, handle_errors, progress_bar, table_width
from jury.errors import InputError
from jury.options import Flag
from jury.options.command import argument, command
from jury.options.groups import Output
from jury.options.report import ReportOptions

if TYPE_CHECKING:
    from jury.jobs.report import Report


class ReportShown(Output):
    """How `jury report` shows the report, the figures it writes beside it, and its other job."""

    fmt: Annotated[str, Flag(flags=("--format", "-f"))] = "table"
    """Output format: table, csv, json, md, or html (a static site written to the -o folder)."""
    plots: Annotated[Path | None, Flag(writable=True)] = None
    """Also write the report's figures to this folder."""
    wide: bool = False
    """Table and md: also show each model's near-miss and not-executed counts; csv and json always hold every column."""
    gold_defects: bool = False
    """Instead: the gold queries the --audit file flagged, as a table to send upstream (md, csv, json or
    table): each with its defect types, every vote's reasons, the deterministic checks' evidence, a
    preview of the gold's result and the audit file's hash. Needs no run files."""


# pydantic orders the fields of the bases last base first: jury.report's options come first
class ReportCommand(ReportShown, ReportOptions):
    """Every option of `jury report`."""


def run(runs: list[Path] | None, o: ReportCommand) -> None:
    """Publish strict, gold-clean and adjudicated accuracy per model, from locked verdict files.

    Columns (each a Wilson 95% interval over the questions the model routed to the right
    database; gold queries that fail are left out everywhere): strict = execution match
    under the comparator; gold-clean = strict without the questions the audit flagged
    (they never count as successes); adjudicated = strict matches plus the failures the
    jury credited (gold defect, format equivalence). Also: ranks and the strict →
    adjudicated rank shift, the composition of each model's jury-reached misses (gold
    defect / format equivalence / genuine error / ambiguous / no majority), near misses
    and non-executed answers (never sent to the jury), jury cost, Spearman of gold-defect
    share vs strength, Pearson of routing accuracy vs the difficulty of the model's
    denominator, format-equivalent shares by family, an optional negative control, and
    the oracle-routing table (the three columns on the questions every model routed
    correctly). Every verdict file's lock is checked before anything else is read.
    """
    with cycle_collector_paused():  # its objects live until it ends (issue 46)
        _run(runs, o)


def _run(runs: list[Path] | None, o: ReportCommand) -> None:
    """`jury report` (:func:`run`), with the cyclic garbage collector paused around it."""
    from jury.jobs.report import report as run_report

    if o.gold_defects:
        return _gold_defects(runs, o)
    if not runs:
        raise InputError("no run files: give at least one run file (or --gold-defects with --audit)")
    if o.fmt != "html":
        check_format(o.fmt)
    elif o.output is None:
        raise InputError("-f html writes a site into a folder: give -o DIR")
    if o.compare_panels and o.fmt != "html":
        raise InputError(
            "--compare-panels adds a section to the html site (-f html -o DIR); for a table: jury compare-panels A B"
        )
    site = o.fmt == "html"
    result = run_report(runs, o, progress=progress_bar, outputs=[None if site else o.output], site_dir=o.output if site else None)
    if o.plots is not None:
        for path in result.write_plots(o.plots):
            typer.echo(f"wrote {path}", err=True)
    for note in result.notes:
        typer.echo(note, err=True)
    if site:
        assert o.output is not None
        return _write_site(result, o.output)
    emit(result.render(o.fmt, width=table_width(o.output), wide=o.wide), o.output)


def _write_site(result: Report, output: Path) -> None:
    """`jury report -f html -o DIR`: the static site, and what was written."""
    summary = result.write_site(output)
    typer.echo(f"wrote {summary.path}/index.html ({summary.files:,} files, {summary.bytes / 1e6:.1f} MB)", err=True)
    if summary.kept:
        from jury.results.render import safe

        typer.echo(
            f"kept {len(summary.kept)} files an older jury's manifest listed without a hash (remove them by hand if "
            f"stale), e.g. {safe(summary.kept[0])}",
            err=True,
        )


def _gold_defects(runs: list[Path] | None, o: ReportCommand) -> None:
    """`jury report --gold-defects`: the audit's flagged gold queries (jury.gold_defects)."""
    from jury.jobs.gold_defects import gold_defects

    if runs:
        raise InputError("--gold-defects reads the audit file alone: give no run files")
    check_format(o.fmt)
    found = gold_defects(
        o.audit, gold=o.gold, db_root=o.db_root, db_url=o.db_url, store=o.store, allow_superseded=o.allow_superseded,
        progress=progress_bar, outputs=[o.output],
    )  # fmt: skip
    emit(found.render(o.fmt, width=table_width(o.output)), o.output)


RUNS_HELP = (
    "Run JSONL files (one line per model and question), or BIRD prediction files as published, NAME=PATH "
    "naming one's model (see jury score); none with --gold-defects."
)
RUNS = argument("runs", RUNS_HELP, list[Path] | None, default=None)
report = handle_errors(command(ReportCommand, run, arguments=[RUNS]))
