"""`jury import ...`: turn published prediction files into run JSONL."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(help="Convert other tools' prediction files into jury run JSONL.", no_args_is_help=True, rich_markup_mode=None)


@app.command("bird-predictions")
@handle_errors
def bird_predictions(
    file: Path = typer.Argument(
        ..., help="BIRD predict_dev.json ({index: 'SQL\\t----- bird -----\\tdb_id'}) or a one-SQL-per-line text file."
    ),
    model: str | None = typer.Option(
        None, help="Model name to record on every line (default: the file's name without its suffix)."
    ),
    gold: Path | None = typer.Option(
        None,
        help="The gold file whose questions are kept (and, without --positions-from, indexed by position). Default: jury.toml's gold.",
    ),
    positions_from: Path | None = typer.Option(
        None,
        "--positions-from",
        help="The gold file the predictions index by position when it is not --gold (BIRD's full dev.json for the "
        "published files, scored on a part of it). Default: jury.toml's positions_from.",
    ),
    output: Path | None = typer.Option(None, "-o", "--output", writable=True, help="Run JSONL to write (default: stdout)."),
    only_db: list[str] = typer.Option([], "--db", help="Keep only questions of this db_id (repeatable)."),
    family: str | None = typer.Option(None, help="Model family to record (overrides the family registry)."),
) -> None:
    """Import BIRD prediction files, indexing questions by their position in the gold file.

    jury score, report and adjudicate also take these files as they are; this writes them
    as run JSONL (one model, named after the file unless --model).

    Non-string entries and empty lines become missing answers (sql: null); trailing
    text after the SQL is kept as the model wrote it. Prints how many entries were
    missing or odd.
    """
    from jury.api.imports import import_bird_predictions

    result = import_bird_predictions(
        file, model=model, gold=gold, positions_from=positions_from, output=output, only_db=only_db, family=family
    )
    if output is None:
        typer.echo(result.render(), nl=False)
    for note in result.notes:
        typer.echo(note, err=True)


@app.command("with")
@handle_errors
def with_importer(
    importer: str = typer.Argument(
        ..., help="The importer: bird-predictions (as `jury import bird-predictions`) or an installed plugin's name."
    ),
    file: Path = typer.Argument(..., help="The prediction file the importer reads."),
    model: str | None = typer.Option(
        None, help="Model name to record on every line (default: the file's name without its suffix)."
    ),
    gold: Path | None = typer.Option(None, help="The gold file whose questions are kept. Default: jury.toml's gold."),
    positions_from: Path | None = typer.Option(
        None,
        "--positions-from",
        help="The gold file the importer is given (in its order) when it is not --gold. Default: jury.toml's positions_from.",
    ),
    output: Path | None = typer.Option(None, "-o", "--output", writable=True, help="Run JSONL to write (default: stdout)."),
    only_db: list[str] = typer.Option([], "--db", help="Keep only questions of this db_id (repeatable)."),
    family: str | None = typer.Option(None, help="Model family to record (overrides the family registry)."),
) -> None:
    """Import another tool's prediction file with an importer plugin (the jury.importers entry
    points: docs/plugins.md), as run JSONL of one model.

    Of what the importer reads, the questions of the gold file are kept; an answer to a
    question the gold does not hold is an odd entry. Prints how many entries were missing or odd.
    """
    from jury.api.imports import import_bird_predictions

    result = import_bird_predictions(
        file,
        model=model,
        gold=gold,
        positions_from=positions_from,
        output=output,
        only_db=only_db,
        family=family,
        importer=importer,
    )
    if output is None:
        typer.echo(result.render(), nl=False)
    for note in result.notes:
        typer.echo(note, err=True)
