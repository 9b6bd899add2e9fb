"""`jury report`: strict, gold-clean and adjudicated columns with intervals, ranks and figures."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
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
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
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
    fmt: str = typer.Option(
        "table", "--format", "-f", help="Output format: table, csv, json, md, or html (a static site written to the -o folder)."
    ),
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
    rank_resamples: int = typer.Option(
        1000, "--rank-resamples", help="Bootstrap resamples of the questions for each model's rank interval (at least 1,000)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the rank-stability bootstrap (the same seed, the same intervals)."),
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

    if fmt != "html":
        check_format(fmt)
    elif output is None:
        raise InputError("-f html writes a site into a folder: give -o DIR")
    if strength is not None and strength not in STRENGTHS:
        from jury.errors import did_you_mean

        hint = did_you_mean(strength, STRENGTHS) or ";"
        raise InputError(f"unknown --strength {strength!r}{hint} choose one of: {', '.join(STRENGTHS)}")
    cfg = config()
    if fmt == "html" and output is not None:
        from jury.results.site import check_site_dir

        check_site_dir(output, [*runs, cfg.path_of("gold", gold), cfg.path_of("audit", audit), *verdicts, families, review])
    guard_outputs(
        [output if fmt != "html" else None],
        [*runs, cfg.path_of("gold", gold), cfg.path_of("audit", audit), *verdicts, families, review],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
    )
    audit_path = cfg.path_of("audit", audit)
    audit_doc, adj_docs = load_verdict_files(audit_path, verdicts, allow_superseded)  # locks first
    audit_doc, adj_docs, review_info = with_review(review, audit_doc, adj_docs)
    audit_docs = [audit_doc] if audit_doc is not None else []  # (path, doc): the report names the path
    registry = None
    if families is not None:
        from jury.judging.families import load_registry

        registry = load_registry(families)

    evaluation = settings(cfg, comparator=comparator, near_miss=near_miss, workers=workers, db_url=db_url)
    gold_file = gold_path(cfg, gold)
    with open_store(cfg, store) as st:
        gold_items, run_records, ev = load_and_evaluate(
            gold_file, list(runs), cfg.path_of("db_root", db_root), st, evaluation, progress_bar
        )
    check_audit_against_gold(audit_doc, ev, gold_items, gold_file)
    try:
        result = build_report(
            ev,
            gold_items,
            audit_docs=audit_docs,
            adj_docs=adj_docs,
            strength=strength,
            control=control,
            registry=registry,
            rank_resamples=rank_resamples,
            seed=seed,
        )
    except InputError:  # verdicts that do not fit: first say if they were made for other inputs
        from jury.verdicts.documents import check_made_for

        check_made_for(adj_docs, gold_file, runs)
        raise
    text = render_report(result, fmt, width=table_width(output), wide=wide) if fmt != "html" else ""
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
    if fmt == "html":
        from jury.results.site import SiteSources, build_site, site_command

        assert output is not None
        review_doc = None
        if review is not None:
            from jury.verdicts.review import load_review

            review_doc = (review, load_review(review))
        sources = SiteSources(
            report=result,
            evaluation=ev,
            gold=gold_items,
            records=run_records,
            audit=audit_doc,
            adjudications=adj_docs,
            review=review_doc,
            inputs=[("gold", gold_file), *(("run", r) for r in runs), ("families", families), ("review", review)],
            command=site_command(
                runs,
                gold_file,
                audit_path,
                verdicts,
                review,
                families,
                strength,
                control,
                evaluation,
                rank_resamples,
                seed,
                output,
            ),
        )
        summary = build_site(sources, output)
        review_text(review_info, "json")  # the review summary on stderr
        typer.echo(f"wrote {summary.path}/index.html ({summary.files:,} files, {summary.bytes / 1e6:.1f} MB)", err=True)
        return
    emit(text + review_text(review_info, fmt), output)
