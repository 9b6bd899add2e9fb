"""Tests for jury.stats.core and jury.stats.agreement against hand-computed values (not the same scipy calls)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from jury.stats import agreement, core

Z95 = 1.959963984540054


# --------------------------------------------------------------------------- wilson


def _wilson_by_hand(k, n, z=Z95):
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_matches_closed_form():
    pr = core.wilson(81, 263)
    lo, hi = _wilson_by_hand(81, 263)
    assert pr.k == 81 and pr.n == 263
    assert pr.value == pytest.approx(81 / 263, abs=1e-15)
    assert abs(pr.low - lo) < 1e-9
    assert abs(pr.high - hi) < 1e-9
    assert pr.as_dict() == {"k": 81, "n": 263, "value": pr.value, "low": pr.low, "high": pr.high}


def test_wilson_other_confidence():
    z90 = 1.6448536269514722
    pr = core.wilson(7, 20, confidence=0.90)
    lo, hi = _wilson_by_hand(7, 20, z90)
    assert abs(pr.low - lo) < 1e-9 and abs(pr.high - hi) < 1e-9


def test_wilson_zero_successes_low_is_zero():
    pr = core.wilson(0, 10)
    assert pr.low == 0
    assert pr.value == 0
    assert abs(pr.high - _wilson_by_hand(0, 10)[1]) < 1e-9


def test_wilson_empty_is_none():
    pr = core.wilson(0, 0)
    assert (pr.value, pr.low, pr.high) == (None, None, None)
    assert pr.as_dict()["n"] == 0


@pytest.mark.parametrize("k,n", [(11, 10), (-1, 10), (0, -1)])
def test_wilson_invalid_raises(k, n):
    with pytest.raises(ValueError):
        core.wilson(k, n)


# --------------------------------------------------------------------------- ranks


def test_ranks_ties_competition():
    assert core.ranks([0.9, 0.8, 0.8, 0.5]) == [1, 2, 2, 4]


def test_ranks_ascending():
    assert core.ranks([0.9, 0.8, 0.8, 0.5], descending=False) == [4, 2, 2, 1]


def test_ranks_with_none_excluded():
    out = core.ranks([None, 0.5, 0.9, None, 0.5, float("nan")])
    assert out == [None, 2, 1, None, 2, None]
    assert all(isinstance(r, int) for r in out if r is not None)
    assert core.ranks([None, None]) == [None, None]
    assert core.ranks([]) == []


ORDINALS = {
    1: "1st",
    2: "2nd",
    3: "3rd",
    4: "4th",
    11: "11th",
    12: "12th",
    13: "13th",
    21: "21st",
    22: "22nd",
    33: "33rd",
    101: "101st",
    111: "111th",
    112: "112th",
}


@pytest.mark.parametrize("n,expected", sorted(ORDINALS.items()))
def test_ordinal(n, expected):
    assert core.ordinal(n) == expected


def test_rank_shift_and_delta():
    assert core.rank_shift(33, 17) == "33rd → 17th"
    assert core.rank_shift(None, 17) == "—"
    assert core.rank_shift(3, None) == "—"
    assert core.rank_delta(33, 17) == 16
    assert core.rank_delta(2, 5) == -3
    assert core.rank_delta(None, 5) is None


# --------------------------------------------------------------------------- correlations


def test_spearman_monotone_nonlinear_is_one():
    x = list(range(1, 11))
    y = [math.exp(v) for v in x]
    c = core.spearman(x, y)
    assert c.method == "spearman" and c.n == 10
    assert c.r == pytest.approx(1.0, abs=1e-12)
    assert core.pearson(x, y).r < 0.9  # confirms the relation really is non-linear


def _t3_two_sided_p(r, n=5):
    # t = r sqrt((n-2)/(1-r^2)) with df = 3; Student-t(3) CDF has a closed form.
    t = r * math.sqrt((n - 2) / (1 - r * r))
    th = math.atan(t / math.sqrt(3))
    return 1 - (2 / math.pi) * (th + math.sin(th) * math.cos(th))


def test_spearman_hand_computed():
    # ranks equal values; d = [1,-1,1,-1,0], sum d^2 = 4; rho = 1 - 6*4/(5*24) = 0.8
    c = core.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap_resamples=0)
    assert c.r == pytest.approx(0.8, abs=1e-12)
    assert c.p_value == pytest.approx(_t3_two_sided_p(0.8), abs=1e-9)
    assert c.ci_low is None and c.ci_high is None


def test_spearman_drops_missing_pairs():
    c = core.spearman([1, 2, None, 3, 4, 5, float("nan")], [2, 1, 7, 4, 3, 5, 1], bootstrap_resamples=0)
    assert c.n == 5
    assert c.r == pytest.approx(0.8, abs=1e-12)


def _noisy_data():
    rng = np.random.default_rng(123)
    x = rng.normal(size=40)
    y = x + rng.normal(scale=1.0, size=40)
    return x.tolist(), y.tolist()


@pytest.mark.parametrize("kind", ["continuous", "ties", "binary"])
def test_spearman_bootstrap_is_spearmanr_per_resample_to_the_bit(kind):
    """The bootstrap computes rho for every resample at once (issue 46): the same numbers as
    scipy.stats.spearmanr called once per resample, constant resamples (NaN) included."""
    from scipy import stats

    rng = np.random.default_rng(len(kind))
    n = 6 if kind == "binary" else 23  # six binary pairs: some resamples are constant
    if kind == "continuous":
        x, y = rng.random(n), rng.random(n) * 1e6
    elif kind == "ties":
        x, y = rng.integers(0, 4, n).astype(float), rng.integers(0, 3, n).astype(float)
    else:
        x = rng.integers(0, 2, n).astype(float)
        y = x + rng.integers(0, 2, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_by_one = stats.bootstrap(
            (x, y), lambda a, b: stats.spearmanr(a, b).statistic, n_resamples=400, paired=True, vectorized=False,
            method="percentile", **core.seeded(5),
        ).bootstrap_distribution  # fmt: skip
        at_once = stats.bootstrap(
            (x, y), core.spearman_rows, n_resamples=400, paired=True, method="percentile", **core.seeded(5)
        ).bootstrap_distribution
    np.testing.assert_array_equal(at_once, one_by_one)
    if kind == "binary":
        assert np.isnan(one_by_one).any()


def test_spearman_bootstrap_reproducible_and_contains_r():
    x, y = _noisy_data()
    a = core.spearman(x, y, bootstrap_resamples=500, seed=7)
    b = core.spearman(x, y, bootstrap_resamples=500, seed=7)
    c = core.spearman(x, y, bootstrap_resamples=500, seed=8)
    assert a == b
    assert a.ci_low is not None and a.ci_high is not None
    assert a.ci_low < a.r < a.ci_high
    assert a.ci_low >= -1 and a.ci_high <= 1
    assert (c.ci_low, c.ci_high) != (a.ci_low, a.ci_high)  # the seed is actually used
    assert a.as_dict()["method"] == "spearman"


def test_constant_and_small_inputs_are_none_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (core.spearman, core.pearson):
            c = fn([1, 1, 1, 1, 1], [1, 2, 3, 4, 5])
            assert (c.r, c.p_value, c.ci_low, c.ci_high) == (None, None, None, None)
            assert c.n == 5
            c = fn([1, 2], [3, 4])
            assert c.r is None and c.n == 2
            c = fn([1, 2, None, 4], [3, None, 5, 6])
            assert c.r is None and c.n == 2
        # small n: bootstrap resamples can be all-tied; nothing must leak
        core.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap_resamples=300)


def test_correlation_length_mismatch():
    with pytest.raises(ValueError):
        core.spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError):
        core.pearson([1, 2, 3], [1, 2])


def test_pearson_hand_computed():
    # mean x 2.5, mean y 3.75; Sxy = 3.5, Sxx = 5, Syy = 4.75
    c = core.pearson([1, 2, 3, 4], [2, 4, 5, 4])
    assert c.method == "pearson" and c.n == 4
    assert c.r == pytest.approx(3.5 / math.sqrt(5 * 4.75), abs=1e-12)
    assert c.ci_low is not None


def test_pearson_ci_fisher_by_hand():
    c = core.pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert c.r == pytest.approx(0.8, abs=1e-12)
    assert c.p_value == pytest.approx(_t3_two_sided_p(0.8), abs=1e-9)
    half = Z95 / math.sqrt(5 - 3)
    assert c.ci_low == pytest.approx(math.tanh(math.atanh(0.8) - half), abs=1e-9)
    assert c.ci_high == pytest.approx(math.tanh(math.atanh(0.8) + half), abs=1e-9)


def test_pearson_no_ci_below_four():
    c = core.pearson([1, 2, 3], [1, 3, 2])
    assert c.r == pytest.approx(0.5, abs=1e-12)
    assert c.ci_low is None and c.ci_high is None


# --------------------------------------------------------------------------- agreement

WIKI_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _fleiss_exact(table):
    n = sum(table[0])
    big_n = len(table)
    p_bar = sum(Fraction(sum(c * c for c in row) - n, n * (n - 1)) for row in table) / big_n
    p_e = sum(Fraction(sum(col), big_n * n) ** 2 for col in zip(*table))
    return (p_bar - p_e) / (1 - p_e)


def test_fleiss_wikipedia_example():
    k = agreement.fleiss_kappa(WIKI_TABLE)
    assert round(k, 3) == 0.210
    assert k == pytest.approx(float(_fleiss_exact(WIKI_TABLE)), abs=1e-12)
    assert agreement.fleiss_kappa(np.array(WIKI_TABLE)) == pytest.approx(k, abs=1e-15)


def test_fleiss_perfect_agreement_and_undefined():
    assert agreement.fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0, abs=1e-12)
    assert agreement.fleiss_kappa([[4, 0], [4, 0], [4, 0]]) is None


def test_fleiss_unequal_rows_raise():
    with pytest.raises(ValueError):
        agreement.fleiss_kappa([[3, 0], [1, 1]])
    with pytest.raises(ValueError):
        agreement.fleiss_kappa([[1, 0], [0, 1]])  # a single rater


def test_fleiss_from_ratings_drops_unequal_subjects():
    ratings = [
        ["a", "a", "b"],
        ["b", "b", "b"],
        ["a", None, "a"],  # only 2 raters -> dropped
        ["c", "a", "a"],
        ["b", "c", "c"],
    ]
    table = [[2, 1, 0], [0, 3, 0], [2, 0, 1], [0, 1, 2]]  # columns a, b, c
    k = agreement.fleiss_kappa_from_ratings(ratings)
    assert k == pytest.approx(float(_fleiss_exact(table)), abs=1e-12)


def test_fleiss_from_ratings_degenerate():
    assert agreement.fleiss_kappa_from_ratings([["a", "b", "a"]]) is None
    assert agreement.fleiss_kappa_from_ratings([]) is None
    assert agreement.fleiss_kappa_from_ratings([["x", "x"], ["x", "x"]]) is None
    assert agreement.fleiss_kappa_from_ratings([["x", "x"], ["y", "y"]]) == pytest.approx(1.0)


def test_cohen_kappa_hand_computed():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = .7, p_e = .5*.6 + .5*.4 = .5
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert agreement.cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert agreement.percent_agreement(a, b) == pytest.approx(0.7, abs=1e-12)


def test_cohen_kappa_edge_cases():
    assert agreement.cohen_kappa(["y"] * 5, ["y"] * 5) is None
    assert agreement.cohen_kappa([], []) is None
    assert agreement.cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        agreement.cohen_kappa(["a"], ["a", "b"])


def test_percent_agreement():
    assert agreement.percent_agreement([1, 2, 3, 4], [1, 2, 0, 4]) == pytest.approx(0.75)
    assert agreement.percent_agreement([], []) is None
    with pytest.raises(ValueError):
        agreement.percent_agreement([1], [1, 2])


# --------------------------------------------------------------------------- bootstrap intervals with degenerate resamples


def _exact_spearman_bootstrap(x, y):
    """Every one of the n**n equally likely paired resamples, enumerated: Spearman's rho of each
    from average ranks (NaN where a side is constant). Independent of scipy.stats.bootstrap."""
    from itertools import product

    from scipy.stats import rankdata

    n = len(x)
    idx = np.array(list(product(range(n), repeat=n)))
    xs, ys = np.asarray(x, float)[idx], np.asarray(y, float)[idx]
    rx, ry = rankdata(xs, axis=1), rankdata(ys, axis=1)
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)


@pytest.mark.parametrize(
    "x, y",
    [
        ([0.10, 0.30, 0.20, 0.50], [0.40, 0.60, 0.35, 0.30]),  # 4 models, rho -0.4
        ([0.05, 0.12, 0.30, 0.22, 0.08], [0.71, 0.52, 0.44, 0.61, 0.49]),  # 5 models
        ([0.05, 0.12, 0.30, 0.22, 0.08, 0.40], [0.50, 0.47, 0.71, 0.61, 0.52, 0.80]),  # 6, a narrower interval
    ],
)
def test_spearman_interval_keeps_defined_resamples_and_counts_the_degenerate(x, y):
    """A few all-tied resamples no longer discard the interval: it is the percentile interval of
    the defined resamples, and their count is reported; pinned against the exact bootstrap."""
    c = core.spearman(x, y, bootstrap_resamples=2000, seed=0)
    exact = _exact_spearman_bootstrap(x, y)
    p_degenerate = float(np.mean(np.isnan(exact)))
    assert p_degenerate > 0  # the case the old code refused
    assert c.resamples == 2000
    expected = 2000 * p_degenerate
    assert abs(c.degenerate_resamples - expected) <= 4 * math.sqrt(expected * (1 - p_degenerate)) + 1
    defined = exact[~np.isnan(exact)]
    assert c.ci_low is not None and c.ci_high is not None
    assert np.quantile(defined, 0.01) - 1e-9 <= c.ci_low <= np.quantile(defined, 0.05) + 1e-9
    assert np.quantile(defined, 0.95) - 1e-9 <= c.ci_high <= np.quantile(defined, 0.99) + 1e-9
    assert c.as_dict()["degenerate_resamples"] == c.degenerate_resamples


def test_spearman_interval_refused_when_too_few_resamples_are_defined():
    # x has a tie: 8 of 27 resamples of 3 pairs have a constant x (30% undefined > the 10% allowed)
    c = core.spearman([1, 1, 2], [1, 2, 3], bootstrap_resamples=2000, seed=0)
    assert c.r is not None and (c.ci_low, c.ci_high) == (None, None)
    assert c.resamples == 2000 and abs(c.degenerate_resamples - 2000 * 8 / 27) < 100
    assert c.degenerate_resamples > 2000 * (1 - core.MIN_DEFINED_SHARE)


def test_spearman_interval_without_degenerate_resamples_is_scipys_percentile_interval():
    from scipy.stats import bootstrap, spearmanr

    x, y = _noisy_data()
    c = core.spearman(x, y, bootstrap_resamples=500, seed=3)
    ref = bootstrap(
        (np.asarray(x), np.asarray(y)),
        lambda a, b: spearmanr(a, b).statistic,
        n_resamples=500,
        paired=True,
        vectorized=False,
        method="percentile",
        **core.seeded(3),
    )
    assert c.degenerate_resamples == 0
    assert (c.ci_low, c.ci_high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-12)


def test_pearson_has_no_resample_count():
    c = core.pearson([1, 2, 3, 4], [2, 4, 5, 4])
    assert (c.resamples, c.degenerate_resamples) == (None, None)


# --------------------------------------------------------------------------- two-sided adjudicated accuracy


def _two_sided_coverage(n, p_match, p_false, review, p_credit, reps, rng):
    """Share of `reps` simulated benchmarks whose two-sided interval covers the true accuracy
    p_match (1 - p_false) + (1 - p_match) p_credit: n questions, each a strict match (a false
    pass with probability p_false) or credited by the jury; a simple random sample of
    ceil(review x M) of the M matches is reviewed (hypergeometric false passes)."""
    truth = p_match * (1 - p_false) + (1 - p_match) * p_credit
    matches = rng.binomial(n, p_match, reps)
    false = rng.binomial(matches, p_false)
    credited = rng.binomial(n - matches, p_credit)
    reviewed = np.ceil(review * matches).astype(int)
    found = rng.hypergeometric(false, matches - false, reviewed)
    covered = 0
    for m, c, r, k in zip(matches, credited, reviewed, found):
        est = core.two_sided_accuracy(int(m + c), n, int(m), int(r), int(k))
        covered += est.low <= truth <= est.high
    return covered / reps


@pytest.mark.parametrize(
    "n, p_match, p_false, review, p_credit",
    [
        (200, 0.55, 0.03, 0.10, 0.08),  # a small benchmark, a 10% review
        (1534, 0.70, 0.10, 0.10, 0.08),  # BIRD dev, many false passes
        (500, 0.60, 0.02, 0.02, 0.10),  # a handful of reviews
        (1534, 0.55, 0.03, 0.50, 0.08),  # half the matches reviewed
    ],
)
def test_two_sided_interval_has_nominal_coverage(n, p_match, p_false, review, p_credit):
    """95% nominal: simulated coverage within [94%, 97.5%] (8,000 seeded benchmarks each; the
    old worst-case sum of two Wilson intervals covered 98.5-99.4% here)."""
    coverage = _two_sided_coverage(n, p_match, p_false, review, p_credit, 8000, np.random.default_rng(7))
    assert 0.94 <= coverage <= 0.975


def test_two_sided_with_every_match_reviewed_and_no_false_pass_is_the_adjudicated_column():
    # 120 of 120 matches reviewed, 0 false passes: nothing is estimated, the interval is Wilson's of A/n
    est = core.two_sided_accuracy(130, 200, 120, 120, 0)
    one = core.wilson(130, 200)
    assert (est.value, est.low, est.high, est.estimated_false_passes) == (one.value, one.low, one.high, 0.0)
    # every match reviewed with 6 false passes: exactly (A - 6)/n with Wilson's interval of it
    est = core.two_sided_accuracy(130, 200, 120, 120, 6)
    exact = core.wilson(124, 200)
    assert (est.value, est.low, est.high) == pytest.approx((exact.value, exact.low, exact.high), abs=1e-12)
    # a sample: the unknown false passes among the unreviewed matches widen it
    sampled = core.two_sided_accuracy(130, 200, 120, 12, 0)
    assert sampled.low < one.low and sampled.high == pytest.approx(one.high)


def test_wilson_bounds_with_a_finite_population_correction():
    assert core.wilson_bounds(0.3, 50) == pytest.approx((core.wilson(15, 50).low, core.wilson(15, 50).high), abs=1e-12)
    assert core.wilson_bounds(0.3, 50, fpc=0.0) == (0.3, 0.3)
    # fpc scales z^2: the 95% interval at fpc (z/1.96)^2 is the interval at that z
    z90 = core.NormalDist().inv_cdf(0.95)
    assert core.wilson_bounds(0.3, 50, fpc=(z90 / Z95) ** 2) == pytest.approx(
        (core.wilson(15, 50, 0.90).low, core.wilson(15, 50, 0.90).high), abs=1e-12
    )
    with pytest.raises(ValueError):
        core.two_sided_accuracy(10, 20, 12, 5, 0)  # more matches than successes
