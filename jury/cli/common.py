"""What every command shares: one-line errors, the config, the store, progress bars."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import typer

from jury.errors import JuryError

FORMAT_HELP = "Output format: table, csv, json or md."


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code)


def handle_errors(fn: Callable) -> Callable:
    """Turn a JuryError into one line on stderr and its exit code (1 unless said); never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JuryError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("Interrupted: everything finished so far is kept in the store.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(1) from None

    return wrapper


def config():
    from jury.config import load_config

    return load_config()


def open_store(cfg, flag: Path | None):
    from jury.store import Store

    return Store(cfg.store_path(flag))


def check_format(fmt: str) -> str:
    from jury.render import FORMATS

    if fmt not in FORMATS:
        raise JuryError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return fmt


@contextmanager
def progress_bar(description: str, enabled: bool = True):
    """Yield a callback (done, total) that drives a rich progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield lambda done, total: None
        return
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=console, transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def emit(text: str, output: Path | None = None) -> None:
    if output is None:
        typer.echo(text, nl=False)
    else:
        from jury.io import write_atomic
        from jury.verdicts import is_locked_file

        if is_locked_file(output):
            raise JuryError(f"{output}: is a locked verdict file; it is never overwritten (choose another -o)")
        write_atomic(output, text)
        typer.echo(f"wrote {output}", err=True)


def gold_path(cfg, flag: Path | None) -> Path:
    from jury.errors import InputError

    path = cfg.path_of("gold", flag)
    if path is None:
        raise InputError("no gold file: pass --gold or set gold in jury.toml")
    return path


def settings(cfg, *, comparator=None, near_miss=None, timeout=None, row_cap=None, workers=None, options=None):
    """Evaluation settings: flags, else jury.toml, else the defaults."""
    from jury.evaluate import Settings

    extra = {"options": options} if options is not None else {}
    return Settings(
        comparator=cfg.get("comparator", comparator, "strict"),
        near_miss=cfg.get("near_miss", near_miss, 0.5),
        timeout_s=cfg.get("timeout", timeout, 30.0),
        row_cap=cfg.get("row_cap", row_cap, 100_000),
        workers=Settings().workers if cfg.get("workers", workers) is None else cfg.get("workers", workers),
        **extra,
    )
