"""`jury check-gold`: deterministic checks of the gold queries (no model involved)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import check_format, emit, handle_errors, job_options, option, progress_bar, table_width


@handle_errors
def check_gold(
    ctx: typer.Context,
    gold: Path | None = typer.Argument(None, help="Gold file (BIRD dev.json). Default: jury.toml's gold."),
    db_root: Path | None = option("db_root"),
    db_url: str | None = option("db_url"),
    allow_privileged_login: bool = option("allow_privileged_login"),
    passes: str = typer.Option("5,10,10,10", help="Executions per pass, comma-separated (Spider 2.0-AIFunc: 5,10,10,10)."),
    db: list[str] = typer.Option([], "--db", help="Check only questions of this db_id (repeatable)."),
    question_id: list[str] = typer.Option([], "--question-id", "--question", help="Check only this question (repeatable)."),
    comparator: str | None = typer.Option(None, help="Comparator deciding whether two executions differ (default strict)."),
    timeout: float | None = typer.Option(None, help="Per-query timeout in seconds (default 30)."),
    fmt: str = option("fmt"),
    output: Path | None = option("output"),
    store: Path | None = typer.Option(
        None, help="Store file (default .jury/store.db): remembers databases that passed the integrity check."
    ),
    against_gold: Path | None = typer.Option(
        None,
        "--against-gold",
        help="Cross-engine check: the same questions' gold for another engine (BIRD's mini_dev_postgresql.json), "
        "run on --against-db-url (or --against-db-root) and compared with this gold's result under every comparator.",
    ),
    against_db_url: str | None = typer.Option(
        None, "--against-db-url", help="--against-gold runs here: an engine URL, with {db_id} or without (one database)."
    ),
    against_db_root: Path | None = typer.Option(
        None, "--against-db-root", help="--against-gold runs on SQLite files here (default: --db-root's)."
    ),
    windows: int = typer.Option(
        1,
        "--windows",
        min=1,
        help="Spider 2.0-AIFunc's final stability check: repeat the last pass in this many separate time windows "
        "(each window's executions and agreements recorded in the JSON's items[].windows).",
    ),
    window_gap: float | None = typer.Option(
        None, "--window-gap", help="--windows: seconds between the end of one window and the start of the next."
    ),
    workers: int | None = option("workers", "Processes checking gold queries in parallel (default: CPU count)."),
) -> None:
    """Check every gold query without a model: determinism, LIMIT ties, bare GROUP BY columns, empty or NULL results, failures.

    Each gold query runs in passes (default 5+10+10+10, as Spider 2.0-AIFunc) and once more
    with PRAGMA reverse_unordered_selects=ON; a result that changes under the comparator the
    item is scored with is `row_order`. `limit_tie`: ORDER BY ... LIMIT k cuts between rows
    that tie on the sort key. `bare_column`: a column neither grouped nor aggregated takes
    several values in a group. `empty_result`, `all_null`, `null_value` (one NULL value),
    `gold_fails`, `gold_timeout`. With --against-gold, `cross_engine`: the other engine's gold
    gives another result (each comparator that tells them apart named, both results shown, and
    the questions listed per comparator). Each finding names its evidence. Nothing is cached:
    every execution is fresh (the results are stored: `jury audit-gold` reuses them). With
    --workers N the queries are checked on N processes; the report is the same. On an engine
    the reversed run (a SQLite pragma) is left out.
    """
    from jury.api.check_gold import check_gold as run

    check_format(fmt)
    found = run(
        **job_options(ctx, "fmt", "output"),
        progress=progress_bar,
        outputs=[output],
    )
    emit(found.render(fmt, width=table_width(output)), output)
