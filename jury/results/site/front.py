"""The data of the site's front page: every number read from the report by its JSON Pointer.

Each cell carries the pointer and the exact JSON value beside the formatted text (see
:class:`Numbers`), so a test can check the page against ``report.json``; the three columns'
Wilson intervals are placed on one common scale (:func:`_bar`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from jury.results.report.model import ReportDocument
from jury.results.report.render import coverage_note, decided_by_rows, dollars, rank_cell
from jury.results.site.headlines import headlines
from jury.stats.core import ordinal
from jury.vocab import COLUMNS, COMPOSITION, Column

Cells = dict[str, Any]
"""A table cell's parts: Numbers cells (and a bar or strip) by name."""


def fmt_pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def fmt_int(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def fmt_float3(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def fmt_rank(v: int | None) -> str:
    return "—" if v is None else ordinal(v)


FORMATS = {"pct": fmt_pct, "int": fmt_int, "float3": fmt_float3, "rank": fmt_rank, "usd": dollars}


def pointer(*parts: str | int) -> str:
    """A JSON Pointer (RFC 6901) into the report: pointer("models", 0, "strict", "k")."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(data: Any, path: str) -> Any:
    """The value at a JSON Pointer."""
    for part in path.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


class Numbers:
    """Cells of the front page: the value at a JSON path of the report, formatted, carrying the
    path and the exact JSON value (data-json, data-value) so a test can compare them."""

    def __init__(self, report: dict[str, Any]):
        self.report = report

    def __call__(self, path: str, fmt: str = "int", href: str | None = None) -> dict[str, Any]:
        value = resolve(self.report, path)
        return {"path": path, "value": json.dumps(value), "text": FORMATS[fmt](value), "fmt": fmt, "href": href, "raw": value}


def _bar(p: dict[str, Any] | None, lo: float, hi: float) -> dict[str, Any] | None:
    """A Wilson interval as x positions (0..100) on the table's common scale."""
    if not p or p.get("value") is None:
        return None
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return round(100 * (v - lo) / span, 2)

    return {"x1": x(p["low"]), "x2": x(p["high"]), "cx": x(p["value"])}


def _scale(report: dict[str, Any]) -> tuple[float, float]:
    lows = [r[c]["low"] for r in report["models"] for c in COLUMNS if r.get(c) and r[c]["low"] is not None]
    highs = [r[c]["high"] for r in report["models"] for c in COLUMNS if r.get(c) and r[c]["high"] is not None]
    if not lows:
        return 0.0, 1.0
    lo, hi = min(lows), max(highs)
    pad = max(0.01, 0.03 * (hi - lo))
    return max(0.0, lo - pad), min(1.0, hi + pad)


def _column_cells(num: Numbers, r: dict[str, Any], i: int, c: str, page: str, scale: tuple[float, float]) -> Cells | None:
    """One of a model's three columns: its value, interval, k/n (linked to the answers), rank and bar."""
    if r.get(c) is None:
        return None
    k_tag = {"strict": "match", "gold_clean": "clean_match", "adjudicated": "credited"}[c]
    n_tag = "clean" if c == "gold_clean" else "routed"
    return {
        "value": num(pointer("models", i, c, "value"), "pct"),
        "low": num(pointer("models", i, c, "low"), "pct"),
        "high": num(pointer("models", i, c, "high"), "pct"),
        "k": num(pointer("models", i, c, "k"), "int", f"{page}#show={k_tag}"),
        "n": num(pointer("models", i, c, "n"), "int", f"{page}#show={n_tag}"),
        "rank": num(pointer("models", i, f"{c}_rank"), "rank"),
        "bar": _bar(r[c], *scale),
    }


def _model_row(num: Numbers, i: int, page: str, present: Sequence[str], scale: tuple[float, float]) -> dict[str, Any]:
    """The main table's row of model i."""
    r = num.report["models"][i]
    row: dict[str, Any] = {"model": r["model"], "page": page, "families": r["families"], "columns": {}}
    row["routed"] = num(pointer("models", i, "routed"), "int", f"{page}#show=routed")
    row["questions"] = num(pointer("models", i, "questions"), "int", f"{page}#show=all")
    row["routing_accuracy"] = num(pointer("models", i, "routing_accuracy"), "pct")
    if r.get("answered") is not None:
        row["answered"] = num(pointer("models", i, "answered"), "int", f"{page}#show=all")
        row["gold_questions"] = num(pointer("models", i, "gold_questions"), "int")
        row["short"] = r["answered"] < r["gold_questions"]
    row["columns"] = {c: _column_cells(num, r, i, c, page, scale) for c in present}
    row["rank_shift"] = r["rank_shift"]
    row["rank_delta"] = num(pointer("models", i, "rank_delta"), "int") if r["rank_delta"] is not None else None
    row["jury_reached"] = num(pointer("models", i, "jury_reached"), "int", f"{page}#show=jury")
    row["composition"] = [
        (
            str(c),
            num(pointer("models", i, "composition", c), "int", f"{page}#show={c}"),
            num(pointer("models", i, "composition_pct", c), "pct"),
        )
        for c in COMPOSITION
    ]
    row["near_miss"] = num(pointer("models", i, "near_miss"), "int", f"{page}#show=near_miss")
    row["not_executed"] = num(pointer("models", i, "not_executed"), "int", f"{page}#show=not_executed")
    row["cost"] = num(pointer("models", i, "adjudication_cost_usd"), "usd")
    row["unpriced"] = list(r.get("adjudication_unpriced_models") or [])
    return row


def _stability(num: Numbers, typed: ReportDocument, model_slug: dict[str, str]) -> dict[str, Any] | None:
    """The rank-stability table: each model's rank cell and rank-probability strip per column."""
    rs = typed.rank_stability
    if rs is None:
        return None
    n_models = len(typed.models)
    present = [c for c in COLUMNS if c in rs.columns]

    def cells(c: str, i: int) -> Cells:
        entry = rs.columns[c][i]
        return {
            "text": rank_cell(entry),
            "rank": num(pointer("rank_stability", "columns", c, i, "rank"), "rank"),
            "low": num(pointer("rank_stability", "columns", c, i, "low"), "rank"),
            "high": num(pointer("rank_stability", "columns", c, i, "high"), "rank"),
            "strip": [
                {"x": j * 100 / max(n_models, 1), "w": 100 / max(n_models, 1), "p": round(p, 4), "rank": j + 1}
                for j, p in enumerate(entry.probabilities)
            ],
        }

    return {
        "resamples": rs.resamples,
        "seed": rs.seed,
        "questions": rs.questions,
        "columns": present,
        "rows": [
            {"model": r.model, "page": f"models/{model_slug[r.model]}.html", "cells": {c: cells(c, i) for c in present}}
            for i, r in enumerate(typed.models)
        ],
    }


def _correlations(num: Numbers, typed: ReportDocument) -> list[tuple[str, str, Cells, Any]]:
    """(sentence, key, the r cell, the correlation's JSON) of the three correlations."""
    strength = Column(typed.correlations.gold_defect_share_vs_strength.strength).label
    return [
        (name, key, num(pointer("correlations", key, "r"), "float3"), num.report["correlations"][key])
        for name, key in (
            (f"Spearman, gold-defect share vs {strength} accuracy", "gold_defect_share_vs_strength"),
            ("Pearson, routing accuracy vs challenging share of the denominator", "routing_vs_challenging_share"),
            ("Pearson, routing accuracy vs mean difficulty of the denominator", "routing_vs_mean_difficulty"),
        )
    ]


def _oracle_rows(num: Numbers, model_slug: dict[str, str], present: Sequence[str]) -> list[dict[str, Any]]:
    """The oracle-routing table's rows."""

    def cells(r: dict[str, Any], i: int, c: str) -> Cells | None:
        if r.get(c) is None:
            return None
        return {
            "value": num(pointer("oracle_routing", "models", i, c, "value"), "pct"),
            "k": num(pointer("oracle_routing", "models", i, c, "k"), "int"),
            "n": num(pointer("oracle_routing", "models", i, c, "n"), "int"),
            "rank": num(pointer("oracle_routing", "models", i, f"{c}_rank"), "rank"),
        }

    return [
        {"model": r["model"], "page": f"models/{model_slug[r['model']]}.html", "cells": {c: cells(r, i, c) for c in present}}
        for i, r in enumerate(num.report["oracle_routing"]["models"])
    ]


def front_page(report: dict[str, Any], typed: ReportDocument, model_slug: dict[str, str]) -> dict[str, Any]:
    """The front page's data: ``report`` is ``typed`` as its JSON dict (what the cells point into)."""
    num = Numbers(report)
    scale = _scale(report)
    present = [c for c in COLUMNS if any(r.get(c) for r in report["models"])]
    rows = [_model_row(num, i, f"models/{model_slug[r['model']]}.html", present, scale) for i, r in enumerate(report["models"])]
    families = [
        (
            name,
            num(pointer("families", name, "format_equivalence"), "int"),
            num(pointer("families", name, "jury_reached"), "int"),
            num(pointer("families", name, "share"), "pct"),
        )
        for name in report["families"]
    ]
    return {
        "rows": rows,
        "present": present,
        "scale": scale,
        "stability": _stability(num, typed, model_slug),
        "correlations": _correlations(num, typed),
        "families": families,
        "control": report["control"],
        "oracle": {
            "questions": num(pointer("oracle_routing", "questions"), "int"),
            "rows": _oracle_rows(num, model_slug, present),
        },
        "findings": headlines(report),
        "decided_by": decided_by_rows(typed),
        "coverage": coverage_note(typed),
        "gold_errors": report["gold_errors"],
    }
