"""`jury reaudit`: re-run locked verdict files whose panel, prompts or inputs changed.

The command is generated from jury.reaudit's options (jury.options.reaudit.ReauditOptions,
jury.options.command): no option declared by hand but the verdict files."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors, progress_bar, show
from jury.options.command import argument, command
from jury.options.reaudit import ReauditOptions


def run(files: list[Path] | None, o: ReauditOptions) -> None:
    """Compare each locked file's bindings (panel, prompt templates, gold, runs, databases)
    with the files as they are now; re-run the stale ones.

    Votes of unchanged jurors come from the store; only changed jurors are called. Each
    re-run writes a new locked file naming its predecessor (the old file is never
    touched) and prints the difference: questions newly flagged or cleared, verdicts
    that flipped, and how far the old and new panels agree.
    """
    from jury.jobs.reaudit import reaudit as job

    result = job(files, o, progress=progress_bar)
    show(result)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


FILES_HELP = "Locked verdict files (default: the current ones in the verdicts folder)."
FILES = argument("files", FILES_HELP, list[Path], default=None)
reaudit = handle_errors(command(ReauditOptions, run, arguments=[FILES]))
