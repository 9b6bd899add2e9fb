"""Two raters compared: two panels over the same records, or two reviewers over one sample.

:func:`pair_agreement` gives, over the items both rated: plain agreement, Cohen's kappa with
two intervals and Krippendorff's alpha (nominal) with an interval, the confusion table and the
items where the two differ. :func:`compare_panels` adds what the benchmark reports for two
audit panels (flags shared, only A, only B, "207 of 221 flags shared") for the flag and for
the labels themselves, overall and per stratum (defect type, difficulty, database...).

Intervals:

- ``kappa``: :func:`jury.stats.core.cohen_kappa_interval`, the paired percentile bootstrap of
  jury's other intervals (``scipy.stats.bootstrap``, seeded);
- ``kappa_se`` / ``kappa_wald``: the large-sample standard error of Fleiss, Cohen & Everitt
  (1969) and the Wald interval kappa +/- z SE (clipped to [-1, 1]): closed form and exact to
  reproduce, it is the one to quote when the bootstrap is refused (few items, a constant rater);
- ``alpha_interval``: the same paired bootstrap resamples (same seed) of the items, alpha
  recomputed on each (units resampled, not Hayes & Krippendorff's resampling of coincidences).

Items a rater did not rate (None) are left out of everything and counted in ``missing``.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist

import numpy as np

from jury.stats.agreement import confusion, krippendorff_alpha, percent_agreement
from jury.stats.core import BootstrapInterval, KappaInterval, cohen_kappa_interval, percentile_interval, seeded

__all__ = ["PairAgreement", "pair_agreement", "fce_kappa_se", "PanelComparison", "compare_panels"]


@dataclass(frozen=True)
class PairAgreement:
    """Two raters over the items both rated.

    :ivar n: items both rated.
    :ivar missing: items left out (a rater gave None).
    :ivar agreement: the share of the n items with the same label (None when n == 0).
    :ivar kappa: Cohen's kappa with its paired percentile bootstrap interval.
    :ivar kappa_se: Fleiss–Cohen–Everitt's large-sample standard error of kappa.
    :ivar kappa_wald: kappa +/- z * kappa_se, clipped to [-1, 1] (None with kappa None).
    :ivar alpha: Krippendorff's alpha (nominal) of the two raters.
    :ivar alpha_interval: its percentile bootstrap interval over the same resamples.
    :ivar labels: the labels in the order of ``confusion``'s rows and columns (first seen in a, then b).
    :ivar confusion: ``(L, L)`` counts: rows rater a's label, columns rater b's.
    :ivar disagreements: indices (into the inputs) of the items both rated differently.
    """

    n: int
    missing: int
    agreement: float | None
    kappa: KappaInterval
    kappa_se: float | None
    kappa_wald: tuple[float, float] | None
    alpha: float | None
    alpha_interval: BootstrapInterval
    labels: tuple[Hashable, ...]
    confusion: np.ndarray
    disagreements: np.ndarray


def fce_kappa_se(table: np.ndarray) -> float | None:
    """Fleiss, Cohen & Everitt's (1969) large-sample standard error of Cohen's kappa from an
    L x L table of counts (rows rater a, columns rater b):

    var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
    - (k - p_e (1 - k))^2] / (n (1 - p_e)^2).

    None when kappa is undefined (no items, or chance agreement 1)."""
    t = np.asarray(table, dtype=float)
    n = t.sum()
    if n <= 0:
        return None
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_e = float(rows @ cols)
    if np.isclose(p_e, 1.0):
        return None
    kappa = (float(np.trace(p)) - p_e) / (1.0 - p_e)
    diag = np.diag(p) * (1.0 - (rows + cols) * (1.0 - kappa)) ** 2
    spread = (cols[:, None] + rows[None, :]) ** 2  # [i, j] = p_.i + p_j.
    off = p * spread
    np.fill_diagonal(off, 0.0)
    var = (diag.sum() + (1.0 - kappa) ** 2 * off.sum() - (kappa - p_e * (1.0 - kappa)) ** 2) / (n * (1.0 - p_e) ** 2)
    return float(np.sqrt(max(var, 0.0)))


def _alpha_codes(x: np.ndarray, y: np.ndarray, k: int, axis: int = -1) -> np.ndarray:
    """Krippendorff's nominal alpha of two raters' integer codes along ``axis`` (every unit
    rated by both: pairable), vectorised for the bootstrap; NaN when undefined."""
    x, y = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    units = x.shape[-1]
    n = 2.0 * units  # pairable values
    off = 2.0 * np.sum(x != y, axis=-1)  # the coincidence matrix off its diagonal
    n_c = np.stack([np.sum(x == c, axis=-1) + np.sum(y == c, axis=-1) for c in range(k)], axis=-1)
    expected = n**2 - np.sum(n_c.astype(float) ** 2, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1.0) * off / expected, np.nan)


def _present(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    return np.array([x is not None and y is not None for x, y in zip(a, b)], dtype=bool)


def _kappa_wald(kappa: float | None, se: float | None, confidence: float) -> tuple[float, float] | None:
    """Kappa's Wald interval with the Fleiss–Cohen–Everitt SE, clipped to [-1, 1] (None without either)."""
    if kappa is None or se is None:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return (max(-1.0, kappa - z * se), min(1.0, kappa + z * se))


