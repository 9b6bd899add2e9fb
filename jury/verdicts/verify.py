"""Binding a verdict file's inputs (path and sha256 each) and verifying them: ``jury verify``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jury.errors import InputError, JuryError
from jury.inputs.io import sha256_file
from jury.inputs.reader import file_errors
from jury.inputs.run_files import RunFile
from jury.verdicts.allowed_signers import TrustedKey
from jury.verdicts.documents import FileBinding, RunBinding, VerdictFile, validate_document
from jury.verdicts.lock import check_lock, check_rules, load_locked, read_verdict_json, superseded_by
from jury.vocab import REVIEW_KIND

SHIPPED_PROMPT = "jury:prompts/"  # a template shipped with jury, found by name in its prompts folder
PANEL_RELATIVE = "panel:"  # a template found relative to the panel file's folder


def bind_file(path: str | os.PathLike[str], relative_to: str | Path, sha256: str | None = None) -> FileBinding:
    """Hash ``path`` (unless its ``sha256`` is already known) and name it relative to the
    folder ``relative_to`` when possible."""
    p = Path(path)
    with file_errors(p):
        digest = sha256 or sha256_file(p)
    absolute = p.resolve()
    try:
        shown = Path(os.path.relpath(absolute, Path(relative_to).resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        shown = absolute.as_posix()
    return FileBinding(path=shown, sha256=digest)


def bind_run(run: str | os.PathLike[str], relative_to: str | Path) -> RunBinding:
    """A run file bound as bind_file binds it, with the model NAME it was given (NAME=PATH)."""
    model = run.model if isinstance(run, RunFile) else None
    return RunBinding(**bind_file(run, relative_to).model_dump(), model=model)


def bind_template(path: str | Path, panel_path: str | Path | None, relative_to: str | Path) -> FileBinding:
    """A prompt template bound by name and sha256: ``jury:prompts/<name>`` for a template
    shipped with jury (wherever jury is installed), ``panel:<path>`` relative to the panel
    file for any other; without a panel file, relative to ``relative_to`` like other inputs."""
    from jury.judging.panels import PROMPTS_DIR

    p = Path(path)
    with file_errors(p):
        digest = sha256_file(p)
    absolute = p.resolve()
    if absolute.parent == PROMPTS_DIR.resolve():
        return FileBinding(path=SHIPPED_PROMPT + absolute.name, sha256=digest)
    if panel_path is not None:
        try:
            rel = Path(os.path.relpath(absolute, Path(panel_path).resolve().parent)).as_posix()
            return FileBinding(path=PANEL_RELATIVE + rel, sha256=digest)
        except ValueError:  # another drive (Windows)
            pass
    return bind_file(p, relative_to)


def locate(binding: FileBinding, doc: VerdictFile, base: str | Path) -> Path:
    """Where a bound file is now: shipped templates in jury's prompts folder, panel-relative
    templates beside the bound panel file, anything else relative to ``base`` (the verdict
    file's folder) unless absolute."""
    path = binding.path
    if path.startswith(SHIPPED_PROMPT):
        from jury.judging.panels import PROMPTS_DIR

        return PROMPTS_DIR / path[len(SHIPPED_PROMPT) :]
    if path.startswith(PANEL_RELATIVE):
        panel_dir = Path(base)
        if doc.panel.path is not None:
            panel = Path(doc.panel.path)
            panel_dir = (panel if panel.is_absolute() else Path(base) / panel).parent
        return panel_dir / path[len(PANEL_RELATIVE) :]
    target = Path(path)
    return target if target.is_absolute() else Path(base) / target


def bindings(doc: VerdictFile) -> list[tuple[str, FileBinding]]:
    """Every bound input file as (role, binding): gold, runs, databases, prompts, panel."""
    out: list[tuple[str, FileBinding]] = [("gold", doc.inputs.gold)]
    out += [(f"runs[{i}]", b) for i, b in enumerate(doc.inputs.runs)]
    out += [(f"databases[{k}]", b) for k, b in sorted(doc.inputs.databases.items())]
    out += [(f"prompts[{k}]", b) for k, b in sorted(doc.prompts.items())]
    if doc.panel.path is not None and doc.panel.sha256 is not None:
        out.append(("panel", FileBinding(path=doc.panel.path, sha256=doc.panel.sha256)))
    return out


@dataclass
class VerifyReport:
    """What ``verify_file`` found. ``ok``: the lock holds and no present input changed."""

    path: Path
    ok: bool = False
    lock_ok: bool = False
    checked: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    superseded_by: list[Path] = field(default_factory=list)  # newer files in its folder that replace it
    successor_notes: list[str] = field(default_factory=list)  # per superseded_by: its signature ("unsigned", ...)
    changed_since: list[str] = field(default_factory=list)  # superseded: bound inputs changed since (explained)
    rejected_successors: list[str] = field(default_factory=list)  # files naming it in supersedes that do not count

    @property
    def unchanged(self) -> int:
        return len(self.checked) - len(self.mismatched) - len(self.changed_since)


def _reason(message: str, p: Path) -> str:
    """An error message without its leading file name ("x.json:3: m" -> "line 3: m")."""
    if message.startswith(f"{p}: "):
        return message[len(f"{p}: ") :]
    if message.startswith(f"{p}:"):
        return "line " + message[len(f"{p}:") :]
    return message


def verify_file(
    path: str | Path, *, base_dir: str | Path | None = None, trusted: dict[str, list[TrustedKey]] | None = None
) -> VerifyReport:
    """Check a verdict file's lock, then re-hash every bound input present on disk.

    Bound paths are resolved against ``base_dir`` (default: the verdict file's folder)
    unless absolute (prompt templates: see ``locate``). A changed input is ``mismatched``
    (not ok); an absent one is listed in ``absent`` and is not a failure. A missing verdict
    file raises ``InputError``.

    A file that a newer file in its folder supersedes is ok when its lock and rules hold and
    its changed inputs are explained by the successor: they are listed in ``changed_since``
    (not held against it; that is why it was re-run), and ``superseded_by`` names the
    successors. A successor counts only when it holds its own lock and rules, is a re-run of
    the same job (same kind, gold and run files, and for an audit the same questions) and,
    with ``trusted`` keys (``jury.verdicts.signing.load_trusted_keys``), carries a valid
    signature by one of them; without them its signature, if any, must be valid and
    ``successor_notes`` says which ("unsigned", "signed by ..."). A file naming it in
    ``supersedes`` that does not count is listed in ``rejected_successors`` and the file is
    checked as if it were current.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file" if not p.exists() else f"{p}: is not a file")
    report = VerifyReport(path=p)
    try:
        data = read_verdict_json(p)
        check_lock(p, data)
    except JuryError as exc:
        report.messages.append(_reason(str(exc), p))
        return report
    report.lock_ok = True
    if isinstance(data, dict) and data.get("kind") == REVIEW_KIND:
        return _verify_review(p, data, report, base_dir)
    try:
        doc = validate_document(data, source=str(p))
        check_rules(doc, p)
    except JuryError as exc:
        report.messages.append(_reason(str(exc), p))
        return report
    for newer in superseded_by(p, doc):
        problem, note = _successor_problem(doc, newer, trusted)
        if problem is None:
            report.superseded_by.append(newer)
            report.successor_notes.append(note)
        else:
            report.rejected_successors.append(f"{newer} names it in supersedes but {problem}; not counted")
    base = Path(base_dir) if base_dir is not None else p.parent
    targets = [(role, binding, locate(binding, doc, base)) for role, binding in bindings(doc)]
    _check_bindings(report, targets, "the verdicts were made")
    if report.superseded_by:  # re-run because its panel or inputs changed: those changes are expected
        report.changed_since, report.mismatched, report.messages = report.mismatched, [], []
        report.ok = True
    elif report.rejected_successors:
        report.messages += report.rejected_successors
    return report


def _same_job(old: VerdictFile, new: VerdictFile) -> list[str]:
    """What makes ``new`` not a re-run of ``old``'s job: its kind, gold or run files (by bound
    path and model NAME; their bytes may have changed, which is why it was re-run), an audit's questions."""
    diffs = []
    if new.kind != old.kind:
        diffs.append("kind")
    if new.inputs.gold.path != old.inputs.gold.path:
        diffs.append("inputs.gold")
    if [(r.path, r.model) for r in new.inputs.runs] != [(r.path, r.model) for r in old.inputs.runs]:
        diffs.append("inputs.runs")
    questions = [sorted(str(r.question_id) for r in d.records) for d in (old, new)]
    if old.kind == "audit" and new.kind == "audit" and questions[0] != questions[1]:
        diffs.append("records (the audited questions)")
    return diffs


