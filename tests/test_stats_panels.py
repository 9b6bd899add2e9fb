"""Issue 33 item 4 and issue 34 item 2: two panels (or two reviewers) compared
(jury.stats.panels).

Independent sources: scikit-learn's cohen_kappa_score, the krippendorff package, the
Fleiss–Cohen–Everitt variance written out by hand for a 2 x 2 table, and the standard
deviation of a bootstrap of sklearn's kappa."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from jury.stats.panels import compare_panels, fce_kappa_se, pair_agreement

TYPES = ["sql_vs_question", "sql_vs_data", "domain_knowledge"]


def benchmark_panels():
    """The benchmark's two audit panels over 759 questions, rebuilt: A flags 236, B flags 221,
    207 shared (so 29 only A, 14 only B, 509 neither). Of the 207 shared flags, 11 name
    another defect type, so the labels agree on 759 - 29 - 14 - 11 = 705 questions, 92.9 %,
    the agreement the benchmark reports (flag agreement alone: 716, 94.3 %)."""
    a, b, difficulty = [], [], []
    for i in range(196):
        a.append(TYPES[i % 3])
        b.append(TYPES[i % 3])
    for i in range(11):
        a.append(TYPES[i % 3])
        b.append(TYPES[(i + 1) % 3])
    a += [TYPES[i % 3] for i in range(29)] + ["valid"] * 14 + ["valid"] * 509
    b += ["valid"] * 29 + [TYPES[i % 3] for i in range(14)] + ["valid"] * 509
    difficulty = ["simple" if i % 3 else "challenging" for i in range(759)]
    return a, b, difficulty


def test_the_benchmarks_207_of_221_and_92_9_percent():
    a, b, difficulty = benchmark_panels()
    c = compare_panels(a, b, positive=TYPES, strata={"difficulty": difficulty}, resamples=500)
    assert (c.n, c.both, c.only_a, c.only_b, c.neither) == (759, 207, 29, 14, 509)
    assert (c.flags_a, c.flags_b) == (236, 221)
    assert c.shared_of_b == pytest.approx(207 / 221) and c.shared_of_a == pytest.approx(207 / 236)
    assert c.labels.agreement == pytest.approx(705 / 759) and round(100 * c.labels.agreement, 1) == 92.9
    assert c.flags.agreement == pytest.approx(716 / 759)
    # kappa by hand for the flags: p_o = 716/759, p_e = (236*221 + 523*538)/759^2
    p_o, p_e = 716 / 759, (236 * 221 + 523 * 538) / 759**2
    assert c.flags.kappa.value == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-12)
    fa, fb = [x != "valid" for x in a], [y != "valid" for y in b]
    assert c.flags.kappa.value == pytest.approx(cohen_kappa_score(fa, fb), abs=1e-12)
    assert c.labels.kappa.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert c.flags.kappa.low < c.flags.kappa.value < c.flags.kappa.high
    assert len(c.labels.disagreements) == 54 and len(c.flags.disagreements) == 43
    # per stratum: every item in exactly one, the counts add up
    strata = c.strata["difficulty"]
    assert sum(s.n for s in strata.values()) == 759
    assert sum(s.both for s in strata.values()) == 207 and sum(s.only_b for s in strata.values()) == 14
    for value, s in strata.items():
        members = [i for i, d in enumerate(difficulty) if d == value]
        assert s.labels.kappa.value == pytest.approx(cohen_kappa_score([a[i] for i in members], [b[i] for i in members]))
        assert set(s.labels.disagreements.tolist()) <= set(members)
    assert sorted(i for s in strata.values() for i in s.labels.disagreements.tolist()) == c.labels.disagreements.tolist()


def test_fleiss_cohen_everitt_standard_error_by_hand_and_by_bootstrap():
    """2 x 2 table [[207, 29], [14, 509]]: the FCE (1969) variance written out term by term;
    and it agrees with the spread of sklearn's kappa over a bootstrap of the items."""
    t = np.array([[207, 29], [14, 509]], dtype=float)
    n = t.sum()
    p = t / n
    r, c = p.sum(axis=1), p.sum(axis=0)
    pe = r[0] * c[0] + r[1] * c[1]
    k = (p[0, 0] + p[1, 1] - pe) / (1 - pe)
    a = p[0, 0] * (1 - (r[0] + c[0]) * (1 - k)) ** 2 + p[1, 1] * (1 - (r[1] + c[1]) * (1 - k)) ** 2
    b = (1 - k) ** 2 * (p[0, 1] * (c[0] + r[1]) ** 2 + p[1, 0] * (c[1] + r[0]) ** 2)
    cc = (k - pe * (1 - k)) ** 2
    assert fce_kappa_se(t) == pytest.approx(math.sqrt((a + b - cc) / (n * (1 - pe) ** 2)), rel=1e-12)
    x = np.repeat([1, 1, 0, 0], [207, 29, 14, 509])
    y = np.repeat([1, 0, 1, 0], [207, 29, 14, 509])
    rng = np.random.default_rng(0)
    boot = [cohen_kappa_score(x[i], y[i]) for i in (rng.integers(0, x.size, x.size) for _ in range(1500))]
    assert fce_kappa_se(t) == pytest.approx(np.std(boot), rel=0.08)
    assert fce_kappa_se(np.zeros((2, 2))) is None and fce_kappa_se(np.array([[5, 0], [0, 0]])) is None


