"""`jury local-juror start|stop|status`: real small models on a loopback port (jury/jobs/local_juror.py).

The commands are generated from their options (jury.options.local_juror, jury.options.command)."""

from __future__ import annotations

import typer

from jury.cli.common import handle_errors
from jury.options.command import command
from jury.options.local_juror import LocalJurorOptions, LocalJurorStartOptions

app = typer.Typer(
    help="A real local juror (llama.cpp serving Gemma 3 270M and SmolLM2 135M on 127.0.0.1): the keyless way to try "
    "adjudicate, audit-gold and review with `--panel local-demo`. Real models, not good judges. Needs the [local] extra.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def start(o: LocalJurorStartOptions) -> None:
    """Start the server in the background and wait until it answers (or say it already does)."""
    from jury.jobs.local_juror import start_local_juror

    typer.echo(start_local_juror(o).render(), nl=False)


def status(o: LocalJurorOptions) -> None:
    """Whether the local juror runs and answers; exit 1 when it does not."""
    from jury.jobs.local_juror import local_juror_status

    result = local_juror_status(o)
    typer.echo(result.render(), nl=False)
    if not result.ok:
        raise typer.Exit(1)


def stop(o: LocalJurorOptions) -> None:
    """Stop the server started from this state folder."""
    from jury.jobs.local_juror import stop_local_juror

    typer.echo(stop_local_juror(o).render(), nl=False)


app.command("start")(handle_errors(command(LocalJurorStartOptions, start)))
app.command("status")(handle_errors(command(LocalJurorOptions, status)))
app.command("stop")(handle_errors(command(LocalJurorOptions, stop)))
