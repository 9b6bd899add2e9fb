"""A synthetic panel for the dependence check against people's labels
(:func:`jury.stats.dependence.people_check`): known truth, jurors who err independently or
together, and a human sample of their records.

``records`` records of four classes (priors 0.25, 0.2, 0.4, 0.15), each voted on by ``jurors``
jurors whose accuracies are drawn uniformly from 0.7–0.85; a wrong vote is one of the other three
classes at random. Juror 0 is position-biased: on the half of the records where the answers are
shown to it in one order, its wrong votes all go to class 0 (its own shuffle, so it stays
independent of the others). Scenarios:

- ``independent``: nothing more (the check's assumption holds);
- ``shared``: on 30 % of the records a shared wrong class exists and each juror copies it with
  probability 0.7 (issue 44's jurors who err together);
- ``copying``: juror 1 copies juror 0's vote on half the records.

The published verdict is the majority rule (:func:`jury.judging.rules.adjudication_verdict`).
People label ``labelled`` records, chosen by ``selection``: ``verdict``, a sample stratified by
the published verdict (proportional allocation, at least 2 per verdict: what the check's
condition allows); ``split``, the records the panel split on (not unanimous) first, at random
among them: a choice that looks at the votes beyond the verdict, where the check's condition
fails. The panel is fitted (:func:`jury.stats.latent.dawid_skene`) with people's labels as
anchors, and the check conditions on each record's verdict, as ``jury report`` does.
"""

from __future__ import annotations

import numpy as np

from jury.judging.rules import adjudication_verdict
from jury.stats.dependence import ALPHA, people_check
from jury.stats.latent import dawid_skene

K = 4
PRIORS = (0.25, 0.2, 0.4, 0.15)
SCENARIOS = ("independent", "shared", "copying")
SELECTIONS = ("verdict", "split")


def _verdict(counts: tuple[int, ...]) -> str:
    return adjudication_verdict([str(c) for c, n in enumerate(counts) for _ in range(n)], sum(counts))


def _votes(rng: np.random.Generator, y: np.ndarray, jurors: int, scenario: str) -> np.ndarray:
    n = y.size
    accuracy = rng.uniform(0.7, 0.85, size=jurors)
    votes = np.empty((n, jurors), dtype=np.int64)
    for j in range(jurors):
        wrong = (y + rng.integers(1, K, size=n)) % K
        if j == 0:  # position-biased: in one order its wrong votes all go to class 0
            wrong = np.where((rng.random(n) < 0.5) & (y != 0), 0, wrong)
        votes[:, j] = np.where(rng.random(n) < accuracy[j], y, wrong)
    if scenario == "shared":
        exists = rng.random(n) < 0.3
        wrong = (y + rng.integers(1, K, size=n)) % K
        votes = np.where((rng.random((n, jurors)) < 0.7) & exists[:, None], wrong[:, None], votes)
    if scenario == "copying":
        votes[:, 1] = np.where(rng.random(n) < 0.5, votes[:, 0], votes[:, 1])
    return votes


def _sample(rng: np.random.Generator, votes: np.ndarray, verdicts: list[str], labelled: int, selection: str) -> np.ndarray:
    n = votes.shape[0]
    if selection == "split":
        unanimous = ~(votes != votes[:, :1]).any(axis=1)
        return np.sort(np.lexsort((rng.random(n), unanimous))[:labelled])
    keys = sorted(set(verdicts))
    strata = np.array([keys.index(v) for v in verdicts])
    drawn: list[int] = []
    for h in range(len(keys)):
        members = np.flatnonzero(strata == h)
        k = min(members.size, max(2, round(labelled * members.size / n)))
        drawn += rng.choice(members, size=k, replace=False).tolist()
    return np.array(sorted(drawn))


def replicate(
    rng: np.random.Generator,
    *,
    jurors: int = 3,
    records: int = 400,
    labelled: int = 60,
    scenario: str,
    selection: str = "verdict",
) -> float | None:
    """One simulated panel: the people check's p-value."""
    y = rng.choice(K, size=records, p=PRIORS)
    votes = _votes(rng, y, jurors, scenario)
    verdicts = [_verdict(tuple(np.bincount(row, minlength=K).tolist())) for row in votes]
    known = np.full(records, -1)
    drawn = _sample(rng, votes, verdicts, labelled, selection)
    known[drawn] = y[drawn]
    items, who, labels = np.repeat(np.arange(records), jurors), np.tile(np.arange(jurors), records), votes.ravel()
    fit = dawid_skene(items, who, labels, n_classes=K, n_items=records, n_jurors=jurors, known=known)
    return people_check(fit.confusion, items, who, labels, known, condition=lambda i, c: _verdict(c)).p_value


def firing_rate(replications: int, seed: int, **scenario) -> float:
    """The share of replications whose check says the jurors err together (p < ALPHA)."""
    rng = np.random.default_rng(seed)
    fired = [p is not None and p < ALPHA for p in (replicate(rng, **scenario) for _ in range(replications))]
    return sum(fired) / replications
