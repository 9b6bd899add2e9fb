"""The docs' CLI reference (docs/cli.md): every command's usage line and options, from the commands.

docs/cli.md holds the output between cog markers; regenerate it with

    python -m cogapp -r docs/cli.md

and tests/test_docs.py fails when it is stale. The help is rendered in a child process with
TYPER_USE_RICH=0 (plain click layout: no boxes, colours or trailing spaces) at a fixed width,
so the block does not depend on the terminal it was generated in.
"""

from __future__ import annotations

import os
import subprocess
import sys

WIDTH = 100

# Runs in the child: walk the command tree in `jury --help` order, print each command's usage
# and its Arguments/Options sections (not the description: the other docs pages give that).
_RENDER = r"""
import sys
import typer
from jury.cli import app

WIDTH = int(sys.argv[1])


def walk(cmd, name, parent):
    ctx = cmd.context_class(cmd, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH)
    formatter = ctx.make_formatter()
    cmd.format_usage(ctx, formatter)
    cmd.format_options(ctx, formatter)  # a group's options include its Commands section
    print("\x00" + ctx.command_path + "\x00" + formatter.getvalue().rstrip())
    for sub in getattr(cmd, "list_commands", lambda ctx: [])(ctx):
        walk(cmd.get_command(ctx, sub), sub, ctx)


walk(typer.main.get_command(app), "jury", None)
"""


def command_help() -> dict[str, str]:
    """{"jury", "jury score", ...: usage and options text}, in `jury --help` order."""
    env = {**os.environ, "TYPER_USE_RICH": "0", "NO_COLOR": "1", "COLUMNS": str(WIDTH)}
    env.pop("FORCE_COLOR", None)
    out = subprocess.run([sys.executable, "-c", _RENDER, str(WIDTH)], env=env, capture_output=True, text=True, check=True).stdout
    parts = out.split("\x00")[1:]
    return {parts[i]: parts[i + 1].strip("\n") for i in range(0, len(parts), 2)}


def markdown() -> str:
    """The generated block: one fenced text block per command."""
    blocks = [f"```text\n{text}\n```" for text in command_help().values()]
    return "\n\n".join(blocks) + "\n"
