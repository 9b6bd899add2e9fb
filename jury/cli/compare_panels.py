"""`jury compare-panels`: two verdict files of the same inputs, by two panels, compared.

The command is generated from ComparePanelsCommand (jury.options.command): jury.compare_panels'
options (jury.options.compare_panels.ComparePanelsOptions), then how the comparison is shown;
the two verdict files are its arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.cli.common import check_format, emit, handle_errors, table_width
from jury.options import Flag
from jury.options.command import argument, command
from jury.options.compare_panels import ComparePanelsOptions
from jury.options.groups import Output


class ComparePanelsShown(Output):
    """How `jury compare-panels` shows the comparison."""

    output: Annotated[Path | None, Flag(flags=("-o", "--output"), writable=True)] = None
    """Write the comparison to this file instead of stdout."""


# pydantic orders the fields of the bases last base first: jury.compare_panels' options come first
class ComparePanelsCommand(ComparePanelsShown, ComparePanelsOptions):
    """Every option of `jury compare-panels`."""


def run(a: Path, b: Path, o: ComparePanelsCommand) -> None:
    """Compare two panels: two audits of the same gold, or two adjudications of the same runs.

    For audits: the flags both panels raised, those only A or only B raised, and agreement on
    the flag and on the labels (valid, undecided, or the defect types of a flag); for
    adjudications the same with the verdicts as labels and a credited verdict
    (gold_defect, format_equivalence) as the flag. Each with Cohen's kappa, its paired
    bootstrap interval and the Fleiss–Cohen–Everitt standard error with its Wald interval;
    then the same per defect type (or verdict: one against the rest), per difficulty and,
    for adjudications, per model; then every record where the labels differ, with both
    panels' votes. Records only one file holds are left out and counted. Both locks are
    checked and the verdicts recomputed from the votes first; two files of different kinds,
    gold or runs are refused. -f csv: one row per breakdown; -f json: everything.
    """
    from jury.jobs.compare_panels import compare_panels as job

    check_format(o.fmt)
    result = job(a, b, o, outputs=[o.output])
    emit(result.render(o.fmt, width=table_width(o.output)), o.output)


A = argument("a", "Panel A's verdict file: an audit, or an adjudication.")
B = argument("b", "Panel B's verdict file of the same kind and the same gold (and runs).")
compare_panels = handle_errors(command(ComparePanelsCommand, run, arguments=[A, B]))
