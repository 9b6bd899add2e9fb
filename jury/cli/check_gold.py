"""`jury check-gold`: deterministic checks of the gold queries (no model involved)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import (
    DB_URL_HELP,
    FORMAT_HELP,
    check_format,
    config,
    db_urls,
    emit,
    guard_outputs,
    handle_errors,
    open_store,
    progress_bar,
    table_width,
)
from jury.errors import InputError


@handle_errors
def check_gold(
    gold: Path | None = typer.Argument(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = typer.Option(None, help="Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    db_url: str | None = typer.Option(None, "--db-url", help=DB_URL_HELP),
    passes: str = typer.Option("5,10,10,10", help="Executions per pass, comma-separated (Spider 2.0-AIFunc: 5,10,10,10)."),
    db: list[str] = typer.Option([], "--db", help="Check only questions of this db_id (repeatable)."),
    question_id: list[str] = typer.Option([], "--question-id", "--question", help="Check only this question (repeatable)."),
    comparator: str | None = typer.Option(None, help="Comparator deciding whether two executions differ (default strict)."),
    timeout: float | None = typer.Option(None, help="Per-query timeout in seconds (default 30)."),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the report to this file instead of stdout."),
    store: Path | None = typer.Option(
        None, help="Store file (default .jury/store.db): remembers databases that passed the integrity check."
    ),
) -> None:
    """Check every gold query without a model: determinism, LIMIT ties, bare GROUP BY columns, empty or NULL results, failures.

    Each gold query runs in passes (default 5+10+10+10, as Spider 2.0-AIFunc) and once more
    with PRAGMA reverse_unordered_selects=ON; a result that changes under the comparator the
    item is scored with is `row_order`. `limit_tie`: ORDER BY ... LIMIT k cuts between rows
    that tie on the sort key. `bare_column`: a column neither grouped nor aggregated takes
    several values in a group. `empty_result`, `all_null`, `null_value` (one NULL value),
    `gold_fails`, `gold_timeout`. Each finding names its evidence. Nothing is cached: every
    execution is fresh.
    """
    from jury.compare.gold_checks import check_counts, check_gold, parse_passes
    from jury.compare.outcomes import resolve_databases
    from jury.inputs.io import load_gold
    from jury.results.gold_check_report import render_gold_checks
    from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

    check_format(fmt)
    cfg = config()
    gold_file = cfg.path_of("gold", gold)
    if gold_file is None:
        raise InputError("no gold file: pass it as an argument or set gold in jury.toml")
    guard_outputs([output], [gold_file], store=cfg.store_path(store), db_root=cfg.path_of("db_root", db_root))
    pass_counts = parse_passes(passes)
    name = cfg.get("comparator", comparator, DEFAULT_COMPARATOR)
    timeout_s = cfg.get("timeout", timeout, DEFAULT_TIMEOUT_S)
    if timeout_s <= 0:
        raise InputError(f"timeout must be positive, got {timeout_s}")
    from jury.compare.comparators import get_comparator

    get_comparator(name)
    items = list(load_gold(gold_file).values())
    if db:
        items = [i for i in items if i.db_id in set(db)]
    if question_id:
        wanted = {str(q) for q in question_id}
        missing = wanted - {str(i.question_id) for i in items}
        if missing:
            raise InputError(f"{gold_file}: no question {sorted(missing)[0]} (after --db filters)")
        items = [i for i in items if str(i.question_id) in wanted]
    if not items:
        raise InputError(f"{gold_file}: no questions to check after the filters")
    with open_store(cfg, store) as st:
        databases = resolve_databases(
            [i for i in items if not i.has_recording], cfg.path_of("db_root", db_root), st, db_urls(cfg, db_url)
        )
    with progress_bar("checking gold SQL") as bar:
        results = check_gold(
            items, databases, passes=pass_counts, comparator=name, timeout_s=timeout_s, row_cap=DEFAULT_ROW_CAP, progress=bar
        )
    settings = {"passes": list(pass_counts), "comparator": name, "timeout_s": timeout_s}
    emit(render_gold_checks(results, check_counts(results), settings, fmt, width=table_width(output)), output)
