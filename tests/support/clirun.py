"""Run the `jury` command line in this process, the way `python -m jury ARGS` runs it.

`run_jury_inprocess` calls `jury.cli.main(args)` (the function both `jury` and `python -m jury`
run) inside typer's CliRunner isolation: its own stdin, stdout, stderr and environment, in
`cwd`. It returns a subprocess.CompletedProcess, so a test written against a child process
reads the same fields. A child process pays for a fresh interpreter and a fresh import of
jury (and of litellm when a command needs it) on every call; here they are imported once
for the whole suite.

An exception that escapes main() is re-raised: a child process would print a traceback and
the test fails either way. Tests of the process itself (signals, kill -9, two processes on
one store, the console script, import time) keep a real child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from typer.testing import CliRunner


def run_jury_inprocess(
    args: Sequence[str], cwd: Path, *, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """`python -m jury *args` in cwd, run in this process; stdout and stderr kept apart."""
    from jury.cli import main

    argv = [str(a) for a in args]
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with CliRunner().isolation(input=stdin, env={"COLUMNS": "200", **(env or {})}) as (out, err, _):
            try:
                main(argv)
                code: int = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            stdout = out.getvalue().decode("utf-8", "replace")
            stderr = err.getvalue().decode("utf-8", "replace")
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess([sys.executable, "-m", "jury", *argv], code, stdout, stderr)
