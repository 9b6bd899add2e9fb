"""``jury.verify``: check that verdict files are exactly as locked and their inputs unchanged.

Each file's lock (content hash), its rules and every bound input present on disk are checked,
and its signature (``<file>.sig``): with ``trusted_key`` it must be there and by one of those
keys. The result says per file "OK ..." or "FAILED ...: why"; ``ok`` is False (``exit_code``
1) when any file fails, which is when ``jury verify`` exits 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from jury.errors import InputError
from jury.jobs.result import Result
from jury.options import job_options
from jury.options.verify import VerifyOptions
from jury.pipeline.project import PathLike, Project, as_paths

if TYPE_CHECKING:
    from jury.verdicts.allowed_signers import TrustedKey


class FileCheck(BaseModel):
    """One verdict (or review) file's verification."""

    path: Path
    ok: bool
    lock_ok: bool
    checked: list[str]  # bound inputs re-hashed
    absent: list[str]  # bound inputs not on disk (not a failure)
    changed_since: list[str]  # superseded: bound inputs changed since (not held against it)
    superseded_by: list[Path]
    signature: str  # what the signature check said ("" when there is nothing to say)
    problems: list[str]  # why it failed (empty when ok)
    line: str  # the line `jury verify` prints for it


class Verification(Result):
    """What ``jury.verify`` found: one ``FileCheck`` per file, in the order given."""

    files: list[FileCheck]
    quiet: bool = False  # the table shows only the files that fail

    @property
    def ok(self) -> bool:
        """True when every file checked holds (its lock, and its signature when one was asked for)."""
        return all(f.ok for f in self.files)

    @property
    def exit_code(self) -> int:
        """``jury verify``'s exit code: 0 when every file holds, else 1."""
        return 0 if self.ok else 1

    @property
    def failed(self) -> list[Path]:
        """The files that failed a check."""
        return [f.path for f in self.files if not f.ok]

    @property
    def failure(self) -> str | None:
        """The one-line error ``jury verify`` ends with when a file fails (None when all hold)."""
        if self.ok:
            return None
        return f"{len(self.failed)} of {len(self.files)} verdict files failed verification: {', '.join(map(str, self.failed))}"

    def _render(self, fmt: str, *, width: int | None, wide: bool) -> str:
        shown = [f for f in self.files if not (self.quiet and f.ok)]
        if fmt == "table":
            return "".join(f.line + "\n" for f in shown)
        if fmt == "md":
            return "".join(f"- {f.line}\n" for f in shown)
        rows = [
            {
                "path": str(f.path),
                "ok": f.ok,
                "lock_ok": f.lock_ok,
                "inputs_checked": len(f.checked),
                "inputs_absent": len(f.absent),
                "superseded_by": ", ".join(map(str, f.superseded_by)),
                "signature": f.signature,
                "problems": "; ".join(f.problems),
            }
            for f in self.files
        ]
        if fmt == "csv":
            from jury.results.render import to_csv

            return to_csv(rows, list(rows[0]) if rows else ["path", "ok"])
        from jury.results.render import to_json

        return to_json({"ok": self.ok, "files": [f.model_dump(mode="json") for f in self.files]})


def verify(
    paths: PathLike | Sequence[PathLike] | None = None,
    options: VerifyOptions | None = None,
    *,
    project: Project | None = None,
    **overrides: Any,
) -> Verification:
    """Verify hash-locked verdict files.

    For each file: recompute the content hash and compare it with the lock, check the verdicts
    against the votes under the file's rules, re-hash every bound input present on disk (an absent
    input is not a failure, a changed one is) and check ``<file>.sig`` when present. A file
    superseded by a newer run of the same job holds when its lock does.

    Args:
        paths: one or several verdict files (None: every ``*.json`` in the project's verdicts
            folder).
        options: a ``VerifyOptions`` (jury.options.verify: every option of ``jury verify`` but the
            verdict files, each documented there: ``trusted_key`` (OpenSSH ed25519 public keys or
            allowed_signers files: every file must then carry a valid signature by one of them),
            ``quiet`` (the table shows only the files that fail)), or none.
        project: the folder's jury.toml defaults (default: the working directory's).
        overrides: VerifyOptions' fields as keyword arguments (``trusted_key=``, ``quiet=``), over
            ``options``'.

    Returns:
        A Verification: one FileCheck per file; ``ok``, ``failed`` and ``exit_code``.

    Raises:
        InputError: a missing file or a directory, or a bad option, before anything is checked.
    """
    from jury.verdicts.signing import load_trusted_keys

    o = job_options(VerifyOptions, "verify", options, overrides)
    files = as_paths(paths) if paths is not None else _project_files(project or Project.load())
    for path in files:
        if not path.exists():
            raise InputError(f"{path}: no such file")
        if not path.is_file():
            raise InputError(f"{path}: is a directory, expected a verdict file")
    trusted = load_trusted_keys(o.trusted_key)
    return Verification(files=[_checked(path, trusted) for path in files], quiet=o.quiet, inputs=list(files))


def _checked(path: Path, trusted: dict[str, list[TrustedKey]]) -> FileCheck:
    """One file verified: its lock, verdicts and bound inputs (jury.verdicts.verify), then its
    signature when the lock holds."""
    from jury.results.render import safe
    from jury.verdicts.signing import check_file_signature
    from jury.verdicts.verify import verify_file

    report = verify_file(path, trusted=trusted or None)
    sig_ok, sig_note = check_file_signature(path, trusted) if report.lock_ok else (True, "")
    ok = report.ok and sig_ok
    problems = [] if ok else report.messages + ([] if sig_ok else [sig_note])
    if ok:
        line = f"OK {path} ({_what_was_checked(report)})" + (f"; {sig_note}" if sig_note else "")
    else:
        line = f"FAILED {path}: {'; '.join(problems)}"
    return FileCheck(
        path=path,
        ok=ok,
        **{f: getattr(report, f) for f in ("lock_ok", "checked", "absent", "changed_since", "superseded_by")},
        signature=sig_note,
        problems=problems,
        line=safe(line),
    )


def _project_files(project: Project) -> list[Path]:

    folder = project.verdicts_dir()
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise InputError(f"{folder}: no verdict files to verify (give the files, or set verdicts_dir in jury.toml)")
    return files


def _what_was_checked(report: Any) -> str:
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
