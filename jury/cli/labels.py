"""`jury labels import ...`: turn published human-label sets into jury label JSONL."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import emit, handle_errors
from jury.inputs.label_sets import LabelSet

app = typer.Typer(help="Human labels: import published label sets.", no_args_is_help=True, rich_markup_mode=None)


@app.command("import")
@handle_errors
def import_(
    kind: LabelSet = typer.Argument(..., help="The published label set."),
    files: list[Path] = typer.Argument(..., help="The set's files, in any order (see the README's 'Human labels')."),
    gold: Path | None = typer.Option(
        None, help="The gold file the labels' questions are matched to (BIRD dev.json). Default: jury.toml's gold."
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", writable=True, help="Label JSONL to write (flex-judge: judgment JSONL; default: stdout)."
    ),
    runs_out: Path | None = typer.Option(
        None, "--runs-out", writable=True, help="flex kinds: also write the pairs as run JSONL."
    ),
    gold_out: Path | None = typer.Option(
        None, "--gold-out", writable=True, help="flex kinds: also write the pairs' gold items as JSONL."
    ),
    family: str | None = typer.Option(
        None,
        "--family",
        help="flex kinds: the model family to record on the run records (FLEX does not name the systems behind "
        "its pairs; jury never guesses, and `jury adjudicate` needs one to keep same-family jurors off).",
    ),
    original: Path | None = typer.Option(
        None,
        "--original",
        help="arcwise, platinum: the original gold the set corrects (arcwise: mini_dev_sqlite.json); default: the --gold file.",
    ),
    db_root: Path | None = typer.Option(
        None,
        "--db-root",
        help="arcwise, platinum: the databases a changed SQL runs on (<db_root>/<db_id>/<db_id>.sqlite). "
        "Default: jury.toml's db_root.",
    ),
    store: Path | None = typer.Option(None, "--store", help="The store caching executions. Default: jury.toml's."),
    comparator: str | None = typer.Option(
        None,
        "--comparator",
        help="arcwise, platinum: the comparator that decides whether a changed SQL changes the result. "
        "Default: jury.toml's, else bird.",
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", help="arcwise, platinum: each execution's timeout in seconds. Default: jury.toml's, else 30."
    ),
) -> None:
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
    from jury.api.labels import import_labels
    from jury.results.render import safe

    found = import_labels(
        kind,
        files,
        gold=gold,
        output=output,
        runs_out=runs_out,
        gold_out=gold_out,
        family=family,
        original=original,
        db_root=db_root,
        store=store,
        comparator=comparator,
        timeout=timeout,
    )
    if output is None:
        emit(found.render())
    for line in [f"wrote {path}" for path in found.written] + found.notes:
        typer.echo(safe(line), err=True)
