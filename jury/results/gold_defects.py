"""The gold defects an audit found, as a table to send upstream (`jury report --gold-defects`).

One row per gold query the audit panel flagged or a deterministic check (jury check-gold,
run by the audit) found wrong, saying which (``flagged_by``): the question, the gold SQL, the defect types
the panel settled on, every vote with its juror, defect type and reasons, the deterministic
checks' findings with their evidence (jury check-gold, as the audit file records them) and a
preview of the gold's result; above them, the audit file's provenance (its path, lock, file
sha256, panel and time) so a maintainer upstream can check what the table came from. Pure:
the caller gives the audit, the gold items and the gold's results.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue
from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.inputs.records import QuestionId
from jury.results.panel_comparison import BoundFile
from jury.results.render import UNWRAPPED_WIDTH, safe, to_csv, to_json, to_markdown, to_rich_table

if TYPE_CHECKING:
    from jury.inputs.records import GoldItem
    from jury.verdicts.documents import AuditFile


class DefectVote(TypedDict):
    """One juror's vote on a flagged gold query (abstained, else its category or raw verdict)."""

    juror: str
    family: str
    model: str
    vote: str | None
    defect_type: str | None
    reasoning: str | None


class CheckNote(TypedDict):
    """A deterministic check that flagged the gold query, and what shows it."""

    name: str
    evidence: str


class GoldDefect(TypedDict):
    """:func:`defect_rows`: one gold query the audit panel flagged or a deterministic check found."""

    question_id: QuestionId
    db_id: str
    difficulty: str | None
    flagged_by: list[str]
    question: str | None
    evidence: str | None
    gold_sql: str | None
    defect_types: list[str]
    votes: str
    vote_list: list[DefectVote]
    checks: list[CheckNote]
    checks_run: bool
    gold_result: str | None


class DefectsProvenance(TypedDict):
    """:func:`provenance`: the audit file the table came from and the gold file it bound;
    ``checks_run`` is the audit's settings.checks as the file holds it (free-form JSON)."""

    audit_file: str
    content_sha256: str | None
    file_sha256: str
    panel: str
    jurors: list[str | None]
    created_at: str
    jury_version: str
    gold: BoundFile
    audited: int
    flagged: int
    found_by_checks: int
    checks_run: JsonValue


COLUMNS = ["question_id", "db_id", "difficulty", "flagged_by", "question", "evidence", "gold_sql", "defect_types", "votes", "reasons", "checks", "gold_result"]  # fmt: skip
HEADS = ["question", "db", "difficulty", "flagged by", "asks", "evidence", "gold SQL", "defect types", "defective votes", "jurors' reasons", "deterministic checks", "gold result"]  # fmt: skip


def defect_rows(doc: AuditFile, gold: Mapping[QuestionId, GoldItem], previews: Mapping[QuestionId, str]) -> list[GoldDefect]:
    """One dict per record of the audit ``doc`` (jury.verdicts.documents.AuditFile) the panel
    flagged or a deterministic check found, in the file's order; ``gold``: question id ->
    GoldItem; ``previews``: question id -> the gold result's preview text."""
    rows: list[GoldDefect] = []
    for r in doc.records:
        if not (r.flagged or r.checks):
            continue
        item = gold.get(r.question_id)
        said = [v for v in r.votes if not v.skipped]
        defective = [v for v in said if (v.category or v.raw_verdict or "").lower() == "defective"]
        rows.append(
            {
                "question_id": r.question_id,
                "db_id": r.db_id,
                "difficulty": r.difficulty or getattr(item, "difficulty", None),
                "flagged_by": [who for who, yes in (("audit panel", r.flagged), ("deterministic checks", bool(r.checks))) if yes],
                "question": getattr(item, "question", None),
                "evidence": getattr(item, "evidence", None) or None,
                "gold_sql": getattr(item, "sql", None),
                "defect_types": list(r.defect_types),
                "votes": f"{len(defective)} of {len(said)}",
                "vote_list": [
                    {
                        "juror": v.juror,
                        "family": v.family,
                        "model": v.model,
                        "vote": "abstained" if v.abstained else (v.category or v.raw_verdict),
                        "defect_type": v.defect_type,
                        "reasoning": v.reasoning,
                    }
                    for v in said
                ],
                "checks": [{"name": str(c.name), "evidence": c.evidence} for c in (r.checks or [])],
                "checks_run": r.checks is not None,
                "gold_result": previews.get(r.question_id),
            }
        )
    return rows


