"""Issue 34 item 1: a stratified sample for people (jury.stats.sampling).

Every expected allocation is derived by hand in the test's docstrings; the draw is re-derived
from the module doc's seed scheme."""

from __future__ import annotations

import numpy as np
import pytest

from jury.stats.sampling import allocate, stratified_sample


def test_proportional_allocation_by_hand():
    """[500, 300, 150, 50] of 1000, n = 40: exactly 40 x the shares, [20, 12, 6, 2]."""
    assert allocate([500, 300, 150, 50], 40).tolist() == [20, 12, 6, 2]


def test_minimum_per_stratum_and_largest_remainder():
    """[600, 250, 100, 40, 10], n = 50, at least 2: proportional gives [30, 12.5, 5, 2, 0.5];
    the last is raised to 2, the rest re-spread: 48 x [600, 250, 100, 40] / 990 =
    [29.09, 12.12, 4.85, 1.94]; the fourth is raised to 2: 46 x [600, 250, 100] / 950 =
    [29.05, 12.11, 4.84]; floors [29, 12, 4, 2, 2] = 49, the one left goes to the largest
    fractional part (0.84, the third): [29, 12, 5, 2, 2]."""
    assert allocate([600, 250, 100, 40, 10], 50, minimum=2).tolist() == [29, 12, 5, 2, 2]


def test_neyman_allocation_by_hand():
    """N = [400, 400, 200], S = [0.5, 0.1, 0.4], n = 60: N S = [200, 40, 80] of 320 ->
    [37.5, 7.5, 15]; floors 59, the tie of fractional parts 0.5 goes to the first: [38, 7, 15]."""
    assert allocate([400, 400, 200], 60, method="neyman", sd=[0.5, 0.1, 0.4]).tolist() == [38, 7, 15]


def test_caps_and_zero_sd_strata():
    """A stratum of 5 records cannot give more than 5: [100, 5, 5], n = 20, at least 3:
    [18.18, 0.9, 0.9] -> the small ones at 3, 14 for the first. Neyman with S = 0 on a stratum:
    it keeps its minimum; [100, 100, 3] with S = [0, 0.5, 0.5], n = 60: 1 for the first, then
    59 x [50, 1.5] / 51.5 = [57.28, 1.72]; floors [1, 57, 1] = 59, +1 to the largest fraction
    (0.72): [1, 57, 2]. When the weighted strata are full ([4, 100], S = [1, 0], n = 50) the
    rest goes to the others: [4, 46]."""
    assert allocate([100, 5, 5], 20, minimum=3).tolist() == [14, 3, 3]
    assert allocate([10, 10, 10], 30).tolist() == [10, 10, 10]
    assert allocate([100, 100, 3], 60, method="neyman", sd=[0, 0.5, 0.5]).tolist() == [1, 57, 2]
    assert allocate([4, 100], 50, method="neyman", sd=[1.0, 0.0], minimum=0).tolist() == [4, 46]


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (([10, 10], 21), {}),
        (([10, 10], 1), {"minimum": 1}),
        (([10, -1], 5), {}),
        (([10, 10], 5), {"method": "neyman"}),
        (([10, 10], 5), {"method": "neyman", "sd": [0.1]}),
        (([10, 10], 5), {"method": "optimal"}),
    ],
)
def test_impossible_allocations_are_refused(args, kwargs):
    with pytest.raises(ValueError):
        allocate(*args, **kwargs)


def frame():
    """100 records: verdict x difficulty keys, in a fixed order."""
    keys = [("gold_defect", "simple")] * 40 + [("genuine_error", "simple")] * 35 + [("genuine_error", "hard")] * 25
    return keys[::2] + keys[1::2]


def test_the_draw_follows_the_seed_scheme_and_records_inclusion_probabilities():
    keys = frame()
    s = stratified_sample(keys, n=20, seed=11)
    # strata in order of first appearance: gold_defect/simple (40), genuine_error/simple (35), genuine_error/hard (25)
    assert [(st.key, st.size, st.sample) for st in s.strata] == [
        (("gold_defect", "simple"), 40, 8),
        (("genuine_error", "simple"), 35, 7),
        (("genuine_error", "hard"), 25, 5),
    ]
    expected = []
    for h, st in enumerate(s.strata):
        members = [i for i, k in enumerate(keys) if k == st.key]
        expected += [members[j] for j in np.random.default_rng([11, h]).choice(len(members), st.sample, replace=False)]
    assert s.indices.tolist() == sorted(expected)
    for i, p, h in zip(s.indices, s.inclusion, s.stratum):
        assert keys[i] == s.strata[h].key and p == pytest.approx(s.strata[h].sample / s.strata[h].size)
    np.testing.assert_allclose(s.weights, 1 / s.inclusion)
    assert s.frame_size == 100 and s.method == "proportional" and s.seed == 11
    assert stratified_sample(keys, n=20, seed=11).indices.tolist() == s.indices.tolist()
    assert stratified_sample(keys, n=20, seed=12).indices.tolist() != s.indices.tolist()


def test_given_sizes_and_neyman_from_values():
    keys = frame()
    given = stratified_sample(keys, sizes={("genuine_error", "hard"): 25, ("gold_defect", "simple"): 2}, seed=0)
    assert [st.sample for st in given.strata] == [2, 0, 25] and given.method == "given"
    assert set(given.inclusion[given.stratum == 2]) == {1.0}
    # values: the panel's 0/1 flag; its sample SD per stratum is the Neyman S_h
    values = np.array([1.0 if k[0] == "gold_defect" else (i % 5 == 0) for i, k in enumerate(keys)])
    s = stratified_sample(keys, n=30, method="neyman", values=values, seed=0)
    sd = [np.std(values[[i for i, k in enumerate(keys) if k == st.key]], ddof=1) for st in s.strata]
    assert [st.sd for st in s.strata] == pytest.approx(sd)
    assert [st.sample for st in s.strata] == allocate([40, 35, 25], 30, method="neyman", sd=sd).tolist()
    with pytest.raises(ValueError):
        stratified_sample(keys, n=10, sizes={("gold_defect", "simple"): 2})
    with pytest.raises(ValueError):
        stratified_sample(keys, sizes={("nope",): 2})
    with pytest.raises(ValueError):
        stratified_sample(keys, sizes={("gold_defect", "simple"): 41})
