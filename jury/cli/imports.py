"""`jury import ...`: turn published prediction files into run JSONL."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import config, emit, guard_outputs, handle_errors
from jury.errors import InputError

app = typer.Typer(help="Convert other tools' prediction files into jury run JSONL.", no_args_is_help=True, rich_markup_mode=None)


@app.command("bird-predictions")
@handle_errors
def bird_predictions(
    file: Path = typer.Argument(
        ..., help="BIRD predict_dev.json ({index: 'SQL\\t----- bird -----\\tdb_id'}) or a one-SQL-per-line text file."
    ),
    model: str = typer.Option(..., help="Model name to record on every line."),
    gold: Path | None = typer.Option(None, help="The gold file the predictions index by position (BIRD dev.json)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Run JSONL to write (default: stdout)."),
    only_db: list[str] = typer.Option([], "--db", help="Keep only questions of this db_id (repeatable)."),
    family: str | None = typer.Option(None, help="Model family to record (overrides the family registry)."),
) -> None:
    """Import BIRD prediction files, indexing questions by their position in the gold file.

    Non-string entries and empty lines become missing answers (sql: null); trailing
    text after the SQL is kept as the model wrote it. Prints how many entries were
    missing or odd.
    """
    from jury.inputs.importers import import_bird_predictions
    from jury.inputs.io import dump_runs, load_gold_list
    from jury.results.render import safe

    cfg = config()
    gold_path = cfg.path_of("gold", gold)
    if gold_path is None:
        raise InputError("no gold file: pass --gold or set gold in jury.toml")
    guard_outputs([output], [file, gold_path], store=cfg.store_path(None), db_root=cfg.path_of("db_root", None))
    report = import_bird_predictions(file, load_gold_list(gold_path), model, only_db=set(only_db) or None, family=family)
    if not report.records:
        raise InputError(f"{file}: no questions left after --db {', '.join(only_db)}")
    emit(dump_runs(report.records), output)
    typer.echo(
        safe(
            f"{model}: {len(report.records)} answers from {report.entries} entries; "
            f"{len(report.missing)} missing, {len(report.odd)} odd"
        ),
        err=True,
    )
    for line in report.odd[:5]:
        typer.echo(safe(f"  odd entry {line}"), err=True)
