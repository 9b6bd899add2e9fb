"""The report's "Agreement and position bias" section: one per verdict file.

Computed from each loaded file's records by ``jury.judging.agreement.agreement_summary``
(files written before it have no such summary, and a summary is never trusted), rendered
as Markdown or as rich tables beside the report's other tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jury.judging.agreement import AUDIT, BLIND, LABELLED, agreement_summary
from jury.results.render import Cell, cell, safe, to_markdown, to_rich_table
from jury.results.report.model import Agreement, PositionBias

if TYPE_CHECKING:
    from rich.console import Console

    from jury.verdicts.documents import AdjudicationFile, AuditFile

KAPPA_COLUMNS = (["a", "b", "kappa", "n"], ["juror", "juror", "Cohen's kappa", "records both rated"])
BIAS_COLUMNS = (
    ["juror", "share", "p_value", "n", "inconsistent"],
    ["juror", "first answer picked [95% CI]", "p (binomial vs 0.5)", "single-answer ballots", "inconsistent (swap)"],
)
PANEL = "(panel)"


def agreement_sets(
    audit_docs: Sequence[AuditFile],
    adj_docs: Iterable[tuple[str | Path, AdjudicationFile]],
    audit_paths: Sequence[str | None] = (),
) -> list[dict[str, Any]]:
    """One ``agreement_summary`` per verdict file, in the order of the report's verdict_files
    (``audit_paths``: the audit files' paths where known)."""
    paths = [*audit_paths, *[None] * len(audit_docs)][: len(audit_docs)]
    out = [_one("audit", p, doc) for p, doc in zip(paths, audit_docs)]
    return out + [_one("adjudication", str(path), doc) for path, doc in adj_docs]


def _one(kind: str, path: str | None, doc: AuditFile | AdjudicationFile) -> dict[str, Any]:
    style = AUDIT if doc.kind == "audit" else LABELLED if doc.panel.ballot_style == LABELLED else BLIND
    # the summary reads each record's votes and their fields (a vote's dict or its attributes):
    # the votes' own field values, not a JSON dump of every record
    records = [{"votes": [vars(v) for v in r.votes]} for r in doc.records]
    return {"kind": kind, "path": path, "content_sha256": doc.content_sha256, **agreement_summary(records, style)}


def _title(a: Agreement) -> str:
    short = f"{a.content_sha256[:19]}…" if a.content_sha256 else ""  # "sha256:" and 12 hex digits
    name = f"{a.path} ({short})" if a.path and short else a.path or short
    return f"agreement and position bias: {a.kind} {name} ({a.style} ballots, {a.units} records)".replace("  ", " ")


def _alpha_line(a: Agreement) -> str:
    return (
        f"Krippendorff's alpha (nominal): {cell(a.krippendorff_alpha)} over the {a.alpha_units} of {a.units} "
        "records with at least two votes (abstained, skipped and inconsistent votes are missing ratings)"
    )


def _share(b: PositionBias) -> str:
    return "—" if b.share is None else f"{b.share:.3f} [{b.low:.3f}, {b.high:.3f}]"


def _bias_rows(a: Agreement) -> list[dict[str, Cell]]:
    bias = a.position_bias
    if bias is None or not bias.jurors:
        return []
    inconsistent = a.inconsistent
    rows = [(name, b, inconsistent.get(name, 0)) for name, b in bias.jurors.items()]
    rows.append((PANEL, bias.panel, sum(inconsistent.values())))
    return [
        {
            "juror": name,
            "share": _share(b),
            "p_value": "—" if b.p_value is None else f"{b.p_value:.3g}",
            "n": b.n,
            "inconsistent": k,
        }
        for name, b, k in rows
    ]


def _kappa_rows(a: Agreement) -> list[dict[str, Cell]]:
    return [{"a": k.a, "b": k.b, "kappa": k.kappa, "n": k.n} for k in a.pairwise_kappa]


def _notes(a: Agreement) -> list[str]:
    notes = [_alpha_line(a)]
    if a.position_bias is None:
        notes.append(f"position bias: none ({a.position_bias_note})")
        if any(a.inconsistent.values()):
            notes.append("inconsistent across orders: " + ", ".join(f"{j} {k}" for j, k in a.inconsistent.items()))
    return notes


def agreement_markdown(agreement: Sequence[Agreement]) -> str:
    """The report's section as Markdown ("" without verdict files)."""
    parts = []
    for a in agreement:
        parts.append(f"\n### {_title(a)}\n\n" + "\n".join(f"- {safe(n)}" for n in _notes(a)) + "\n")
        if a.pairwise_kappa:
            parts.append("\n" + to_markdown(_kappa_rows(a), *KAPPA_COLUMNS))
        rows = _bias_rows(a)
        if rows:
            parts.append("\n" + to_markdown(rows, *BIAS_COLUMNS))
    return "".join(parts)


def print_agreement(console: Console, agreement: Sequence[Agreement]) -> None:
    """The report's section as rich tables and lines on ``console``."""
    for a in agreement:
        console.print(safe(_title(a)), markup=False)
        for n in _notes(a):
            console.print(safe(n), markup=False)
        if a.pairwise_kappa:
            console.print(to_rich_table(_kappa_rows(a), *KAPPA_COLUMNS, title="pairwise Cohen's kappa"))
        rows = _bias_rows(a)
        if rows:
            console.print(to_rich_table(rows, *BIAS_COLUMNS, title="position bias: share picking the answer shown first"))
