"""Pure statistics helpers: Wilson intervals, ranks, correlations and agreement.

Everything here is a pure function with no I/O. The Wilson interval and ranks `jury score`
needs are pure Python (tests pin them to scipy's), so scoring never imports scipy; the rest
delegates to scipy (imported inside those functions) or, for the agreement coefficients, numpy.
The agreement coefficients themselves are in :mod:`jury.stats.agreement`.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic needs it for a model field on Python < 3.12

from jury.stats.agreement import cohen_kappa

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike
else:  # numpy (and scipy, imported inside the functions that use it) loads on first use: never for `score`

    class _LazyNumpy:
        def __getattr__(self, name: str) -> Any:
            import numpy

            return getattr(numpy, name)

    np = _LazyNumpy()

__all__ = [
    "ProportionDict",
    "ProportionEstimate",
    "wilson",
    "ranks",
    "ordinal",
    "rank_shift",
    "rank_delta",
    "percentile_positions",
    "rank_interval",
    "CorrelationEstimate",
    "spearman",
    "pearson",
]
__all__ += ["KappaInterval", "cohen_kappa_interval"]
__all__ += ["PositionBiasTest", "position_bias"]
__all__ += ["MIN_DEFINED_SHARE", "BootstrapInterval", "percentile_interval", "seeded", "mean_interval"]
__all__ += ["wilson_bounds", "TwoSidedAccuracy", "two_sided_accuracy"]
__all__ += ["spearman_rows"]


# --------------------------------------------------------------------------- proportions


class ProportionDict(TypedDict):
    """:meth:`ProportionEstimate.as_dict`: k of n, the share and its interval (None when n == 0)."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class ProportionEstimate:
    """k successes out of n, with a confidence interval (all None when n == 0)."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> ProportionDict:
        """Return ``{"k", "n", "value", "low", "high"}`` as plain Python values."""
        return {"k": self.k, "n": self.n, "value": self.value, "low": self.low, "high": self.high}


def wilson(k: int, n: int, confidence: float = 0.95) -> ProportionEstimate:
    """Wilson score interval for k/n: the closed form (Newcombe 1998) as ``scipy.stats.binomtest(k,
    n).proportion_ci(confidence, method="wilson")`` computes it, low 0 when k == 0 and high 1 when
    k == n (tests pin the two within 1e-12), without scipy. ``n == 0`` gives value/low/high
    ``None``. Raises ValueError unless ``0 <= k <= n`` and ``0 < confidence < 1``.
    """
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return ProportionEstimate(k=0, n=0, value=None, low=None, high=None)
    z, p = NormalDist().inv_cdf(0.5 + 0.5 * confidence), k / n
    center, delta = (2 * n * p + z**2) / (2 * (n + z**2)), z / (2 * (n + z**2)) * math.sqrt(4 * n * p * (1 - p) + z**2)
    return ProportionEstimate(k=k, n=n, value=p, low=0.0 if k == 0 else center - delta, high=1.0 if k == n else center + delta)


def wilson_bounds(p: float, n: float, confidence: float = 0.95, fpc: float = 1.0) -> tuple[float, float]:
    """Wilson score bounds for an observed share ``p`` of ``n`` draws (``p * n`` need not be an
    integer), with a finite-population correction: the bounds solve (p - π)² = z² · fpc ·
    π(1 − π)/n, so ``fpc = 1`` is :func:`wilson`'s interval and ``fpc = 0`` (the whole
    population observed) is the point ``[p, p]``. Raises ValueError unless ``0 <= p <= 1``,
    ``n > 0`` and ``0 <= fpc <= 1``."""
    if not (0.0 <= p <= 1.0 and n > 0 and 0.0 <= fpc <= 1.0):
        raise ValueError(f"need 0 <= p <= 1, n > 0 and 0 <= fpc <= 1, got p={p}, n={n}, fpc={fpc}")
    z2 = NormalDist().inv_cdf(0.5 + 0.5 * confidence) ** 2 * fpc
    center = (2 * n * p + z2) / (2 * (n + z2))
    delta = math.sqrt(z2) / (2 * (n + z2)) * math.sqrt(4 * n * p * (1 - p) + z2)
    return (0.0 if p == 0 else max(0.0, center - delta)), (1.0 if p == 1 else min(1.0, center + delta))


@dataclass(frozen=True)
class TwoSidedAccuracy:
    """Accuracy net of the false passes estimated from a review sample, with its interval."""

    value: float
    low: float
    high: float
    n: int
    estimated_false_passes: float


def two_sided_accuracy(
    correct: int, n: int, matches: int, reviewed: int, false_passes: int, confidence: float = 0.95
) -> TwoSidedAccuracy:
    """Accuracy (A − M·f)/n of ``correct`` = A successes out of ``n``, where ``matches`` = M of
    the successes are strict matches of which ``reviewed`` = m were reviewed (a simple random
    sample) and ``false_passes`` of those turned out wrong (f = false_passes / m).

    The interval combines two independent errors in quadrature (Newcombe's and Zou & Donner's
    MOVER for a difference): the sampling of questions, the Wilson interval [w−, w+] of the
    value at n, and the estimate of the false passes among the M matches, the Wilson interval
    [f−, f+] of f with the finite-population correction (M − m)/(M − 1) (zero when all M
    were reviewed: their false passes are then known, not estimated). With s = M/n:
    low = value − √((value − w−)² + (s·(f+ − f))²), high = value + √((w+ − value)² + (s·(f − f−))²),
    clipped to [0, 1]. Reviewing every match and finding no false pass leaves :func:`wilson`'s
    interval of A/n unchanged. Raises ValueError unless 0 < n, 0 < m <= M <= A <= n and
    false_passes <= m.
    """
    if not (n > 0 and 0 < reviewed <= matches <= correct <= n and 0 <= false_passes <= reviewed):
        raise ValueError(
            f"need 0 < reviewed <= matches <= correct <= n and false_passes <= reviewed, got correct={correct}, n={n}, "
            f"matches={matches}, reviewed={reviewed}, false_passes={false_passes}"
        )
    f, share = false_passes / reviewed, matches / n
    value = max(0.0, (correct - matches * f) / n)
    w_low, w_high = wilson_bounds(value, n, confidence)
    fpc = (matches - reviewed) / (matches - 1) if matches > 1 else 0.0
    f_low, f_high = wilson_bounds(f, reviewed, confidence, fpc)
    low = value - math.hypot(value - w_low, share * (f_high - f))
    high = value + math.hypot(w_high - value, share * (f - f_low))
    return TwoSidedAccuracy(value, max(0.0, low), min(1.0, high), n, matches * f)


# --------------------------------------------------------------------------- ranks


def _missing(v: float | None) -> bool:
    """True for None or a float NaN."""
    numpy = sys.modules.get("numpy")  # a numpy float can only exist once numpy is imported
    return v is None or ((isinstance(v, float) or (numpy is not None and isinstance(v, numpy.floating))) and math.isnan(v))


def ranks(values: Sequence[float | None], *, descending: bool = True) -> list[int | None]:
    """Competition ranks ("min" method: 1, 2, 2, 4); best = 1.

    With ``descending=True`` the largest value ranks first. None/NaN entries get
    rank None and do not take part in ranking the others. As ``scipy.stats.rankdata(...,
    method="min")`` (tests pin it), in pure Python.
    """
    present = [(i, float(v)) for i, v in enumerate(values) if v is not None and not _missing(v)]
    first: dict[float, int] = {}  # value -> 1 + how many present values rank strictly before it
    for position, v in enumerate(sorted((v for _, v in present), reverse=descending), start=1):
        first.setdefault(v, position)
    ranked = dict(present)
    return [first[ranked[i]] if i in ranked else None for i in range(len(values))]


def percentile_positions(n: int, confidence: float = 0.95) -> tuple[int, int]:
    """The 0-based positions, among ``n`` sorted values, of the inverted-CDF percentiles at
    (1 - confidence)/2 and (1 + confidence)/2: the p-th percentile is the ceil(p n)-th smallest
    (``numpy.quantile(method="inverted_cdf")``'s definition), for every rank interval in jury
    (:func:`rank_interval`).

    Exact arithmetic: in floats (1 - 0.95)/2 is 0.025000000000000022, so 1,000 values would give
    the 26th smallest for the 2.5th percentile (numpy.quantile at that level), not the 25th.

    >>> percentile_positions(1000)
    (24, 974)
    >>> percentile_positions(1), percentile_positions(39), percentile_positions(40)
    ((0, 0), (0, 38), (0, 38))
    """
    if n < 1:
        raise ValueError("percentile_positions needs at least one value")
    tail = (1 - Fraction(repr(confidence))) / 2
    low, high = math.ceil(tail * n), math.ceil((1 - tail) * n)
    return max(low, 1) - 1, max(high, 1) - 1


def rank_interval(ranks: Sequence[int] | np.ndarray, confidence: float = 0.95) -> tuple[int, int]:
    """The interval of a model's bootstrap ranks: their inverted-CDF percentiles at (1 - confidence)/2
    and (1 + confidence)/2 (:func:`percentile_positions`), both ranks a resample gave."""
    import numpy as np

    ordered = np.sort(np.asarray(ranks))
    low, high = percentile_positions(ordered.size, confidence)
    return int(ordered[low]), int(ordered[high])


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


# --------------------------------------------------------------------------- bootstrap intervals

MIN_DEFINED_SHARE = 0.9
"""A bootstrap interval is given only when at least this share of its resamples is defined."""


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval over ``resamples`` resamples, ``degenerate`` of which had
    no value (the statistic was undefined on them); low/high None when refused."""

    low: float | None
    high: float | None
    resamples: int
    degenerate: int


def seeded(seed: int) -> dict[str, Any]:
    """The keyword that seeds ``scipy.stats.bootstrap``: ``rng=`` (scipy >= 1.15) or, on older
    scipy, ``random_state=``; both take the same ``numpy.random.Generator`` and draw the same
    resamples."""
    import scipy

    major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
    return {"rng" if (major, minor) >= (1, 15) else "random_state": np.random.default_rng(seed)}


def percentile_interval(
    distribution: ArrayLike, confidence: float = 0.95, min_defined: float = MIN_DEFINED_SHARE
) -> BootstrapInterval:
    """The percentile interval of a bootstrap distribution, one policy for every bootstrap in
    jury: resamples where the statistic is undefined (NaN) are left out and counted; the
    interval is the percentiles (``numpy.percentile``, linear, as ``scipy.stats.bootstrap``'s
    percentile method) of the defined ones, and is refused (None) when fewer than
    ``min_defined`` (:data:`MIN_DEFINED_SHARE` unless a caller documents why not) of the
    resamples are defined."""
    dist = np.asarray(distribution, dtype=float).ravel()
    defined = dist[np.isfinite(dist)]
    degenerate = int(dist.size - defined.size)
    if not dist.size or defined.size < min_defined * dist.size:
        return BootstrapInterval(None, None, int(dist.size), degenerate)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return BootstrapInterval(float(low), float(high), int(dist.size), degenerate)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., ArrayLike],
    *,
    resamples: int,
    seed: int,
    confidence: float,
    paired: bool = False,
    vectorized: bool = True,
) -> BootstrapInterval:
    """``scipy.stats.bootstrap`` of ``statistic`` over ``data`` (``resamples`` resamples, seeded
    from ``seed``; no scipy warning escapes) under :func:`percentile_interval`'s policy."""
    from scipy import stats as _st

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. on a constant sample, whose interval is [v, v]
        boot = _st.bootstrap(
            data,
            statistic,
            n_resamples=int(resamples),
            paired=paired,
            vectorized=vectorized,
            method="percentile",
            confidence_level=confidence,
            **seeded(seed),
        )
    return percentile_interval(boot.bootstrap_distribution, confidence)


