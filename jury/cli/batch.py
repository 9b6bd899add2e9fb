"""`jury batch status` and `jury batch collect`: the ballots sent through providers' batch APIs (--batch)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(help="Ballots sent through providers' batch APIs (--batch).", no_args_is_help=True, rich_markup_mode=None)

_COLUMNS = ["provider", "batch", "juror", "requests", "pending", "answered", "used", "failed", "age", "state"]
_HEADS = ["provider", "batch", "juror", "ballots", "pending", "collected", "voted", "failed", "age", "state"]


@app.command("status")
@handle_errors
def status(store: Path | None = typer.Option(None, help="Store file (default .jury/store.db).")) -> None:
    """List the store's batches: provider, batch id, juror, ballots by state (pending at the
    provider, collected and not yet a vote, voted, failed), age and state. Calls nothing."""
    from jury.cli.common import config, make_console, open_store
    from jury.judging.batch import status_rows
    from jury.results.render import to_rich_table

    cfg = config()
    with open_store(cfg, store) as st:
        rows = status_rows(st)
    console = make_console()
    if not rows:
        console.print("no batches in this store", markup=False, highlight=False)
        return
    console.print(to_rich_table(rows, _COLUMNS, _HEADS, title="batches"))
    waiting = sum(r["pending"] for r in rows)
    console.print(
        f"{len(rows)} batches; {waiting} ballots pending at the providers"
        + ("; rerun the command that sent them (or `jury batch collect`) to collect" if waiting else ""),
        markup=False,
        highlight=False,
    )


@app.command("collect")
@handle_errors
def collect(store: Path | None = typer.Option(None, help="Store file (default .jury/store.db).")) -> None:
    """Poll every open batch and store the replies of those that ended (they become votes when
    the command that sent them runs again). Needs each juror's key variable; sends no ballot."""
    import asyncio

    from jury.cli.common import config, make_console, open_store
    from jury.judging.batch import collect as collect_batches
    from jury.judging.batch import status_rows, warn

    cfg = config()
    with open_store(cfg, store) as st:
        problems = asyncio.run(collect_batches(st))
        rows = status_rows(st)
    warn(problems)
    make_console().print(
        f"{sum(r['answered'] for r in rows)} replies collected and waiting to become votes; "
        f"{sum(r['pending'] for r in rows)} ballots still pending; {sum(r['failed'] for r in rows)} failed",
        markup=False,
        highlight=False,
    )
