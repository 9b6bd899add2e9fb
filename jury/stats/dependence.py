"""Do the jurors err independently? A pairwise check of a Dawid–Skene fit (issue 44, item 3).

The latent-class model (:mod:`jury.stats.latent`) assumes that, given an item's true class,
every vote is an independent draw from its juror's confusion row. Jurors who share a mistake
(the same misleading gold, the same training data) break it: the model then reads a shared
mistake as independent evidence, and an interval built on its posteriors is too narrow.

For each pair of jurors (j, k) with common items, this compares:

- the **observed agreement** ``a_jk``: the share of their common items where their votes are
  equal (an item counts when both cast at least one counted vote on it; a juror who voted on
  an item more than once is represented by its first counted vote there, in the order given);
- the agreement the fitted model **implies** for an item whose class is drawn from the priors:
  ``e_jk = sum_c priors[c] * sum_v confusion[j, c, v] * confusion[k, c, v]``;
- the **excess** ``a_jk - e_jk`` and its standardised form ``z_jk = (a_jk - e_jk) / se``
  with ``se = sqrt(e_jk * (1 - e_jk) / n_jk)``, ``n_jk`` the common items.

The statistic is the largest ``z_jk`` over the pairs with at least ``min_common`` common items
(one-sided: jurors who err together agree *more* than the model implies). It is calibrated by a
parametric bootstrap: each resample draws every item's class from the fitted priors and every
counted vote (same items, jurors, repeats and missing votes) from its juror's fitted confusion
row, refits :func:`jury.stats.latent.dawid_skene` with the same smoothing and recomputes the
statistic. The p-value is ``(1 + #{resampled statistic >= observed}) / (1 + resamples)``.
The refits run a batch of resamples at a time (:func:`jury.stats.latent.refit_batch`), which
gives each resample's fit exactly as refitting it alone would (issue 46).
Known (human) classes are not used: the check is of the votes alone, so a fit given them is
first refitted without them (:func:`votes_alone`), as every resample's refit is. Read against
the anchored fit, the statistic was not calibrated by the resamples' unanchored refits: with
independent jurors and 90% of 150 items anchored it fired at p <= 0.05 on 0.113 of 300 panels,
refitted on 0.073 (``tests/test_stats_dependence.py`` pins it).

>>> import numpy as np
>>> pairs = pair_agreement([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 0], np.array([0.5, 0.5]),
...                        np.array([[[0.9, 0.1], [0.2, 0.8]]] * 2), min_common=1)
>>> round(pairs[0].observed, 2), round(pairs[0].expected, 3)
(0.5, 0.75)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from jury.stats.latent import LatentClassFit, dawid_skene, refit_batch

__all__ = [
    "ALPHA",
    "METHOD",
    "PEOPLE_METHOD",
    "DependenceCheck",
    "PairExcess",
    "PeopleCheck",
    "dependence_check",
    "pair_agreement",
    "people_check",
    "votes_alone",
]

ALPHA = 0.05
"""A p-value below this is read as the jurors erring together."""
METHOD = "pairwise agreement, observed vs Dawid-Skene implied; max standardised excess; parametric bootstrap"


@dataclass(frozen=True)
class PairExcess:
    """One pair of jurors (indices ``a < b``): their common items and agreements."""

    a: int
    b: int
    common: int
    observed: float
    expected: float
    excess: float
    z: float | None
    """The standardised excess; None when the pair has fewer than ``min_common`` common items
    (it is reported but not part of the statistic)."""


@dataclass(frozen=True)
class DependenceCheck:
    """The pairwise check: every pair with common items, the statistic and its p-value.

    :ivar statistic: the largest standardised excess; None when no pair has ``min_common``
        common items (nothing to check, ``p_value`` None too).
    :ivar p_value: the parametric-bootstrap p-value.
    :ivar largest: the pair whose standardised excess is the statistic (None with it).
    """

    pairs: list[PairExcess]
    statistic: float | None
    p_value: float | None
    largest: PairExcess | None
    resamples: int
    seed: int
    min_common: int


def _first_votes(items: ArrayLike, jurors: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One counted vote per (item, juror): the first, abstentions (label < 0) left out."""
    it = np.asarray(items, dtype=np.int64)
    ju = np.asarray(jurors, dtype=np.int64)
    la = np.asarray(labels, dtype=np.int64)
    keep = la >= 0
    it, ju, la = it[keep], ju[keep], la[keep]
    key = it * (int(ju.max()) + 1 if ju.size else 1) + ju
    _, first = np.unique(key, return_index=True)
    first.sort()
    return it[first], ju[first], la[first]


