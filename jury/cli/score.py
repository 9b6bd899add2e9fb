"""`jury score`: strict execution match per model, with every comparator side by side."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    FORMAT_HELP, check_format, config, emit, gold_path, handle_errors, open_store, progress_bar, settings,
)


@handle_errors
def score(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files (one line per model and question)."),
    gold: Path | None = typer.Option(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    comparator: str | None = typer.Option(None, help="Comparator deciding a match: strict (default), bird, relaxed or subset."),
    near_miss: float | None = typer.Option(None, help="Overlap at or above which a mismatch is a near miss (default 0.5)."),
    timeout: float | None = typer.Option(None, help="Per-query timeout in seconds (default 30, as BIRD)."),
    row_cap: int | None = typer.Option(None, help="Rows kept per result (default 100000); beyond it only count and hash."),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    casefold: bool = typer.Option(False, help="Compare strings case-insensitively (off by default)."),
    float_digits: int | None = typer.Option(None, help="Round floats to N significant digits before comparing (off by default)."),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the report to this file instead of stdout."),
    per_question: Path | None = typer.Option(None, help="Also write one JSONL line per (model, question) here."),
    audit: Path | None = typer.Option(None, help="Locked audit file: adds the gold-clean column (flagged questions removed)."),
    verdicts: list[Path] = typer.Option([], "--verdicts", help="Locked adjudication file(s): adds the adjudicated column (repeatable)."),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db beside jury.toml or in the cwd)."),
) -> None:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    Accuracy is over the questions each model routed to the right database, with a
    Wilson 95% interval. Each answer gets one outcome: match, near_miss, mismatch
    (eligible for the jury), error, timeout, missing, misrouted or gold_error (the gold
    fails: left out of every denominator). Executions are cached in the store, so a
    rerun executes nothing.
    """
    from jury.report import per_question_jsonl, render_scores
    from jury.scoring import score_all
    from jury.sql.compare import NormalizeOptions
    from jury.workflows import load_and_evaluate

    check_format(fmt)
    cfg = config()
    evaluation = settings(
        cfg, comparator=comparator, near_miss=near_miss, timeout=timeout, row_cap=row_cap, workers=workers,
        options=NormalizeOptions(casefold=casefold, float_sig_digits=float_digits),
    )
    with open_store(cfg, store) as st:
        _gold, _records, ev = load_and_evaluate(
            gold_path(cfg, gold), list(runs), cfg.path_of("db_root", db_root), st, evaluation, progress_bar
        )
    scores = score_all(ev.pairs)
    add_verdict_columns(scores, ev.pairs, cfg.path_of("audit", audit), verdicts)
    if per_question is not None:
        emit(per_question_jsonl(ev.pairs), per_question)
    emit(render_scores(scores, ev, fmt), output)


def add_verdict_columns(scores, pairs, audit: Path | None, verdicts: list[Path]) -> None:
    """Fill the gold-clean and adjudicated columns from locked files (each lock checked first)."""
    from jury.columns import adjudicated, flagged_questions, gold_clean, verdict_index, with_ranks
    from jury.verdicts import load_kind

    if audit is not None:
        doc = load_kind(audit, "audit")
        column = gold_clean(pairs, flagged_questions([doc]))
        rank = with_ranks(column)
        for s in scores:
            s.gold_clean, s.gold_clean_rank = column[s.model], rank[s.model]
    if verdicts:
        docs = [(path, load_kind(path, "adjudication")) for path in verdicts]
        column = adjudicated(pairs, verdict_index(docs))
        rank = with_ranks(column)
        for s in scores:
            s.adjudicated, s.adjudicated_rank = column[s.model], rank[s.model]
