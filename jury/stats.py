"""Pure statistics helpers: Wilson intervals, ranks, correlations and agreement.

Everything here is a pure function with no I/O. Heavy lifting is delegated to
scipy (``binomtest`` Wilson intervals, ``rankdata``, ``spearmanr``,
``pearsonr``, ``bootstrap``); only the agreement coefficients (Fleiss' and
Cohen's kappa) are written out with numpy.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = [
    "Proportion",
    "wilson",
    "ranks",
    "ordinal",
    "rank_shift",
    "rank_delta",
    "Correlation",
    "spearman",
    "pearson",
    "fleiss_kappa",
    "fleiss_kappa_from_ratings",
    "cohen_kappa",
    "percent_agreement",
]


# --------------------------------------------------------------------------- proportions


@dataclass(frozen=True)
class Proportion:
    """k successes out of n, with a confidence interval (all None when n == 0)."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict:
        """Return ``{"k", "n", "value", "low", "high"}`` as plain Python values."""
        return asdict(self)


def wilson(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """Wilson score interval for k/n via ``scipy.stats.binomtest(...).proportion_ci``.

    ``n == 0`` gives value/low/high ``None`` (no exception). Raises ValueError
    unless ``0 <= k <= n`` and ``0 < confidence < 1``.
    """
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return Proportion(k=0, n=0, value=None, low=None, high=None)
    ci = _st.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Proportion(k=k, n=n, value=k / n, low=float(ci.low), high=float(ci.high))


# --------------------------------------------------------------------------- ranks


def _missing(v) -> bool:
    """True for None or a float NaN."""
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


def ranks(values: Sequence[float | None], *, descending: bool = True) -> list[int | None]:
    """Competition ranks ("min" method: 1, 2, 2, 4); best = 1.

    With ``descending=True`` the largest value ranks first. None/NaN entries get
    rank None and do not take part in ranking the others.
    """
    present = [(i, float(v)) for i, v in enumerate(values) if v is not None and not _missing(v)]
    out: list[int | None] = [None] * len(values)
    if not present:
        return out
    arr = np.asarray([v for _, v in present])
    r = _st.rankdata(-arr if descending else arr, method="min")
    for (i, _), rank in zip(present, r):
        out[i] = int(rank)
    return out


def ordinal(n: int) -> str:
    """English ordinal: 1 -> "1st", 2 -> "2nd", 11 -> "11th", 21 -> "21st", 111 -> "111th"."""
    n = int(n)
    if 11 <= abs(n) % 100 <= 13:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(abs(n) % 10, "th")
    return f"{n}{suffix}"


def rank_shift(before: int | None, after: int | None) -> str:
    """Render a rank move as ``"33rd → 17th"``; ``"—"`` if either rank is None."""
    if before is None or after is None:
        return "—"
    return f"{ordinal(before)} → {ordinal(after)}"


def rank_delta(before: int | None, after: int | None) -> int | None:
    """``before - after`` (positive = moved up the table); None if either is None."""
    if before is None or after is None:
        return None
    return int(before) - int(after)


# --------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with p-value, sample size and optional CI."""

    method: str
    r: float | None
    p_value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None

    def as_dict(self) -> dict:
        """Return the fields as a plain dict."""
        return asdict(self)


def _finite_or_none(v) -> float | None:
    """float(v), or None if it is NaN/inf/None."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Drop pairs where either side is None/NaN; ValueError on length mismatch."""
    if len(x) != len(y):
        raise ValueError(f"length mismatch: {len(x)} vs {len(y)}")
    keep = [(float(a), float(b)) for a, b in zip(x, y) if not (_missing(a) or _missing(b))]
    if not keep:
        return np.empty(0), np.empty(0)
    xa, ya = zip(*keep)
    return np.asarray(xa, dtype=float), np.asarray(ya, dtype=float)


def _degenerate(xa: np.ndarray, ya: np.ndarray) -> bool:
    """True when a correlation is undefined: fewer than 3 pairs or a constant side."""
    return len(xa) < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0


def spearman(x, y, *, bootstrap_resamples: int = 2000, seed: int = 0, confidence: float = 0.95) -> Correlation:
    """Spearman's rho (``scipy.stats.spearmanr``) with a percentile bootstrap CI.

    Pairs with a None/NaN on either side are dropped. Fewer than 3 pairs or a
    constant input gives r/p/CI None. The CI comes from ``scipy.stats.bootstrap``
    (paired, percentile, seeded from ``seed`` so it is reproducible); if any
    resample is degenerate (e.g. all-tied, so rho is NaN) the CI is None. No
    scipy warnings escape.
    """
    xa, ya = _paired(x, y)
    n = len(xa)
    if _degenerate(xa, ya):
        return Correlation("spearman", None, None, n, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _st.spearmanr(xa, ya)
        r, p = _finite_or_none(res.statistic), _finite_or_none(res.pvalue)
        lo = hi = None
        if r is not None and bootstrap_resamples > 0:

            def rho(a, b):
                return _st.spearmanr(a, b).statistic

            boot = _st.bootstrap(
                (xa, ya),
                rho,
                n_resamples=int(bootstrap_resamples),
                paired=True,
                vectorized=False,
                method="percentile",
                confidence_level=confidence,
                rng=np.random.default_rng(seed),
            )
            lo = _finite_or_none(boot.confidence_interval.low)
            hi = _finite_or_none(boot.confidence_interval.high)
            if lo is None or hi is None:
                lo = hi = None
    return Correlation("spearman", r, p, n, lo, hi)


def pearson(x, y, *, confidence: float = 0.95) -> Correlation:
    """Pearson's r (``scipy.stats.pearsonr``); same None handling as :func:`spearman`.

    The CI is ``pearsonr(...).confidence_interval(confidence)`` (Fisher z), only
    when n >= 4.
    """
    xa, ya = _paired(x, y)
    n = len(xa)
    if _degenerate(xa, ya):
        return Correlation("pearson", None, None, n, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _st.pearsonr(xa, ya)
        r, p = _finite_or_none(res.statistic), _finite_or_none(res.pvalue)
        lo = hi = None
        if r is not None and n >= 4:
            ci = res.confidence_interval(confidence_level=confidence)
            lo, hi = _finite_or_none(ci.low), _finite_or_none(ci.high)
            if lo is None or hi is None:
                lo = hi = None
    return Correlation("pearson", r, p, n, lo, hi)


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