def test_two_reviewers_kappa_and_alpha_with_missing_items():
    """Reviewer b skipped three items: they are left out of both coefficients (krippendorff's
    package on the two-row reliability matrix with NaN agrees, since an item one reviewer
    left is not pairable)."""
    rng = np.random.default_rng(4)
    a = rng.choice(["defective", "valid", "unsure"], size=60, p=[0.3, 0.6, 0.1]).tolist()
    b = [x if rng.random() < 0.8 else str(rng.choice(["defective", "valid"])) for x in a]
    for i in (3, 17, 41):
        b[i] = None
    res = pair_agreement(a, b, resamples=800, seed=2)
    assert (res.n, res.missing) == (57, 3)
    kept = [i for i in range(60) if b[i] is not None]
    assert res.kappa.value == pytest.approx(cohen_kappa_score([a[i] for i in kept], [b[i] for i in kept]), abs=1e-12)
    codes = {"defective": 0, "valid": 1, "unsure": 2}
    matrix = np.array([[codes[x] for x in a], [np.nan if y is None else codes[y] for y in b]], dtype=float)
    assert res.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-12)
    assert res.alpha_interval.low < res.alpha < res.alpha_interval.high and res.alpha_interval.resamples == 800
    assert res.kappa_wald[0] < res.kappa.value < res.kappa_wald[1]
    assert res.confusion.sum() == 57 and res.labels[0] == a[0]
    assert all(a[i] != b[i] for i in res.disagreements)


def test_vectorised_alpha_of_the_bootstrap_is_krippendorffs():
    """The alpha recomputed on each resample is the package's alpha of that resample."""
    from jury.stats.panels import _alpha_codes

    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, size=(5, 40))
    y = np.where(rng.random((5, 40)) < 0.7, x, rng.integers(0, 3, size=(5, 40)))
    ours = _alpha_codes(x, y, 3)
    for row in range(5):
        ref = krippendorff.alpha(reliability_data=np.stack([x[row], y[row]]).astype(float), level_of_measurement="nominal")
        assert ours[row] == pytest.approx(ref, abs=1e-12)


def test_a_constant_pair_has_no_kappa_and_lengths_must_match():
    res = pair_agreement(["valid"] * 5, ["valid"] * 5)
    assert res.kappa.value is None and res.kappa_se is None and res.alpha is None and res.agreement == 1.0
    with pytest.raises(ValueError):
        pair_agreement(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        compare_panels(["a"], ["a"], positive=["a"], strata={"difficulty": ["x", "y"]})
