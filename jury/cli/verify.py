"""`jury verify`: check that verdict files are exactly as locked and their inputs unchanged."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors


@handle_errors
def verify(
    files: list[Path] = typer.Argument(..., help="Verdict files (verdicts/*.json) to verify."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the files that fail."),
) -> None:
    """Verify hash-locked verdict files.

    For each file: recompute the content hash (sha256 of the canonical JSON of everything
    but content_sha256) and compare it with the lock, then re-hash every bound input file
    (gold, runs, databases, prompts, panel) that is present on disk; bound paths are
    relative to the verdict file's folder. Prints one line per file, "OK path (N inputs
    checked, M absent)" or "FAILED path: reason". An absent input is not a failure; a
    changed one is. Exits 1 if any file fails, 0 otherwise.
    """
    from jury.errors import InputError
    from jury.verdicts import VerdictError, verify_file

    for path in files:
        if not path.exists():
            raise InputError(f"{path}: no such file")
        if not path.is_file():
            raise InputError(f"{path}: is a directory, expected a verdict file")
    failed: list[str] = []
    for path in files:
        report = verify_file(path)
        if report.ok:
            if not quiet:
                typer.echo(f"OK {path} ({len(report.checked)} inputs checked, {len(report.absent)} absent)")
        else:
            failed.append(str(path))
            typer.echo(f"FAILED {path}: {'; '.join(report.messages)}")
    if failed:
        raise VerdictError(f"{len(failed)} of {len(files)} verdict files failed verification: {', '.join(failed)}")