def mean_interval(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> BootstrapInterval:
    """Percentile bootstrap interval of the mean of ``values`` (``scipy.stats.bootstrap``, the
    units resampled with replacement, seeded from ``seed``), for means of per-unit fractions
    where a binomial interval does not apply. Fewer than 2 values: no interval."""
    data = np.asarray(values, dtype=float)
    if data.size < 2 or resamples <= 0:
        return BootstrapInterval(None, None, 0, 0)
    return _bootstrap((data,), np.mean, resamples=resamples, seed=seed, confidence=confidence)


# --------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class CorrelationEstimate:
    """A correlation coefficient with p-value, sample size and optional CI; a bootstrap CI
    (Spearman) also gives its resamples and how many were degenerate (None otherwise)."""

    method: str
    r: float | None
    p_value: float | None
    n: int
    ci_low: float | None
    ci_high: float | None
    resamples: int | None = None
    degenerate_resamples: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict."""
        return asdict(self)


def _finite_or_none(v: float | None) -> float | None:
    """float(v), or None if it is NaN/inf/None."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _paired(x: Sequence[float | None], y: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """Drop pairs where either side is None/NaN; ValueError on length mismatch."""
    if len(x) != len(y):
        raise ValueError(f"length mismatch: {len(x)} vs {len(y)}")
    keep = [(float(a), float(b)) for a, b in zip(x, y) if a is not None and b is not None and not (_missing(a) or _missing(b))]
    if not keep:
        return np.empty(0), np.empty(0)
    xa, ya = zip(*keep)
    return np.asarray(xa, dtype=float), np.asarray(ya, dtype=float)


def _degenerate(xa: np.ndarray, ya: np.ndarray) -> bool:
    """True when a correlation is undefined: fewer than 3 pairs or a constant side."""
    return len(xa) < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0


def _paired_test(
    test: Callable[[np.ndarray, np.ndarray], Any], x: Sequence[float | None], y: Sequence[float | None]
) -> tuple[np.ndarray, np.ndarray, Any, float | None, float | None]:
    """The pairs (:func:`_paired`), ``test``'s result on them (``scipy.stats.spearmanr`` or
    ``pearsonr``, no warning escaping) and its r and p (None where not finite); the result, r
    and p are None when the correlation is undefined (:func:`_degenerate`)."""
    xa, ya = _paired(x, y)
    if _degenerate(xa, ya):
        return xa, ya, None, None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = test(xa, ya)
    return xa, ya, res, _finite_or_none(res.statistic), _finite_or_none(res.pvalue)


def spearman(
    x: Sequence[float | None],
    y: Sequence[float | None],
    *,
    bootstrap_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationEstimate:
    """Spearman's rho (``scipy.stats.spearmanr``) with a percentile bootstrap CI.

    Pairs with a None/NaN on either side are dropped. Fewer than 3 pairs or a
    constant input gives r/p/CI None. The CI comes from ``scipy.stats.bootstrap``
    (paired, seeded from ``seed`` so it is reproducible) under :func:`percentile_interval`'s
    policy: a degenerate resample (a constant side, so rho is NaN) is left out and counted
    in ``degenerate_resamples``, and the CI is None only when fewer than 90% of the
    resamples are defined. No scipy warnings escape.
    """
    from scipy import stats as _st

    xa, ya, _, r, p = _paired_test(_st.spearmanr, x, y)
    n = len(xa)
    if r is None or bootstrap_resamples <= 0:
        return CorrelationEstimate("spearman", r, p, n, None, None)

    ci = _bootstrap((xa, ya), spearman_rows, resamples=bootstrap_resamples, seed=seed, confidence=confidence, paired=True)
    return CorrelationEstimate("spearman", r, p, n, ci.low, ci.high, ci.resamples, ci.degenerate)


def spearman_rows(a: ArrayLike, b: ArrayLike, axis: int = -1) -> np.ndarray:
    """``scipy.stats.spearmanr(a[k], b[k]).statistic`` for every row k (along ``axis``) at
    once, to the bit (NaN for a constant row): spearmanr is ``numpy.corrcoef`` of the two
    columns' average ranks, whose centred sums of products are whole multiples of 1/4 and so
    exact in any order; the scaling, square roots and divisions are corrcoef's own, in its
    order. What the bootstrap of :func:`spearman` computes (issue 46: 2,000 calls of
    spearmanr before)."""
    from scipy.stats import rankdata

    ra = np.moveaxis(rankdata(np.asarray(a, dtype=float), axis=axis), axis, -1)
    rb = np.moveaxis(rankdata(np.asarray(b, dtype=float), axis=axis), axis, -1)
    n = ra.shape[-1]
    ra = ra - ra.mean(axis=-1, keepdims=True)  # the mean of average ranks is (n + 1) / 2, exact
    rb = rb - rb.mean(axis=-1, keepdims=True)
    inv = np.true_divide(1, n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        c_aa, c_bb, c_ba = (ra * ra).sum(-1) * inv, (rb * rb).sum(-1) * inv, (rb * ra).sum(-1) * inv
        rho: np.ndarray = np.clip((c_ba / np.sqrt(c_bb)) / np.sqrt(c_aa), -1, 1)
        return rho


def pearson(x: Sequence[float | None], y: Sequence[float | None], *, confidence: float = 0.95) -> CorrelationEstimate:
    """Pearson's r (``scipy.stats.pearsonr``); same None handling as :func:`spearman`.

    The CI is ``pearsonr(...).confidence_interval(confidence)`` (Fisher z), only
    when n >= 4.
    """
    from scipy import stats as _st

    xa, _, res, r, p = _paired_test(_st.pearsonr, x, y)
    n = len(xa)
    lo = hi = None
    if r is not None and n >= 4:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = res.confidence_interval(confidence_level=confidence)
        lo, hi = _finite_or_none(ci.low), _finite_or_none(ci.high)
        if lo is None or hi is None:
            lo = hi = None
    return CorrelationEstimate("pearson", r, p, n, lo, hi)


# --------------------------------------------------------------------------- agreement intervals


@dataclass(frozen=True)
class KappaInterval:
    """Cohen's kappa over n paired ratings with a bootstrap interval (all None when undefined),
    its resamples and how many of them were degenerate (kappa undefined)."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    resamples: int = 0
    degenerate_resamples: int = 0


