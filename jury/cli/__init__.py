"""The `jury` command line: thin typer commands over the library."""

from __future__ import annotations

import typer

from jury.version import __version__

app = typer.Typer(
    name="jury",
    help=(
        "Score text-to-SQL runs by execution, send the failures a comparator cannot settle "
        "to a blind jury of LLMs from other model families, audit the gold SQL, and report "
        "strict, gold-clean and adjudicated accuracy.\n\n"
        "Defaults for --gold, --db-root, --panel, --store and more can live in a jury.toml "
        "in the working directory; flags override it."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,  # help is plain text: `jury[ray]` is not markup; paragraphs are reflowed
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jury {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print jury's version and exit."),
) -> None:
    """jury: execution match, LLM-jury adjudication and gold audits for text-to-SQL."""


from jury.cli import adjudicate as _adjudicate  # noqa: E402
from jury.cli import audit as _audit  # noqa: E402
from jury.cli import calibrate as _calibrate  # noqa: E402
from jury.cli import check_gold as _check_gold  # noqa: E402
from jury.cli import compare_panels as _compare_panels  # noqa: E402
from jury.cli import db as _db  # noqa: E402
from jury.cli import imports as _imports  # noqa: E402
from jury.cli import labels as _labels  # noqa: E402
from jury.cli import local_juror as _local_juror  # noqa: E402
from jury.cli import reaudit as _reaudit  # noqa: E402
from jury.cli import report as _report  # noqa: E402
from jury.cli import review as _review  # noqa: E402
from jury.cli import score as _score  # noqa: E402
from jury.cli import store as _store  # noqa: E402
from jury.cli import suites as _suites  # noqa: E402
from jury.cli import verify as _verify  # noqa: E402

app.add_typer(_imports.app, name="import")
app.add_typer(_labels.app, name="labels")
app.command("score")(_score.score)
app.command("verify")(_verify.verify)
app.command("adjudicate")(_adjudicate.adjudicate)
app.command("audit-gold")(_audit.audit_gold)
app.command("report")(_report.report)
app.command("reaudit")(_reaudit.reaudit)
app.command("calibrate")(_calibrate.calibrate)
app.add_typer(_review.app, name="review")
app.command("suites")(_suites.suites)
app.command("check-gold")(_check_gold.check_gold)
app.command("compare-panels")(_compare_panels.compare_panels)
app.add_typer(_store.app, name="store")
app.add_typer(_db.app, name="db")
app.add_typer(_local_juror.app, name="local-juror")
from jury.cli import batch as _batch  # noqa: E402

app.add_typer(_batch.app, name="batch")


def main(argv: list[str] | None = None) -> None:
    """Run the app, with click's own usage and range errors reworded as one line, exit 1.

    `jury` and `python -m jury` both come here. --help and --version print and exit 0; a
    bare `jury` or command group (`jury import`, `jury store`, ...) prints its help on stdout
    and exits 0, exactly as `--help` does (click >= 8.2 raises NoArgsIsHelpError without
    printing anything when it is not in standalone mode).
    """
    import sys

    try:  # recent typer vendors click as typer._click; older typer uses click itself
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover
        # only one of the two exists per install; click itself may not be installed at all
        from click import exceptions as click_errors  # type: ignore[no-redef, import-not-found, unused-ignore]

    from jury.cli.common import fail

    try:
        code = app(args=argv, prog_name="jury", standalone_mode=False)
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
