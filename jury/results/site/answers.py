"""The data of the site's model and question pages: every answer with its outcome, verdict,
juror votes and human review, tagged with the front-page counts it is part of.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jury.vocab import COMPOSITION, JURY_ELIGIBLE, NOT_EXECUTED, Outcome, Verdict

if TYPE_CHECKING:
    from jury.compare.outcomes import PairResult
    from jury.results.site.folder import SiteSources
    from jury.verdicts.documents import AdjudicationRecord, AuditFile, AuditRecord
    from jury.verdicts.review import ReviewRecord

PREVIEW_ROWS = 10
PREVIEW_CHARS = 2000
CELL_CHARS = 120


def slugs(names: Iterable[Any]) -> dict[Any, str]:
    """name -> a file-name-safe, unique slug (a hash suffix when the name had to change)."""
    out: dict[str, Any] = {}
    taken: set[str] = set()
    for name in names:
        text = str(name)
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).lstrip(".")[:60] or "_"
        slug = base
        if slug != text or slug.lower() in taken:
            slug = f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
        taken.add(slug.lower())
        out[name] = slug
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def preview(result: Any) -> str:
    """At most PREVIEW_ROWS rows of a result, with its true row count (plain text; escaped when shown)."""
    if result is None:
        return "(no result: the query was not run)"
    if result.recorded_preview is not None:
        return _clip(result.recorded_preview, PREVIEW_CHARS) + "\n(result as recorded by another evaluation)"
    if not result.ok:
        return f"(the query failed: {result.status}: {result.error})"
    lines = [" | ".join(_clip(str(c), CELL_CHARS) for c in result.columns)]
    for row in result.rows[:PREVIEW_ROWS]:
        lines.append(
            " | ".join("NULL" if v is None else _clip(v.hex() if isinstance(v, bytes) else str(v), CELL_CHARS) for v in row)
        )
    shown = min(len(result.rows), PREVIEW_ROWS)
    total = result.row_count
    lines.append(
        f"({total:,} row{'s' if total != 1 else ''} in total" + (f"; the first {shown} shown)" if shown < total else ")")
    )
    return _clip("\n".join(lines), PREVIEW_CHARS)


def _tags(pair: PairResult, rec: AdjudicationRecord | None, flagged: set[Any], reviewed: bool) -> list[str]:
    """Filter tags of one answer on its model page (what the front page's counts count)."""
    tags = ["all", pair.outcome]
    if pair.outcome == Outcome.GOLD_ERROR:
        return tags
    if not pair.routed:
        return [*tags, str(Outcome.MISROUTED)]
    tags.append("routed")
    clean = pair.question_id not in flagged
    if clean:
        tags.append("clean")
    if pair.outcome == Outcome.MATCH:
        tags += ["credited"] + (["clean_match"] if clean else [])
    if pair.outcome in NOT_EXECUTED:
        tags.append("not_executed")
    if rec is not None and pair.outcome == JURY_ELIGIBLE:
        tags.append("jury")
        verdict = Verdict.NO_MAJORITY if rec.verdict == Verdict.UNDECIDED.value else rec.verdict
        tags.append(str(verdict))
        if rec.credited:
            tags.append("credited")
    if flagged and not clean:
        tags.append("flagged")
    if reviewed:
        tags.append("reviewed")
    return tags


FILTERS = (
    ("all", "every answer"),
    ("routed", "routed to the right database"),
    ("match", "strict matches"),
    ("clean", "gold-clean denominator (routed, gold not flagged)"),
    ("clean_match", "gold-clean successes"),
    ("credited", "adjudicated successes (matches and credited failures)"),
    ("jury", "jury-reached misses"),
    *((str(c), f"verdict: {c.replace('_', ' ')}") for c in COMPOSITION),
    ("near_miss", "near misses"),
    ("not_executed", "not executed (error, timeout, missing)"),
    (str(Outcome.MISROUTED), "misrouted (another database chosen)"),
    ("flagged", "gold flagged by the audit"),
    ("reviewed", "decided by a person"),
    (str(Outcome.GOLD_ERROR), "gold query fails (its rule: the report's settings, gold_errors)"),
)


AUDIT_ORDER = "gold query only"
"""The "order shown" of an audit vote: an audit ballot shows one query, the gold, and no answer."""


def _vote_rows(votes: Sequence[Any], unordered: str = "—") -> list[dict[str, Any]]:
    """The vote table's rows; ``unordered``: the "order shown" of a vote with no order (an
    audit ballot shows the gold query alone)."""
    rows = []
    for v in votes:
        if v.skipped:
            said = "not asked (early stop)"
        elif v.abstained:
            said = "abstained" + (f": {v.reason}" if v.reason else "") + (" (the two orders disagreed)" if v.inconsistent else "")
        else:
            said = v.category or v.raw_verdict or "—"
            if v.defect_type:
                said += f" ({v.defect_type})"
        rows.append(
            {
                "juror": v.juror,
                "family": v.family,
                "model": v.model,
                "order": v.order.replace("_", " ") if v.order else unordered,
                "raw": v.raw_verdict or "",
                "said": said.replace("_", " "),
                "reasoning": v.reasoning or "",
            }
        )
    return rows


def _checks_run(doc: AuditFile) -> str | None:
    """How the audit ran the deterministic gold checks (its settings.checks), in words."""
    checks = (doc.settings or {}).get("checks")
    if not isinstance(checks, dict):
        return None
    passes = "+".join(str(p) for p in checks.get("passes") or [])
    return f"{passes} executions and a reversed scan, {checks.get('comparator')} comparator"


def _review_rows(recs: Sequence[ReviewRecord]) -> list[dict[str, Any]]:
    return [
        {
            "reviewer": r.reviewer,
            "decided_at": r.decided_at,
            "choice": r.choice,
            "category": (r.category or "").replace("_", " "),
            "defect_type": r.defect_type or "",
            "corrected_sql": r.corrected_sql or "",
            "note": r.note or "",
            "jury_verdict": r.jury_verdict.replace("_", " "),
        }
        for r in recs
    ]


@dataclass
class _Verdicts:
    """What the site's inputs say of each answer and question: the audit's flags and records, the
    adjudication files' records (failures and reviewed passes), the runs' SQL and the human review."""

    flagged: set[Any]
    audit_by_q: dict[Any, AuditRecord]
    adj: dict[tuple[Any, ...], tuple[str, AdjudicationRecord]]
    passes: dict[tuple[Any, ...], tuple[str, AdjudicationRecord]]
    sql_of: dict[tuple[Any, ...], str | None]
    reviews: dict[tuple[Any, ...], list[Any]]


def _verdicts(sources: SiteSources) -> _Verdicts:
    out = _Verdicts(
        flagged={r.question_id for r in sources.audit[1].records if r.flagged} if sources.audit else set(),
        audit_by_q={r.question_id: r for r in sources.audit[1].records} if sources.audit else {},
        adj={},
        passes={},
        sql_of={(r.model, r.question_id): r.sql for r in sources.records},
        reviews={},
    )
    for path, doc in sources.adjudications:
        for r in doc.records:
            (out.passes if r.review_pass else out.adj)[(r.model, r.question_id)] = (str(path), r)
    if sources.review:
        for h in sources.review[1].records:
            out.reviews.setdefault((h.kind, h.model, h.question_id), []).append(h)
    return out


def _model_answer_row(
    p: PairResult, rec: AdjudicationRecord | None, v: _Verdicts, sources: SiteSources, href: str, human: list[Any]
) -> dict[str, Any]:
    """The model page's row of one answer."""
    tags = _tags(p, rec if rec is not None and not rec.review_pass else None, v.flagged, bool(human))
    verdict = str(rec.verdict) if rec is not None else None
    return {
        "qid": str(p.question_id),
        "href": href,
        "difficulty": getattr(sources.gold.get(p.question_id), "difficulty", None) or "",
        "outcome": p.outcome.replace("_", " "),
        "verdict": (verdict or "").replace("_", " "),
        "credited": "yes"
        if (p.outcome == Outcome.MATCH and p.routed) or (rec is not None and rec.credited and not rec.review_pass)
        else "",
        "flagged": "flagged" if p.question_id in v.flagged else "",
        "human": "yes" if human else "",
        "tags": " ".join(tags),
    }


def _question_answer(
    p: PairResult,
    found: tuple[str, AdjudicationRecord] | None,
    v: _Verdicts,
    anchor: str,
    model_page: str,
    pred: Any,
    human: list[Any],
) -> dict[str, Any]:
    """The question page's entry of one model's answer."""
    rec = found[1] if found else None
    verdict = str(rec.verdict) if rec is not None else None
    return {
        "model": p.model,
        "anchor": anchor,
        "model_page": model_page,
        "outcome": p.outcome.replace("_", " "),
        "overlap": p.overlap,
        "routed": p.routed,
        "chosen_db": p.chosen_db_id,
        "sql": v.sql_of.get((p.model, p.question_id)) or "",
        "preview": "" if p.outcome in (Outcome.MATCH, Outcome.GOLD_ERROR) else preview(pred),
        "file": found[0] if found else None,
        "verdict": (verdict or "").replace("_", " "),
        "review_pass": bool(rec is not None and rec.review_pass),
        "credited": bool(rec is not None and rec.credited),
        "votes": _vote_rows(rec.votes) if rec is not None else [],
        "human": _review_rows(human),
    }


def _question_page(q: Any, slug: str, sources: SiteSources, v: _Verdicts, gold_res: Any) -> dict[str, Any]:
    """A question page's data beside its answers: the gold item, its result, the audit's record and the review."""
    item = sources.gold.get(q)
    a = v.audit_by_q.get(q)
    return {
        "qid": str(q),
        "slug": slug,
        "db_id": getattr(item, "db_id", ""),
        "question": getattr(item, "question", ""),
        "evidence": getattr(item, "evidence", ""),
        "difficulty": getattr(item, "difficulty", None) or "",
        "gold_sql": getattr(item, "sql", ""),
        "gold_preview": preview(gold_res),
        str(Outcome.GOLD_ERROR): sources.evaluation.gold_errors.get(q),
        "audit": None
        if a is None
        else {
            "path": str(sources.audit[0]) if sources.audit else "",
            "flagged": a.flagged,
            "decided": a.decided,
            "defect_types": [d.replace("_", " ") for d in a.defect_types],
            "votes": _vote_rows(a.votes, AUDIT_ORDER),
            "checks": None if a.checks is None else [{"name": c.name, "evidence": c.evidence} for c in a.checks],
            "checks_run": _checks_run(sources.audit[1]) if sources.audit else None,
        },
        "not_audited": None if a is not None else not_audited_reason(sources, q),
        "human": _review_rows(v.reviews.get(("gold", None, q), [])),
    }


def not_audited_reason(sources: SiteSources, q: Any) -> str:
    """Why a question's page has no audit record: no audit file was given, or the file given
    holds none for it (an audit run with --db or --question)."""
    if not sources.audit:
        return "Not audited: this report was given no audit file (--audit)."
    path = str(sources.audit[0])
    return f"Not audited: the audit file {path} has no record of this question (audited with --db or --question filters?)."


def question_pages(sources: SiteSources, model_slug: dict[str, str]) -> tuple[list[Any], dict[str, Any]]:
    """(question ids in order, per-question page data); also each model's answer rows."""
    ev = sources.evaluation
    v = _verdicts(sources)
    qids = list(dict.fromkeys(p.question_id for p in ev.pairs))
    q_slug = slugs(qids)
    results = getattr(ev, "results", {}) or {}
    per_q: dict[Any, dict[str, Any]] = {q: {"answers": []} for q in qids}
    model_rows: dict[str, list[dict[str, Any]]] = {}
    for p in ev.pairs:
        found = v.adj.get((p.model, p.question_id)) or v.passes.get((p.model, p.question_id))
        rec = found[1] if found else None
        human = v.reviews.get(("adjudication", p.model, p.question_id), [])
        anchor = f"a-{model_slug[p.model]}"
        href = f"../questions/{q_slug[p.question_id]}.html#{anchor}"
        model_rows.setdefault(p.model, []).append(_model_answer_row(p, rec, v, sources, href, human))
        pred = results.get(p.pred_key) if p.pred_key else None
        model_page = f"../models/{model_slug[p.model]}.html"
        per_q[p.question_id]["answers"].append(_question_answer(p, found, v, anchor, model_page, pred, human))
    first_pair: dict[Any, PairResult] = {}
    for p in ev.pairs:
        first_pair.setdefault(p.question_id, p)
    for q in qids:
        gold_pair = first_pair.get(q)
        gold_res = results.get(gold_pair.gold_key) if gold_pair is not None and gold_pair.gold_key else None
        per_q[q].update(_question_page(q, q_slug[q], sources, v, gold_res))
    return qids, {"pages": per_q, "models": model_rows}
