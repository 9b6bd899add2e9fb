"""Inter-juror agreement and position bias of one verdict set.

``agreement_summary(records, style)`` reads the records of one verdict file (plain dicts,
as ``adjudication.build_records`` / ``gold_audit.build_records`` make them or as
``record.model_dump(mode="json")`` gives them back) and returns:

- ``krippendorff_alpha``: nominal Krippendorff's alpha over the records (the units), one
  rating per juror: its effective category, missing when it abstained, was skipped by
  early stop or was inconsistent across the two orders (``--swap``). Missing ratings are
  simply missing; a record with fewer than two ratings cannot be paired and drops out
  (``alpha_units`` counts those that take part).
- ``pairwise_kappa``: Cohen's kappa for every pair of jurors over the records both rated.
- ``position_bias`` (blind adjudication ballots only): among decisive single-answer
  ballots (raw answer ``answer_1`` or ``answer_2``; with ``--swap`` the swapped half is a
  ballot of its own), the share that picked the answer shown first, with a Wilson 95%
  interval and the two-sided binomial test against 0.5, per juror and for the panel.
  Labelled ballots say which answer is the gold and an audit shows one query, so there it
  is ``None`` and ``position_bias_note`` says why.
- ``inconsistent``: per juror, how many votes abstained because the two orders disagreed.

Everything is computed from the votes; nothing here trusts a file's summary.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.judging.panels import BALLOT_STYLES
from jury.stats.agreement import krippendorff_alpha, pairwise_kappas
from jury.stats.core import PositionBiasTest, position_bias
from jury.vocab import CLASSIFY_STYLE, BlindAnswer

__all__ = ["agreement_summary", "agreement_line", "kappa_range", "effective_category", "decisive_ballots"]

BLIND, LABELLED, AUDIT = BALLOT_STYLES
_SINGLE = (BlindAnswer.ANSWER_1, BlindAnswer.ANSWER_2)
_NO_POSITION = {
    LABELLED: "labelled ballots show which answer is the gold: position bias is not measured",
    AUDIT: "an audit ballot shows one query: there is no answer order",
    CLASSIFY_STYLE: "a classification ballot shows one error: there is no answer order",
}


def _get(vote: Any, key: str, default: Any = None) -> Any:
    return vote.get(key, default) if isinstance(vote, dict) else getattr(vote, key, default)


def effective_category(vote: Any) -> str | None:
    """The category a vote counts as: None when it abstained, was skipped or was inconsistent."""
    if _get(vote, "abstained", False) or _get(vote, "skipped", False) or _get(vote, "inconsistent", False):
        return None
    category: str | None = _get(vote, "category")
    return category


def decisive_ballots(vote: Any) -> list[str]:
    """The raw single-answer picks (answer_1 / answer_2) of a vote and of its swapped half.

    A skipped vote was never asked. An inconsistent vote's two halves are still ballots the
    juror answered (a juror that always picks answer_1 is inconsistent exactly because of
    its position bias), so they count."""
    if _get(vote, "skipped", False):
        return []
    halves = [vote, _get(vote, "swapped")]
    return [str(_get(h, "raw_verdict")) for h in halves if h is not None and _get(h, "raw_verdict") in _SINGLE]


class PositionBiases(TypedDict):
    """Blind ballots: the panel's first-position share, and each juror's."""

    panel: PositionBiasTest
    jurors: dict[str, PositionBiasTest]


class KappaPair(TypedDict):
    """Cohen's kappa of jurors a and b over the n units both rated (None when undefined)."""

    a: str
    b: str
    kappa: float | None
    n: int


class AgreementSummary(TypedDict):
    """Agreement and position bias of one verdict set, as the verdict file and the result state it."""

    style: str
    units: int
    alpha_units: int
    krippendorff_alpha: float | None
    pairwise_kappa: list[KappaPair]
    inconsistent: dict[str, int]
    position_bias: PositionBiases | None
    position_bias_note: str | None


def _bias(picks: list[str]) -> PositionBiasTest:
    return position_bias(sum(p == BlindAnswer.ANSWER_1 for p in picks), len(picks))


def agreement_summary(records: list[dict[str, Any]], style: str) -> AgreementSummary:
    """Agreement and position bias of one verdict set (see the module docstring).

    ``style``: the panel's ballot style, ``blind`` or ``labelled`` for adjudications,
    ``audit`` for gold audits; for ``classify`` (`jury suites --classify`) a vote's rating is
    the category it picked (its raw answer)."""
    jurors: list[str] = []
    units: list[list[str | None]] = []
    by_juror: dict[str, dict[int, str | None]] = {}
    picks: dict[str, list[str]] = {}
    inconsistent: dict[str, int] = {}
    for i, record in enumerate(records):
        unit = []
        for vote in _get(record, "votes") or []:
            name = str(_get(vote, "juror"))
            if name not in by_juror:
                jurors.append(name)
                by_juror[name], picks[name], inconsistent[name] = {}, [], 0
            category = effective_category(vote)
            if style == CLASSIFY_STYLE and category is not None:  # jurors agree on the category they picked
                category = _get(vote, "raw_verdict")
            unit.append(category)
            by_juror[name][i] = category
            picks[name] += decisive_ballots(vote)
            inconsistent[name] += bool(_get(vote, "inconsistent", False))
        units.append(unit)
    pairable = sum(sum(c is not None for c in u) >= 2 for u in units)
    biases = None
    if style == BLIND:
        biases = PositionBiases(
            panel=_bias([p for name in jurors for p in picks[name]]), jurors={name: _bias(picks[name]) for name in jurors}
        )
    return AgreementSummary(
        style=style,
        units=len(records),
        alpha_units=pairable,
        krippendorff_alpha=krippendorff_alpha(units),
        pairwise_kappa=[KappaPair(a=p.a, b=p.b, kappa=p.value, n=p.n) for p in pairwise_kappas(by_juror)],
        inconsistent=inconsistent,
        position_bias=biases,
        position_bias_note=_NO_POSITION.get(style),
    )


def kappa_range(summary: AgreementSummary) -> tuple[float, float] | None:
    """(lowest, highest) defined pairwise kappa of an ``agreement_summary``; None if none is defined."""
    values = [p["kappa"] for p in summary["pairwise_kappa"] if p["kappa"] is not None]
    return (min(values), max(values)) if values else None


def agreement_line(summary: AgreementSummary) -> str:
    """One line: alpha, the range of pairwise kappa, and for blind ballots the panel's first-position share."""
    alpha = summary["krippendorff_alpha"]
    parts = [f"agreement: Krippendorff's alpha {'—' if alpha is None else f'{alpha:.3f}'} (n = {summary['alpha_units']})"]
    span = kappa_range(summary)
    if span is None:
        parts.append("pairwise Cohen's kappa —")
    elif span[0] == span[1]:
        parts.append(f"pairwise Cohen's kappa {span[0]:.3f}")
    else:
        parts.append(f"pairwise Cohen's kappa {span[0]:.3f} to {span[1]:.3f}")
    biases = summary["position_bias"]
    bias = None if biases is None else biases["panel"]
    if bias is not None:
        if bias["n"]:
            parts.append(f"first answer picked {bias['share']:.1%} of {bias['n']} (p = {bias['p_value']:.3g})")
        else:
            parts.append("first answer picked — (no single-answer ballot)")
    inconsistent = sum(summary["inconsistent"].values())
    if inconsistent:
        parts.append(f"inconsistent across orders {inconsistent}")
    return "; ".join(parts)
