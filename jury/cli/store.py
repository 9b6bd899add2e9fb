"""`jury store merge`: the stores of several machines (or `--shard` runs) into one."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(help="Work with store files (.jury/store.db).", no_args_is_help=True)


@app.command("merge")
@handle_errors
def merge(
    stores: list[Path] = typer.Argument(..., help="Store files to merge (opened read-only, never changed)."),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Merged store: created, or an existing jury store merged into (never one of the inputs)."
    ),
) -> None:
    """Merge stores: executions, votes, the call log, gold orders, checked databases, timings
    and review decisions, each by its key.

    The same key in two stores must hold the same result (an execution's status and
    digests, a vote's reply), else nothing is merged and the error names both files and
    the key. The call log is append-only: every call is kept, a row identical in every
    column is kept once, so merging twice changes nothing and costs survive. Claims and
    the path -> sha256 cache are not merged. A run on the merged store reuses every vote:
    after `--shard` runs, run once more without --shard to write the verdict file.
    """
    from jury.cli.common import guard_outputs, make_console
    from jury.execution.merge import merge_stores
    from jury.results.render import to_rich_table

    guard_outputs([output], [Path(f"{s}{sfx}") for s in stores for sfx in ("", "-wal", "-shm", "-journal")])
    report = merge_stores(list(stores), output)
    console = make_console()
    tables = sorted(set(report.added) | set(report.present))
    rows = [{"table": t, "added": report.added[t], "present": report.present[t]} for t in tables]
    console.print(
        to_rich_table(rows, ["table", "added", "present"], ["table", "rows added", "already there"], title="store merge")
    )
    dropped = ", ".join(f"{t} {n}" for t, n in sorted(report.dropped.items()) if n)
    console.print(
        f"{'created' if report.created else 'merged into'} {output} from {len(stores)} stores"
        + (f"; not merged (machine-local): {dropped}" if dropped else ""),
        markup=False,
        highlight=False,
    )
