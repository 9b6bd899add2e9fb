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
EXECUTOR_HELP = "Where executions run: local (a process pool, default) or ray (Ray tasks; pip install 'jury-sql[ray]')."
RAY_ADDRESS_HELP = "--executor ray: the Ray cluster to use (default: RAY_ADDRESS, else a local Ray runtime of --workers CPUs)."
POSITIONS_HELP = (
    "The gold file a prediction file given as a run indexes by position (BIRD's predict_dev.json, a "
    "one-SQL-per-line .txt or .sql; BIRD's full dev.json for the published ones), when it is not the "
    "gold file. Default: jury.toml's positions_from, else the gold file."
)
MISSING_HELP = (
    "What a gold question without a usable answer (absent, not a string, empty; any file kind) counts "
    "as: exclude (left out of that model's denominators, the default) or fail (a wrong answer, BIRD's "
    "rule). Default: jury.toml's missing. Every output shows each model's coverage; a warning names "
    "the models below it and how many the rule left out or counted wrong, by cause."
)
GOLD_ERRORS_HELP = (
    "What a question whose gold query fails (an error or a timeout) counts as: exclude (left out of "
    "every denominator, the default) or fail (a wrong answer for every model, BIRD's rule: its scripts "
    "score such a row 0). Default: jury.toml's gold_errors. Every output names the failing gold queries."
)
RUNS_HELP = (
    "Run JSONL files (one line per model and question), or BIRD prediction files as published "
    "(predict_dev.json, one SQL per line): each is one model, named after the file, or NAME when given "
    "as NAME=PATH (BIRD names every system's file predict_dev.json; an existing file is always a path)."
)
DB_HELP = (
    "Only the questions of this db_id (repeatable): score the databases you have of a gold naming others "
    "(BIRD's full dev.json with superhero alone: --db superhero)."
)
DB_URL_HELP = (
    "Run on PostgreSQL, MySQL/MariaDB or DuckDB instead of SQLite files: a URL with {db_id} for one "
    "database per db_id ('postgresql://user@host/{db_id}'), or without it for one database holding every "
    "db_id's tables (BIRD's own PostgreSQL and MySQL releases: 'postgresql://user@host/bird'); password from "
    "PGPASSWORD, MYSQL_PWD or ?password_env=NAME. Default: jury.toml's [databases]."
)
PRIVILEGED_HELP = (
    "Execute on an engine through a login that can do more than read the benchmark's tables (a superuser, "
    "FILE, SUPER, ...), which is refused by default; recorded in the outputs' provenance. "
    "Default: jury.toml's [engines] allow_privileged_login."
)


COMPARATOR_HELP = (
    "Comparator deciding a match: strict (default), bird (BIRD's rule: on an engine, the driver's values), "
    "bird_normalized (the set rule on values as SQLite returns them), relaxed, subset or spider2."
)
# the options several commands declare alike: name -> (default, flags, help); `option(name)` declares one
_SHARED: dict[str, tuple] = {
    "gold": (None, (), "Gold file (BIRD dev.json). Default: jury.toml's gold."),
    "db_root": (None, (), "Folder of <db_id>/<db_id>.sqlite. Default: jury.toml's db_root."),
    "db": ([], ("--db",), DB_HELP),
    "db_url": (None, ("--db-url",), DB_URL_HELP),
    "allow_privileged_login": (False, ("--allow-privileged-login",), PRIVILEGED_HELP),
    "comparator": (None, (), COMPARATOR_HELP),
    "near_miss": (None, (), "Overlap at or above which a mismatch is a near miss (default 0.5)."),
    "timeout": (None, (), "Per-query timeout in seconds (default 30, as BIRD)."),
    "row_cap": (None, (), "Rows kept per result (default 100000); beyond it only count and hash."),
    "workers": (None, (), "Parallel execution processes (default: CPU count)."),
    "executor": (None, ("--executor",), EXECUTOR_HELP),
    "ray_address": (None, ("--ray-address",), RAY_ADDRESS_HELP),
    "casefold": (False, (), "Compare strings case-insensitively (off by default)."),
    "float_digits": (None, (), "Round every number (ints too) to N significant digits before comparing (off by default)."),
    "missing": (None, ("--missing",), MISSING_HELP),
    "gold_errors": (None, ("--gold-errors",), GOLD_ERRORS_HELP),
    "positions_from": (None, ("--positions-from",), POSITIONS_HELP),
    "store": (None, (), "Store file (default .jury/store.db beside jury.toml or in the cwd)."),
    "allow_superseded": (
        False,
        ("--allow-superseded",),
        "Use --audit/--verdicts files that a newer file in their folder supersedes (refused by default).",
    ),
    "fmt": ("table", ("--format", "-f"), FORMAT_HELP),
    "output": (None, ("-o", "--output"), "Write the report to this file instead of stdout."),
}


