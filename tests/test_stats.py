"""Tests for jury.stats against hand-computed values (not the same scipy calls)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from jury import stats

Z95 = 1.959963984540054


# --------------------------------------------------------------------------- wilson


def _wilson_by_hand(k, n, z=Z95):
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_matches_closed_form():
    pr = stats.wilson(81, 263)
    lo, hi = _wilson_by_hand(81, 263)
    assert pr.k == 81 and pr.n == 263
    assert pr.value == pytest.approx(81 / 263, abs=1e-15)
    assert abs(pr.low - lo) < 1e-9
    assert abs(pr.high - hi) < 1e-9
    assert pr.as_dict() == {"k": 81, "n": 263, "value": pr.value, "low": pr.low, "high": pr.high}


def test_wilson_other_confidence():
    z90 = 1.6448536269514722
    pr = stats.wilson(7, 20, confidence=0.90)
    lo, hi = _wilson_by_hand(7, 20, z90)
    assert abs(pr.low - lo) < 1e-9 and abs(pr.high - hi) < 1e-9


def test_wilson_zero_successes_low_is_zero():
    pr = stats.wilson(0, 10)
    assert pr.low == 0
    assert pr.value == 0
    assert abs(pr.high - _wilson_by_hand(0, 10)[1]) < 1e-9


def test_wilson_empty_is_none():
    pr = stats.wilson(0, 0)
    assert (pr.value, pr.low, pr.high) == (None, None, None)
    assert pr.as_dict()["n"] == 0


@pytest.mark.parametrize("k,n", [(11, 10), (-1, 10), (0, -1)])
def test_wilson_invalid_raises(k, n):
    with pytest.raises(ValueError):
        stats.wilson(k, n)


# --------------------------------------------------------------------------- ranks


def test_ranks_ties_competition():
    assert stats.ranks([0.9, 0.8, 0.8, 0.5]) == [1, 2, 2, 4]


def test_ranks_ascending():
    assert stats.ranks([0.9, 0.8, 0.8, 0.5], descending=False) == [4, 2, 2, 1]


def test_ranks_with_none_excluded():
    out = stats.ranks([None, 0.5, 0.9, None, 0.5, float("nan")])
    assert out == [None, 2, 1, None, 2, None]
    assert all(isinstance(r, int) for r in out if r is not None)
    assert stats.ranks([None, None]) == [None, None]
    assert stats.ranks([]) == []


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
    assert stats.ordinal(n) == expected


def test_rank_shift_and_delta():
    assert stats.rank_shift(33, 17) == "33rd → 17th"
    assert stats.rank_shift(None, 17) == "—"
    assert stats.rank_shift(3, None) == "—"
    assert stats.rank_delta(33, 17) == 16
    assert stats.rank_delta(2, 5) == -3
    assert stats.rank_delta(None, 5) is None


# --------------------------------------------------------------------------- correlations


def test_spearman_monotone_nonlinear_is_one():
    x = list(range(1, 11))
    y = [math.exp(v) for v in x]
    c = stats.spearman(x, y)
    assert c.method == "spearman" and c.n == 10
    assert c.r == pytest.approx(1.0, abs=1e-12)
    assert stats.pearson(x, y).r < 0.9  # confirms the relation really is non-linear


def _t3_two_sided_p(r, n=5):
    # t = r sqrt((n-2)/(1-r^2)) with df = 3; Student-t(3) CDF has a closed form.
    t = r * math.sqrt((n - 2) / (1 - r * r))
    th = math.atan(t / math.sqrt(3))
    return 1 - (2 / math.pi) * (th + math.sin(th) * math.cos(th))


def test_spearman_hand_computed():
    # ranks equal values; d = [1,-1,1,-1,0], sum d^2 = 4; rho = 1 - 6*4/(5*24) = 0.8
    c = stats.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap_resamples=0)
    assert c.r == pytest.approx(0.8, abs=1e-12)
    assert c.p_value == pytest.approx(_t3_two_sided_p(0.8), abs=1e-9)
    assert c.ci_low is None and c.ci_high is None


def test_spearman_drops_missing_pairs():
    c = stats.spearman([1, 2, None, 3, 4, 5, float("nan")], [2, 1, 7, 4, 3, 5, 1], bootstrap_resamples=0)
    assert c.n == 5
    assert c.r == pytest.approx(0.8, abs=1e-12)


def _noisy_data():
    rng = np.random.default_rng(123)
    x = rng.normal(size=40)
    y = x + rng.normal(scale=1.0, size=40)
    return x.tolist(), y.tolist()


def test_spearman_bootstrap_reproducible_and_contains_r():
    x, y = _noisy_data()
    a = stats.spearman(x, y, bootstrap_resamples=500, seed=7)
    b = stats.spearman(x, y, bootstrap_resamples=500, seed=7)
    c = stats.spearman(x, y, bootstrap_resamples=500, seed=8)
    assert a == b
    assert a.ci_low is not None and a.ci_high is not None
    assert a.ci_low < a.r < a.ci_high
    assert a.ci_low >= -1 and a.ci_high <= 1
    assert (c.ci_low, c.ci_high) != (a.ci_low, a.ci_high)  # the seed is actually used
    assert a.as_dict()["method"] == "spearman"


def test_constant_and_small_inputs_are_none_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (stats.spearman, stats.pearson):
            c = fn([1, 1, 1, 1, 1], [1, 2, 3, 4, 5])
            assert (c.r, c.p_value, c.ci_low, c.ci_high) == (None, None, None, None)
            assert c.n == 5
            c = fn([1, 2], [3, 4])
            assert c.r is None and c.n == 2
            c = fn([1, 2, None, 4], [3, None, 5, 6])
            assert c.r is None and c.n == 2
        # small n: bootstrap resamples can be all-tied; nothing must leak
        stats.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], bootstrap_resamples=300)


def test_correlation_length_mismatch():
    with pytest.raises(ValueError):
        stats.spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError):
        stats.pearson([1, 2, 3], [1, 2])


def test_pearson_hand_computed():
    # mean x 2.5, mean y 3.75; Sxy = 3.5, Sxx = 5, Syy = 4.75
    c = stats.pearson([1, 2, 3, 4], [2, 4, 5, 4])
    assert c.method == "pearson" and c.n == 4
    assert c.r == pytest.approx(3.5 / math.sqrt(5 * 4.75), abs=1e-12)
    assert c.ci_low is not None


def test_pearson_ci_fisher_by_hand():
    c = stats.pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert c.r == pytest.approx(0.8, abs=1e-12)
    assert c.p_value == pytest.approx(_t3_two_sided_p(0.8), abs=1e-9)
    half = Z95 / math.sqrt(5 - 3)
    assert c.ci_low == pytest.approx(math.tanh(math.atanh(0.8) - half), abs=1e-9)
    assert c.ci_high == pytest.approx(math.tanh(math.atanh(0.8) + half), abs=1e-9)


def test_pearson_no_ci_below_four():
    c = stats.pearson([1, 2, 3], [1, 3, 2])
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
    k = stats.fleiss_kappa(WIKI_TABLE)
    assert round(k, 3) == 0.210
    assert k == pytest.approx(float(_fleiss_exact(WIKI_TABLE)), abs=1e-12)
    assert stats.fleiss_kappa(np.array(WIKI_TABLE)) == pytest.approx(k, abs=1e-15)


def test_fleiss_perfect_agreement_and_undefined():
    assert stats.fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0, abs=1e-12)
    assert stats.fleiss_kappa([[4, 0], [4, 0], [4, 0]]) is None


def test_fleiss_unequal_rows_raise():
    with pytest.raises(ValueError):
        stats.fleiss_kappa([[3, 0], [1, 1]])
    with pytest.raises(ValueError):
        stats.fleiss_kappa([[1, 0], [0, 1]])  # a single rater


def test_fleiss_from_ratings_drops_unequal_subjects():
    ratings = [
        ["a", "a", "b"],
        ["b", "b", "b"],
        ["a", None, "a"],  # only 2 raters -> dropped
        ["c", "a", "a"],
        ["b", "c", "c"],
    ]
    table = [[2, 1, 0], [0, 3, 0], [2, 0, 1], [0, 1, 2]]  # columns a, b, c
    k = stats.fleiss_kappa_from_ratings(ratings)
    assert k == pytest.approx(float(_fleiss_exact(table)), abs=1e-12)


def test_fleiss_from_ratings_degenerate():
    assert stats.fleiss_kappa_from_ratings([["a", "b", "a"]]) is None
    assert stats.fleiss_kappa_from_ratings([]) is None
    assert stats.fleiss_kappa_from_ratings([["x", "x"], ["x", "x"]]) is None
    assert stats.fleiss_kappa_from_ratings([["x", "x"], ["y", "y"]]) == pytest.approx(1.0)


def test_cohen_kappa_hand_computed():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = .7, p_e = .5*.6 + .5*.4 = .5
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert stats.percent_agreement(a, b) == pytest.approx(0.7, abs=1e-12)


def test_cohen_kappa_edge_cases():
    assert stats.cohen_kappa(["y"] * 5, ["y"] * 5) is None
    assert stats.cohen_kappa([], []) is None
    assert stats.cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        stats.cohen_kappa(["a"], ["a", "b"])


def test_percent_agreement():
    assert stats.percent_agreement([1, 2, 3, 4], [1, 2, 0, 4]) == pytest.approx(0.75)
    assert stats.percent_agreement([], []) is None
    with pytest.raises(ValueError):
        stats.percent_agreement([1], [1, 2])