def _alpha_bootstrap(
    la: Sequence[Hashable | None],
    lb: Sequence[Hashable | None],
    labels: tuple[Hashable | None, ...],
    resamples: int,
    seed: int,
    confidence: float,
) -> BootstrapInterval:
    """The percentile interval of Krippendorff's alpha over paired resamples of the items
    (scipy's bootstrap, seeded as kappa's, so the same resamples)."""
    from scipy import stats as _st

    index = {c: j for j, c in enumerate(labels)}
    xa, ya = np.array([index[x] for x in la]), np.array([index[y] for y in lb])

    def statistic(p: np.ndarray, q: np.ndarray, axis: int = -1) -> np.ndarray:
        return _alpha_codes(p, q, len(labels), axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = _st.bootstrap(
            (xa, ya),
            statistic,
            n_resamples=resamples,
            paired=True,
            vectorized=True,
            method="percentile",
            confidence_level=confidence,
            **seeded(seed),
        )
    return percentile_interval(boot.bootstrap_distribution, confidence)


def pair_agreement(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairAgreement:
    """Agreement of two raters over the items both rated (the module doc's intervals).

    Args:
        a: rater a's label per item, None where a did not rate it.
        b: rater b's label per item, None likewise.
        resamples: bootstrap resamples of the items (0: no bootstrap interval).
        seed: the bootstrap's seed (the same resamples for kappa and alpha).
        confidence: the nominal coverage of every interval.

    Raises:
        ValueError: a and b differ in length.
    """
    both = _present(a, b)
    idx = np.flatnonzero(both)
    la, lb = [a[int(i)] for i in idx], [b[int(i)] for i in idx]
    labels = tuple(dict.fromkeys([*la, *lb]))
    table = np.array(confusion(la, lb, labels), dtype=int).reshape(len(labels), len(labels))
    kappa = cohen_kappa_interval(la, lb, resamples=resamples, seed=seed, confidence=confidence)
    se = fce_kappa_se(table)
    wald = _kappa_wald(kappa.value, se, confidence)
    alpha = krippendorff_alpha([[x, y] for x, y in zip(la, lb)])
    alpha_ci = BootstrapInterval(None, None, 0, 0)
    if alpha is not None and len(la) >= 2 and resamples > 0:
        alpha_ci = _alpha_bootstrap(la, lb, labels, int(resamples), seed, confidence)
    differ = idx[[x != y for x, y in zip(la, lb)]] if idx.size else idx
    return PairAgreement(
        n=int(idx.size),
        missing=int(len(a) - idx.size),
        agreement=percent_agreement(la, lb),
        kappa=kappa,
        kappa_se=se,
        kappa_wald=wald,
        alpha=alpha,
        alpha_interval=alpha_ci,
        labels=labels,
        confusion=table,
        disagreements=np.asarray(differ, dtype=np.int64),
    )


@dataclass(frozen=True)
class PanelComparison:
    """Two panels over the same items: the flags (a label in ``positive``) and the labels.

    :ivar n: items both panels rated.
    :ivar missing: items a panel did not rate (left out).
    :ivar both: items both panels flagged.
    :ivar only_a: items only panel A flagged.
    :ivar only_b: items only panel B flagged.
    :ivar neither: items neither flagged.
    :ivar flags: agreement on flagged / not flagged.
    :ivar labels: agreement on the labels themselves (e.g. valid vs each defect type).
    :ivar strata: per stratum key, per stratum value, the same comparison of its items.
    """

    n: int
    missing: int
    both: int
    only_a: int
    only_b: int
    neither: int
    flags: PairAgreement
    labels: PairAgreement
    strata: dict[str, dict[Hashable, PanelComparison]] = field(default_factory=dict)

    @property
    def flags_a(self) -> int:
        """Items panel A flagged."""
        return self.both + self.only_a

    @property
    def flags_b(self) -> int:
        """Items panel B flagged."""
        return self.both + self.only_b

    @property
    def shared_of_a(self) -> float | None:
        """The share of A's flags that B shares (None without flags)."""
        return self.both / self.flags_a if self.flags_a else None

    @property
    def shared_of_b(self) -> float | None:
        """The share of B's flags that A shares ("207 of its 221 flags were shared")."""
        return self.both / self.flags_b if self.flags_b else None


def _reindexed(c: PanelComparison, members: np.ndarray) -> PanelComparison:
    """A stratum's comparison with its disagreements as indices into the whole input."""
    return replace(
        c,
        flags=replace(c.flags, disagreements=members[c.flags.disagreements]),
        labels=replace(c.labels, disagreements=members[c.labels.disagreements]),
    )


def compare_panels(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    *,
    positive: Collection[Hashable],
    strata: Mapping[str, Sequence[Hashable]] | None = None,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelComparison:
    """Compare two panels' labels of the same items.

    Args:
        a: panel A's label per item (an audit: ``"valid"`` or a defect type; an
            adjudication: the verdict), None where it gave none.
        b: panel B's, likewise.
        positive: the labels that count as a flag (the defect types; the credited verdicts).
        strata: optional breakdowns: name -> one stratum value per item (e.g.
            ``{"difficulty": [...], "defect_type": [...]}``); each stratum gets its own comparison
            (same seed, no further breakdown; its disagreements index the whole input).
        resamples: bootstrap resamples of each interval.
        seed: the bootstrap's seed.
        confidence: the nominal coverage of every interval.

    Raises:
        ValueError: a, b or a stratum of another length.
    """
    both_rated = _present(a, b)
    pos = set(positive)
    fa = [None if x is None else x in pos for x in a]
    fb = [None if y is None else y in pos for y in b]
    xa = np.array([bool(x) for x in fa]) & both_rated
    xb = np.array([bool(y) for y in fb]) & both_rated
    per_stratum = _strata_comparisons(a, b, pos, strata or {}, resamples, seed, confidence)
    return PanelComparison(
        n=int(both_rated.sum()),
        missing=int((~both_rated).sum()),
        both=int((xa & xb).sum()),
        only_a=int((xa & ~xb).sum()),
        only_b=int((~xa & xb).sum()),
        neither=int((both_rated & ~xa & ~xb).sum()),
        flags=pair_agreement(fa, fb, resamples=resamples, seed=seed, confidence=confidence),
        labels=pair_agreement(a, b, resamples=resamples, seed=seed, confidence=confidence),
        strata=per_stratum,
    )


def _strata_comparisons(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    pos: set[Hashable],
    strata: Mapping[str, Sequence[Hashable]],
    resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, dict[Hashable, PanelComparison]]:
    """Per stratum name, per stratum value, :func:`compare_panels` of that value's items (same
    seed, no further breakdown; its disagreements index the whole input)."""
    per_stratum: dict[str, dict[Hashable, PanelComparison]] = {}
    for name, values in strata.items():
        if len(values) != len(a):
            raise ValueError(f"stratum {name!r} has {len(values)} values for {len(a)} items")
        groups: dict[Hashable, list[int]] = {}
        for i, value in enumerate(values):
            groups.setdefault(value, []).append(i)
        per_stratum[name] = {
            value: _reindexed(
                compare_panels(
                    [a[i] for i in members],
                    [b[i] for i in members],
                    positive=pos,
                    resamples=resamples,
                    seed=seed,
                    confidence=confidence,
                ),
                np.asarray(members, dtype=np.int64),
            )
            for value, members in groups.items()
        }
    return per_stratum
