"""`jury batch status` and `jury batch collect`: the ballots sent through providers' batch APIs (--batch).

Both commands are generated from their options (jury.options.batch.BatchOptions, jury.options.command)."""

from __future__ import annotations

import typer

from jury.cli.common import handle_errors, show
from jury.options.batch import BatchOptions
from jury.options.command import command

app = typer.Typer(help="Ballots sent through providers' batch APIs (--batch).", no_args_is_help=True, rich_markup_mode=None)


def status(o: BatchOptions) -> None:
    """List the store's batches: provider, batch id, juror, ballots by state (pending at the
    provider, collected and not yet a vote, voted, failed), age and state. Calls nothing."""
    from jury.jobs.batches import batch_status

    show(batch_status(o))


def collect(o: BatchOptions) -> None:
    """Poll every open batch and store the replies of those that ended (they become votes when
    the command that sent them runs again). Needs each juror's key variable; sends no ballot."""
    from jury.jobs.batches import collect_batches

    result = collect_batches(o)
    for note in result.notes:
        typer.echo(note, err=True)
    show(result)


app.command("status")(handle_errors(command(BatchOptions, status)))
app.command("collect")(handle_errors(command(BatchOptions, collect)))