def _successor_problem(old: VerdictFile, newer: Path, trusted: dict[str, list[TrustedKey]] | None) -> tuple[str | None, str]:
    """(why ``newer`` does not count as ``old``'s successor or None, its signature note)."""
    from jury.verdicts.signing import signature_label

    try:
        new = load_locked(newer)
    except JuryError as exc:
        return f"does not hold: {_reason(str(exc), newer)}", ""
    diffs = _same_job(old, new)
    if diffs:
        return f"is not a successor of the same job ({', '.join(diffs)} differ)", ""
    ok, note = signature_label(newer, trusted)
    if not ok:
        return (f"is not signed by a trusted key ({note})" if trusted else f"has a bad signature ({note})"), note
    return None, note


def _check_bindings(report: VerifyReport, targets: Iterable[tuple[str, FileBinding, Path]], made: str) -> VerifyReport:
    """Hash each bound file present on disk against its binding: absent ones are listed, a
    changed or unreadable one is a mismatch with a message."""
    for role, binding, target in targets:
        label = f"{role} {binding.path}"
        if not target.exists():
            report.absent.append(label)
            continue
        report.checked.append(label)
        try:
            actual = sha256_file(target)
        except OSError as exc:
            report.mismatched.append(label)
            report.messages.append(f"{label}: cannot read: {exc.strerror or exc}")
            continue
        except JuryError as exc:  # not a regular file (a device or pipe): never read
            report.mismatched.append(label)
            report.messages.append(f"{label}: {_reason(str(exc), target)}")
            continue
        if actual != binding.sha256:
            report.mismatched.append(label)
            report.messages.append(
                f"{label} changed after {made} (sha256 expected {binding.sha256[:12]}..., got {actual[:12]}...)"
            )
    report.ok = not report.mismatched
    return report


def _verify_review(p: Path, data: dict[str, Any], report: VerifyReport, base_dir: str | Path | None) -> VerifyReport:
    """verify_file for a review file (jury/verdicts/review.py): its rules, then every bound
    input and reviewed verdict file present on disk."""
    from jury.verdicts.review import check_review, check_reviewed, review_bindings, validate_review

    try:
        doc = validate_review(data, source=str(p))
    except JuryError as exc:
        report.messages.append(_reason(str(exc), p))
        return report
    base = Path(base_dir) if base_dir is not None else p.parent
    problem = check_review(doc) or check_reviewed(doc, base)
    if problem:
        report.messages.append(f"{problem}; refused")
        return report
    targets = [(role, b, Path(b.path) if Path(b.path).is_absolute() else base / b.path) for role, b in review_bindings(doc)]
    return _check_bindings(report, targets, "the review was made")
