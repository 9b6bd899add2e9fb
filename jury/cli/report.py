"""`jury report`: strict, gold-clean and adjudicated columns with intervals, ranks and figures."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    FORMAT_HELP,
    check_format,
    config,
    emit,
    gold_path,
    guard_outputs,
    handle_errors,
    open_store,
    progress_bar,
    settings,
    table_width,
)
from jury.errors import InputError, JuryError


@handle_errors
def report(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files (one line per model and question)."),
    gold: Path | None = typer.Option(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    audit: Path | None = typer.Option(None, help="Locked audit file: the gold-clean column. Default: jury.toml's audit."),
    verdicts: list[Path] = typer.Option(
        [], "--verdicts", help="Locked adjudication file(s): the adjudicated column (repeatable)."
    ),
    strength: str | None = typer.Option(
        None,
        help="Column the gold-defect share is correlated with: adjudicated, strict or gold_clean "
        "(default: adjudicated with --verdicts, else gold_clean with an audit, else strict).",
    ),
    control: str | None = typer.Option(
        None, help="Negative-control model: its strict → adjudicated lift and its gap to the next row."
    ),
    families: Path | None = typer.Option(
        None, help="Family registry TOML for models the verdict files do not name (default: the run records' family fields)."
    ),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the report to this file instead of stdout."),
    plots: Path | None = typer.Option(None, "--plots", help="Also write the report's figures to this folder."),
    comparator: str | None = typer.Option(
        None, help="Comparator deciding a match: strict (default), bird, relaxed, subset or spider2."
    ),
    near_miss: float | None = typer.Option(None, help="Overlap at or above which a mismatch is a near miss (default 0.5)."),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db beside jury.toml or in the cwd)."),
    wide: bool = typer.Option(
        False,
        "--wide",
        help="Table and md: also show each model's near-miss and not-executed counts; csv and json always hold every column.",
    ),
    allow_superseded: bool = typer.Option(
        False,
        "--allow-superseded",
        help="Use --audit/--verdicts files that a newer file in their folder supersedes (refused by default).",
    ),
    review: Path | None = typer.Option(
        None,
        "--review",
        help="Locked review file (`jury review lock`): people's decisions take precedence over the jury's; shows reviewer κ.",
    ),
) -> None:
    """Publish strict, gold-clean and adjudicated accuracy per model, from locked verdict files.

    Columns (each a Wilson 95% interval over the questions the model routed to the right
    database; gold queries that fail are left out everywhere): strict = execution match
    under the comparator; gold-clean = strict without the questions the audit flagged
    (they never count as successes); adjudicated = strict matches plus the failures the
    jury credited (gold defect, format equivalence). Also: ranks and the strict →
    adjudicated rank shift, the composition of each model's jury-reached misses (gold
    defect / format equivalence / genuine error / ambiguous / no majority), near misses
    and non-executed answers (never sent to the jury), jury cost, Spearman of gold-defect
    share vs strength, Pearson of routing accuracy vs the difficulty of the model's
    denominator, format-equivalent shares by family, an optional negative control, and
    the oracle-routing table (the three columns on the questions every model routed
    correctly). Every verdict file's lock is checked before anything else is read.
    """
    from jury.cli.score import check_audit_against_gold, load_verdict_files, review_text, with_review
    from jury.pipeline.jobs import load_and_evaluate
    from jury.results.report import STRENGTHS, build_report, render_report

    check_format(fmt)
    if strength is not None and strength not in STRENGTHS:
        raise InputError(f"unknown --strength {strength!r}; choose one of: {', '.join(STRENGTHS)}")
    cfg = config()
    guard_outputs(
        [output],
        [*runs, cfg.path_of("gold", gold), cfg.path_of("audit", audit), *verdicts, families, review],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
    )
    audit_path = cfg.path_of("audit", audit)
    audit_doc, adj_docs = load_verdict_files(audit_path, verdicts, allow_superseded)  # locks first
    audit_doc, adj_docs, review_info = with_review(review, audit_doc, adj_docs)
    audit_docs = [audit_doc[1]] if audit_doc is not None else []
    registry = None
    if families is not None:
        from jury.judging.families import load_registry

        registry = load_registry(families)

    evaluation = settings(cfg, comparator=comparator, near_miss=near_miss, workers=workers)
    gold_file = gold_path(cfg, gold)
    with open_store(cfg, store) as st:
        gold_items, _records, ev = load_and_evaluate(
            gold_file, list(runs), cfg.path_of("db_root", db_root), st, evaluation, progress_bar
        )
    check_audit_against_gold(audit_doc, ev, gold_items, gold_file)
    result = build_report(
        ev, gold_items, audit_docs=audit_docs, adj_docs=adj_docs, strength=strength, control=control, registry=registry
    )
    text = render_report(result, fmt, width=table_width(output), wide=wide)
    if plots is not None:
        try:
            from jury.results.plots import write_plots
        except ImportError as exc:
            raise JuryError(f"--plots: cannot load jury.results.plots ({exc})") from None
        try:
            written = write_plots(result, plots)
        except OSError as exc:
            raise InputError(f"--plots {plots}: cannot write there: {exc.strerror or exc}") from None
        for path in written:
            typer.echo(f"wrote {path}", err=True)
    emit(text + review_text(review_info, fmt), output)