def option(name: str, help: str | None = None):
    """The declaration of an option several commands share (``help``: this command's own text)."""
    default, flags, shared_help = _SHARED[name]
    return typer.Option(default, *flags, help=help or shared_help, writable=name == "output")


def fail(message: str, code: int = 1) -> typer.Exit:
    from jury.results.render import safe

    typer.echo(f"Error: {safe(message)}", err=True)
    return typer.Exit(code)


def make_console(stderr: bool = False):
    """The console every command prints through: on a terminal it fits the terminal's width;
    without one (a pipe, a log file) lines are not wrapped. Strings printed are made safe
    (jury.results.render.safe: control characters escaped); tables from to_rich_table already are."""
    from rich.console import Console

    from jury.results.render import UNWRAPPED_WIDTH, safe

    class SafeConsole(Console):
        def print(self, *objects, **kwargs):
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


def show(result) -> None:
    """Print a job's result (a jury.api Result) as its table, fitted to the terminal."""
    typer.echo(result.render("table", width=table_width(None)), nl=False)


def job_options(ctx: typer.Context, *shown: str) -> dict:
    """The options of the command being run (``ctx``), as typer parsed them: named as its API
    job's arguments (tests/test_api_names.py holds every command to it), less the ``shown`` ones
    (how the command renders its result, not what the job does)."""
    return {name: value for name, value in ctx.params.items() if name not in shown}


def run_job(job: Callable, ctx: typer.Context):
    """Call an API job with every option of the command being run (``ctx``) and the progress
    bar; print its result and return it."""
    result = job(**job_options(ctx), progress=progress_bar)
    show(result)
    return result


# ------------------------------------------------------------------ options of the juror commands

SIGN_HELP = (
    "Ed25519 private key (OpenSSH or PEM, e.g. ~/.ssh/id_ed25519): after the verdict file is locked, "
    "write a detached SSH signature beside it (<file>.sig; check with jury verify --trusted-key)."
)
BATCH_HELP = (
    "Send the ballots of OpenAI, Anthropic and Gemini jurors through their batch APIs (about half the price; "
    "results within 24 h): exits 3 while ballots are pending, rerun to collect (see jury batch status)."
)
MAX_COST_HELP = "Stop cleanly before total spend of this run would pass USD; stored votes are kept."


def juror_option(name: str, detail: str | None = None):
    """An option the commands that call jurors share: "max_cost" (``detail``: its help), "store",
    "sign", "batch" or "shard" (``detail``: the file a shard's run does not write)."""
    if name == "max_cost":
        return typer.Option(None, min=0, help=detail or MAX_COST_HELP)
    if name == "store":
        return typer.Option(None, help="Store file (default .jury/store.db).")
    if name == "sign":
        return typer.Option(None, "--sign", metavar="KEYFILE", help=SIGN_HELP)
    if name == "batch":
        return typer.Option(False, "--batch", help=BATCH_HELP)
    assert name == "shard", name
    return typer.Option(
        None,
        help="I/N: ask only the ballots whose request hash falls in shard I of N, into this store, and write no "
        f"{detail or 'verdict file'} (exit 0); merge the shards' stores with `jury store merge`, then run without --shard.",
    )


def handle_errors(fn: Callable) -> Callable:
    """Turn a JuryError into one line on stderr and its exit code (1 unless said); never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JuryError as exc:
            if exc.partial is not None:  # what the job did before the error (a Result)
                show(exc.partial)
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
        from jury.errors import did_you_mean

        raise JuryError(f"unknown format {fmt!r}{did_you_mean(fmt, FORMATS) or ';'} choose one of: {', '.join(FORMATS)}")
    return fmt


@contextmanager
def progress_bar(description: str, enabled: bool = True):
    """Yield a callback (done, total) that drives a rich progress bar on stderr."""
    from rich.console import Console

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
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
