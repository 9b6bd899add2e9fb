"""Issue 44 item 3: do the jurors err independently? (jury.stats.dependence)

Expected values come from hand arithmetic and from simulations with known dependence, never
from the code's own output."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jury.stats.dependence import dependence_check, pair_agreement
from jury.stats.latent import dawid_skene

K = 4
PRIORS = np.array([0.3, 0.2, 0.4, 0.1])


def test_observed_and_implied_agreement_by_hand():
    # two jurors, two classes; juror 0 votes twice on item 0 (its first vote counts), juror 1
    # abstains on item 3 (not common), item 4 only juror 0
    priors = np.array([0.5, 0.5])
    conf = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.3], [0.4, 0.6]]])
    items = [0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 5]
    jurors = [0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1]
    labels = [1, 0, 1, 0, 0, 1, 0, -1, 1, 0, 1, 1]
    (p,) = pair_agreement(items, jurors, labels, priors, conf, min_common=1)
    # common items 0, 1, 2, 5: equal on 0 (1, 1), 1 (0, 0) and 5 (1, 1), not on 2
    assert (p.a, p.b, p.common) == (0, 1, 4)
    assert p.observed == pytest.approx(0.75)
    # 0.5 * (0.9*0.7 + 0.1*0.3) + 0.5 * (0.2*0.4 + 0.8*0.6) = 0.5 * 0.66 + 0.5 * 0.56
    assert p.expected == pytest.approx(0.61)
    assert p.excess == pytest.approx(0.14)
    assert p.z == pytest.approx(0.14 / math.sqrt(0.61 * 0.39 / 4))
    (short,) = pair_agreement(items, jurors, labels, priors, conf, min_common=5)
    assert short.z is None


def panel(seed: int, *, copy: float = 0.0, n: int = 150, acc=(0.8, 0.75, 0.7, 0.75, 0.8)):
    """Five jurors, errors uniform over the wrong classes; with ``copy`` juror 1 copies juror
    0's vote on that share of records (a pair that errs together)."""
    rng = np.random.default_rng(seed)
    z = rng.choice(K, size=n, p=PRIORS)
    votes = np.empty((n, len(acc)), dtype=np.int64)
    for j, a in enumerate(acc):
        right = rng.random(n) < a
        votes[:, j] = np.where(right, z, (z + rng.integers(1, K, n)) % K)
    copied = rng.random(n) < copy
    votes[copied, 1] = votes[copied, 0]
    return np.repeat(np.arange(n), len(acc)), np.tile(np.arange(len(acc)), n), votes.ravel()


def p_values(copy: float, replications: int, resamples: int) -> np.ndarray:
    out = []
    for r in range(replications):
        items, jurors, labels = panel(500 + r, copy=copy)
        fit = dawid_skene(items, jurors, labels, n_classes=K)
        out.append(dependence_check(fit, items, jurors, labels, resamples=resamples, seed=r).p_value)
    return np.array(out)


def test_a_copying_pair_raises_the_alarm_and_no_pair_without_common_items():
    items, jurors, labels = panel(1, copy=0.6)
    fit = dawid_skene(items, jurors, labels, n_classes=K)
    check = dependence_check(fit, items, jurors, labels, resamples=19, seed=0)
    # the fit makes the copying pair look accurate, so the misfit can show on another pair:
    # the check says that jurors err together, not reliably which ones
    assert check.largest is not None
    assert check.p_value == pytest.approx(1 / 20)  # no resample reaches it: the smallest p-value with 19
    assert len(check.pairs) == 10
    # jurors 0 and 1 never on the same record: the pair is absent, nothing to check
    none = dependence_check(fit, [0, 1], [0, 1], [0, 0], resamples=5)
    assert none.pairs == [] and none.statistic is None and none.p_value is None


@pytest.mark.slow
def test_independent_jurors_rarely_raise_the_alarm():
    p = p_values(0.0, replications=40, resamples=50)
    assert (p < 0.05).mean() <= 0.15


@pytest.mark.slow
def test_a_pair_that_errs_together_is_found():
    p = p_values(0.5, replications=20, resamples=50)
    assert (p < 0.05).mean() >= 0.7
