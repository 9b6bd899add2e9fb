"""`jury score`: strict execution match per model, with every comparator side by side."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
    EXECUTOR_HELP,
    FORMAT_HELP,
    RAY_ADDRESS_HELP,
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
from jury.vocab import DEFAULT_EFFICIENCY_REPEATS


@handle_errors
def score(
    runs: list[Path] = typer.Argument(..., help="Run JSONL files (one line per model and question)."),
    gold: Path | None = typer.Option(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    comparator: str | None = typer.Option(
        None, help="Comparator deciding a match: strict (default), bird, relaxed, subset or spider2."
    ),
    near_miss: float | None = typer.Option(None, help="Overlap at or above which a mismatch is a near miss (default 0.5)."),
    timeout: float | None = typer.Option(None, help="Per-query timeout in seconds (default 30, as BIRD)."),
    row_cap: int | None = typer.Option(None, help="Rows kept per result (default 100000); beyond it only count and hash."),
    workers: int | None = typer.Option(None, help="Parallel execution processes (default: CPU count)."),
    executor: str | None = typer.Option(None, "--executor", help=EXECUTOR_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
    casefold: bool = typer.Option(False, help="Compare strings case-insensitively (off by default)."),
    float_digits: int | None = typer.Option(
        None, help="Round every number (ints too) to N significant digits before comparing (off by default)."
    ),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the report to this file instead of stdout."),
    per_question: Path | None = typer.Option(None, help="Also write one JSONL line per (model, question) here."),
    audit: Path | None = typer.Option(None, help="Locked audit file: adds the gold-clean column (flagged questions removed)."),
    verdicts: list[Path] = typer.Option(
        [], "--verdicts", help="Locked adjudication file(s): adds the adjudicated column (repeatable)."
    ),
    store: Path | None = typer.Option(None, help="Store file (default .jury/store.db beside jury.toml or in the cwd)."),
    wide: bool = typer.Option(
        False,
        "--wide",
        help="Table and md: also show the routing accuracy (shown anyway when a model misrouted), the routed count and "
        "every other comparator's accuracy (rank); csv and json always hold every column.",
    ),
    allow_superseded: bool = typer.Option(
        False,
        "--allow-superseded",
        help="Use --audit/--verdicts files that a newer file in their folder supersedes (refused by default).",
    ),
    efficiency: bool = typer.Option(
        False,
        "--efficiency",
        help="Time every matched pair: BIRD's VES and R-VES, Spider 2.0-AIFunc's t_pred/t_gold and faster share.",
    ),
    repeats: int = typer.Option(
        DEFAULT_EFFICIENCY_REPEATS,
        "--repeats",
        min=1,
        help="--efficiency: timed runs of each side of a matched pair (default 100, as BIRD's script); "
        "BIRD's 3-sigma outlier rule can drop nothing at 10 or fewer.",
    ),
    function_set: str | None = typer.Option(
        None, "--function-set", help="Function-set accuracy over names matching this glob (AI_*) or re:REGEX, case-insensitive."
    ),
    dialect: str = typer.Option("sqlite", "--dialect", help="--function-set: the SQL dialect sqlglot parses (default sqlite)."),
    review: Path | None = typer.Option(
        None, "--review", help="Locked review file (`jury review lock`): people's decisions take precedence over the jury's."
    ),
) -> None:
    """Execute every model's SQL and the gold SQL and score strict execution match.

    Accuracy is over the questions each model routed to the right database, with a
    Wilson 95% interval. Each answer gets one outcome: match, near_miss, mismatch
    (eligible for the jury), error, timeout, missing, misrouted or gold_error (the gold
    fails: left out of every denominator). Executions are cached in the store, so a
    rerun executes nothing.
    """
    from jury.compare.comparators import NormalizeOptions
    from jury.pipeline.jobs import load_and_evaluate
    from jury.results.score_table import per_question_jsonl, render_scores
    from jury.results.scoring import score_all

    check_format(fmt)
    cfg = config()
    guard_outputs(
        [output, per_question],
        [*runs, cfg.path_of("gold", gold), cfg.path_of("audit", audit), *verdicts, review],
        store=cfg.store_path(store),
        db_root=cfg.path_of("db_root", db_root),
    )
    evaluation = settings(
        cfg,
        comparator=comparator,
        near_miss=near_miss,
        timeout=timeout,
        row_cap=row_cap,
        workers=workers,
        executor=executor,
        ray_address=ray_address,
        db_url=db_url,
        options=NormalizeOptions(casefold=casefold, float_sig_digits=cfg.get("float_digits", float_digits)),
    )
    audit_doc, adj_docs = load_verdict_files(cfg.path_of("audit", audit), verdicts, allow_superseded)  # locks first
    audit_doc, adj_docs, review_info = with_review(review, audit_doc, adj_docs)
    gold_file = gold_path(cfg, gold)
    with open_store(cfg, store) as st:
        gold_items, records, ev = load_and_evaluate(
            gold_file, list(runs), cfg.path_of("db_root", db_root), st, evaluation, progress_bar
        )
        scores = score_all(ev.pairs)
        add_protocol_columns(scores, ev, records, gold_items, st, efficiency, repeats, function_set, dialect)
        merged = st.merged_sources()
    add_verdict_columns(scores, ev, gold_items, gold_file, audit_doc, adj_docs, runs=runs)
    if per_question is not None:
        emit(per_question_jsonl(ev.pairs), per_question)
    text = render_scores(scores, ev, fmt, width=table_width(output), wide=wide, merged_stores=merged)
    emit(text + review_text(review_info, fmt), output)


def with_review(review: Path | None, audit_doc, adj_docs):
    """(audit_doc, adj_docs, info): with --review, the people's decisions in place of the jury's
    (jury.results.review_report.apply_review); info is None without it."""
    if review is None:
        return audit_doc, adj_docs, None
    from jury.results.review_report import apply_review
    from jury.verdicts.review import load_review

    doc = load_review(review)  # its lock first
    audits = [audit_doc[1]] if audit_doc is not None else []
    adj_docs, audits, info = apply_review(review, doc, adj_docs, audits)
    return ((audit_doc[0], audits[0]) if audit_doc is not None else None), adj_docs, info


def review_text(info, fmt: str) -> str:
    """The review section after a table or Markdown output; csv and json keep their shape
    and the same summary goes to stderr."""
    if info is None:
        return ""
    from jury.results.review_report import render_review, summary_line

    typer.echo(summary_line(info), err=True)
    return "\n" + render_review(info, fmt) if fmt in ("table", "md") else ""


def add_protocol_columns(scores, ev, records, gold_items, store, efficiency, repeats, function_set, dialect) -> None:
    """Fill the function-set (FSA) and efficiency fields asked for (jury.compare.function_sets, .efficiency)."""
    from jury.results.scoring import proportion

    if function_set is not None:
        from jury.compare.function_sets import function_set_accuracy, function_set_matches

        fsa = function_set_accuracy(ev.pairs, function_set_matches(ev.pairs, records, gold_items, function_set, dialect))
        for s in scores:
            s.function_set = proportion(*fsa.get(s.model, (0, 0)))
    if efficiency:
        from jury.compare.efficiency import cpu_model, efficiency_scores, time_matches

        if repeats <= 10:
            typer.echo(
                f"note: --repeats {repeats}: BIRD's outlier rule (3 standard deviations) can drop nothing "
                "below 11 repetitions; BIRD's script runs 100",
                err=True,
            )
        with progress_bar("timing matched pairs") as bar:
            timings = time_matches(ev, records, gold_items, store, repeats=repeats, progress=bar)
        table = efficiency_scores(ev.pairs, timings, repeats, cpu_model())
        for s in scores:
            s.efficiency = table.get(s.model)


def load_verdict_files(audit: Path | None, verdicts: list[Path], allow_superseded: bool = False):
    """(audit (path, doc) or None, [(path, adjudication doc)]): each lock checked, its verdicts
    recomputed from its votes, and a superseded file refused unless allow_superseded."""
    from jury.verdicts.lock import load_current

    audit_doc = (audit, load_current(audit, "audit", allow_superseded=allow_superseded)) if audit is not None else None
    adj_docs = [(path, load_current(path, "adjudication", allow_superseded=allow_superseded)) for path in verdicts]
    return audit_doc, adj_docs


def check_audit_against_gold(audit_doc, ev, gold_items, gold_file: Path) -> None:
    """Refuse an audit made for another gold file (jury.results.columns.check_audit_gold)."""
    from jury.inputs.io import sha256_file
    from jury.results.columns import check_audit_gold

    if audit_doc is not None:
        path, doc = audit_doc
        check_audit_gold(path, doc, gold_items, ev.databases, sha256_file(gold_file))


def add_verdict_columns(scores, ev, gold_items, gold_file: Path, audit_doc, adj_docs, runs=()) -> None:
    """Fill the gold-clean and adjudicated columns from locked files loaded by load_verdict_files.
    Verdicts that do not fit the runs are first checked for other bound inputs (check_made_for)."""
    from jury.errors import InputError
    from jury.results.columns import adjudicated, flagged_questions, gold_clean, verdict_index, with_ranks
    from jury.verdicts.documents import check_made_for

    pairs = ev.pairs
    if audit_doc is not None:
        check_audit_against_gold(audit_doc, ev, gold_items, gold_file)
        column = gold_clean(pairs, flagged_questions([audit_doc[1]]))
        rank = with_ranks(column)
        for s in scores:
            s.gold_clean, s.gold_clean_rank = column[s.model], rank[s.model]
    if adj_docs:
        try:
            column = adjudicated(pairs, verdict_index(adj_docs))
        except InputError:
            check_made_for(adj_docs, gold_file, runs)  # "made for another gold/run file" says why
            raise
        rank = with_ranks(column)
        for s in scores:
            s.adjudicated, s.adjudicated_rank = column[s.model], rank[s.model]
