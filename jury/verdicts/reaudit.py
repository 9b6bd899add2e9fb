"""Re-audits: find locked verdict files whose panel, prompts or inputs changed, re-run them.

This module finds stale files and describes what a re-run changed; the re-run itself is
``jury.jobs.reaudit.rerun`` (the same jobs as the commands, so the votes of unchanged
jurors come from the store). The new file names its predecessor in ``supersedes``; the
old file is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.errors import InputError
from jury.inputs.io import load_json_file, sha256_file
from jury.inputs.records import QuestionId
from jury.stats.agreement import cohen_kappa, percent_agreement
from jury.verdicts.documents import KINDS, AdjudicationFile, AuditFile, FileBinding, VerdictFile
from jury.verdicts.lock import load_locked
from jury.vocab import VerdictName


@dataclass
class Staleness:
    path: Path
    doc: VerdictFile
    reasons: list[str] = field(default_factory=list)  # why it must be re-run
    blockers: list[str] = field(default_factory=list)  # why it cannot be re-run here

    @property
    def stale(self) -> bool:
        return bool(self.reasons)


def resolve_bound(base: Path, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else base / p


def _sha(path: Path) -> str | None:

    return sha256_file(path) if path.is_file() else None


def check_file(path: Path) -> Staleness:
    """Compare a locked file's bindings with the panel, templates and inputs as they are now."""
    from jury.judging.panels import load_panel

    doc = load_locked(path)
    base = path.parent
    st = Staleness(path, doc)
    bound = [("gold", doc.inputs.gold)] + [("run", b) for b in doc.inputs.runs]
    bound += [(f"database {k}", b) for k, b in doc.inputs.databases.items()]
    positions = (doc.settings or {}).get("positions_from")
    if isinstance(positions, dict):  # prediction files as runs: the gold file their positions index
        bound.append(("positions", FileBinding.model_validate(positions)))
    for role, b in bound:
        now = _sha(resolve_bound(base, b.path))
        if now is None:
            st.blockers.append(f"{role} file {b.path} is absent")
        elif now != b.sha256:
            st.reasons.append(f"{role} file {b.path} changed")
    if doc.panel.path is None:
        st.blockers.append("the panel has no bound file")
        return st
    panel_path = resolve_bound(base, doc.panel.path)
    now = _sha(panel_path)
    if now is None:
        st.blockers.append(f"panel file {doc.panel.path} is absent")
        return st
    if now != doc.panel.sha256:
        st.reasons.append(f"panel {doc.panel.path} changed")
    try:
        panel = load_panel(panel_path)
    except Exception as exc:
        st.blockers.append(f"panel {doc.panel.path}: {exc}")
        return st
    tsha = _sha(panel.prompt_path)
    if not any(b.sha256 == tsha for b in doc.prompts.values()):
        st.reasons.append(f"prompt template {panel.prompt_path.name} changed")
    return st


def heads(folder: Path) -> list[Path]:
    """Locked files in a folder that no other file there supersedes (the current ones).

    JSON files that are not verdict files (no "kind" of a verdict) are passed over; a file
    that is one but fails its lock stops everything.
    """

    docs = {}
    for p in sorted(p for p in folder.glob("*.json") if p.is_file()):
        try:
            data = load_json_file(p)
        except InputError:
            raise InputError(f"{p}: not readable JSON; a verdict file may have been damaged (see jury verify)") from None
        if isinstance(data, dict) and data.get("kind") in KINDS:
            docs[p] = load_locked(p)
    superseded = {d.supersedes for d in docs.values() if d.supersedes}
    return [p for p, d in docs.items() if d.content_sha256 not in superseded]


# ------------------------------------------------------------------ diffs


class JurorChanges(TypedDict):
    """The jurors the new panel added, removed and changed (by name)."""

    added: list[str]
    removed: list[str]
    changed: list[str]


class AuditDiff(TypedDict):
    """:func:`audit_diff`: an audit re-run against the old file, over the questions both hold."""

    kind: Literal["audit"]
    questions: int
    newly_flagged: list[QuestionId]
    cleared: list[QuestionId]
    percent_agreement: float | None
    cohen_kappa: float | None
    old_flags: int
    old_flags_also_flagged: int
    new_flags: int
    juror_changes: JurorChanges


class VerdictFlip(TypedDict):
    """A failure whose verdict the re-run changed."""

    model: str
    question_id: QuestionId
    old: VerdictName
    new: VerdictName


class AdjudicationDiff(TypedDict):
    """:func:`adjudication_diff`: an adjudication re-run against the old file, over the failures both hold."""

    kind: Literal["adjudication"]
    failures: int
    flipped: list[VerdictFlip]
    credit_changed: int
    percent_agreement: float | None
    cohen_kappa: float | None
    only_old: int
    only_new: int
    juror_changes: JurorChanges


