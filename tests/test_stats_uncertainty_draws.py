"""Issue 46: the questions + jury bootstrap draws only the uniforms it reads (jury.stats.uncertainty._draws
skips the others with PCG64.advance) and must read the numbers drawing them all gave."""

from __future__ import annotations

import numpy as np
import pytest

from jury.stats.uncertainty import _draws


@pytest.mark.parametrize(
    "spans",
    [
        ((0, 4 * 9), (4 * 9, 4 * 9 + 9)),  # everything
        ((5, 20), (36, 45)),  # a gap before, between and none after
        ((0, 0), (36, 45)),  # no jury cell: the flags only
        ((3, 30), (36, 36)),  # no flags
    ],
)
def test_the_uniforms_kept_are_those_of_the_whole_stream(spans):
    m, q, seed = 4, 9, 13
    counts, uni = _draws(seed, 5, 12, q, spans)
    for row, b in enumerate(range(5, 12)):
        rng = np.random.default_rng([seed, b])
        assert counts[row].tolist() == np.bincount(rng.integers(0, q, size=q), minlength=q).tolist()
        whole = rng.random(m * q + q)
        for (lo, hi), u in zip(spans, uni, strict=True):
            assert np.array_equal(u[row], whole[lo:hi])