def _codes(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray, int]:
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    index = {c: j for j, c in enumerate(dict.fromkeys([*a, *b]))}
    return np.array([index[x] for x in a], dtype=int), np.array([index[y] for y in b], dtype=int), len(index)


def _kappa_codes(x: np.ndarray, y: np.ndarray, k: int, axis: int = -1) -> np.ndarray:
    """Cohen's kappa of integer-coded ratings along ``axis`` (vectorised for the bootstrap); NaN when undefined."""
    x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    p_o = np.mean(x == y, axis=-1)
    p_e = sum(np.mean(x == c, axis=-1) * np.mean(y == c, axis=-1) for c in range(k))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isclose(p_e, 1.0), np.nan, (p_o - p_e) / (1.0 - p_e))


def cohen_kappa_interval(
    a: Sequence[Hashable], b: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> KappaInterval:
    """Cohen's kappa (as :func:`cohen_kappa`) with a paired percentile bootstrap interval.

    ``scipy.stats.bootstrap`` resamples the (a[i], b[i]) pairs ``resamples`` times, seeded
    from ``seed``. A resample where kappa is undefined (both raters constant and equal)
    has no value: as for :func:`spearman` (:func:`percentile_interval`), the interval is the
    percentiles of the defined resamples, the undefined ones are counted in
    ``degenerate_resamples``, and the interval is None when fewer than 90% are defined.
    Value None when kappa itself is undefined; interval None also with fewer than 2 pairs.
    """
    x, y, k = _codes(a, b)
    n = len(x)
    value = cohen_kappa(list(a), list(b))
    if value is None or n < 2 or resamples <= 0:
        return KappaInterval(value, None, None, n)

    def kappa(p: np.ndarray, q: np.ndarray, axis: int = -1) -> np.ndarray:
        return _kappa_codes(p, q, k, axis)

    ci = _bootstrap((x, y), kappa, resamples=resamples, seed=seed, confidence=confidence, paired=True)
    return KappaInterval(value, ci.low, ci.high, n, ci.resamples, ci.degenerate)


class PositionBiasTest(TypedDict):
    """Among n decisive votes, k picked the answer shown first: share with a Wilson interval
    and the two-sided binomial test against 0.5 (all None when n == 0)."""

    k: int
    n: int
    share: float | None
    low: float | None
    high: float | None
    p_value: float | None


def position_bias(first_picks: int, decisive: int, confidence: float = 0.95) -> PositionBiasTest:
    """``first_picks`` of ``decisive`` votes chose the first-shown answer (``scipy.stats.binomtest``)."""
    from scipy import stats as _st

    share = wilson(first_picks, decisive, confidence)
    p = float(_st.binomtest(share.k, share.n, 0.5).pvalue) if share.n else None
    return PositionBiasTest(k=share.k, n=share.n, share=share.value, low=share.low, high=share.high, p_value=p)
