"""The report's ``corrected`` section: the panel's rate corrected by two reviewers' decisions on a
locked stratified sample (``jury report --review-sample S --sample-review A --sample-review B``).

The numbers are ``jury.review_corrected``'s (Rogan–Gladen with the sample's design weights,
:func:`jury.stats.correction.corrected_rate`); this module holds their shape in the report's JSON
and their text: the one line "gold defect rate: panel says X %, corrected by 2 reviewers on n
items: Y % [lo, hi]" (``jury review corrected`` prints the same line) and the panel's
sensitivity and specificity on the sample with their intervals.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SampleShare(_Model):
    """A design-weighted share on the human-labelled sample (jury.stats.correction.DesignRate):
    the Wilson interval at the effective size; null when its class is empty in the sample."""

    value: float | None
    low: float | None
    high: float | None
    n: int = Field(ge=0, description="Sampled items in the denominator (unweighted).")


class RateByKind(_Model):
    """One kind of the sample's records: the panel's rate over the frame and the corrected rate."""

    kind: Literal["gold", "adjudication"] = Field(
        description="gold: the audited gold's defect rate (flagged = defective); adjudication: the credited rate."
    )
    population: int = Field(ge=0, description="Records of this kind in the sample's frame, N.")
    sample: int = Field(ge=0, description="Sampled records both reviewers decided (or the round settled), n.")
    apparent: float = Field(description="The panel's rate over the N records (its flag rate, or credited rate).")
    value: float | None = Field(description="The Rogan–Gladen corrected rate, clipped to [0, 1] (null: undefined).")
    low: float | None = Field(description="The delta (Wald) interval's lower bound.")
    high: float | None
    bootstrap_low: float | None = Field(description="The stratified bootstrap percentile interval.")
    bootstrap_high: float | None
    sensitivity: SampleShare = Field(description="The panel's sensitivity on the sample, design-weighted.")
    specificity: SampleShare = Field(description="The panel's specificity on the sample, design-weighted.")
    reason: str | None = Field(description="Why the correction is undefined (Se + Sp - 1 <= 0), else null.")


class PeopleAnchored(_Model):
    """A model's adjudicated accuracy with the panel's credit corrected by the reviewers
    (jury.stats.correction.corrected_accuracies): the headline interval when present."""

    published: float | None = Field(description="(strict matches + credited) / routed: the panel's documented rule.")
    value: float | None = Field(
        description="(strict matches + t x judged) / routed, t the Rogan–Gladen corrected share of the judged failures "
        "that deserve credit (null: undefined, see reason)."
    )
    low: float | None = Field(description="The joint bootstrap's percentile interval: questions and the human sample.")
    high: float | None
    credited_share: float | None = Field(description="t, clipped to [0, 1].")
    judged: int = Field(ge=0, description="The model's failures the panel judged (F).")
    credited: int = Field(ge=0, description="Of them, the panel credited (C).")
    reason: str | None = Field(description="Why the value or its interval is undefined, else null.")


class ModelAnchored(PeopleAnchored):
    """One model's row of the corrected section."""

    model: str


class Corrected(_Model):
    """--review-sample: the panel's rates corrected by two reviewers, and (with adjudication
    records in the sample) each model's adjudicated accuracy corrected by them."""

    sample_file: str = Field(description="The locked sample file the reviewers decided.")
    sample_sha256: str = Field(description="Its content_sha256.")
    review_files: list[str] = Field(description="The two reviewers' locked review files.")
    settled: str | None = Field(description="The adjudication round file settling their disagreements, if given.")
    reviewers: list[str]
    confidence: float
    rates: list[RateByKind] = Field(description="One per kind of record in the sample (gold first).")
    models: list[ModelAnchored] = Field(
        default_factory=list,
        description="With adjudication records in the sample: each model's adjudicated accuracy corrected by the "
        "reviewers, the panel's Se and Sp pooled over models (empty otherwise).",
    )
    pooled: bool = Field(
        True,
        description="Whether the models share one Se and Sp (pooled over the frame); false when the sample was drawn "
        "by model and each model is corrected by its own records.",
    )
    models_note: str | None = Field(
        None, description="Why the per-model correction was not made (e.g. the sample's frame holds other verdict files)."
    )


def _pct(x: float | None) -> str:
    return f"{100 * (x or 0):.1f}"


def rate_line(kind: str, reviewers: int, apparent: float, sample: int, value: float | None, low: float | None,
              high: float | None, reason: str | None) -> str:  # fmt: skip
    """ "gold defect rate: panel says X %, corrected by 2 reviewers on n items: Y % [lo, hi]"."""
    what = "gold defect rate" if kind == "gold" else "credited rate"
    head = f"{what}: panel says {100 * apparent:.1f} %, corrected by {reviewers} reviewers on {sample} items: "
    if value is None:
        return head + f"undefined ({reason})"
    return head + f"{_pct(value)} % [{_pct(low)}, {_pct(high)}]"


def _bounds_text(low: float | None, high: float | None) -> str:
    return "[interval refused]" if low is None or high is None else f"[{_pct(low)}, {_pct(high)}]"


def _share(name: str, s: SampleShare) -> str:
    if s.value is None:
        return f"{name} undefined (no such item in the sample)"
    return f"{name} {_pct(s.value)} % [{_pct(s.low)}, {_pct(s.high)}] (n = {s.n})"


def corrected_lines(c: Corrected) -> list[str]:
    """The section as lines: per kind the rate line and the panel's Se and Sp on the sample."""
    lines = []
    for r in c.rates:
        lines.append(rate_line(r.kind, len(c.reviewers), r.apparent, r.sample, r.value, r.low, r.high, r.reason))
        lines.append(f"  the panel on the sample: {_share('sensitivity', r.sensitivity)}, {_share('specificity', r.specificity)}")
    from jury.results.render import safe

    if c.models:
        how = "Se and Sp pooled over models" if c.pooled else "each model's own Se and Sp (a sample by model)"
        lines.append(f"adjudicated accuracy corrected by people (headline; {how}; 95 % interval over questions and the sample):")
        for m in c.models:
            body = f"undefined ({m.reason})" if m.value is None else f"{_pct(m.value)} % {_bounds_text(m.low, m.high)}"
            lines.append(f"  {safe(m.model)}: {body} (panel's rule {_pct(m.published)} %, {m.credited}/{m.judged} credited)")
    elif c.models_note:
        lines.append(f"adjudicated accuracy corrected by people: not computed ({c.models_note})")
    lines.append(
        f"reviewers {safe(', '.join(c.reviewers))} on the sample {safe(c.sample_file)}"
        + (f", disagreements settled by {safe(c.settled)}" if c.settled else "")
        + f"; intervals {100 * c.confidence:g} %"
    )
    return lines


def corrected_text(c: Corrected | None, fmt: str) -> str:
    """The section after the table or Markdown report (csv and json keep their shape)."""
    if c is None or fmt not in ("table", "md"):
        return ""
    lines = corrected_lines(c)
    if fmt == "md":
        return "\n### Corrected by people\n\n" + "".join(f"- {line.strip()}\n" for line in lines)
    return "\ncorrected by people\n" + "".join(f"{line}\n" for line in lines)
