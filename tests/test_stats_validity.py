"""The validity statistics of jury.stats against independent implementations:
scikit-learn (Cohen's kappa, confusion matrix, precision/recall/F1), the `krippendorff`
package, and scipy's binomial test."""

import math

import krippendorff
import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support

from jury.stats.agreement import cohen_kappa, confusion, krippendorff_alpha, pairwise_kappas, precision_recall_f1
from jury.stats.core import cohen_kappa_interval, position_bias


def _reference_alpha(units):
    """The krippendorff package's nominal alpha: a raters × units matrix, NaN = missing."""
    cats = sorted({r for u in units for r in u if r is not None})
    width = max(len(u) for u in units)
    data = np.full((width, len(units)), np.nan)
    for j, u in enumerate(units):
        for i, r in enumerate(u):
            if r is not None:
                data[i, j] = cats.index(r)
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


@pytest.mark.parametrize("seed", range(8))
def test_krippendorff_alpha_matches_the_package_with_missing_ratings(seed):
    rng = np.random.default_rng(seed)
    raters, n_units, k = int(rng.integers(2, 6)), int(rng.integers(5, 60)), int(rng.integers(2, 5))
    truth = rng.integers(0, k, n_units)
    units = []
    for t in truth:
        labels = [int(t) if rng.random() < 0.7 else int(rng.integers(0, k)) for _ in range(raters)]
        units.append([f"c{x}" if rng.random() > 0.25 else None for x in labels])  # abstentions
    assert krippendorff_alpha(units) == pytest.approx(_reference_alpha(units), abs=1e-12)


def test_krippendorff_alpha_units_with_one_rating_drop_out():
    units = [["a", "a"], ["b", "b"], ["a", "b"], ["a", None, None], [None, None]]
    assert krippendorff_alpha(units) == pytest.approx(_reference_alpha(units), abs=1e-12)
    assert krippendorff_alpha(units) == pytest.approx(krippendorff_alpha(units[:3]))
    # a different number of ratings per unit is fine (Fleiss' kappa cannot take it)
    ragged = [["a", "a", "b"], ["b", "b"], ["a", "b", "b", "b"], ["a", "a"]]
    assert krippendorff_alpha(ragged) == pytest.approx(_reference_alpha(ragged), abs=1e-12)


def test_krippendorff_alpha_undefined_cases():
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([["a", None], [None, "b"]]) is None  # nothing pairable
    assert krippendorff_alpha([["a", "a"], ["a", "a", "a"]]) is None  # one value: no expected disagreement
    assert krippendorff_alpha([["a", "a"], ["b", "b"]]) == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_interval_value_is_sklearns_and_the_interval_brackets_it(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 3, n))
    a_lab, b_lab = [f"x{v}" for v in a], [f"x{v}" for v in b]
    res = cohen_kappa_interval(a_lab, b_lab, resamples=500, seed=seed)
    assert res.n == n
    assert res.value == pytest.approx(cohen_kappa_score(a_lab, b_lab), abs=1e-12)
    assert res.low is not None and res.high is not None
    assert res.low <= res.value <= res.high
    assert -1 <= res.low < res.high <= 1
    # seeded: the same call gives the same interval; another seed another one
    assert cohen_kappa_interval(a_lab, b_lab, resamples=500, seed=seed) == res
    assert cohen_kappa_interval(a_lab, b_lab, resamples=500, seed=seed + 100) != res


