"""`jury verify`: check that verdict files are exactly as locked and their inputs unchanged.

The command is generated from jury.verify's options (jury.options.verify.VerifyOptions,
jury.options.command): no option declared by hand but the verdict files."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors
from jury.errors import VerdictError
from jury.options.command import argument, command
from jury.options.verify import VerifyOptions


def run(files: list[Path], o: VerifyOptions) -> None:
    """Verify hash-locked verdict files.

    For each file: recompute the content hash (sha256 of the canonical JSON of everything
    but content_sha256) and compare it with the lock, then re-hash every bound input file
    (gold, runs, databases, prompts, panel) that is present on disk; bound paths are
    relative to the verdict file's folder. Prints one line per file, "OK path (N inputs
    checked, M absent)" or "FAILED path: reason". An absent input is not a failure; a
    changed one is. The verdicts are recomputed from the votes under the file's rules. A
    file superseded by a newer one in its folder (after `jury reaudit`) is "OK path
    (valid, superseded by NEW)" when its lock holds: its bound inputs are not held against
    it; its own inputs are still hashed and those changed since are named. A newer file counts
    as its successor only if it holds, re-runs the same job (kind, gold and run files) and,
    with --trusted-key, is signed by one of those keys. A signature beside the file
    (<file>.sig, see --sign) must be valid; with --trusted-key it must be there and by one of
    those keys, honouring allowed_signers options (namespaces, valid-after, valid-before;
    cert-authority lines are refused) as ssh-keygen -Y verify does. Exits 1 if any file
    fails, 0 otherwise.
    """
    import jury.jobs.verify as job

    result = job.verify(files, o)
    typer.echo(result.render("table"), nl=False)
    if not result.ok:
        raise VerdictError(result.failure or "verification failed")


FILES = argument("files", "Verdict files (verdicts/*.json) to verify.", list[Path])
verify = handle_errors(command(VerifyOptions, run, arguments=[FILES]))
