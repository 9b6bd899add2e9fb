"""A synthetic benchmark with a panel of known quality, for the coverage tests of the
"questions + jury" intervals (issue 33) and the juror estimates of the latent-class model.

Questions are drawn from a superpopulation: each gold is defective with probability
``DEFECT``; each of three models matches the gold with its own probability (``MATCH``, the same
whether the gold is defective or not unless ``match_if_defect`` is given); a failure reaches
the jury with probability ``ELIGIBLE`` and has a true verdict drawn from ``PRIORS`` over the
four categories (gold_defect, format_equivalence, genuine_error, ambiguous; the first two
credited). Four jurors vote on every jury record from known confusion matrices: accuracies
0.90, 0.85, 0.75 and 0.70; jurors 1 and 2 lenient (90 % of their errors credit the model); juror
3 position-biased: on each record the model's answer is shown first or second (a per-record
shuffle, probability 1/2) and with probability ``BIAS`` the juror picks the answer shown first
(gold_defect when it is the model's, genuine_error when it is the gold's), whatever the truth.
Four audit jurors vote flag / valid on every question (sensitivity 0.90, 0.85, 0.80, 0.75;
false-flag rate 0.10, 0.15, 0.20 and 0.30).

The published rule is the strict majority (more than half of the votes; otherwise no verdict,
never credited; a flag needs more than half the audit votes).

True accuracies (the superpopulation parameters the bootstrap over questions targets):
adjudicated = P(match) + (1 - P(match)) * ELIGIBLE * P(credited verdict); gold-clean =
P(match | the gold is not defective). The finite-sample values (the same columns under the
true verdicts and defects of the simulated questions) are returned beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jury.stats.latent import LatentClassFit, dawid_skene
from jury.stats.uncertainty import ModelRecords, credit_probability

K = 4
CREDITED = (0, 1)
PRIORS = np.array([0.20, 0.15, 0.55, 0.10])
ACCURACY = np.array([0.90, 0.85, 0.75, 0.70])
LENIENT = {1: 0.9, 2: 0.9}  # juror -> the share of its errors that go to the credited verdicts
BIASED, BIAS = 3, 0.5
MATCH = np.array([0.45, 0.55, 0.62])
ELIGIBLE = 0.6
DEFECT = 0.12
AUDIT_SENSITIVITY = np.array([0.90, 0.85, 0.80, 0.75])
AUDIT_FALSE_FLAG = np.array([0.10, 0.15, 0.20, 0.30])


def confusions() -> np.ndarray:
    """(J, K, K): each juror's confusion matrix before position bias ([true, vote])."""
    conf = np.zeros((ACCURACY.size, K, K))
    for j, a in enumerate(ACCURACY):
        for c in range(K):
            others = [label for label in range(K) if label != c]
            if j in LENIENT:
                w = np.array([LENIENT[j] if label in CREDITED else 1 - LENIENT[j] for label in others])
            else:
                w = np.ones(K - 1)
            conf[j, c, others] = (1 - a) * w / w.sum()
            conf[j, c, c] = a
    return conf


def effective_confusions() -> np.ndarray:
    """(J, K, K): the confusion matrices with the position bias averaged over the shuffle
    (what a latent-class model can recover)."""
    conf = confusions()
    first = np.zeros((K, K))
    first[:, 0], first[:, 2] = 0.5, 0.5  # the first-shown answer: gold_defect or genuine_error
    conf[BIASED] = (1 - BIAS) * conf[BIASED] + BIAS * first
    return conf


def true_juror_accuracy() -> np.ndarray:
    """(J,): sum_c PRIORS[c] * effective confusion[j, c, c]."""
    return np.einsum("c,jcc->j", PRIORS, effective_confusions())


def true_columns(match_if_defect: float | None = None) -> dict[str, np.ndarray]:
    """The superpopulation accuracies per model."""
    p_match = MATCH if match_if_defect is None else (1 - DEFECT) * MATCH + DEFECT * match_if_defect
    return {
        "adjudicated": p_match + (1 - p_match) * ELIGIBLE * PRIORS[list(CREDITED)].sum(),
        "gold_clean": MATCH.copy(),
    }