def test_cohen_kappa_interval_matches_a_hand_bootstrap_of_sklearn():
    """Paired resampling: the percentile interval of sklearn's kappa over the same index draws.
    Two bootstraps of 1,000 draws each: an endpoint's Monte-Carlo error is about 0.006 (the
    2.5 % quantile's sqrt(p(1-p)/B) over the density there, κ's spread being about 0.07 on 80
    pairs), so 0.05 is about six errors of their difference."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 80)
    b = np.where(rng.random(80) < 0.8, a, 1 - a)
    res = cohen_kappa_interval(list(a), list(b), resamples=1000, seed=1)
    idx = np.random.default_rng(11).integers(0, 80, (1000, 80))
    kappas = [cohen_kappa_score(a[i], b[i]) for i in idx]
    lo, hi = np.percentile(kappas, [2.5, 97.5])
    assert res.low == pytest.approx(lo, abs=0.05) and res.high == pytest.approx(hi, abs=0.05)


def test_cohen_kappa_interval_skips_resamples_where_kappa_is_undefined():
    # 3 pairs: many resamples are constant on both sides (kappa undefined): only defined ones count
    res = cohen_kappa_interval(["y", "n", "y"], ["y", "n", "n"], resamples=300, seed=0)
    assert res.value == pytest.approx(cohen_kappa_score(["y", "n", "y"], ["y", "n", "n"]))
    assert res.low is not None and res.high is not None and res.low <= res.high
    assert not math.isnan(res.low) and not math.isnan(res.high)


def test_cohen_kappa_interval_undefined_and_empty():
    assert cohen_kappa_interval([], []).value is None
    constant = cohen_kappa_interval(["a"] * 5, ["a"] * 5)
    assert (constant.value, constant.low, constant.high, constant.n) == (None, None, None, 5)
    with pytest.raises(ValueError, match="length mismatch"):
        cohen_kappa_interval(["a"], [])


def test_confusion_matches_sklearn():
    rng = np.random.default_rng(0)
    labels = ["gold_defect", "format_equivalence", "genuine_error", "ambiguous"]
    a = list(rng.choice(labels, 120))
    b = list(rng.choice(labels, 120))
    assert confusion(a, b, labels) == confusion_matrix(a, b, labels=labels).tolist()
    # a label outside `labels` is not counted, as sklearn does
    assert (
        confusion(["a", "b", "z"], ["a", "z", "b"], ["a", "b"])
        == confusion_matrix(["a", "b", "z"], ["a", "z", "b"], labels=["a", "b"]).tolist()
    )


@pytest.mark.parametrize("seed", range(5))
def test_precision_recall_f1_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    truth = list(rng.random(60) < 0.4)
    pred = list(rng.random(60) < 0.5)
    res = precision_recall_f1(truth, pred)
    p, r, f, _ = precision_recall_fscore_support(truth, pred, average="binary", zero_division=np.nan)
    assert (res.precision, res.recall, res.f1) == pytest.approx((p, r, f))
    assert res.n == 60 and res.tp + res.fp + res.fn + res.tn == 60
    assert [[res.tn, res.fp], [res.fn, res.tp]] == confusion_matrix(truth, pred, labels=[False, True]).tolist()


def test_precision_recall_f1_undefined_parts_are_none():
    none_predicted = precision_recall_f1([True, False], [False, False])
    assert none_predicted.precision is None and none_predicted.recall == 0.0 and none_predicted.f1 == 0.0
    none_true = precision_recall_f1([False, False], [True, False])
    assert none_true.precision == 0.0 and none_true.recall is None
    nothing = precision_recall_f1([], [])
    assert (nothing.precision, nothing.recall, nothing.f1, nothing.n) == (None, None, None, 0)


def test_position_bias_is_a_binomial_test_against_a_half():
    res = position_bias(70, 100)
    assert res["share"] == 0.7 and res["n"] == 100
    assert res["p_value"] == pytest.approx(binomtest(70, 100, 0.5).pvalue)
    ci = binomtest(70, 100).proportion_ci(method="wilson")
    assert (res["low"], res["high"]) == pytest.approx((ci.low, ci.high))
    balanced = position_bias(50, 100)
    assert balanced["p_value"] == pytest.approx(1.0)
    empty = position_bias(0, 0)
    assert (empty["share"], empty["p_value"], empty["low"]) == (None, None, None)
    with pytest.raises(ValueError):
        position_bias(3, 2)


def test_pairwise_kappas_over_the_units_both_rated():
    ratings = {
        "A": {1: "y", 2: "n", 3: "y", 4: "y", 5: None},
        "B": {1: "y", 2: "n", 3: "n", 5: "y"},
        "C": {2: "n", 3: "y", 4: "n", 5: "n"},
    }
    got = {(p.a, p.b): (p.value, p.n) for p in pairwise_kappas(ratings)}
    assert list(got) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert got[("A", "B")] == (pytest.approx(cohen_kappa_score(["y", "n", "y"], ["y", "n", "n"])), 3)
    assert got[("A", "C")] == (pytest.approx(cohen_kappa_score(["n", "y", "y"], ["n", "y", "n"])), 3)
    assert got[("B", "C")] == (pytest.approx(cohen_kappa_score(["n", "n", "y"], ["n", "y", "n"])), 3)
    assert pairwise_kappas({"A": {1: "y"}, "B": {2: "y"}})[0].n == 0
    assert cohen_kappa(["y", "n"], ["y", "n"]) == 1.0


def test_cohen_kappa_interval_counts_undefined_resamples_and_follows_the_spearman_policy():
    """One policy for both bootstrap intervals: the defined resamples give the interval, the
    undefined ones are counted, and too many undefined (over 10%) refuse the interval."""
    from itertools import product

    from jury.stats.core import MIN_DEFINED_SHARE, spearman

    a, b = ["y", "n", "y"], ["y", "n", "n"]
    # exact: of the 27 resamples, kappa is undefined on (0,0,0) and (1,1,1) only (one label throughout)
    undefined = sum(cohen_kappa([a[i] for i in idx], [b[i] for i in idx]) is None for idx in product(range(3), repeat=3))
    assert undefined == 2
    res = cohen_kappa_interval(a, b, resamples=2000, seed=0)
    assert res.resamples == 2000
    assert abs(res.degenerate_resamples - 2000 * 2 / 27) <= 4 * math.sqrt(2000 * 2 / 27 * 25 / 27) + 1
    assert res.low is not None  # 93% defined: kept
    # identical raters, one odd label: kappa is undefined whenever a resample misses it ((3/4)**4 = 32%)
    c, d = ["y", "y", "n", "y"], ["y", "y", "n", "y"]
    refused = cohen_kappa_interval(c, d, resamples=2000, seed=0)
    assert refused.value == 1.0 and (refused.low, refused.high) == (None, None)
    assert refused.degenerate_resamples > 2000 * (1 - MIN_DEFINED_SHARE)
    # spearman: the same threshold, from the same helper
    sp = spearman([1, 1, 2], [1, 2, 3], bootstrap_resamples=2000, seed=0)
    assert sp.ci_low is None and sp.degenerate_resamples > 2000 * (1 - MIN_DEFINED_SHARE)


def test_calibration_figure_shows_the_degenerate_resamples_of_its_kappa_interval():
    from jury.results.calibration.reference import ReferenceBuilder
    from jury.results.calibration.render import figure_text

    out = ReferenceBuilder(seed=0, resamples=2000)
    out.kappa("comparator", "strict", "reference", "kappa", ["y", "n", "y"], ["y", "n", "n"])
    out.kappa("comparator", "bird", "reference", "kappa", ["y", "y", "n", "y"], ["y", "y", "n", "y"])
    kept, refused = out.figures
    assert kept.resamples == 2000 and 0 < kept.degenerate_resamples < 200 and kept.low is not None
    assert figure_text(kept).endswith(f"n=3, {kept.degenerate_resamples}/2000 degenerate")
    assert refused.low is None and figure_text(refused) == f"1.000 n=4, no CI: {refused.degenerate_resamples}/2000 degenerate"
    assert kept.model_dump(mode="json")["degenerate_resamples"] == kept.degenerate_resamples
