"""What every command shares: one-line errors, the config, the store, progress bars."""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

import typer

from jury.errors import JuryError, did_you_mean

if TYPE_CHECKING:
    from rich.console import Console

    from jury.jobs.result import Result
    from jury.progress import Progress

P = ParamSpec("P")
R = TypeVar("R")

RUNS_HELP = (
    "Run JSONL files (one line per model and question), or BIRD prediction files as published "
    "(predict_dev.json, one SQL per line): each is one model, named after the file, or NAME when given "
    "as NAME=PATH (BIRD names every system's file predict_dev.json; an existing file is always a path)."
)


def fail(message: str, code: int = 1) -> typer.Exit:
    from jury.results.render import safe

    typer.echo(f"Error: {safe(message)}", err=True)
    return typer.Exit(code)


def make_console(stderr: bool = False) -> Console:
    """The console every command prints through: on a terminal it fits the terminal's width;
    without one (a pipe, a log file) lines are not wrapped. Strings printed are made safe
    (jury.results.render.safe: control characters escaped); tables from to_rich_table already are."""
    from rich.console import Console

    from jury.results.render import UNWRAPPED_WIDTH, safe

    class SafeConsole(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:  # Console.print's own *objects: Any
            super().print(*(safe(o, newlines=True) if isinstance(o, str) else o for o in objects), **kwargs)

    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return SafeConsole(stderr=stderr)
    return SafeConsole(stderr=stderr, width=UNWRAPPED_WIDTH, soft_wrap=True)


def table_width(output: Path | None) -> int | None:
    """The width to render a table for: the terminal's when printing to one, else None (unwrapped)."""
    if output is not None:
        return None
    from jury.results.render import UNWRAPPED_WIDTH

    console = make_console()
    return None if console.width >= UNWRAPPED_WIDTH else console.width


def show(result: Result) -> None:
    """Print a job's result (a jury.jobs Result) as its table, fitted to the terminal."""
    typer.echo(result.render("table", width=table_width(None)), nl=False)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a JuryError into one line on stderr and its exit code (1 unless said); never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except JuryError as exc:
            if exc.partial is not None:  # what the job did before the error (a Result)
                show(cast("Result", exc.partial))  # only jobs set it, always to their Result
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("Interrupted: everything finished so far is kept in the store.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(1) from None

    return wrapper


def check_format(fmt: str) -> str:
    from jury.results.render import FORMATS

    if fmt not in FORMATS:
        raise JuryError(f"unknown format {fmt!r}{did_you_mean(fmt, FORMATS) or ';'} choose one of: {', '.join(FORMATS)}")
    return fmt


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector paused, then restore it as it was.

    Reference counting still frees every object that is in no cycle; only the collector's passes
    stop. For a one-shot command whose objects mostly live until it ends: at a benchmark's size
    (36 models x 759 questions) `jury report -f html`'s full passes over its ~600,000 live objects
    took ~2 s of its ~12 s CPU and freed little (peak RSS 499 MB with them, 528 MB without; issue 46).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # what the block allocated and kept joins the oldest generation (freeze, then unfreeze):
        # else the first pass after gc.enable() is a young one over all of it (~0.5 s there).
        # Not when something else froze objects: unfreeze would thaw them too.
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


#: What makes rich's Console.is_terminal other than the stream's isatty() (rich.console)
TERMINAL_VARIABLES = ("TTY_COMPATIBLE", "FORCE_COLOR")


def not_a_terminal(stream: Any) -> bool:
    """True when rich would surely find ``stream`` no terminal, known without importing rich (a
    pipe or a file, as in a script or a benchmark, so no progress bar): the stream says it is no
    tty and no variable rich reads instead is set. False when unsure: then rich decides."""
    if "rich" in sys.modules or any(name in os.environ for name in TERMINAL_VARIABLES):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is None or not isatty()
    except ValueError:  # a closed stream (rich: no terminal)
        return True


@contextmanager
def progress_bar(description: str, enabled: bool = True) -> Iterator[Progress]:
    """Yield a callback (done, total) that drives a rich progress bar on stderr."""
    if not enabled or not_a_terminal(sys.stderr):
        yield lambda done, total: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def emit(text: str, output: Path | None = None, what: str | None = None) -> None:
    """Print ``text``, or write it to ``output`` and say so on stderr ("wrote [what to] output")."""
    if output is None:
        typer.echo(text, nl=False)
    else:
        from jury.inputs.writer import write_output
        from jury.verdicts.lock import is_locked_file

        if is_locked_file(output):
            raise JuryError(f"{output}: is a locked verdict file; it is never overwritten (choose another -o)")
        write_output(output, text)
        from jury.results.render import safe

        typer.echo(f"wrote {safe(what) + ' to ' if what else ''}{safe(output)}", err=True)
