"""The document `jury calibrate --json` writes (``CalibrationDocument``) and its parts: each figure
(who against what, which metric, over n items, with its interval) and each confusion matrix.
Built by :func:`jury.results.calibration.compute.calibrate`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Section = Literal["annotators", "comparator", "juror", "panel", "judge", "audit", "anchor"]
SECTIONS: tuple[str, ...] = ("annotators", "comparator", "juror", "panel", "judge", "audit", "anchor")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Figure(_Model):
    """One number: who (subject) against what (reference), which metric, over n items."""

    section: Section
    subject: str = Field(
        description="A comparator, 'juror <name>', 'panel', 'judge <name>' (a recorded judge), a pair of annotators, "
        "a published anchor."
    )
    reference: str = Field(description="What the subject is compared with: the reference labels, a label source, 'union'.")
    metric: str = Field(
        description="accuracy (Wilson 95%), kappa (Cohen's, bootstrap 95%), alpha (Krippendorff, nominal), "
        "category_accuracy, category_kappa, precision, recall, f1 (of 'credited' or 'flagged'); recorded judges "
        "with known positions: first_pick_share (Wilson 95%) and first_pick_p (two-sided binomial test against 0.5)."
    )
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = Field(ge=0, description="Items the figure is computed on.")
    resamples: int | None = Field(None, ge=0, description="Bootstrap intervals (kappa): resamples drawn; else null.")
    degenerate_resamples: int | None = Field(
        None,
        ge=0,
        description="Bootstrap intervals: resamples left out because the statistic is undefined on them; "
        "the interval is null when over 10% are.",
    )


class Confusion(_Model):
    """Counts with rows = the reference's label and columns = the subject's, in `labels` order."""

    section: Section
    subject: str
    reference: str
    labels: list[str]
    matrix: list[list[int]]
    n: int = Field(ge=0)


class CalibrationDocument(_Model):
    """`jury calibrate --json` (see docs/calibrate.md)."""

    jury_version: str
    reference: str = Field(description="How each candidate's reference label was chosen.")
    sources: list[str] = Field(description="Sources of the adjudication labels.")
    annotators: list[str]
    labelled: int = Field(ge=0, description="Candidates with a reference label.")
    ties: int = Field(ge=0, description="Candidates left out: their annotators were split evenly.")
    matched: int = Field(ge=0, description="Labelled candidates matched to a pair of the runs or a verdict.")
    unmatched: list[str] = Field(description="Labelled candidates no pair or verdict matched (question and candidate).")
    anchors_apply: bool = Field(
        description="Whether the labels are FLEX's agreement set, where the published anchors were measured."
    )
    figures: list[Figure]
    confusions: list[Confusion]
    notes: list[str]