def _pair_excess(a: int, b: int, n: int, observed: float, expected: float, min_common: int) -> PairExcess:
    z = None
    if n >= min_common:
        e = min(max(expected, 1e-9), 1 - 1e-9)
        z = (observed - expected) / math.sqrt(e * (1 - e) / n)
    return PairExcess(a, b, n, observed, expected, observed - expected, z)


def pair_agreement(
    items: ArrayLike,
    jurors: ArrayLike,
    labels: ArrayLike,
    priors: ArrayLike,
    confusion: ArrayLike,
    *,
    min_common: int = 5,
) -> list[PairExcess]:
    """Every pair of jurors with at least one common item: observed and implied agreement.

    Args:
        items, jurors, labels: ``(V,)`` the votes (label < 0: an abstention, left out).
        priors: ``(K,)`` the fitted class priors.
        confusion: ``(J, K, K)`` the fitted confusion matrices ``[juror, true class, vote]``.
        min_common: a pair with fewer common items gets ``z`` None.

    Returns:
        the pairs, ordered by (a, b).
    """
    pri = np.asarray(priors, dtype=float)
    conf = np.asarray(confusion, dtype=float)
    it, ju, la = _first_votes(items, jurors, labels)
    n_jurors = conf.shape[0]
    n_items = int(it.max()) + 1 if it.size else 0
    grid = np.full((n_items, n_jurors), -1, dtype=np.int64)
    grid[it, ju] = la
    implied = np.einsum("c,jcv,kcv->jk", pri, conf, conf)
    out = []
    for a in range(n_jurors):
        for b in range(a + 1, n_jurors):
            both = (grid[:, a] >= 0) & (grid[:, b] >= 0)
            n = int(both.sum())
            if n == 0:
                continue
            observed = float(np.mean(grid[both, a] == grid[both, b]))
            out.append(_pair_excess(a, b, n, observed, float(implied[a, b]), min_common))
    return out


def _largest(pairs: list[PairExcess]) -> PairExcess | None:
    scored = [p for p in pairs if p.z is not None]
    return max(scored, key=lambda p: (p.z, -p.a, -p.b)) if scored else None


