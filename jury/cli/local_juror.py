"""`jury local-juror start|stop|status`: real small models on a loopback port (jury/pipeline/local_juror.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors

app = typer.Typer(
    help="A real local juror (llama.cpp serving Gemma 3 270M and SmolLM2 135M on 127.0.0.1): the keyless way to try "
    "adjudicate, audit-gold and review with `--panel local-demo`. Real models, not good judges. Needs the [local] extra.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

STATE_HELP = "Folder of the server's state file, models and log (default: local-juror/ beside the store)."


@app.command("start")
@handle_errors
def start(
    port: int = typer.Option(
        8765, help="Loopback port of the first model; the next model gets the next port (local-demo expects 8765, 8766)."
    ),
    model: list[str] = typer.Option(
        [], "--model", help="Model alias to serve (repeatable; default: gemma-3-270m and smollm2-135m)."
    ),
    threads: int | None = typer.Option(None, help="CPU threads per model (default: every core)."),
    state_dir: Path | None = typer.Option(None, "--state-dir", help=STATE_HELP),
) -> None:
    """Start the server in the background and wait until it answers (or say it already does)."""
    from jury.api.local_juror import start_local_juror

    typer.echo(start_local_juror(port=port, models=model, threads=threads, state_dir=state_dir).render(), nl=False)


@app.command("status")
@handle_errors
def status(state_dir: Path | None = typer.Option(None, "--state-dir", help=STATE_HELP)) -> None:
    """Whether the local juror runs and answers; exit 1 when it does not."""
    from jury.api.local_juror import local_juror_status

    result = local_juror_status(state_dir=state_dir)
    typer.echo(result.render(), nl=False)
    if not result.ok:
        raise typer.Exit(1)


@app.command("stop")
@handle_errors
def stop(state_dir: Path | None = typer.Option(None, "--state-dir", help=STATE_HELP)) -> None:
    """Stop the server started from this state folder."""
    from jury.api.local_juror import stop_local_juror

    typer.echo(stop_local_juror(state_dir=state_dir).render(), nl=False)
