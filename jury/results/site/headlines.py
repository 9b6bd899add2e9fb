"""Headline findings of a report, each sentence built from the report's own numbers.

No number is typed here: every figure in a sentence is computed from the ``Report`` (its JSON
dict) that ``jury report -f json`` writes, so a finding changes when the data does. Each
finding is a dict: ``key`` (what it is about), ``text`` (the sentence) and ``numbers`` (the
computed values it states, for tests and for readers who want them unformatted).
"""

from __future__ import annotations

from typing import Any

from jury.stats.core import ordinal
from jury.vocab import COMPOSITION, Verdict


def _pts(k: int, n: int) -> float:
    return 100.0 * k / n if n else 0.0


def largest_rank_shift(report: dict[str, Any]) -> dict[str, Any] | None:
    """The model whose rank moves most from strict to adjudicated, and its lift split into the
    credit for format-equivalent answers and for gold defects (points of accuracy)."""
    moved = [m for m in report["models"] if m.get("rank_delta") is not None and m.get("adjudicated")]
    if not moved:
        return None
    largest = max(abs(r["rank_delta"]) for r in moved)
    tied = [r for r in moved if abs(r["rank_delta"]) == largest]  # every model on the largest shift, run order
    each = [_shift_numbers(r) for r in tied]
    numbers = {**each[0], "models": each}  # the first's numbers at the top, as for a single model
    if largest == 0:
        lifts = {r["model"]: r["adjudicated"]["k"] - r["strict"]["k"] for r in moved}
        top = max(lifts.values())
        best = [r for r in moved if lifts[r["model"]] == top]
        b = best[0]["adjudicated"]
        numbers.update(model=best[0]["model"], lift_points=_pts(top, b["n"]), models=[_shift_numbers(r) for r in best])
        if len(best) == 1:
            who = f"{best[0]['model']}'s, {numbers['lift_points']:.1f} points"
        elif len({f"{n['lift_points']:.1f}" for n in numbers["models"]}) == 1:
            who = f"shared by {_names([r['model'] for r in best])}, {numbers['lift_points']:.1f} points each"
        else:  # the same credited count over different denominators
            who = "shared by " + _names([f"{n['model']} ({n['lift_points']:.1f} points)" for n in numbers["models"]])
        text = f"No model changes rank from strict to adjudicated; the largest lift is {who}."
        return {"key": "largest_rank_shift", "text": text, "numbers": numbers}
    if len(tied) == 1:
        text = f"{_moves(each[0])} from strict to adjudicated, the largest rank shift: {_gains(each[0], 'its accuracy')}."
    else:
        text = (
            f"{len(tied)} models share the largest rank shift from strict to adjudicated, {largest} "
            f"place{'s' if largest != 1 else ''}: " + "; ".join(f"{_moves(n)} ({_gains(n, 'accuracy')})" for n in each) + "."
        )
    return {"key": "largest_rank_shift", "text": text, "numbers": numbers}


def _shift_numbers(m: dict[str, Any]) -> dict[str, Any]:
    n = m["adjudicated"]["n"]
    fe, gd = m["composition"][Verdict.FORMAT_EQUIVALENCE], m["composition"][Verdict.GOLD_DEFECT]
    return {
        "model": m["model"],
        "strict_rank": m["strict_rank"],
        "adjudicated_rank": m["adjudicated_rank"],
        "rank_delta": m["rank_delta"],
        "lift_points": _pts(m["adjudicated"]["k"] - m["strict"]["k"], n),
        "format_equivalence_points": _pts(fe, n),
        "gold_defect_points": _pts(gd, n),
    }


def _moves(n: dict[str, Any]) -> str:
    direction = "rises" if n["rank_delta"] > 0 else "falls"
    return f"{n['model']} {direction} from {ordinal(n['strict_rank'])} to {ordinal(n['adjudicated_rank'])}"


def _gains(n: dict[str, Any], lead: str) -> str:
    """ "<lead> gains 2.3 points, 1.6 from format-equivalent answers and 0.8 from gold defects"."""
    return (
        f"{lead} gains {n['lift_points']:.1f} points, {n['format_equivalence_points']:.1f} from "
        f"format-equivalent answers and {n['gold_defect_points']:.1f} from gold defects"
    )


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def format_cost(report: dict[str, Any]) -> dict[str, Any] | None:
    """The model that right answers in the wrong shape cost most (points of strict accuracy)."""
    rows = [m for m in report["models"] if m.get("adjudicated") and m["adjudicated"]["n"]]
    if not rows:
        return None
    m = max(rows, key=lambda r: r["composition"][Verdict.FORMAT_EQUIVALENCE] / r["adjudicated"]["n"])
    fe, n = m["composition"][Verdict.FORMAT_EQUIVALENCE], m["adjudicated"]["n"]
    if not fe:
        return None
    pts = _pts(fe, n)
    text = f"Right answers in the wrong shape cost {m['model']} {pts:.1f} points of strict accuracy ({fe:,} of {n:,} questions)."
    return {"key": "format_cost", "text": text, "numbers": {"model": m["model"], "points": pts, "format_equivalence": fe, "n": n}}


def misses_not_model_errors(report: dict[str, Any]) -> dict[str, Any] | None:
    """Over every model: the share of the misses the jury judged that are not the model's error."""
    totals = {c: sum(m["composition"][c] for m in report["models"]) for c in COMPOSITION}
    reached = sum(m["jury_reached"] for m in report["models"])
    if not reached:
        return None
    gd, fe, ge = totals[Verdict.GOLD_DEFECT], totals[Verdict.FORMAT_EQUIVALENCE], totals[Verdict.GENUINE_ERROR]
    rest = reached - gd - fe - ge
    share = (gd + fe) / reached
    text = (
        f"Of the {reached:,} misses the jury judged, {100 * share:.1f}% are not model errors: {gd:,} gold defects and "
        f"{fe:,} format-equivalent answers; {ge:,} are genuine errors and {rest:,} ambiguous or without a majority."
    )
    numbers = {
        "reached": reached,
        "share": share,
        str(Verdict.GOLD_DEFECT): gd,
        str(Verdict.FORMAT_EQUIVALENCE): fe,
        str(Verdict.GENUINE_ERROR): ge,
        "rest": rest,
    }
    return {"key": "misses_not_model_errors", "text": text, "numbers": numbers}


def families_losing_to_format(report: dict[str, Any], top: int = 3) -> dict[str, Any] | None:
    """The families whose jury-reached misses are most often format-equivalent answers."""
    fams = [(name, f) for name, f in report["families"].items() if f["jury_reached"] and f["share"]]
    if not fams:
        return None
    fams.sort(key=lambda nf: (-nf[1]["share"], nf[0]))
    shown = fams[:top]
    parts = [f"{name} ({100 * f['share']:.1f}% of {f['jury_reached']:,})" for name, f in shown]
    text = (
        "The families that lose most to format (format-equivalent share of their jury-reached misses): " + ", ".join(parts) + "."
    )
    return {"key": "families_losing_to_format", "text": text, "numbers": {name: f["share"] for name, f in shown}}


def headlines(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings that apply to this report, in reading order."""
    found = (largest_rank_shift(report), format_cost(report), misses_not_model_errors(report), families_losing_to_format(report))
    return [f for f in found if f is not None]
