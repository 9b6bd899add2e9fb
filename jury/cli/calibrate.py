"""`jury calibrate`: agreement of the comparators, each juror and the panel with human labels."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import emit, handle_errors, job_options, option, progress_bar, table_width


@handle_errors
def calibrate(
    ctx: typer.Context,
    labels: list[Path] = typer.Option(
        ..., "--labels", help="Human label JSONL file(s) (repeatable): adjudication and/or gold labels."
    ),
    verdicts: list[Path] = typer.Option([], "--verdicts", help="Locked adjudication file(s) to measure (repeatable)."),
    audit: list[Path] = typer.Option([], "--audit", help="Locked audit file(s) to measure against the gold labels (repeatable)."),
    judgments: list[Path] = typer.Option(
        [],
        "--judgments",
        help="Recorded judges' verdicts as judgment JSONL (repeatable; `jury labels import flex-judge` writes FLEX's): "
        "each judge is measured against the reference in a section of its own.",
    ),
    runs: list[Path] = typer.Option(
        [],
        "--runs",
        help="Run JSONL file(s) or prediction files, NAME=PATH naming one's model (repeatable, as jury score's runs): "
        "scores every comparator against the labels (executes SQL, no LLM).",
    ),
    gold: Path | None = typer.Option(None, help="Gold file, with --runs. Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(
        None, help="Folder of <db_id>/<db_id>.sqlite, with --runs. Default: jury.toml's db_root."
    ),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    store: Path | None = option("store"),
    annotator: str | None = typer.Option(
        None, help="Use this annotator's labels as the reference (default: 'consensus' where given, else the majority)."
    ),
    json_out: Path | None = typer.Option(None, "--json", writable=True, help="Write every figure as JSON here."),
    csv_out: Path | None = typer.Option(None, "--csv", writable=True, help="Write one CSV row per figure here."),
    markdown_out: Path | None = typer.Option(None, "--markdown", writable=True, help="Write the tables as Markdown here."),
    seed: int = typer.Option(0, help="Seed of the bootstrap intervals."),
    workers: int | None = typer.Option(None, help="Parallel execution processes with --runs (default: CPU count)."),
    executor: str | None = option("executor"),
    ray_address: str | None = option("ray_address"),
    allow_superseded: bool = typer.Option(
        False, "--allow-superseded", help="Use verdict files that a newer file in their folder supersedes (refused by default)."
    ),
) -> None:
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
    from jury.api.calibrate import calibrate as run

    found = run(
        **job_options(ctx, "json_out", "csv_out", "markdown_out"),
        progress=progress_bar,
        outputs=[json_out, csv_out, markdown_out],
    )
    emit(found.render("table", width=table_width(None)))
    for path, fmt in ((json_out, "json"), (csv_out, "csv"), (markdown_out, "md")):
        if path is not None:
            emit(found.render(fmt), path)
