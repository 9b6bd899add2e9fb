"""`jury import ...`: turn published prediction files into run JSONL.

Both commands are generated from import_bird_predictions' options (jury.options.imports.ImportOptions,
jury.options.command): no option declared by hand but the importer and the prediction file (the
library's arguments)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors
from jury.options.command import argument, command
from jury.options.imports import ImportOptions

app = typer.Typer(help="Convert other tools' prediction files into jury run JSONL.", no_args_is_help=True, rich_markup_mode=None)


def bird_predictions(file: Path, o: ImportOptions) -> None:
    """Import BIRD prediction files, indexing questions by their position in the gold file.

    jury score, report and adjudicate also take these files as they are; this writes them
    as run JSONL (one model, named after the file unless --model).

    Non-string entries and empty lines become missing answers (sql: null); trailing
    text after the SQL is kept as the model wrote it. Prints how many entries were
    missing or odd.
    """
    with_importer("bird-predictions", file, o)


def with_importer(importer: str, file: Path, o: ImportOptions) -> None:
    """Import another tool's prediction file with an importer plugin (the jury.importers entry
    points: docs/plugins.md), as run JSONL of one model.

    Of what the importer reads, the questions of the gold file are kept; an answer to a
    question the gold does not hold is an odd entry. Prints how many entries were missing or odd.
    """
    from jury.jobs.imports import import_bird_predictions

    result = import_bird_predictions(file, o, importer=importer)
    if o.output is None:
        typer.echo(result.render(), nl=False)
    for note in result.notes:
        typer.echo(note, err=True)


IMPORTER = argument(
    "importer", "The importer: bird-predictions (as `jury import bird-predictions`) or an installed plugin's name.", str
)
BIRD_FILE = argument("file", "BIRD predict_dev.json ({index: 'SQL\\t----- bird -----\\tdb_id'}) or a one-SQL-per-line text file.")
FILE = argument("file", "The prediction file the importer reads.")
app.command("bird-predictions")(handle_errors(command(ImportOptions, bird_predictions, arguments=[BIRD_FILE])))
app.command("with")(handle_errors(command(ImportOptions, with_importer, arguments=[IMPORTER, FILE])))
