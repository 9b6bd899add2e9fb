"""`jury calibrate`'s reference labels and the figures measured against them.

The reference of a candidate (see :mod:`jury.results.calibration.compute`): the chosen annotator's
label, else the consensus's, else the annotators' majority (a tie has none). ``ReferenceBuilder``
collects the figures and confusion matrices of one calibration: accuracy (Wilson), Cohen's
kappa (bootstrap), confusion counts, precision/recall/F1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jury.inputs.labels import CONSENSUS, AdjudicationLabel
from jury.results.calibration.model import Confusion, Figure, Section
from jury.stats.agreement import confusion, precision_recall_f1
from jury.stats.core import cohen_kappa_interval, wilson
from jury.vocab import CATEGORIES

CORRECT, INCORRECT = "correct", "incorrect"


# ------------------------------------------------------------------ reference labels


def normalised_sql(sql: str | None) -> str:
    return " ".join((sql or "").split())


def candidate_key(label: AdjudicationLabel) -> tuple[Any, ...]:
    return (
        (label.question_id, "model", label.model)
        if label.model is not None
        else (label.question_id, "sql", normalised_sql(label.sql))
    )


def _majority(values: Sequence[Hashable]) -> tuple[Hashable | None, bool]:
    """(the most common value, False) or (None, True) on a tie for the top."""
    top = Counter(values).most_common()
    if len(top) > 1 and top[0][1] == top[1][1]:
        return None, True
    return top[0][0], False


def choose(labels: Sequence[Any], annotator: str | None, value: Callable[[Any], Hashable]) -> tuple[Hashable | None, bool]:
    """The reference value of one candidate's labels: `annotator`'s, else the consensus's, else
    the majority's; (None, True) on a tie, (None, False) when there is nothing to choose from."""
    if annotator is not None:
        labels = [lab for lab in labels if lab.annotator == annotator]
    elif any(lab.annotator == CONSENSUS for lab in labels):
        labels = [lab for lab in labels if lab.annotator == CONSENSUS]
    values = [value(lab) for lab in labels if value(lab) is not None]
    return _majority(values) if values else (None, False)


def reference_labels(
    labels: Iterable[Any], key: Callable[[Any], Hashable], value: Callable[[Any], Hashable], annotator: str | None
) -> tuple[dict[Any, Any], int]:
    groups: dict[Hashable, list[Any]] = {}
    for lab in labels:
        groups.setdefault(key(lab), []).append(lab)
    ref: dict[Any, Any] = {}
    ties = 0
    for k, group in groups.items():
        chosen, tie = choose(group, annotator, value)
        ties += tie
        if chosen is not None:
            ref[k] = chosen
    return ref, ties


def reference_description(annotator: str | None) -> str:
    if annotator is not None:
        return f"annotator {annotator}"
    return f"the {CONSENSUS!r} label where the set has one, else the majority of annotators (ties left out)"


# ------------------------------------------------------------------ items and figures


@dataclass
class Item:
    """One labelled pair: (model, question_id), its candidate key, the reference and the strict outcome."""

    model: str
    question_id: Any
    key: tuple[Any, ...]
    credited: bool
    category: str | None
    outcome: str | None  # the pair's outcome under the evaluation; None without one
    recorded_match: bool = False  # its strict outcome is a recorded `match`, not a comparison here
    matches: dict[str, Any] | None = None
    keys: tuple[str | None, str | None] = (None, None)  # (answer, gold) keys under the evaluation


def credit_label(b: bool) -> str:
    return CORRECT if b else INCORRECT


class ReferenceBuilder:
    def __init__(self, seed: int, resamples: int) -> None:
        self.seed, self.resamples = seed, resamples
        self.figures: list[Figure] = []
        self.confusions: list[Confusion] = []

    def add(
        self,
        section: Section,
        subject: str,
        reference: str,
        metric: str,
        value: float | None,
        n: int,
        low: float | None = None,
        high: float | None = None,
        **boot: Any,
    ) -> None:
        self.figures.append(
            Figure(
                section=section, subject=subject, reference=reference, metric=metric, value=value, low=low, high=high, n=n, **boot
            )
        )

    def agreement(self, section: Section, subject: str, reference: str, truth: list[bool], said: list[bool]) -> None:
        """accuracy, kappa and the confusion matrix of `said` (credited or not) against `truth`."""
        acc = wilson(sum(t == s for t, s in zip(truth, said)), len(truth))
        self.add(section, subject, reference, "accuracy", acc.value, acc.n, acc.low, acc.high)
        self.kappa(section, subject, reference, "kappa", [credit_label(t) for t in truth], [credit_label(s) for s in said])
        labels = [CORRECT, INCORRECT]
        matrix = confusion([credit_label(t) for t in truth], [credit_label(s) for s in said], labels)
        self.confusions.append(
            Confusion(section=section, subject=subject, reference=reference, labels=labels, matrix=matrix, n=len(truth))
        )

    def kappa(self, section: Section, subject: str, reference: str, metric: str, a: list[Any], b: list[Any]) -> None:
        k = cohen_kappa_interval(a, b, resamples=self.resamples, seed=self.seed)
        boot = {"resamples": k.resamples, "degenerate_resamples": k.degenerate_resamples} if k.resamples else {}
        self.add(section, subject, reference, metric, k.value, k.n, k.low, k.high, **boot)

    def categories(self, section: Section, subject: str, pairs: list[tuple[str, str]]) -> None:
        """Agreement over the four categories with the reference categories."""
        truth, said = [p[0] for p in pairs], [p[1] for p in pairs]
        acc = wilson(sum(t == s for t, s in pairs), len(pairs))
        ref = "reference categories"
        self.add(section, subject, ref, "category_accuracy", acc.value, acc.n, acc.low, acc.high)
        self.kappa(section, subject, ref, "category_kappa", truth, said)
        cats = [str(c) for c in CATEGORIES]
        self.confusions.append(
            Confusion(
                section=section, subject=subject, reference=ref, labels=cats, matrix=confusion(truth, said, cats), n=len(pairs)
            )
        )

    def prf(self, section: Section, subject: str, reference: str, truth: list[bool], said: list[bool], what: str) -> None:
        res = precision_recall_f1(truth, said)
        for metric in ("precision", "recall", "f1"):
            n = {"precision": res.tp + res.fp, "recall": res.tp + res.fn}.get(metric, res.n)
            self.add(section, subject, reference, f"{metric} ({what})", getattr(res, metric), n)
