"""`jury labels import ...`: turn published human-label sets into jury label JSONL."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from jury.cli.common import config, emit, gold_path, guard_outputs, handle_errors
from jury.errors import InputError
from jury.inputs.label_import import LabelSet

app = typer.Typer(help="Human labels: import published label sets.", no_args_is_help=True, rich_markup_mode=None)

SHOWN = 5  # how many unmatched items and differences are listed on stderr


@app.command("import")
@handle_errors
def import_(
    kind: LabelSet = typer.Argument(..., help="The published label set."),
    files: list[Path] = typer.Argument(..., help="The set's files, in any order (see the README's 'Human labels')."),
    gold: Path | None = typer.Option(
        None, help="The gold file the labels' questions are matched to (BIRD dev.json). Default: jury.toml's gold."
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Label JSONL to write (flex-judge: judgment JSONL; default: stdout)."
    ),
    runs_out: Path | None = typer.Option(None, "--runs-out", help="flex kinds: also write the pairs as run JSONL."),
    gold_out: Path | None = typer.Option(None, "--gold-out", help="flex kinds: also write the pairs' gold items as JSONL."),
    family: str | None = typer.Option(
        None,
        "--family",
        help="flex kinds: the model family to record on the run records (FLEX does not name the systems behind "
        "its pairs; jury never guesses, and `jury adjudicate` needs one to keep same-family jurors off).",
    ),
    original: Path | None = typer.Option(
        None, "--original", help="arcwise: the original mini-dev gold (mini_dev_sqlite.json); default: the --gold file."
    ),
) -> None:
    """Import FLEX's, Wretblad et al.'s or Arcwise's human labels, matched to the gold file.

    flex-judge imports no human labels but FLEX's own LLM judge's verdicts as judgments,
    for `jury calibrate --judgments`.

    Prints counts per source and annotator, and lists the items it could not match or
    label and every difference from the gold file; nothing is dropped silently.
    """
    from jury.inputs.io import dump_runs, load_gold
    from jury.inputs.judgments import dump_judgments
    from jury.inputs.label_import import dump_gold_items, import_labels
    from jury.inputs.labels import dump_labels
    from jury.results.render import safe

    name = LabelSet(kind)
    if (runs_out or gold_out or family) and not name.startswith("flex"):
        raise InputError(f"--runs-out, --gold-out and --family are for the flex kinds (FLEX's pairs), not {name}")
    cfg = config()
    gpath = gold_path(cfg, gold)
    inputs = [*files, gpath, original]
    guard_outputs([output, runs_out, gold_out], inputs, store=cfg.store_path(None), db_root=cfg.path_of("db_root", None))
    report = import_labels(name, files, load_gold(gpath), original=original)
    if not report.labels and not report.judgments:
        raise InputError(f"{name}: no labels (unmatched: {len(report.unmatched)}, unresolved: {len(report.unresolved)})")
    emit(dump_judgments(report.judgments) if name == LabelSet.FLEX_JUDGE else dump_labels(report.labels), output)
    if runs_out is not None:
        runs = [r.model_copy(update={"family": family}) for r in report.runs] if family else report.runs
        emit(dump_runs(runs), runs_out)
    if gold_out is not None:
        emit(dump_gold_items(report.gold_items), gold_out)
    say = lambda text: typer.echo(safe(text), err=True)  # noqa: E731
    for (source, annotator), n in report.by_annotator().items():
        say(f"{source}: {n} labels by {annotator}")
    for judge, n in Counter(j.judge for j in report.judgments).items():
        say(f"{name}: {n} judgments by the recorded judge {judge} (not human labels: give them to calibrate --judgments)")
    if report.runs:
        say(f"{len(report.runs)} run records, {len(report.gold_items)} gold items")
    say("; ".join(f"{key}: {n}" for key, n in report.counts.items()))
    for title, items in (
        ("unmatched", report.unmatched),
        ("ambiguous text matches", report.ambiguous),
        ("not labelled", report.unresolved),
        ("differences", report.differences),
    ):
        if items:
            say(f"{title}: {len(items)}")
            for line in items[:SHOWN]:
                say(f"  {line}")
            if len(items) > SHOWN:
                say(f"  ... and {len(items) - SHOWN} more")
