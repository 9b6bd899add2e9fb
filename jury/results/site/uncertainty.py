"""The front page's "The jury's own uncertainty" section: per model the adjudicated column's
published value beside the latent-class expected value with its questions + jury interval, the
expected credit changes, the rank under the same resamples and (with a review sample) the
people-anchored value; the same for the gold-clean column with an audit (expected flag changes);
per adjudication (audit) file its fit, its dependence check and repeats lines (the table and
Markdown reports' own lines) and the records (gold queries) whose latent-class verdict (flag) is
not the published one, with their votes. Every number is a :class:`jury.results.site.front.Numbers`
cell, so it carries its JSON pointer into the report."""

from __future__ import annotations

from typing import Any

from jury.results.report.model import ReportDocument
from jury.results.report.render import repeat_notes, uncertainty_notes
from jury.results.site.front import Numbers, pointer


def _jury_row(num: Numbers, i: int, model: str, page: str, column: str, changes: str) -> dict[str, Any]:
    """One model's published ``column`` value beside its ``<column>_jury`` cells."""
    jury = f"{column}_jury"
    report_row = num.report["models"][i]
    rank = report_row[jury].get("rank")
    return {
        "model": model,
        "page": page,
        "published": num(pointer("models", i, column, "value"), "pct"),
        "expected": num(pointer("models", i, jury, "expected"), "pct"),
        "low": num(pointer("models", i, jury, "low"), "pct"),
        "high": num(pointer("models", i, jury, "high"), "pct"),
        "changes": num(pointer("models", i, jury, changes), "float3"),
        "rank": None
        if rank is None
        else {
            "low": num(pointer("models", i, jury, "rank", "low"), "rank"),
            "high": num(pointer("models", i, jury, "rank", "high"), "rank"),
        },
        "people": None,
    }


def _adjudicated_rows(num: Numbers, typed: ReportDocument, model_slug: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for i, r in enumerate(typed.models):
        if r.adjudicated_jury is None or r.adjudicated is None:
            continue
        row = _jury_row(num, i, r.model, f"models/{model_slug[r.model]}.html", "adjudicated", "expected_credit_changes")
        if r.adjudicated_people is not None and r.adjudicated_people.value is not None:
            row["people"] = {
                "value": num(pointer("models", i, "adjudicated_people", "value"), "pct"),
                "low": num(pointer("models", i, "adjudicated_people", "low"), "pct"),
                "high": num(pointer("models", i, "adjudicated_people", "high"), "pct"),
            }
        rows.append(row)
    return rows


def _gold_clean_rows(num: Numbers, typed: ReportDocument, model_slug: dict[str, str]) -> list[dict[str, Any]]:
    return [
        _jury_row(num, i, r.model, f"models/{model_slug[r.model]}.html", "gold_clean", "expected_flag_changes")
        for i, r in enumerate(typed.models)
        if r.gold_clean_jury is not None and r.gold_clean is not None
    ]


def _votes(votes: list[Any]) -> list[tuple[str, str]]:
    return [(v.juror, (v.category or "no counted vote").replace("_", " ")) for v in votes]


def _adjudication_files(num: Numbers, typed: ReportDocument, question_slug: dict[Any, str]) -> list[dict[str, Any]]:
    u = typed.adjudication_uncertainty
    files = []
    for fi, f in enumerate(u.files if u is not None else []):
        differs = [
            {
                "model": d.model,
                "question_id": str(d.question_id),
                "page": f"questions/{question_slug[d.question_id]}.html" if d.question_id in question_slug else None,
                "published": d.published.replace("_", " "),
                "latent": d.latent.replace("_", " "),
                "posterior": num(pointer("adjudication_uncertainty", "files", fi, "differs", di, "posterior", d.latent), "pct"),
                "votes": _votes(d.votes),
            }
            for di, d in enumerate(f.differs)
        ]
        files.append({"path": f.path, "records": num(pointer("adjudication_uncertainty", "files", fi, "records"), "int"),
                      "differs": differs})  # fmt: skip
    return files


def _audit_files(num: Numbers, typed: ReportDocument, question_slug: dict[Any, str]) -> list[dict[str, Any]]:
    u = typed.audit_uncertainty
    files = []
    for fi, f in enumerate(u.files if u is not None else []):
        differs = [
            {
                "question_id": str(d.question_id),
                "page": f"questions/{question_slug[d.question_id]}.html" if d.question_id in question_slug else None,
                "published": d.published + ("" if d.decided else " (undecided)"),
                "latent": d.latent,
                "posterior": num(pointer("audit_uncertainty", "files", fi, "differs", di, "posterior", d.latent), "pct"),
                "votes": _votes(d.votes),
            }
            for di, d in enumerate(f.differs)
        ]
        files.append({"path": f.path or "the audit", "records": num(pointer("audit_uncertainty", "files", fi, "records"), "int"),
                      "fitted": f.fitted, "differs": differs})  # fmt: skip
    return files


def uncertainty_section(
    report: dict[str, Any], typed: ReportDocument, model_slug: dict[str, str], question_slug: dict[Any, str]
) -> dict[str, Any] | None:
    """The section's data (None without adjudication or audit files): ``report`` is ``typed`` as
    its JSON dict; ``question_slug`` names each question's page."""
    if typed.adjudication_uncertainty is None and typed.audit_uncertainty is None:
        return None
    num = Numbers(report)
    rows = _adjudicated_rows(num, typed, model_slug)
    gold_rows = _gold_clean_rows(num, typed, model_slug)
    return {
        "rows": rows,
        "gold_rows": gold_rows,
        "people": any(row["people"] is not None for row in rows),
        "ranks": any(row["rank"] is not None for row in rows),
        "gold_ranks": any(row["rank"] is not None for row in gold_rows),
        "notes": uncertainty_notes(typed) + repeat_notes(typed),
        "files": _adjudication_files(num, typed, question_slug),
        "audit_files": _audit_files(num, typed, question_slug),
    }
