"""`jury calibrate`: agreement of the comparators, each juror and the panel with human labels."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
    EXECUTOR_HELP,
    RAY_ADDRESS_HELP,
    config,
    emit,
    gold_path,
    guard_outputs,
    handle_errors,
    make_console,
    open_store,
    progress_bar,
    settings,
)


@handle_errors
def calibrate(
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
        [], "--runs", help="Run JSONL file(s) (repeatable): scores every comparator against the labels (executes SQL, no LLM)."
    ),
    gold: Path | None = typer.Option(None, help="Gold file, with --runs. Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(
        None, help="Folder of <db_id>/<db_id>.sqlite, with --runs. Default: jury.toml's db_root."
    ),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db beside jury.toml or in the cwd)."),
    annotator: str | None = typer.Option(
        None, help="Use this annotator's labels as the reference (default: 'consensus' where given, else the majority)."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Write every figure as JSON here."),
    csv_out: Path | None = typer.Option(None, "--csv", help="Write one CSV row per figure here."),
    markdown_out: Path | None = typer.Option(None, "--markdown", help="Write the tables as Markdown here."),
    seed: int = typer.Option(0, help="Seed of the bootstrap intervals."),
    workers: int | None = typer.Option(None, help="Parallel execution processes with --runs (default: CPU count)."),
    executor: str | None = typer.Option(None, "--executor", help=EXECUTOR_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
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
    from jury.cli.score import load_verdict_files
    from jury.inputs.judgments import load_judgments
    from jury.inputs.labels import load_labels
    from jury.results.calibration import calibrate as compute
    from jury.results.calibration_render import print_calibration, render_csv, render_json, render_markdown

    cfg = config()
    outputs = [json_out, csv_out, markdown_out]
    guard_outputs(
        outputs,
        [*labels, *verdicts, *audit, *runs, *judgments, cfg.path_of("gold", gold) if runs else None],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
    )
    label_set = load_labels(labels)
    recorded = load_judgments(judgments) if judgments else []
    _, adj_docs = load_verdict_files(None, list(verdicts), allow_superseded)  # locks first
    audit_docs = [load_verdict_files(path, [], allow_superseded)[0] for path in audit]
    evaluation, records = None, []
    if runs:
        from jury.pipeline.jobs import load_and_evaluate

        with open_store(cfg, store) as st:
            _gold, records, evaluation = load_and_evaluate(
                gold_path(cfg, gold),
                list(runs),
                cfg.path_of("db_root", db_root),
                st,
                settings(cfg, workers=workers, executor=executor, ray_address=ray_address, db_url=db_url),
                progress_bar,
            )
    result = compute(
        label_set,
        evaluation=evaluation,
        records=records,
        adjudications=adj_docs,
        audits=audit_docs,
        judgments=recorded,
        annotator=annotator,
        seed=seed,
    )
    print_calibration(result, make_console())
    for path, render in ((json_out, render_json), (csv_out, render_csv), (markdown_out, render_markdown)):
        if path is not None:
            emit(render(result), path)