def _simulate(fit: LatentClassFit, items: np.ndarray, jurors: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """``(resamples, V)``: labels for the given votes drawn from the fit, one row per resample:
    each item's class from the priors (``rng.choice``), then each vote from its juror's
    confusion row (one ``rng.random`` uniform per vote, scaled by the row's cumulated total and
    placed among its cumulated cells)."""
    k = fit.n_classes
    cum = np.cumsum(fit.confusion, axis=2).reshape(-1, k)  # row j*k + c: juror j's cumulated row of class c
    columns = [np.ascontiguousarray(cum[:, v]) for v in range(k)]
    base = jurors * k
    out = np.empty((int(resamples), items.size), dtype=np.int64)
    for r in range(int(resamples)):
        z = rng.choice(k, size=fit.n_items, p=fit.priors)
        rows = base + z[items]
        u = rng.random(items.size) * columns[k - 1][rows]
        labels = np.zeros(items.size, dtype=np.int64)
        for v in range(k):
            labels += u > columns[v][rows]
        out[r] = np.minimum(labels, k - 1)
    return out


BATCH_CELLS = 200_000
"""The most posterior cells (resamples x items x classes) one batch of refits holds."""


def _refit_statistics(
    fit: LatentClassFit,
    items: np.ndarray,
    jurors: np.ndarray,
    sims: np.ndarray,
    *,
    min_common: int,
    max_iter: int,
    tol: float,
) -> np.ndarray:
    """``(R,)``: for each row of ``sims`` (labels of the votes ``items``, ``jurors``, none an
    abstention), the statistic of its own Dawid–Skene refit: the largest standardised excess,
    NaN when no pair has ``min_common`` common items. The same numbers as refitting each row
    with :func:`jury.stats.latent.dawid_skene` and checking it with :func:`pair_agreement`: the
    refits run as batches (:func:`jury.stats.latent.refit_batch`, exactly those fits) and the
    pairs' common items, which do not depend on the labels, are found once."""
    n_jurors = fit.confusion.shape[0]
    n_items, k = fit.n_items, fit.n_classes
    it1, ju1, first = _first_votes(items, jurors, np.arange(items.size))  # every sim's first votes
    present = np.zeros((n_items, n_jurors), dtype=bool)
    present[it1, ju1] = True
    pairs = []
    for a in range(n_jurors):
        for b in range(a + 1, n_jurors):
            both = present[:, a] & present[:, b]
            n = int(both.sum())
            if n:
                pairs.append((a, b, n, np.flatnonzero(both)))
    tops = np.full(sims.shape[0], np.nan)
    step = max(1, BATCH_CELLS // max(n_items * k, 1))
    for start in range(0, sims.shape[0], step):
        chunk = sims[start : start + step]
        priors, confusion, _, _ = refit_batch(
            items,
            jurors,
            chunk,
            n_classes=k,
            n_items=n_items,
            n_jurors=n_jurors,
            smoothing=fit.smoothing,
            max_iter=max_iter,
            tol=tol,
        )
        grid = np.full((chunk.shape[0], n_items, n_jurors), -1, dtype=np.int64)
        grid[:, it1, ju1] = chunk[:, first]
        agree = [np.count_nonzero(grid[:, rows, a] == grid[:, rows, b], axis=1) for a, b, _, rows in pairs]
        for r in range(chunk.shape[0]):
            implied = np.einsum("c,jcv,kcv->jk", priors[r], confusion[r], confusion[r])
            scored = [
                _pair_excess(a, b, n, float(np.float64(agree[p][r]) / n), float(implied[a, b]), min_common)
                for p, (a, b, n, _) in enumerate(pairs)
            ]
            top = _largest(scored)
            if top is not None and top.z is not None:
                tops[start + r] = top.z
    return tops


def votes_alone(fit: LatentClassFit, *, max_iter: int = 1000, tol: float = 1e-10) -> LatentClassFit:
    """``fit`` refitted on its votes with no known classes (its smoothing); ``fit`` itself when
    it had none."""
    if not fit.n_known:
        return fit
    return dawid_skene(
        fit.items,
        fit.jurors,
        fit.labels,
        n_classes=fit.n_classes,
        n_items=fit.n_items,
        n_jurors=fit.n_jurors,
        smoothing=fit.smoothing,
        max_iter=max_iter,
        tol=tol,
    )


def dependence_check(
    fit: LatentClassFit, *, resamples: int = 200, seed: int = 0, min_common: int = 5, max_iter: int = 1000, tol: float = 1e-10
) -> DependenceCheck:
    """The pairwise check of ``fit`` on the votes it was fitted on (the module doc); a fit given
    known classes is first refitted on its votes alone, as every resample is.

    Args:
        fit: a Dawid–Skene fit (:func:`jury.stats.latent.dawid_skene`): its votes, smoothing
            and parameters (those of its votes alone when it had known classes).
        resamples: parametric-bootstrap resamples (``numpy.random.default_rng(seed)``).
        seed: the bootstrap's seed.
        min_common: the fewest common items a pair needs to enter the statistic.
        max_iter, tol: passed to each refit's :func:`jury.stats.latent.dawid_skene`.

    Returns:
        the :class:`DependenceCheck`.
    """
    if int(resamples) < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    fit = votes_alone(fit, max_iter=max_iter, tol=tol)
    it, ju = fit.items, fit.jurors
    pairs = pair_agreement(it, ju, fit.labels, fit.priors, fit.confusion, min_common=min_common)
    largest = _largest(pairs)
    if largest is None or largest.z is None:
        return DependenceCheck(pairs, None, None, None, int(resamples), int(seed), int(min_common))
    statistic = largest.z
    rng = np.random.default_rng(seed)
    sims = _simulate(fit, it, ju, rng, int(resamples))
    tops = _refit_statistics(fit, it, ju, sims, min_common=min_common, max_iter=max_iter, tol=tol)
    at_least = int(np.count_nonzero(tops >= statistic))  # NaN (no pair to score) never counts
    p_value = (1 + at_least) / (1 + int(resamples))
    return DependenceCheck(pairs, statistic, p_value, largest, int(resamples), int(seed), int(min_common))


PEOPLE_METHOD = (
    "pairs of jurors agreeing on a wrong answer on the people-labelled items, against their exact distribution given "
    "each item's human class and condition under independent votes from the fitted confusion rows"
)


@dataclass(frozen=True)
class PeopleCheck:
    """The check against people's labels (:func:`people_check`).

    :ivar items: the labelled items with two counted votes or more (the others cannot agree).
    :ivar observed: the pairs of jurors that agreed on a wrong answer, summed over those items.
    :ivar expected: the sum the fitted model implies under independence, given each item's
        human class and condition.
    :ivar p_value: the exact one-sided p-value ``P(null sum >= observed)``; None without items.
    """

    items: int
    observed: int
    expected: float
    p_value: float | None


def _count_profiles(rows: np.ndarray) -> dict[tuple[int, ...], float]:
    """The distribution of vote counts per class when each voter draws its vote from its own row
    of ``rows`` (``(voters, K)``): a convolution over voters (a Poisson-multinomial)."""
    k = rows.shape[1]
    dist: dict[tuple[int, ...], float] = {(0,) * k: 1.0}
    for row in rows:
        nxt: dict[tuple[int, ...], float] = {}
        for counts, p in dist.items():
            for v in range(k):
                if row[v] > 0:
                    c = counts[:v] + (counts[v] + 1,) + counts[v + 1 :]
                    nxt[c] = nxt.get(c, 0.0) + p * float(row[v])
        dist = nxt
    return dist


def _wrong_pairs(counts: tuple[int, ...], true_class: int) -> int:
    """Pairs of voters that gave the same wrong class."""
    return sum(c * (c - 1) // 2 for v, c in enumerate(counts) if v != true_class)


def people_check(
    confusion: ArrayLike,
    items: ArrayLike,
    jurors: ArrayLike,
    labels: ArrayLike,
    known: ArrayLike,
    condition: Callable[[int, tuple[int, ...]], Hashable] | None = None,
) -> PeopleCheck:
    """Do the jurors err together on the items people labelled? (what the votes alone cannot show).

    On an item whose class people gave, independent jurors land on the same wrong answer as
    often as their confusion rows for that class imply; jurors who share a mistake do so far
    more often, and the fit cannot read it as the class since the class is known. The statistic
    is the number of pairs of jurors that agreed on a wrong answer, summed over the labelled
    items with two counted votes or more (a juror's first counted vote on an item). Its null
    distribution is exact: per item, the distribution of the vote counts per class when each
    juror votes independently from its fitted confusion row of the item's human class,
    restricted to the count profiles whose ``condition`` equals the observed one's (which items
    people labelled may depend on the votes through ``condition`` alone: pass the rule that gives
    the published verdict when the sample was stratified by it), then summed over items by
    convolution. No resampling, no seed.

    Args:
        confusion: ``(J, K, K)`` the fitted confusion matrices ``[juror, true class, vote]``.
        items, jurors, labels: ``(V,)`` the votes (label < 0: an abstention, left out).
        known: ``(n_items,)`` the class people gave each item, negative where none.
        condition: ``(item, counts per class) -> key``; None conditions on nothing.

    Returns:
        the :class:`PeopleCheck`.
    """
    conf = np.asarray(confusion, dtype=float)
    kn = np.asarray(known, dtype=np.int64)
    it, ju, la = _first_votes(items, jurors, labels)
    k = conf.shape[1]
    null = np.ones(1)
    observed, used = 0, 0
    for i in np.flatnonzero(kn >= 0).tolist():
        mine = it == i
        m, truth = int(mine.sum()), int(kn[i])
        if m < 2:
            continue
        seen = tuple(np.bincount(la[mine], minlength=k).tolist())
        want = condition(i, seen) if condition is not None else None
        pmf = np.zeros(m * (m - 1) // 2 + 1)
        for counts, p in _count_profiles(conf[ju[mine], truth]).items():
            if condition is None or condition(i, counts) == want:
                pmf[_wrong_pairs(counts, truth)] += p
        if pmf.sum() <= 0:
            continue  # the fit gives the observed condition no chance: nothing to compare
        null = np.convolve(null, pmf / pmf.sum())
        observed += _wrong_pairs(seen, truth)
        used += 1
    if not used:
        return PeopleCheck(0, 0, 0.0, None)
    expected = float(np.dot(np.arange(null.size), null))
    p_value = float(min(1.0, max(0.0, null[observed:].sum())))
    return PeopleCheck(used, observed, expected, p_value)
