"""Issue 33 item 3: repeated panels (jury.stats.repeats).

Independent sources: scikit-learn's cohen_kappa_score, hand counts, numpy's statistics, and a
scripted juror that flips a known share of its answers between repeats."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from jury.stats.repeats import column_spread, juror_retest, verdict_stability


def flipping_juror_votes(flip: float, n: int = 400, seed: int = 0):
    """Juror 0 answers every item twice and flips to another category on a share ``flip`` of
    second answers; juror 1 never flips; juror 2 abstains on item 0 in repeat 1."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 4, size=n)
    flipped = rng.random(n) < flip
    second = np.where(flipped, (first + rng.integers(1, 4, size=n)) % 4, first)
    items = np.concatenate([np.arange(n)] * 6)
    jurors = np.repeat([0, 0, 1, 1, 2, 2], n)
    repeats = np.tile(np.repeat([0, 1], n), 3)
    third = first.copy()
    third_second = first.copy()
    third_second[0] = -1
    labels = np.concatenate([first, second, first, first, third, third_second])
    return items, jurors, repeats, labels, first, second, flipped


def test_a_juror_that_flips_a_known_share_has_that_test_retest_agreement():
    items, jurors, repeats, labels, first, second, flipped = flipping_juror_votes(0.2)
    rows = juror_retest(items, jurors, repeats, labels, resamples=500)
    assert [r.juror for r in rows] == [0, 1, 2]
    flipper, steady, abstainer = rows
    assert flipper.items == 400 and flipper.agreement == pytest.approx(1 - flipped.mean())
    assert abs(flipper.agreement - 0.8) < 0.05  # the scripted share, within its binomial error (2 SE)
    assert flipper.kappa.value == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
    assert flipper.kappa.low < flipper.kappa.value < flipper.kappa.high
    assert steady.agreement == 1.0 and steady.kappa.value == pytest.approx(1.0)
    assert abstainer.items == 399  # the abstention is a missing answer
    assert flipper.pairwise[0].a == "0" and flipper.pairwise[0].b == "1"
    assert flipper.pairwise[0].value == pytest.approx(flipper.kappa.value)


def test_three_repeats_give_fleiss_kappa_and_every_pair():
    # 4 items, one juror, 3 repeats: item 3's third answer differs
    items = [0, 1, 2, 3] * 3
    jurors = [0] * 12
    repeats = [0] * 4 + [1] * 4 + [2] * 4
    labels = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    (row,) = juror_retest(items, jurors, repeats, labels)
    # pairs of answers: 4 items x 3 pairs = 12, item 3 disagrees in 2 of its 3
    assert row.agreement == pytest.approx(10 / 12)
    # Fleiss by hand: counts per item [3,0],[0,3],[3,0],[1,2]; P_i = (1, 1, 1, (0 + 2)/6 = 1/3);
    # P_bar = 10/12; p_j = (7/12, 5/12), P_e = 49/144 + 25/144 = 74/144
    p_bar, p_e = 10 / 12, 74 / 144
    assert row.kappa.value == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-12)
    assert [(p.a, p.b) for p in row.pairwise] == [("0", "1"), ("0", "2"), ("1", "2")]
    assert row.pairwise[1].value == pytest.approx(cohen_kappa_score([0, 1, 0, 1], [0, 1, 0, 0]))


def test_a_juror_cannot_answer_twice_in_one_repeat():
    with pytest.raises(ValueError):
        juror_retest([0, 0], [0, 0], [0, 0], [1, 1])


def test_verdict_changes_between_repeats():
    verdicts = np.array([[0, 1, 2, -1, 3], [0, 2, 2, -1, -1], [0, 1, 2, -1, 3]])
    st = verdict_stability(verdicts)
    assert st.indices.tolist() == [1, 4]
    assert (st.changed.k, st.changed.n) == (2, 5)
    assert st.pairwise[0, 1] == pytest.approx(2 / 5) and st.pairwise[0, 2] == 0.0 and st.pairwise[1, 1] == 0.0


def test_spread_of_a_column_across_repeats():
    values = np.array([[0.60, 0.41, np.nan], [0.62, 0.40, 0.5], [0.57, 0.43, np.nan]])
    sp = column_spread(values)
    np.testing.assert_allclose(sp.mean[:2], [np.mean([0.60, 0.62, 0.57]), np.mean([0.41, 0.40, 0.43])])
    np.testing.assert_allclose(sp.sd[:2], [np.std([0.60, 0.62, 0.57], ddof=1), np.std([0.41, 0.40, 0.43], ddof=1)])
    np.testing.assert_allclose(sp.range[:2], [0.05, 0.03])
    assert sp.low[2] == sp.high[2] == 0.5 and np.isnan(sp.sd[2])
    with pytest.raises(ValueError):
        column_spread([[0.5, 0.4]])
