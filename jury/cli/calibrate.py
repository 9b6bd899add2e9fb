"""`jury calibrate`: agreement of the comparators, each juror and the panel with human labels.

The command is generated from CalibrateCommand (jury.options.command): jury.calibrate's options
(jury.options.calibrate.CalibrateOptions), then the files the figures are written to."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from jury.cli.common import emit, handle_errors, progress_bar, table_width
from jury.options import Flag, Options
from jury.options.calibrate import CalibrateOptions
from jury.options.command import command


class Written(Options):
    """The files `jury calibrate` writes the figures to, beside the table it prints."""

    json_out: Annotated[Path | None, Flag(flags=("--json",), writable=True)] = None
    """Write every figure as JSON here."""
    csv_out: Annotated[Path | None, Flag(flags=("--csv",), writable=True)] = None
    """Write one CSV row per figure here."""
    markdown_out: Annotated[Path | None, Flag(flags=("--markdown",), writable=True)] = None
    """Write the tables as Markdown here."""


# pydantic orders the fields of the bases last base first: jury.calibrate's options come first
class CalibrateCommand(Written, CalibrateOptions):
    """Every option of `jury calibrate`."""


def run(o: CalibrateCommand) -> None:
    """Measure validity: how often execution match, each juror and the panel agree with human labels.

    The reference for each labelled answer is the 'consensus' annotator's label where the
    set has one, else the annotators' majority (ties left out), or --annotator's. Prints,
    with n for every figure: the annotators' agreement with each other (pairwise Cohen's κ,
    Krippendorff's α); with --runs, each comparator's accuracy, Cohen's κ (bootstrap 95%
    interval) and confusion matrix; with --verdicts, the same for each juror and the panel
    (a strict match the jury never saw counts as credited), agreement over the four
    categories and precision/recall of 'credited' on strict failures; with --audit and
    gold labels, precision/recall/F1 of the flags against each label source and their
    union; and FLEX's published κ (0.87 LLM judge, 0.62 execution match) when the labels
    are FLEX's agreement set. No LLM is called.
    """
    from jury.jobs.calibrate import calibrate as job

    found = job(options=o, progress=progress_bar, outputs=[o.json_out, o.csv_out, o.markdown_out])
    emit(found.render("table", width=table_width(None)))
    for path, fmt in ((o.json_out, "json"), (o.csv_out, "csv"), (o.markdown_out, "md")):
        if path is not None:
            emit(found.render(fmt), path)


calibrate = handle_errors(command(CalibrateCommand, run))
