"""`jury labels import ...`: turn published human-label sets into jury label JSONL.

The command is generated from import_labels' options (jury.options.labels.LabelsImportOptions,
jury.options.command): no option declared by hand but the label set and its files (the library's
arguments)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import emit, handle_errors
from jury.inputs.label_sets import LabelSet
from jury.options.command import argument, command
from jury.options.labels import LabelsImportOptions

app = typer.Typer(help="Human labels: import published label sets.", no_args_is_help=True, rich_markup_mode=None)


def import_(kind: LabelSet, files: list[Path], o: LabelsImportOptions) -> None:
    """Import human labels (FLEX, Wretblad et al., Arcwise, a corrected gold file, a CSV).

    Each set is matched to the gold file question by question.

    arcwise and platinum: a changed SQL is a defect only when its result changes: the original
    and the corrected query run on the question's database and are compared under the
    comparator; an equal result is a format-only change (not defective).

    flex-judge imports no human labels but FLEX's own LLM judge's verdicts as judgments,
    for `jury calibrate --judgments`.

    Prints counts per source and annotator, and lists the items it could not match or
    label and every difference from the gold file; nothing is dropped silently.
    """
    from jury.jobs.labels import import_labels
    from jury.results.render import safe

    found = import_labels(kind, files, o)
    if o.output is None:
        emit(found.render())
    for line in [f"wrote {path}" for path in found.written] + found.notes:
        typer.echo(safe(line), err=True)


KIND = argument("kind", "The published label set.", LabelSet)
FILES = argument("files", "The set's files, in any order (see the README's 'Human labels').", list[Path])
app.command("import")(handle_errors(command(LabelsImportOptions, import_, arguments=[KIND, FILES])))
