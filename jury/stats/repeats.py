"""Repeated panels: test–retest agreement of each juror, verdicts that change between repeats,
and the spread of a column across repeats.

A panel asked R times (each repeat its own seeded shuffle) gives every juror R votes per
item. Per juror, its repeats are treated as raters of the items: with R = 2, Cohen's kappa
between the two repeats with :func:`jury.stats.core.cohen_kappa_interval`'s bootstrap interval;
with R > 2, Fleiss' kappa across the repeats (:func:`jury.stats.agreement.fleiss_kappa_from_ratings`,
over the items answered in the most common number of repeats) and Cohen's kappa of every pair
of repeats (:func:`jury.stats.agreement.pairwise_kappas`). Abstentions are missing answers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from jury.stats.agreement import PairKappa, fleiss_kappa_from_ratings, pairwise_kappas
from jury.stats.core import KappaInterval, ProportionEstimate, cohen_kappa_interval, wilson

__all__ = ["RetestKappa", "juror_retest", "VerdictStability", "verdict_stability", "ColumnSpread", "column_spread"]


@dataclass(frozen=True)
class RetestKappa:
    """One juror's agreement with itself across repeats.

    :ivar juror: the juror's index.
    :ivar items: items it answered in at least two repeats.
    :ivar agreement: over those items, the share of pairs of its answers that agree.
    :ivar kappa: R = 2: Cohen's kappa between the repeats with its bootstrap interval (over the
        items answered in both); R > 2: Fleiss' kappa across the repeats, no interval.
    :ivar pairwise: Cohen's kappa of every pair of repeats, over the items both answered
        (raters named by the repeat index).
    """

    juror: int
    items: int
    agreement: float | None
    kappa: KappaInterval
    pairwise: tuple[PairKappa, ...]


def _ints(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    return arr.astype(np.int64)


def juror_retest(
    items: ArrayLike,
    jurors: ArrayLike,
    repeats: ArrayLike,
    labels: ArrayLike,
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[RetestKappa]:
    """Test–retest agreement per juror (the module doc's definitions), jurors in index order.

    Args:
        items: ``(V,)`` item of each vote.
        jurors: ``(V,)`` juror of each vote.
        repeats: ``(V,)`` repeat index (0..R-1) of each vote.
        labels: ``(V,)`` class voted; negative: an abstention (a missing answer).
        resamples: bootstrap resamples of the R = 2 interval.
        seed: its seed.
        confidence: its nominal coverage.

    Raises:
        ValueError: arrays of different lengths, or a juror answering one item twice in one repeat.
    """
    it, ju, rp, la = _retest_votes(items, jurors, repeats, labels)
    r_count = int(rp.max()) + 1 if rp.size else 0
    return [
        _juror_retest(int(j), it[ju == j], rp[ju == j], la[ju == j], r_count, resamples, seed, confidence)
        for j in (np.unique(ju) if ju.size else [])
    ]


def _retest_votes(
    items: ArrayLike, jurors: ArrayLike, repeats: ArrayLike, labels: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The votes as int arrays (items, jurors, repeats, labels), checked, abstentions left out."""
    it, ju, rp, la = (_ints(v, n) for v, n in ((items, "items"), (jurors, "jurors"), (repeats, "repeats"), (labels, "labels")))
    if not (it.size == ju.size == rp.size == la.size):
        raise ValueError("items, jurors, repeats and labels differ in length")
    keep = la >= 0
    it, ju, rp, la = it[keep], ju[keep], rp[keep], la[keep]
    if np.unique(np.stack([it, ju, rp]), axis=1).shape[1] != it.size:
        raise ValueError("a juror answered one item more than once in one repeat")
    return it, ju, rp, la


def _juror_retest(
    j: int,
    it: np.ndarray,
    rp: np.ndarray,
    la: np.ndarray,
    r_count: int,
    resamples: int,
    seed: int,
    confidence: float,
) -> RetestKappa:
    """One juror's :class:`RetestKappa` from its votes (item, repeat, label)."""
    by_repeat: dict[str, dict[int, int | None]] = {str(r): {} for r in range(r_count)}
    for i, r, lab in zip(it, rp, la):
        by_repeat[str(int(r))][int(i)] = int(lab)
    answered: dict[int, list[int]] = {}
    for i, lab in zip(it, la):
        answered.setdefault(int(i), []).append(int(lab))
    multi = {i: labs for i, labs in answered.items() if len(labs) >= 2}
    pairs = sum(len(v) * (len(v) - 1) / 2 for v in multi.values())
    same = sum(sum(a == b for x, a in enumerate(v) for b in v[x + 1 :]) for v in multi.values())
    return RetestKappa(
        juror=j,
        items=len(multi),
        agreement=same / pairs if pairs else None,
        kappa=_retest_kappa(by_repeat, multi, r_count, resamples, seed, confidence),
        pairwise=tuple(pairwise_kappas(by_repeat)),
    )


def _retest_kappa(
    by_repeat: dict[str, dict[int, int | None]],
    multi: dict[int, list[int]],
    r_count: int,
    resamples: int,
    seed: int,
    confidence: float,
) -> KappaInterval:
    """Cohen's kappa of repeat 0 against repeat 1 with its bootstrap interval when R = 2, else
    Fleiss' kappa over the items answered at least twice (no interval)."""
    if r_count == 2:
        common = [i for i in by_repeat["0"] if i in by_repeat["1"]]
        return cohen_kappa_interval(
            [by_repeat["0"][i] for i in common],
            [by_repeat["1"][i] for i in common],
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
    ratings = [labs for labs in multi.values()]
    return KappaInterval(fleiss_kappa_from_ratings(ratings) if ratings else None, None, None, len(ratings))


@dataclass(frozen=True)
class VerdictStability:
    """Records whose published verdict changes between repeats.

    :ivar changed: ``k`` records (of ``n`` with a verdict slot in every repeat) whose verdict
        is not the same in every repeat, with the Wilson interval of the share.
    :ivar indices: the changed records' indices.
    :ivar pairwise: ``pairwise[r, s]``: the share of records whose verdicts in repeats r and s
        differ (0 on the diagonal).
    """

    changed: ProportionEstimate
    indices: np.ndarray
    pairwise: np.ndarray


def verdict_stability(verdicts: ArrayLike, *, confidence: float = 0.95) -> VerdictStability:
    """How often the published verdict of a record changes between repeats.

    Args:
        verdicts: ``(R, N)``: the verdict of each record in each repeat's votes alone, as
            class codes; no verdict (no majority, undecided) is its own code (a negative number),
            so a record that goes from a verdict to none has changed.
        confidence: the Wilson interval's nominal coverage.
    """
    v = np.asarray(verdicts)
    if v.ndim != 2 or v.shape[0] < 2:
        raise ValueError(f"verdicts must be (R >= 2 repeats, N records), got shape {v.shape}")
    differs = np.any(v != v[0:1], axis=0)
    r = v.shape[0]
    pair = np.array([[float(np.mean(v[a] != v[b])) if v.shape[1] else 0.0 for b in range(r)] for a in range(r)])
    return VerdictStability(wilson(int(differs.sum()), int(v.shape[1]), confidence), np.flatnonzero(differs), pair)


@dataclass(frozen=True)
class ColumnSpread:
    """A column (one value per model) across R repeats, per model.

    :ivar mean: ``(M,)`` mean over the repeats.
    :ivar sd: ``(M,)`` sample standard deviation (ddof 1).
    :ivar low: ``(M,)`` the smallest value.
    :ivar high: ``(M,)`` the largest value.
    """

    mean: np.ndarray
    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def range(self) -> np.ndarray:
        """``(M,)`` high - low."""
        spread: np.ndarray = self.high - self.low
        return spread


def column_spread(values: ArrayLike) -> ColumnSpread:
    """The spread of a column across repeats.

    Args:
        values: ``(R, M)``: e.g. each repeat's adjudicated accuracy of every model (NaN
            where a repeat has no value for a model: left out of that model's statistics).

    Raises:
        ValueError: not two-dimensional, or fewer than 2 repeats.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[0] < 2:
        raise ValueError(f"values must be (R >= 2 repeats, M models), got shape {v.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model with fewer than 2 values: NaN
        return ColumnSpread(np.nanmean(v, axis=0), np.nanstd(v, axis=0, ddof=1), np.nanmin(v, axis=0), np.nanmax(v, axis=0))
