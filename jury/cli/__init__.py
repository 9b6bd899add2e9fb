"""The `jury` command line: thin typer commands over the library."""

from __future__ import annotations

import gc
import sys
from importlib import import_module
from typing import Any

import typer

from jury.version import __version__

_HELP = (
    "Score text-to-SQL runs by execution, send the failures a comparator cannot settle "
    "to a blind jury of LLMs from other model families, audit the gold SQL, and report "
    "strict, gold-clean and adjudicated accuracy.\n\n"
    "Defaults for --gold, --db-root, --panel, --store and more can live in a jury.toml "
    "in the working directory; flags override it."
)

# Every command, in the order `jury --help` lists them: name -> (module under jury.cli, its
# attribute, whether it is a group). A command's module is imported only when the app holding
# it is built: `jury score` builds an app of `score` alone (see main), so no other command's
# module (nor what it imports) loads; `jury --help` and `app` hold them all.
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "import": ("imports", "app", True),
    "labels": ("labels", "app", True),
    "score": ("score", "score", False),
    "verify": ("verify", "verify", False),
    "adjudicate": ("adjudicate", "adjudicate", False),
    "audit-gold": ("audit", "audit_gold", False),
    "report": ("report", "report", False),
    "reaudit": ("reaudit", "reaudit", False),
    "calibrate": ("calibrate", "calibrate", False),
    "review": ("review", "app", True),
    "suites": ("suites", "suites", False),
    "check-gold": ("check_gold", "check_gold", False),
    "compare-panels": ("compare_panels", "compare_panels", False),
    "store": ("store", "app", True),
    "db": ("db", "app", True),
    "local-juror": ("local_juror", "app", True),
    "batch": ("batch", "app", True),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jury {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print jury's version and exit."),
) -> None:
    """jury: execution match, LLM-jury adjudication and gold audits for text-to-SQL."""


def build_app(names: list[str] | None = None) -> typer.Typer:
    """The `jury` app with the commands ``names`` (default: every command), in COMMANDS' order."""

    built = typer.Typer(
        name="jury",
        help=_HELP,
        no_args_is_help=True,
        rich_markup_mode=None,  # help is plain text: `jury[ray]` is not markup; paragraphs are reflowed
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    built.callback()(_root)
    for name, (module, attr, group) in COMMANDS.items():
        if names is not None and name not in names:
            continue
        target = getattr(import_module(f"jury.cli.{module}"), attr)
        if group:
            built.add_typer(target, name=name)
        else:
            built.command(name)(target)
    return built


def _invoked(argv: list[str]) -> list[str] | None:
    """The one command ``argv`` invokes (its first word, when it names a command: the root's
    only options are --help and --version, which take no value), else None (every command)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return [first] if first in COMMANDS and not any(a in ("--help", "--version") for a in argv[: argv.index(first)]) else None


def __getattr__(name: str) -> Any:
    if name == "app":  # the full app (tests, CliRunner), built on first use
        value = globals()["app"] = build_app()
        return value
    raise AttributeError(f"module 'jury.cli' has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Run the app, with click's own usage and range errors reworded as one line, exit 1.

    `jury` and `python -m jury` both come here. --help and --version print and exit 0; a
    bare `jury` or command group (`jury import`, `jury store`, ...) prints its help on stdout
    and exits 0, exactly as `--help` does (click >= 8.2 raises NoArgsIsHelpError without
    printing anything when it is not in standalone mode).
    """

    try:  # recent typer vendors click as typer._click; older typer uses click itself
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover
        # only one of the two exists per install; click itself may not be installed at all
        from click import exceptions as click_errors  # type: ignore[no-redef, import-not-found, unused-ignore]

    from jury.cli.common import fail

    args = sys.argv[1:] if argv is None else argv
    try:
        app = build_app(_invoked(args))
        if argv is None:  # the process's own command line: it ends with this call (issue 46)
            gc.freeze()  # what imports made lives to the end: no collection (nor the exit's) walks it again
        code = app(args=args, prog_name="jury", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:  # a bare group: its help, as --help prints it
        typer.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        code = 0
    except click_errors.ClickException as exc:  # usage errors, bad values, out-of-range flags
        message = exc.format_message()
        ctx = getattr(exc, "ctx", None)
        if isinstance(exc, click_errors.UsageError) and ctx is not None:
            message += f" (see '{ctx.command_path} --help')"
        code = fail(" ".join(message.split())).exit_code
    except typer.Abort:
        code = fail("aborted").exit_code
    except typer.Exit as exc:
        code = exc.exit_code
    sys.exit(code if isinstance(code, int) else 0)