def provenance(path: str | Path, doc: AuditFile, file_sha256: str, gold_binding: Any) -> DefectsProvenance:
    """What the table came from: the audit file (path, lock, file sha256, panel, time, jury
    version) and the gold file it bound."""
    return {
        "audit_file": str(path),
        "content_sha256": doc.content_sha256,
        "file_sha256": file_sha256,
        "panel": doc.panel.name,
        "jurors": [j.get("name") for j in doc.panel.jurors],
        "created_at": doc.created_at,
        "jury_version": doc.jury_version,
        "gold": {"path": gold_binding.path, "sha256": gold_binding.sha256},
        "audited": len(doc.records),
        "flagged": sum(r.flagged for r in doc.records),
        "found_by_checks": sum(bool(r.checks) for r in doc.records),
        "checks_run": (doc.settings or {}).get("checks"),
    }


def _reasons(row: GoldDefect) -> list[str]:
    out = []
    for v in row["vote_list"]:
        vote = v["vote"] or "—"
        kind = f", {v['defect_type']}" if v["defect_type"] else ""
        why = f": {v['reasoning']}" if v["reasoning"] else ""
        out.append(f"{v['juror']} ({v['family']}) {vote}{kind}{why}")
    return out


def _checks(row: GoldDefect) -> list[str]:
    if not row["checks_run"]:
        return ["not run by this audit"]
    return [f"{c['name']}: {c['evidence']}" for c in row["checks"]] or ["none flagged"]


def _flat(row: GoldDefect) -> dict[str, Any]:
    """A row as text cells (multi-line cells keep their newlines)."""
    return {
        **{k: row[k] for k in ("question_id", "db_id", "difficulty", "question", "evidence", "gold_sql", "votes", "gold_result")},
        "defect_types": ", ".join(row["defect_types"]) or "—",
        "flagged_by": " and ".join(row["flagged_by"]),
        "reasons": "\n".join(_reasons(row)),
        "checks": "\n".join(_checks(row)),
    }


def _md_cell(value: object) -> str:
    """Markdown table cell: HTML escaped (the text is the inputs', and GitHub renders HTML),
    newlines as <br>; to_markdown escapes pipes and control characters."""
    if value is None:
        return None  # type: ignore[return-value]
    return html.escape(str(value), quote=False).replace("\r", "").replace("\n", "<br>")


def render_gold_defects(prov: DefectsProvenance, rows: list[GoldDefect], fmt: str, width: int | None = None) -> str:
    """The table as md (a header of provenance, one row per flagged gold), csv (one row per
    flagged gold, the provenance on every row), json or table."""
    if fmt == "json":
        return to_json({"provenance": prov, "defects": rows})
    flat = [_flat(r) for r in rows]
    if fmt == "csv":
        keep = {
            "audit_file": prov["audit_file"],
            "audit_content_sha256": prov["content_sha256"],
            "audit_file_sha256": prov["file_sha256"],
        }
        return to_csv([{**f, **keep} for f in flat], [*COLUMNS, *keep])
    checks = prov.get("checks_run")
    passes: Any = checks.get("passes") if isinstance(checks, dict) else None  # free-form JSON: as the file holds it
    found = (
        f"; {prov['found_by_checks']} found by the deterministic checks ({'+'.join(str(p) for p in passes or [])} "
        "executions each)"
        if isinstance(checks, dict)
        else "; the deterministic checks were not run"
    )
    lines = [
        f"{prov['flagged']} of {prov['audited']} gold queries flagged by the audit panel {prov['panel']} "
        f"({', '.join(str(j) for j in prov['jurors'])}){found}",
        f"audit file {prov['audit_file']}: lock {prov['content_sha256']}, file sha256 {prov['file_sha256']}, "
        f"written {prov['created_at']} by jury {prov['jury_version']}",
        f"gold file {prov['gold']['path']} (sha256 {prov['gold']['sha256']})",
    ]
    if fmt == "md":
        cells = [{k: _md_cell(v) for k, v in f.items()} for f in flat]
        return "## Gold defects\n\n" + "".join(f"- {safe(line)}\n" for line in lines) + "\n" + to_markdown(cells, COLUMNS, HEADS)

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or UNWRAPPED_WIDTH, soft_wrap=width is None, highlight=False)
    for line in lines:
        console.print(safe(line), markup=False)
    shown = ["question_id", "db_id", "flagged_by", "defect_types", "votes", "reasons", "checks"]
    heads = ["question", "db", "flagged by", "defect types", "defective votes", "jurors' reasons", "deterministic checks"]
    one_line = [{k: v.replace("\n", "; ") if isinstance(v, str) else v for k, v in f.items()} for f in flat]
    console.print(
        to_rich_table(one_line, shown, heads, title="gold defects (-f md, csv or json: the question, gold SQL and result too)")
    )
    return buffer.getvalue()
