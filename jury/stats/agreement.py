"""Agreement between raters: chance-corrected coefficients (Fleiss', Cohen's kappa,
Krippendorff's alpha), plain agreement, confusion counts and precision/recall.

Pure functions with no I/O over numpy (loaded on first use); the rest of jury imports them
from here. The bootstrap interval of Cohen's kappa lives in :mod:`jury.stats.core` with the
other bootstrap intervals.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
else:  # numpy loads on first use, as in jury.stats.core

    class _LazyNumpy:
        def __getattr__(self, name: str) -> Any:
            import numpy

            return getattr(numpy, name)

    np = _LazyNumpy()

__all__ = ["fleiss_kappa", "fleiss_kappa_from_ratings", "cohen_kappa", "percent_agreement", "krippendorff_alpha"]
__all__ += ["confusion", "PrecisionRecall", "precision_recall_f1", "PairKappa", "pairwise_kappas"]


# --------------------------------------------------------------------------- agreement


def fleiss_kappa(table: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa for an N-subjects × k-categories table of rating counts.

    Every row must sum to the same number of raters n >= 2 (ValueError
    otherwise). Returns None when chance agreement P_e == 1 (all ratings in a
    single category), where kappa is undefined.
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError("table must be a non-empty 2-D N×k array of counts")
    if np.any(t < 0):
        raise ValueError("counts must be non-negative")
    totals = t.sum(axis=1)
    if not np.all(totals == totals[0]):
        raise ValueError("every row must sum to the same number of raters")
    n_raters = totals[0]
    if n_raters < 2:
        raise ValueError("need at least 2 raters per subject")
    p_j = t.sum(axis=0) / t.sum()
    p_e = float(np.sum(p_j**2))
    if math.isclose(p_e, 1.0):
        return None
    p_i = (np.sum(t**2, axis=1) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = float(p_i.mean())
    return (p_bar - p_e) / (1.0 - p_e)


def fleiss_kappa_from_ratings(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Fleiss' kappa from raw labels: ``ratings[i]`` = labels given to subject i.

    None means the rater abstained. Fleiss' kappa needs the same number of
    raters per subject, so only subjects whose count of non-None labels equals
    the most common such count are kept (ties go to the larger count); the
    others are silently dropped. Categories are the union of the kept labels.
    Returns None if fewer than 2 subjects remain, the common count is below 2,
    or kappa is undefined.
    """
    cleaned = [[r for r in subj if r is not None] for subj in ratings]
    if not cleaned:
        return None
    counts = Counter(len(c) for c in cleaned)
    top = max(counts.values())
    m = max(c for c, freq in counts.items() if freq == top)
    kept = [c for c in cleaned if len(c) == m]
    if m < 2 or len(kept) < 2:
        return None
    cats = list(dict.fromkeys(label for subj in kept for label in subj))
    index = {c: j for j, c in enumerate(cats)}
    table = np.zeros((len(kept), len(cats)), dtype=int)
    for i, subj in enumerate(kept):
        for label in subj:
            table[i, index[label]] += 1
    return fleiss_kappa(table)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa for two raters labelling the same subjects.

    ValueError on length mismatch; None when empty or when chance agreement
    p_e == 1 (both raters used one and the same label throughout).
    """
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in ca.keys() | cb.keys()) / (n * n)
    if math.isclose(p_e, 1.0):
        return None
    return (p_o - p_e) / (1.0 - p_e)


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Share of positions where ``a[i] == b[i]``; None when empty, ValueError on length mismatch."""
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    if not a:
        return None
    return sum(x == y for x, y in zip(a, b)) / len(a)


# --------------------------------------------------------------------------- validity


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Nominal Krippendorff's alpha; ``units[u]`` = the labels unit u got, None = not rated.

    Abstentions are simply missing ratings: a unit with fewer than 2 ratings is not
    pairable and drops out (Krippendorff's definition). From the coincidence matrix o:
    alpha = 1 - (n - 1) * sum(o off the diagonal) / sum(n_c * n_k, c != k). None when no
    unit is pairable or only one value occurs (expected disagreement 0: undefined).
    """
    rated = [[r for r in u if r is not None] for u in units]
    rated = [u for u in rated if len(u) >= 2]
    cats = list(dict.fromkeys(r for u in rated for r in u))
    if len(cats) < 2:
        return None
    index = {c: j for j, c in enumerate(cats)}
    counts = np.zeros((len(rated), len(cats)))
    for i, u in enumerate(rated):
        np.add.at(counts[i], [index[r] for r in u], 1)
    m = counts.sum(axis=1)
    o = np.einsum("uc,uk->ck", counts / (m - 1)[:, None], counts) - np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    expected = n_c.sum() ** 2 - np.sum(n_c**2)
    return float(1.0 - (n - 1) * (o.sum() - np.trace(o)) / expected)


def confusion(a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable]) -> list[list[int]]:
    """Counts ``m[i][j]`` of positions where ``a`` says ``labels[i]`` and ``b`` says ``labels[j]``
    (rows = a, the truth; as scikit-learn's ``confusion_matrix(a, b, labels=labels)``); pairs
    with a label outside ``labels`` are not counted."""
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    index = {c: j for j, c in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=int)
    for x, y in zip(a, b):
        if x in index and y in index:
            m[index[x], index[y]] += 1
    return m.tolist()


@dataclass(frozen=True)
class PrecisionRecall:
    """Precision, recall and F1 of boolean predictions; None where a denominator is 0."""

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    n: int


def precision_recall_f1(truth: Sequence[bool], predicted: Sequence[bool]) -> PrecisionRecall:
    """Precision tp/(tp+fp), recall tp/(tp+fn) and their harmonic mean F1 = 2tp/(2tp+fp+fn)."""
    (tn, fp), (fn, tp) = confusion([bool(t) for t in truth], [bool(p) for p in predicted], [False, True])

    def ratio(k: int, d: int) -> float | None:
        return k / d if d else None

    return PrecisionRecall(tp, fp, fn, tn, ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn), len(truth))


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa between two raters over the n units both rated."""

    a: str
    b: str
    value: float | None
    n: int


def pairwise_kappas(ratings_by_rater: Mapping[str, Mapping[Any, Any]]) -> list[PairKappa]:
    """Cohen's kappa for every pair of raters (in the given order), over the units both rated
    (a None rating = not rated)."""
    raters = list(ratings_by_rater)
    out = []
    for i, ra in enumerate(raters):
        for rb in raters[i + 1 :]:
            da, db = ratings_by_rater[ra], ratings_by_rater[rb]
            common = [u for u in da if da[u] is not None and db.get(u) is not None]
            out.append(PairKappa(ra, rb, cohen_kappa([da[u] for u in common], [db[u] for u in common]), len(common)))
    return out
