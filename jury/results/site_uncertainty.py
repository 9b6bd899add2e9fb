"""The front page's "The jury's own uncertainty" section: per model the adjudicated column's
published value beside the latent-class expected value with its questions + jury interval, the
expected credit changes, the rank under the same resamples and (with a review sample) the
people-anchored value; per adjudication file its fit, its dependence check and repeats lines
(the table and Markdown reports' own lines) and the records whose latent-class verdict is not
the published one, with their votes. Every number is a :class:`jury.results.site_front.Numbers`
cell, so it carries its JSON pointer into the report."""

from __future__ import annotations

from typing import Any

from jury.results.report_model import ReportDocument
from jury.results.report_render import repeat_notes, uncertainty_notes
from jury.results.site_front import Numbers, pointer


def uncertainty_section(
    report: dict[str, Any], typed: ReportDocument, model_slug: dict[str, str], question_slug: dict[Any, str]
) -> dict[str, Any] | None:
    """The section's data (None without adjudication files): ``report`` is ``typed`` as its
    JSON dict; ``question_slug`` names each question's page."""
    u = typed.adjudication_uncertainty
    if u is None:
        return None
    num = Numbers(report)
    rows = []
    for i, r in enumerate(typed.models):
        if r.adjudicated_jury is None or r.adjudicated is None:
            continue
        j = r.adjudicated_jury
        row: dict[str, Any] = {
            "model": r.model,
            "page": f"models/{model_slug[r.model]}.html",
            "published": num(pointer("models", i, "adjudicated", "value"), "pct"),
            "expected": num(pointer("models", i, "adjudicated_jury", "expected"), "pct"),
            "low": num(pointer("models", i, "adjudicated_jury", "low"), "pct"),
            "high": num(pointer("models", i, "adjudicated_jury", "high"), "pct"),
            "changes": num(pointer("models", i, "adjudicated_jury", "expected_credit_changes"), "float3"),
            "rank": None,
            "people": None,
        }
        if j.rank is not None:
            row["rank"] = {
                "low": num(pointer("models", i, "adjudicated_jury", "rank", "low"), "rank"),
                "high": num(pointer("models", i, "adjudicated_jury", "rank", "high"), "rank"),
            }
        if r.adjudicated_people is not None and r.adjudicated_people.value is not None:
            row["people"] = {
                "value": num(pointer("models", i, "adjudicated_people", "value"), "pct"),
                "low": num(pointer("models", i, "adjudicated_people", "low"), "pct"),
                "high": num(pointer("models", i, "adjudicated_people", "high"), "pct"),
            }
        rows.append(row)
    files = []
    for fi, f in enumerate(u.files):
        differs = [
            {
                "model": d.model,
                "question_id": str(d.question_id),
                "page": f"questions/{question_slug[d.question_id]}.html" if d.question_id in question_slug else None,
                "published": d.published.replace("_", " "),
                "latent": d.latent.replace("_", " "),
                "posterior": num(pointer("adjudication_uncertainty", "files", fi, "differs", di, "posterior", d.latent), "pct"),
                "votes": [(v.juror, (v.category or "no counted vote").replace("_", " ")) for v in d.votes],
            }
            for di, d in enumerate(f.differs)
        ]
        files.append({"path": f.path, "records": num(pointer("adjudication_uncertainty", "files", fi, "records"), "int"),
                      "differs": differs})  # fmt: skip
    return {
        "rows": rows,
        "people": any(row["people"] is not None for row in rows),
        "ranks": any(row["rank"] is not None for row in rows),
        "notes": uncertainty_notes(typed) + repeat_notes(typed),
        "files": files,
    }