@dataclass(frozen=True)
class Simulated:
    """One simulated benchmark: the records, both fits, their votes and the truth."""

    records: ModelRecords
    fit: LatentClassFit
    audit_fit: LatentClassFit
    votes: tuple[np.ndarray, np.ndarray, np.ndarray]
    audit_votes: tuple[np.ndarray, np.ndarray, np.ndarray]
    record_model: np.ndarray
    record_question: np.ndarray
    true_verdict: np.ndarray
    majority_verdict: np.ndarray
    defect: np.ndarray
    finite: dict[str, np.ndarray]


def _majority(items: np.ndarray, labels: np.ndarray, n: int, k: int) -> np.ndarray:
    counts = np.zeros((n, k))
    np.add.at(counts, (items, labels), 1)
    return np.where(counts.max(axis=1) * 2 > counts.sum(axis=1), counts.argmax(axis=1), -1)


def simulate(rng: np.random.Generator, questions: int, *, match_if_defect: float | None = None) -> Simulated:
    """Draw one benchmark of ``questions`` questions and fit both latent-class models."""
    m, q = MATCH.size, questions
    defect = rng.random(q) < DEFECT
    p_match = np.broadcast_to(MATCH[:, None], (m, q))
    if match_if_defect is not None:
        p_match = np.where(defect[None], match_if_defect, p_match)
    strict = rng.random((m, q)) < p_match
    jury = ~strict & (rng.random((m, q)) < ELIGIBLE)
    rec_m, rec_q = np.nonzero(jury)
    r = rec_m.size
    z = rng.choice(K, size=r, p=PRIORS)
    conf = confusions()
    model_first = rng.random(r) < 0.5
    items, jurors, labels = [], [], []
    for j in range(ACCURACY.size):
        vote = (rng.random(r)[:, None] > conf[j][z].cumsum(axis=1)).sum(axis=1).clip(max=K - 1)
        if j == BIASED:
            vote = np.where(rng.random(r) < BIAS, np.where(model_first, 0, 2), vote)
        items.append(np.arange(r))
        jurors.append(np.full(r, j))
        labels.append(vote)
    votes = (np.concatenate(items), np.concatenate(jurors), np.concatenate(labels))
    fit = dawid_skene(*votes, n_classes=K, n_items=r)
    majority = _majority(votes[0], votes[2], r, K)
    a_items, a_jurors, a_labels = [], [], []
    for j in range(AUDIT_SENSITIVITY.size):
        flag = np.where(defect, rng.random(q) < AUDIT_SENSITIVITY[j], rng.random(q) < AUDIT_FALSE_FLAG[j])
        a_items.append(np.arange(q))
        a_jurors.append(np.full(q, j))
        a_labels.append(np.where(flag, 0, 1))  # class 0 = flag, 1 = valid
    audit_votes = (np.concatenate(a_items), np.concatenate(a_jurors), np.concatenate(a_labels))
    audit_fit = dawid_skene(*audit_votes, n_classes=2, n_items=q)
    credit = np.zeros((m, q))
    credit[rec_m, rec_q] = credit_probability(fit.posterior, CREDITED)
    majority_credit = np.zeros((m, q), dtype=bool)
    majority_credit[rec_m, rec_q] = np.isin(majority, CREDITED)
    records = ModelRecords(
        included=np.ones((m, q), dtype=bool),
        strict=strict,
        jury=jury,
        credit=credit,
        majority_credit=majority_credit,
        flag=audit_fit.posterior[:, 0],
        majority_flag=_majority(audit_votes[0], audit_votes[2], q, 2) == 0,
    )
    true_credit = np.isin(z, CREDITED)
    finite = {
        "adjudicated": (strict.sum(axis=1) + np.bincount(rec_m[true_credit], minlength=m)) / q,
        "gold_clean": (strict & ~defect).sum(axis=1) / max(int((~defect).sum()), 1),
    }
    return Simulated(records, fit, audit_fit, votes, audit_votes, rec_m, rec_q, z, majority, defect, finite)
