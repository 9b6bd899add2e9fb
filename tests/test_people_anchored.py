"""The people-anchored adjudicated accuracy per model (jury.stats.correction.corrected_accuracies):
hand-derived values, its refusals, and its coverage by simulation (tests/support/people_simulation.py),
including the case where its assumption (one Se and Sp for every model) fails."""

from __future__ import annotations

import math

import pytest

from jury.stats.correction import ModelCounts, corrected_accuracies
from tests.support.people_simulation import coverage

# A frame of 10 records: 4 the panel credited (stratum "c"), 6 it did not ("n"). People labelled
# one credited record (weight 4/1) and three others (weight 6/3 = 2 each).
FLAGS = [True] * 4 + [False] * 6
STRATA = ["c"] * 4 + ["n"] * 6
SAMPLE = [0, 4, 5, 6]
TRUTH = [True, True, False, False]


def test_values_are_the_hand_derived_ones():
    """Se = 4 / (4 + 2) = 2/3 (the credited record weighs 4, the uncredited true one 2); Sp = 1.
    Model a: p = 4/10, t = (0.4 + 1 - 1) / (2/3) = 0.6, (8 + 0.6 x 10) / 20 = 0.7 (published 12/20).
    Model b: p = 8/10, t = 1.2 clipped to 1, (8 + 10) / 20 = 0.9."""
    models = {"a": ModelCounts(20, 8, 10, 4), "b": ModelCounts(20, 8, 10, 8)}
    acc, got = corrected_accuracies(FLAGS, STRATA, SAMPLE, TRUTH, models, resamples=0)
    assert acc.sensitivity.value == pytest.approx(2 / 3) and acc.specificity.value == pytest.approx(1.0)
    assert got["a"].published == pytest.approx(0.6)
    assert got["a"].credited_share == pytest.approx(0.6) and got["a"].value == pytest.approx(0.7)
    assert got["b"].credited_share == pytest.approx(1.0) and got["b"].value == pytest.approx(0.9)
    assert got["a"].bootstrap.low is None  # no resamples, no interval


def test_a_perfect_panel_keeps_the_published_value_and_the_questions_interval():
    """People agree with the panel on every sampled record: Se = Sp = 1, so the corrected value is
    the published one, and the interval is the questions' alone: close to the normal
    approximation 0.6 +/- 1.96 sqrt(0.6 x 0.4 / 400) = [0.552, 0.648]."""
    flags = [True] * 50 + [False] * 50
    strata = [int(f) for f in flags]
    sample = list(range(0, 100, 5))
    models = {"m": ModelCounts(400, 180, 100, 60)}
    _, got = corrected_accuracies(flags, strata, sample, [flags[i] for i in sample], models, resamples=4000, seed=3)
    m = got["m"]
    assert m.value == pytest.approx(0.6) and m.published == pytest.approx(0.6)
    half = 1.96 * math.sqrt(0.6 * 0.4 / 400)
    assert m.bootstrap.low == pytest.approx(0.6 - half, abs=0.006)
    assert m.bootstrap.high == pytest.approx(0.6 + half, abs=0.006)


def test_a_panel_no_better_than_chance_or_a_missing_class_is_refused_with_its_reason():
    models = {"m": ModelCounts(20, 8, 10, 4)}
    _, got = corrected_accuracies(FLAGS, STRATA, SAMPLE, [False, True, True, False], models, resamples=100)
    assert got["m"].value is None and "no better than chance" in (got["m"].reason or "")
    assert got["m"].published == pytest.approx(0.6)
    _, got = corrected_accuracies(FLAGS, STRATA, SAMPLE, [False] * 4, models, resamples=100)
    assert got["m"].value is None and "no human-labelled positive" in (got["m"].reason or "")


def test_counts_that_cannot_be_are_refused():
    with pytest.raises(ValueError, match="credited <= judged"):
        corrected_accuracies(FLAGS, STRATA, SAMPLE, TRUTH, {"m": ModelCounts(20, 8, 10, 11)})
    with pytest.raises(ValueError, match="matches \\+ judged <= routed"):
        corrected_accuracies(FLAGS, STRATA, SAMPLE, TRUTH, {"m": ModelCounts(20, 15, 10, 1)})


def test_with_jurors_who_err_together_the_interval_covers():
    """Issue 44's scenario (tests/support/people_simulation.py: on 30 % of records a shared wrong
    answer each juror copies with probability 0.7), a human sample of 80: 200 benchmarks x 3
    models; a refused interval counts as a miss. bench/people_anchored_coverage.py gives the
    1,000-replication figures."""
    cov, _refused = coverage(200, seed=11, sample=80, shared=True)
    assert cov >= 0.94


def test_when_the_panels_accuracy_differs_by_model_the_pooled_correction_undercovers():
    """The method's assumption fails (100 benchmarks): independent jurors right 55 %, 90 % and 99 % of the time
    on the three models' records, 400 questions each, Se and Sp pooled. The pooled rates describe
    no model and the intervals miss far more often than 5 % (about 71-74 % coverage measured):
    docs/statistics.md says so, and a sample drawn by model is the remedy (next test)."""
    cov, refused = coverage(100, seed=12, sample=100, shared=False, accuracy=(0.55, 0.9, 0.99), questions=400)
    assert cov < 0.85 and refused == 0


@pytest.mark.slow
def test_a_sample_by_model_restores_coverage_where_it_gives_an_interval():
    """The same failing scenario, the sample stratified by model and credit and each model
    corrected by its own records: the intervals it gives cover; with about 33 sampled records per
    model some are refused (counted and documented, never silently narrow)."""
    cov, refused = coverage(400, seed=13, sample=100, shared=False, accuracy=(0.55, 0.9, 0.99), questions=400, per_model=True)
    given = 3 * 400 - refused
    assert cov * 3 * 400 / given >= 0.94
