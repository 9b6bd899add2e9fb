"""`jury store merge`: the stores of several machines (or `--shard` runs) into one.

The command is generated from merge_stores' options (jury.options.store.StoreMergeOptions,
jury.options.command): no option declared by hand but the input stores and the merged store
(the library's arguments)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors, show
from jury.options.command import argument, command, output_option
from jury.options.store import StoreMergeOptions

app = typer.Typer(help="Work with store files (.jury/store.db).", no_args_is_help=True, rich_markup_mode=None)


def run(stores: list[Path], output: Path, o: StoreMergeOptions) -> None:
    """Merge stores: executions, votes, the call log, gold orders, checked databases, timings
    and review decisions, each by its key.

    A store from another machine is untrusted input: every row must have the types jury
    writes, the live run's size caps apply, and every vote must be what jury's parser makes
    of its own call log's stored reply, else nothing is merged and one line names the file,
    table, row and value. Executions and the other results computed from databases are
    not merged unless --trust-executions: a run on the merged store computes them here.
    Each input's sha256 (and signer, with --trusted-key) is recorded; verdict files written
    from the merged store list them in their provenance.

    The same key in two stores must hold the same result (a vote's reply, with
    --trust-executions an execution's status and digests), else nothing is merged and the
    error names both files and the key. The call log is append-only: every call is kept, a
    row identical in every column is kept once, so merging twice changes nothing and costs
    survive. Claims and the path -> sha256 cache are not merged. A run on the merged store
    reuses every vote: after `--shard` runs, run once more without --shard to write the
    verdict file.
    """
    from jury.jobs.store import merge_stores

    show(merge_stores(stores, output, o))


STORES = argument("stores", "Store files to merge (opened read-only, never changed).", list[Path])
OUTPUT = output_option("Merged store: created, or an existing jury store merged into (never one of the inputs).")
app.command("merge")(handle_errors(command(StoreMergeOptions, run, arguments=[STORES, OUTPUT])))
