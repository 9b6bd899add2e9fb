"""`jury verify`: check that verdict files are exactly as locked and their inputs unchanged."""

from __future__ import annotations

from pathlib import Path

import typer

from jury.cli.common import handle_errors


@handle_errors
def verify(
    files: list[Path] = typer.Argument(..., help="Verdict files (verdicts/*.json) to verify."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the files that fail."),
    trusted_key: list[Path] = typer.Option(
        [],
        "--trusted-key",
        metavar="PUB",
        help="OpenSSH ed25519 public key or allowed_signers file (repeatable): every file must carry a valid <file>.sig by one of these keys.",
    ),
) -> None:
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
    from jury.errors import InputError
    from jury.verdicts.documents import VerdictError
    from jury.verdicts.verify import verify_file

    for path in files:
        if not path.exists():
            raise InputError(f"{path}: no such file")
        if not path.is_file():
            raise InputError(f"{path}: is a directory, expected a verdict file")
    from jury.results.render import safe
    from jury.verdicts.signing import check_file_signature, load_trusted_keys

    trusted = load_trusted_keys(trusted_key)
    failed: list[str] = []
    for path in files:
        report = verify_file(path, trusted=trusted or None)
        sig_ok, sig_note = check_file_signature(path, trusted) if report.lock_ok else (True, "")
        if report.ok and sig_ok:
            if not quiet:
                typer.echo(safe(f"OK {path} ({_what_was_checked(report)})" + (f"; {sig_note}" if sig_note else "")))
        else:
            failed.append(str(path))
            typer.echo(safe(f"FAILED {path}: {'; '.join(report.messages + ([] if sig_ok else [sig_note]))}"))
    if failed:
        raise VerdictError(f"{len(failed)} of {len(files)} verdict files failed verification: {', '.join(failed)}")


def _what_was_checked(report) -> str:
    """Say "5 inputs checked, 0 absent", or for a superseded file its successors (with their
    signatures) and which of its own bound inputs changed since."""
    counts = f"{len(report.checked)} inputs checked, {len(report.absent)} absent"
    if not report.superseded_by:
        return counts
    successors = ", ".join(f"{n} ({note})" for n, note in zip(report.superseded_by, report.successor_notes))
    n = len(report.changed_since)
    changed = (
        f"{n} bound input{'s' if n != 1 else ''} changed since ({', '.join(report.changed_since)})"
        if n
        else "no bound input changed since"
    )
    return f"valid, superseded by {successors}; {changed}, {report.unchanged} unchanged, {len(report.absent)} absent"