VerdictDiff = AuditDiff | AdjudicationDiff
"""What a re-run changed (``kind`` tells which)."""


def audit_diff(old: AuditFile, new: AuditFile) -> AuditDiff:
    a = {r.question_id: r.flagged for r in old.records}
    b = {r.question_id: r.flagged for r in new.records}
    common = [q for q in a if q in b]
    old_flags = [q for q in common if a[q]]
    return {
        "kind": "audit",
        "questions": len(common),
        "newly_flagged": [q for q in common if b[q] and not a[q]],
        "cleared": [q for q in common if a[q] and not b[q]],
        "percent_agreement": percent_agreement([a[q] for q in common], [b[q] for q in common]),
        "cohen_kappa": cohen_kappa([a[q] for q in common], [b[q] for q in common]) if common else None,
        "old_flags": len(old_flags),
        "old_flags_also_flagged": sum(b[q] for q in old_flags),
        "new_flags": sum(b[q] for q in common),
        "juror_changes": _juror_changes(old, new),
    }


def adjudication_diff(old: AdjudicationFile, new: AdjudicationFile) -> AdjudicationDiff:
    a = {(r.model, r.question_id): r for r in old.records}
    b = {(r.model, r.question_id): r for r in new.records}
    common = [k for k in a if k in b]
    flips: list[VerdictFlip] = [
        {"model": k[0], "question_id": k[1], "old": a[k].verdict, "new": b[k].verdict}
        for k in common
        if a[k].verdict != b[k].verdict
    ]
    va, vb = [a[k].verdict for k in common], [b[k].verdict for k in common]
    return {
        "kind": "adjudication",
        "failures": len(common),
        "flipped": flips,
        "credit_changed": sum(a[k].credited != b[k].credited for k in common),
        "percent_agreement": percent_agreement(va, vb),
        "cohen_kappa": cohen_kappa(va, vb) if common else None,
        "only_old": len([k for k in a if k not in b]),
        "only_new": len([k for k in b if k not in a]),
        "juror_changes": _juror_changes(old, new),
    }


def _juror_changes(old: VerdictFile, new: VerdictFile) -> JurorChanges:
    o = {j["name"]: j for j in old.panel.jurors}
    n = {j["name"]: j for j in new.panel.jurors}
    return {
        "added": sorted(set(n) - set(o)),
        "removed": sorted(set(o) - set(n)),
        "changed": sorted(k for k in set(o) & set(n) if o[k] != n[k]),
    }


DIFF_SHOWN = 20
"""How many flipped verdicts, newly flagged and cleared questions a diff lists; the rest are counted."""


def _some(items: Sequence[object]) -> str:
    more = len(items) - DIFF_SHOWN
    return f"{items[:DIFF_SHOWN]}" + (f" … and {more} more" if more > 0 else "")


def describe_diff(diff: VerdictDiff) -> list[str]:
    j = diff["juror_changes"]
    changes = (("added", j["added"]), ("removed", j["removed"]), ("changed", j["changed"]))
    lines: list[str] = []
    if any(v for _, v in changes):
        lines.append("jurors: " + "; ".join(f"{k} {', '.join(v)}" for k, v in changes if v))
    pa = diff["percent_agreement"]
    kappa = diff["cohen_kappa"]
    agree = (f"{100 * pa:.1f}%" if pa is not None else "—") + ", Cohen's kappa " + (f"{kappa:.3f}" if kappa is not None else "—")
    if diff["kind"] == "audit":
        lines.append(f"newly flagged: {len(diff['newly_flagged'])} {_some(diff['newly_flagged'])}")
        lines.append(f"cleared: {len(diff['cleared'])} {_some(diff['cleared'])}")
        lines.append(f"old and new panels agree on {agree} of {diff['questions']} questions")
        lines.append(f"{diff['old_flags_also_flagged']} of {diff['old_flags']} flags also flagged by the new panel")
    else:
        lines.append(
            f"verdicts flipped: {len(diff['flipped'])} of {diff['failures']}; credit changed for {diff['credit_changed']}"
        )
        for f in diff["flipped"][:DIFF_SHOWN]:
            lines.append(f"  {f['model']} q{f['question_id']}: {f['old']} -> {f['new']}")
        if len(diff["flipped"]) > DIFF_SHOWN:
            lines.append(f"  … and {len(diff['flipped']) - DIFF_SHOWN} more")
        lines.append(f"old and new panels agree on {agree}")
    return lines


# ------------------------------------------------------------------ re-running
