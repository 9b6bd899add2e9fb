"""A synthetic benchmark for the people-anchored adjudicated accuracy
(:func:`jury.stats.correction.corrected_accuracies`): known truth, a panel whose jurors may err
together, and a stratified human sample of the panel's records.

Three models answer ``questions`` questions each, drawn from a superpopulation: a strict match
with probability ``MATCH[m]``, a failure the panel judges with probability ``JUDGED[m]`` (the
rest are failures it never sees), and a judged failure truly deserves credit with probability
``CREDIT[m]``. The true accuracy the interval targets is MATCH + JUDGED x CREDIT.

Three jurors vote credited / not credited on every judged failure, each right with probability
``accuracy`` (one value, or one per model: the case where the pooled Se and Sp do not describe
every model). With ``shared``, on 30 % of the records a shared wrong answer exists and each juror
copies it with probability 0.7 (jurors who err together, issue 44's scenario). The panel credits
on a majority. The human sample: ``sample`` records of the frame (every judged failure of every
model), stratified by the panel's credit, proportional allocation with at least 2 per stratum;
people label them with the truth. With ``per_model``, the sample is stratified by model and
credit (the same allocation within each model's records) and each model is corrected by its own
records' Se and Sp, as ``jury report`` does for a sample drawn ``by`` model.
"""

from __future__ import annotations

import numpy as np

from jury.stats.correction import ModelCounts, corrected_accuracies

MATCH = (0.45, 0.60, 0.70)
JUDGED = (0.50, 0.35, 0.25)
CREDIT = (0.30, 0.25, 0.35)
TRUE_ACCURACY = tuple(a + j * c for a, j, c in zip(MATCH, JUDGED, CREDIT))


def replicate(
    rng: np.random.Generator,
    *,
    questions: int = 150,
    sample: int = 80,
    shared: bool = True,
    accuracy: float | tuple[float, float, float] = 0.8,
    resamples: int = 1000,
    per_model: bool = False,
) -> list[bool | None]:
    """One simulated benchmark: per model, whether its interval covers the true accuracy (None
    when the interval is refused)."""
    flags, truths, counts = [], [], {}
    for m in range(3):
        u = rng.random(questions)
        match = u < MATCH[m]
        judged = (u >= MATCH[m]) & (u < MATCH[m] + JUDGED[m])
        n_judged = int(judged.sum())
        y = rng.random(n_judged) < CREDIT[m]
        right = accuracy if isinstance(accuracy, float) else accuracy[m]
        votes = np.where(rng.random((n_judged, 3)) < right, y[:, None], ~y[:, None])
        if shared:
            exists = rng.random(n_judged) < 0.3
            votes = np.where((rng.random((n_judged, 3)) < 0.7) & exists[:, None], ~y[:, None], votes)
        credited = votes.sum(axis=1) >= 2
        flags.append(credited)
        truths.append(y)
        counts[str(m)] = ModelCounts(questions, int(match.sum()), n_judged, int(credited.sum()))
    flag, truth = np.concatenate(flags), np.concatenate(truths)
    owner = np.concatenate([np.full(f.size, m) for m, f in enumerate(flags)])
    strata = flag.astype(int) + (2 * owner if per_model else 0)
    drawn: list[int] = []
    for h in np.unique(strata):
        members = np.flatnonzero(strata == h)
        k = min(members.size, max(2, round(sample * members.size / flag.size)))
        drawn += rng.choice(members, size=k, replace=False).tolist()
    idx = np.array(sorted(drawn))
    seed = int(rng.integers(1 << 30))
    out = {}
    if per_model:
        for m in range(3):
            mine = np.flatnonzero(owner == m)
            at = {int(i): j for j, i in enumerate(mine)}
            picked = [int(i) for i in idx if int(i) in at]
            _, got = corrected_accuracies(
                flag[mine], strata[mine], [at[i] for i in picked], truth[picked], {str(m): counts[str(m)]},
                resamples=resamples, seed=seed + m,
            )  # fmt: skip
            out.update(got)
    else:
        _, out = corrected_accuracies(flag, strata, idx, truth[idx], counts, resamples=resamples, seed=seed)
    covered: list[bool | None] = []
    for m in range(3):
        b = out[str(m)].bootstrap
        covered.append(None if b.low is None or b.high is None else b.low <= TRUE_ACCURACY[m] <= b.high)
    return covered


def coverage(replications: int, seed: int, **scenario) -> tuple[float, int]:
    """The share of intervals (3 per replication) that cover the truth, and how many were refused
    (a refused interval counts as not covering)."""
    rng = np.random.default_rng(seed)
    got = [c for _ in range(replications) for c in replicate(rng, **scenario)]
    return sum(c is True for c in got) / len(got), sum(c is None for c in got)
