"""Juror error rates from the votes alone: the Dawid–Skene latent-class model, fitted by EM.

Each item (a record of an adjudication, a gold question of an audit) has an unknown true
class among K (the four verdict categories, or flag / valid); each juror j has a confusion
matrix ``e[j, c, l]`` = P(juror j votes l | the true class is c) and the classes have priors
``pi[c]``. Given the true class, every vote is an independent draw from its juror's row: so
repeated votes of one juror on one item (repeats) are simply more votes, abstentions are
missing votes, and an item nobody voted on keeps the prior. EM (Dawid & Skene 1979) alternates
the posterior of every item's class (E-step) with the priors and confusion matrices that
maximise the expected complete-data likelihood (M-step) until the log-likelihood stops moving.

Conventions, fixed so an independent implementation gives the same numbers:

- Initialisation: every item's posterior is its vote shares (majority-vote posteriors, as
  Dawid & Skene and crowd-kit's ``DawidSkene`` start); an item without votes starts uniform.
- Semi-supervised: an item with a known class (a human label) has its posterior clamped to
  that class at every step, so it anchors each juror's confusion matrix and the priors.
  The priors are the mean posterior over items with votes or a known class: a labelled
  sample that was not drawn at random from the items biases them.
- Smoothing: the M-step adds ``smoothing`` pseudo-counts to every cell of every confusion
  row and to every prior (a symmetric Dirichlet(1 + smoothing) prior: EM then finds the
  posterior mode), so a row a juror never saw is uniform, never 0/0. ``smoothing=0`` is
  maximum likelihood with crowd-kit's floor: cells are clipped at 1e-10 before normalising,
  so a log is never of 0.
- Iterations: one iteration is an M-step (the first one from the majority-vote posteriors)
  then an E-step at the new parameters, so the posteriors returned are those of the
  parameters returned. EM stops, converged, when the penalised log-likelihood (the
  log-likelihood plus the Dirichlet log-prior) rose by at most ``tol`` per vote, or after
  ``max_iter`` iterations (``converged`` False). crowd-kit's ``DawidSkene(n_iter=N)`` returns
  the posteriors of iteration N here and the confusion matrices of iteration N + 1.

>>> fit = dawid_skene([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 1], n_classes=2)
>>> fit.verdict.tolist(), fit.converged
([0, 1, 0], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

__all__ = ["LatentClassFit", "dawid_skene", "e_step", "juror_accuracy", "majority_shares", "refit_batch", "sample_classes"]

FLOOR = 1e-10
"""The smallest probability a cell keeps with ``smoothing=0`` (crowd-kit's clip)."""


@dataclass(frozen=True)
class LatentClassFit:
    """A Dawid–Skene fit over ``n_items`` items, ``n_jurors`` jurors and ``n_classes`` classes.

    :ivar posterior: ``(n_items, K)``: each item's posterior over the true classes (a known
        item's row is its class, an item without votes or label has the priors).
    :ivar verdict: ``(n_items,)``: the model's MAP class (the lowest class index on a tie).
    :ivar confusion: ``(n_jurors, K, K)``: ``confusion[j, c, l]`` = P(juror j votes l | true
        class c); every row sums to 1.
    :ivar accuracy: ``(n_jurors,)``: each juror's accuracy ``sum_c priors[c] *
        confusion[j, c, c]``, the probability its vote is right on an item drawn from the priors.
    :ivar priors: ``(K,)``: the class priors.
    :ivar log_likelihood: the observed-data log-likelihood at the fitted parameters (known
        items contribute the joint probability of their class and their votes).
    :ivar iterations: EM iterations run (each an M-step then an E-step).
    :ivar converged: whether the penalised log-likelihood stopped rising before ``max_iter``.
    :ivar n_known: items whose class was clamped to a human label (the anchors).
    :ivar n_votes: votes used (abstentions left out).
    :ivar n_abstentions: votes given as abstentions (label < 0), left out.
    :ivar votes_per_juror: ``(n_jurors,)``: votes used per juror.
    :ivar smoothing: the pseudo-count added to every cell and prior.
    :ivar items: ``(n_votes,)`` the item of each vote used, in the order given (abstentions
        left out): the votes travel with their fit, so a check or a draw of the fit
        (:func:`sample_classes`, :func:`jury.stats.dependence.dependence_check`) is always of
        the votes it was fitted on.
    :ivar jurors: ``(n_votes,)`` the juror of each vote used.
    :ivar labels: ``(n_votes,)`` the class of each vote used.
    :ivar known: ``(n_items,)`` the class each item was clamped to (a human label), -1 where none.
    """

    posterior: np.ndarray
    verdict: np.ndarray
    confusion: np.ndarray
    accuracy: np.ndarray
    priors: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool
    n_known: int
    n_votes: int
    n_abstentions: int
    votes_per_juror: np.ndarray
    smoothing: float
    items: np.ndarray
    jurors: np.ndarray
    labels: np.ndarray
    known: np.ndarray

    @property
    def n_jurors(self) -> int:
        """How many jurors the fit covers."""
        return int(self.confusion.shape[0])

    @property
    def n_items(self) -> int:
        """How many items the fit covers."""
        return int(self.posterior.shape[0])

    @property
    def n_classes(self) -> int:
        """K, the number of classes."""
        return int(self.posterior.shape[1])


def _int_array(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer) and not np.all(np.equal(np.mod(arr, 1), 0)):
        raise ValueError(f"{name} must hold integers")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class _Votes:
    """The votes used (abstentions left out) and their pattern: a sparse ``(n_items, J * K)``
    count of each item's votes per (juror, label) cell, so the E- and M-steps are two sparse
    products whatever the number of votes."""

    items: np.ndarray
    jurors: np.ndarray
    labels: np.ndarray
    n_items: int
    n_jurors: int
    n_classes: int
    abstentions: int
    pattern: Any


def _votes(
    items: ArrayLike, jurors: ArrayLike, labels: ArrayLike, n_classes: int, n_items: int | None, n_jurors: int | None
) -> _Votes:
    """Validated votes with the abstentions (label < 0) left out."""
    it, ju, la = _int_array(items, "items"), _int_array(jurors, "jurors"), _int_array(labels, "labels")
    if not (it.size == ju.size == la.size):
        raise ValueError(f"items, jurors and labels differ in length: {it.size}, {ju.size}, {la.size}")
    if int(n_classes) < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    k = int(n_classes)
    if np.any(la >= k):
        raise ValueError(f"labels must be below n_classes={k} (a negative label is an abstention)")
    if np.any(it < 0) or np.any(ju < 0):
        raise ValueError("items and jurors must be non-negative indices")
    ni = int(n_items) if n_items is not None else int(it.max()) + 1 if it.size else 0
    nj = int(n_jurors) if n_jurors is not None else int(ju.max()) + 1 if ju.size else 0
    if it.size and (it.max() >= ni or ju.max() >= nj):
        raise ValueError(f"an item or juror index is beyond n_items={ni} or n_jurors={nj}")
    keep = la >= 0
    it, ju, la = it[keep], ju[keep], la[keep]
    pattern = sparse.csr_matrix((np.ones(it.size), (it, ju * k + la)), shape=(ni, nj * k))
    return _Votes(it, ju, la, ni, nj, k, int((~keep).sum()), pattern)


def majority_shares(items: ArrayLike, labels: ArrayLike, n_items: int, n_classes: int) -> np.ndarray:
    """``(n_items, K)``: each item's share of votes per class (abstentions, label < 0, left
    out; an item without votes gets a row of zeros). The EM's initial posteriors."""
    it, la = _int_array(items, "items"), _int_array(labels, "labels")
    keep = la >= 0
    counts = np.bincount(it[keep] * n_classes + la[keep], minlength=n_items * n_classes).reshape(n_items, n_classes)
    totals = counts.sum(axis=1, keepdims=True)
    shares: np.ndarray = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals > 0)
    return shares


def _normalise(counts: np.ndarray, smoothing: float) -> np.ndarray:
    """Rows (last axis) of counts + smoothing, normalised; with smoothing 0 clipped at FLOOR first."""
    if smoothing > 0:
        smoothed = counts + smoothing
    else:
        smoothed = np.clip(counts, FLOOR, None)
    rows: np.ndarray = smoothed / smoothed.sum(axis=-1, keepdims=True)
    return rows


def _m_step(v: _Votes, posterior: np.ndarray, active: np.ndarray, smoothing: float) -> tuple[np.ndarray, np.ndarray]:
    """Priors and confusion matrices that maximise the expected (penalised) likelihood."""
    k = v.n_classes
    priors = _normalise(posterior[active].sum(axis=0), smoothing) if active.any() else np.full(k, 1.0 / k)
    counts = np.asarray(v.pattern.T @ posterior)  # row j*k + l: the votes l of juror j, by true class
    return priors, _normalise(counts.reshape(v.n_jurors, k, k).transpose(0, 2, 1), smoothing)  # [j, c, l]


def _vote_log_sums(v: _Votes, confusion: np.ndarray) -> np.ndarray:
    """``(n_items, K)``: the sum over each item's votes of log P(vote | class)."""
    logs = np.log(confusion).transpose(0, 2, 1).reshape(v.n_jurors * v.n_classes, v.n_classes)  # [j*k + l, c]
    return np.asarray(v.pattern @ logs)


def _posterior_and_loglik(
    v: _Votes, priors: np.ndarray, confusion: np.ndarray, known: np.ndarray, voted: np.ndarray
) -> tuple[np.ndarray, float]:
    """The E-step (known items clamped) and the observed-data log-likelihood at these parameters."""
    joint = np.log(priors)[None, :] + _vote_log_sums(v, confusion)
    top = joint.max(axis=1, keepdims=True)
    scaled = np.exp(joint - top)
    total = scaled.sum(axis=1, keepdims=True)
    posterior = scaled / total
    marginal = (top + np.log(total))[:, 0]
    is_known = known >= 0
    loglik = float(marginal[voted & ~is_known].sum())
    if is_known.any():
        idx = np.flatnonzero(is_known)
        loglik += float(joint[idx, known[idx]].sum())
        posterior[idx] = np.eye(v.n_classes)[known[idx]]
    return posterior, loglik


def e_step(
    items: ArrayLike,
    jurors: ArrayLike,
    labels: ArrayLike,
    priors: ArrayLike,
    confusion: ArrayLike,
    *,
    n_items: int | None = None,
    known: ArrayLike | None = None,
) -> np.ndarray:
    """The posterior over classes of every item given the parameters (one E-step).

    Args:
        items: ``(V,)`` item index of each vote.
        jurors: ``(V,)`` juror index of each vote.
        labels: ``(V,)`` class voted (negative: an abstention, left out).
        priors: ``(K,)`` class priors, every entry positive.
        confusion: ``(J, K, K)`` confusion matrices, ``[j, true class, vote]``, every cell positive.
        n_items: how many items (default: the largest index + 1).
        known: ``(n_items,)`` a known class per item, negative where unknown; known rows are clamped.

    Returns:
        ``(n_items, K)`` posteriors.
    """
    conf = np.asarray(confusion, dtype=float)
    pri = np.asarray(priors, dtype=float)
    if conf.ndim != 3 or conf.shape[1] != conf.shape[2] or pri.shape != (conf.shape[1],):
        raise ValueError(f"need priors (K,) and confusion (J, K, K), got {pri.shape} and {conf.shape}")
    v = _votes(items, jurors, labels, conf.shape[1], n_items, conf.shape[0])
    kn = _known(known, v)
    return _posterior_and_loglik(v, pri, conf, kn, np.bincount(v.items, minlength=v.n_items) > 0)[0]


def _known(known: ArrayLike | None, v: _Votes) -> np.ndarray:
    if known is None:
        return np.full(v.n_items, -1, dtype=np.int64)
    kn = _int_array(known, "known")
    if kn.size != v.n_items:
        raise ValueError(f"known must have one entry per item ({v.n_items}), got {kn.size}")
    if np.any(kn >= v.n_classes):
        raise ValueError(f"a known class is beyond n_classes={v.n_classes}")
    return np.where(kn < 0, -1, kn)


def juror_accuracy(priors: ArrayLike, confusion: ArrayLike) -> np.ndarray:
    """``(J,)``: ``sum_c priors[c] * confusion[j, c, c]``, each juror's probability of a right
    vote on an item whose class is drawn from ``priors``."""
    conf = np.asarray(confusion, dtype=float)
    accuracy: np.ndarray = np.einsum("c,jcc->j", np.asarray(priors, dtype=float), conf)
    return accuracy


def _check_em_options(smoothing: float, max_iter: int) -> None:
    """Reject a negative or non-finite smoothing and fewer than one iteration."""
    if smoothing < 0 or not np.isfinite(smoothing):
        raise ValueError(f"smoothing must be a non-negative number, got {smoothing}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be at least 1, got {max_iter}")


def _initial_posterior(v: _Votes, kn: np.ndarray, voted: np.ndarray) -> np.ndarray:
    """The EM's starting posteriors: the vote shares, uniform where no vote, known items clamped."""
    k = v.n_classes
    posterior = majority_shares(v.items, v.labels, v.n_items, k)
    posterior[~voted] = 1.0 / k
    if (kn >= 0).any():
        posterior[kn >= 0] = np.eye(k)[kn[kn >= 0]]
    return posterior


def _em(
    v: _Votes, kn: np.ndarray, voted: np.ndarray, posterior: np.ndarray, smoothing: float, max_iter: int, tol: float
) -> LatentClassFit:
    """EM from ``posterior`` until the penalised log-likelihood rises by at most ``tol`` per vote
    or ``max_iter`` iterations (each an M-step then an E-step) have run: the fit where it stopped
    (the last E-step's posteriors and log-likelihood, the last M-step's parameters)."""
    active = voted | (kn >= 0)
    previous = -np.inf
    converged = False
    per_vote = max(v.items.size, 1)
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        priors, confusion = _m_step(v, posterior, active, smoothing)
        posterior, loglik = _posterior_and_loglik(v, priors, confusion, kn, voted)
        objective = loglik + smoothing * (float(np.log(confusion).sum()) + float(np.log(priors).sum()))
        if objective - previous <= tol * per_vote:
            converged = True
            break
        previous = objective
    return LatentClassFit(
        posterior=posterior,
        verdict=np.argmax(posterior, axis=1),
        confusion=confusion,
        accuracy=juror_accuracy(priors, confusion),
        priors=priors,
        log_likelihood=loglik,
        iterations=iterations,
        converged=converged,
        n_known=int((kn >= 0).sum()),
        n_votes=int(v.items.size),
        n_abstentions=v.abstentions,
        votes_per_juror=np.bincount(v.jurors, minlength=v.n_jurors),
        smoothing=float(smoothing),
        items=v.items,
        jurors=v.jurors,
        labels=v.labels,
        known=kn,
    )


def dawid_skene(
    items: ArrayLike,
    jurors: ArrayLike,
    labels: ArrayLike,
    *,
    n_classes: int,
    n_items: int | None = None,
    n_jurors: int | None = None,
    known: ArrayLike | None = None,
    smoothing: float = 0.01,
    max_iter: int = 1000,
    tol: float = 1e-10,
) -> LatentClassFit:
    """Fit the Dawid–Skene model to a set of ballots by EM (the conventions in the module doc).

    One vote per entry of the three arrays: a juror may vote on an item more than once (each
    repeat is a vote), and any (item, juror) pair may be missing.

    Args:
        items: ``(V,)`` item index of each vote, in ``[0, n_items)``.
        jurors: ``(V,)`` juror index of each vote, in ``[0, n_jurors)``.
        labels: ``(V,)`` the class voted, in ``[0, n_classes)``; a negative label is an
            abstention and is left out (counted in ``n_abstentions``).
        n_classes: K, the number of classes (4 for adjudication, 2 for audits).
        n_items: how many items (default: the largest item index + 1); items without a vote
            keep the priors as their posterior.
        n_jurors: how many jurors (default: the largest juror index + 1).
        known: ``(n_items,)`` a human label per item (a class index) or a negative number
            where none is known; known items are clamped to their class (semi-supervised).
        smoothing: the pseudo-count added to every confusion cell and prior (0: maximum
            likelihood with a 1e-10 floor).
        max_iter: the most EM iterations.
        tol: convergence: the penalised log-likelihood rose by at most this much per vote.

    Returns:
        the :class:`LatentClassFit`.

    Raises:
        ValueError: arrays of different lengths, an index or label out of range, K < 2,
            a negative smoothing or max_iter < 1.
    """
    _check_em_options(smoothing, max_iter)
    v = _votes(items, jurors, labels, n_classes, n_items, n_jurors)
    kn = _known(known, v)
    voted = np.bincount(v.items, minlength=v.n_items) > 0
    return _em(v, kn, voted, _initial_posterior(v, kn, voted), smoothing, int(max_iter), tol)


def _class_sums(slabs: np.ndarray) -> np.ndarray:
    """``slabs`` ``(K, ...)`` summed over the classes as numpy sums a row of K classes (the last,
    contiguous axis of an ``(n, K)`` array): one after the other below 8 classes, else by
    numpy's own reduction of such rows."""
    if slabs.shape[0] < 8:
        total: np.ndarray = np.add.reduce(slabs, axis=0)
        return total
    rows: np.ndarray = np.ascontiguousarray(np.moveaxis(slabs, 0, -1)).sum(axis=-1)
    return rows


def _batch_patterns(
    items: np.ndarray, jurors: np.ndarray, rows_labels: np.ndarray, n: int, jk: int, k: int, voted_idx: np.ndarray
) -> tuple[Any, Any, Any, np.ndarray]:
    """The block-diagonal vote pattern of these replications (``rows_labels`` ``(R, V)``, ``jk``
    = J * K columns per block), its transpose, a sparse row of ones per replication over its
    voted items (its sum over them one after the other, as numpy sums the rows of
    dawid_skene's (items, K) posterior) and each vote's row."""
    count, v_count = rows_labels.shape
    rep = np.repeat(np.arange(count, dtype=np.int64), v_count)
    rows = rep * n + np.tile(items, count)
    cols = rep * jk + np.tile(jurors * k, count) + rows_labels.ravel()
    pattern = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(count * n, count * jk))
    ones = (np.repeat(np.arange(count), voted_idx.size), (np.arange(count)[:, None] * n + voted_idx).ravel())
    over_voted = sparse.csr_matrix((np.ones(count * voted_idx.size), ones), shape=(count, count * n))
    return pattern, pattern.T, over_voted, rows


def _batch_start(labels: np.ndarray, rows: np.ndarray, per_item: np.ndarray, k: int) -> np.ndarray:
    """``(K, R, n_items)``: every replication's majority-vote posteriors (uniform where no vote),
    held class by class; ``rows`` is each vote's row in the block-diagonal pattern."""
    r_count, n = labels.shape[0], per_item.size
    voted = per_item > 0
    counts = np.bincount(labels.ravel() * (r_count * n) + rows, minlength=k * r_count * n).reshape(k, r_count, n)
    posterior: np.ndarray = np.divide(counts, per_item, out=np.zeros(counts.shape), where=voted)  # [c, r, item]
    posterior[:, :, ~voted] = 1.0 / k
    return posterior


def _batch_m_step(
    posterior: np.ndarray, pattern_t: Any, over_voted: Any, any_voted: bool, n_jurors: int, smoothing: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_m_step` of every replication in the batch: priors ``(R, K)`` and confusion
    matrices ``(R, J, K, K)`` from the posteriors ``(K, R, n_items)``."""
    k, count, n = posterior.shape
    flat = posterior.reshape(k, count * n)
    if any_voted:
        priors = _normalise(np.stack([over_voted @ flat[c] for c in range(k)], axis=1), smoothing)
    else:
        priors = np.full((count, k), 1.0 / k)
    cells = np.stack([pattern_t @ flat[c] for c in range(k)], axis=1)  # row r*jk + j*k + l, column c
    confusion = _normalise(cells.reshape(count, n_jurors, k, k).transpose(0, 1, 3, 2), smoothing)  # [r, j, c, l]
    return priors, confusion


def _batch_e_step(
    posterior: np.ndarray, pattern: Any, log_priors: np.ndarray, log_conf: np.ndarray, voted: np.ndarray
) -> np.ndarray:
    """:func:`_posterior_and_loglik` (nothing known) of every replication in the batch: the
    posteriors ``(K, R, n_items)`` are overwritten in place with those at the parameters whose
    logs are given; returns each replication's log-likelihood ``(R,)``."""
    k, count, n = posterior.shape
    for c in range(k):  # the joint log-probabilities, over the posteriors (the M-step is done with them)
        np.add(log_priors[:, c, None], (pattern @ log_conf[:, :, c, :].ravel()).reshape(count, n), out=posterior[c])
    top = np.maximum.reduce(posterior, axis=0)
    np.subtract(posterior, top, out=posterior)
    np.exp(posterior, out=posterior)
    total = _class_sums(posterior)
    np.divide(posterior, total, out=posterior)
    marginal = top + np.log(total)
    loglik: np.ndarray = (marginal if bool(voted.all()) else marginal[:, voted]).sum(axis=1)
    return loglik


def _batch_objective(loglik: np.ndarray, log_priors: np.ndarray, log_conf: np.ndarray, smoothing: float) -> np.ndarray:
    """``(R,)``: each replication's penalised log-likelihood, as :func:`dawid_skene` computes it."""
    # each replication's sum over its own (J, K, K) block, laid out as dawid_skene's
    conf_logs = np.array([float(log_conf[r].sum()) for r in range(log_conf.shape[0])])
    objective: np.ndarray = loglik + smoothing * (conf_logs + log_priors.sum(axis=1))
    return objective


@dataclass(frozen=True)
class _BatchResults:
    """What :func:`refit_batch` returns, filled in as each replication stops."""

    priors: np.ndarray
    confusion: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray

    @classmethod
    def empty(cls, r_count: int, n_jurors: int, k: int) -> _BatchResults:
        confusion = np.empty((r_count, n_jurors, k, k)).transpose(0, 1, 3, 2)  # laid out as the fits' [j, c, l]
        return cls(np.empty((r_count, k)), confusion, np.zeros(r_count, dtype=np.int64), np.zeros(r_count, dtype=bool))

    def keep(
        self, idx: np.ndarray, last: np.ndarray, stop: np.ndarray, priors: np.ndarray, confusion: np.ndarray, step: int
    ) -> None:
        """Keep the parameters of the replications ``idx[last]``, which stopped at ``step``."""
        self.priors[idx[last]] = priors[last]
        self.confusion[idx[last]] = confusion[last]
        self.iterations[idx[last]] = step
        self.converged[idx[stop]] = True


def refit_batch(
    items: np.ndarray,
    jurors: np.ndarray,
    labels: np.ndarray,
    *,
    n_classes: int,
    n_items: int,
    n_jurors: int,
    smoothing: float,
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`dawid_skene` (no known classes) of ``R`` sets of labels on the same votes at once.

    ``items`` and ``jurors`` ``(V,)`` are validated votes with no abstentions, ``labels``
    ``(R, V)`` in ``[0, n_classes)``. The replications share one block-diagonal sparse pattern
    whose block ``r`` is the pattern :func:`dawid_skene` builds for ``labels[r]``, and the
    posteriors are held class by class (``(K, R, n_items)``, so a step over the classes is a
    step over K contiguous slabs); every sum adds the same numbers in the same order as the
    fit of ``labels[r]`` alone, so the results are those fits' (tests/test_stats_dependence_batch.py
    checks it against the fits one by one). Each replication keeps the parameters of the
    iteration at which it stopped (the others iterate on).

    Returns:
        ``priors (R, K)``, ``confusion (R, J, K, K)``, ``iterations (R,)``, ``converged (R,)``.
    """
    k, n, nj = int(n_classes), int(n_items), int(n_jurors)
    if labels.ndim != 2 or labels.shape[1] != items.size or jurors.size != items.size:
        raise ValueError(f"need labels (R, V) for V = {items.size} votes, got {labels.shape}")
    r_count, v_count = labels.shape
    per_item = np.bincount(items, minlength=n)
    voted = per_item > 0
    voted_idx = np.flatnonzero(voted)
    pattern, pattern_t, over_voted, rows = _batch_patterns(items, jurors, labels, n, nj * k, k, voted_idx)
    posterior = _batch_start(labels, rows, per_item, k)
    out = _BatchResults.empty(r_count, nj, k)
    idx = np.arange(r_count)  # the replications in the batch, by their index in labels
    running = np.ones(r_count, dtype=bool)  # those of idx still iterating
    previous = np.full(r_count, -np.inf)
    step = 0
    while step < int(max_iter) and idx.size:
        step += 1
        count = idx.size
        priors, confusion = _batch_m_step(posterior, pattern_t, over_voted, bool(voted.any()), nj, smoothing)
        log_conf = np.log(confusion)
        log_priors = np.log(priors)
        loglik = _batch_e_step(posterior, pattern, log_priors, log_conf, voted)
        objective = _batch_objective(loglik, log_priors, log_conf, smoothing)
        stop = running & (objective - previous <= tol * max(v_count, 1))
        last = running & (stop | (step == int(max_iter)))
        out.keep(idx, last, stop, priors, confusion, step)
        running &= ~last
        previous = objective
        if 2 * int(running.sum()) <= count:  # the others iterate on alone (their results are kept)
            idx, previous, posterior = idx[running], previous[running], np.ascontiguousarray(posterior[:, running])
            running = running[running]
            if idx.size:
                pattern, pattern_t, over_voted, _ = _batch_patterns(items, jurors, labels[idx], n, nj * k, k, voted_idx)
    return out.priors, out.confusion, out.iterations, out.converged


def _draw_parameters(
    rng: np.random.Generator, v: _Votes, z: np.ndarray, active: np.ndarray, concentration: float
) -> tuple[np.ndarray, np.ndarray]:
    """A Gibbs draw of the priors and every confusion row (``[j, c, l]``) from their Dirichlet
    given the classes ``z``: the priors first, then the rows from one array of gamma draws."""
    k = v.n_classes
    prior_counts = np.bincount(z[active], minlength=k) + concentration
    priors = rng.dirichlet(prior_counts)
    cells = np.asarray(v.pattern.T @ np.eye(k)[z]).reshape(v.n_jurors, k, k).transpose(0, 2, 1)  # [j, c, l]
    gam = rng.standard_gamma(cells + concentration)
    confusion: np.ndarray = gam / gam.sum(axis=2, keepdims=True)
    return priors, confusion


def _draw_classes(rng: np.random.Generator, v: _Votes, priors: np.ndarray, confusion: np.ndarray, free: np.ndarray) -> np.ndarray:
    """A Gibbs draw of the class of every item of ``free`` from its posterior at these parameters
    (one uniform per item, inverted on the cumulative unnormalised posterior)."""
    k = v.n_classes
    joint = np.log(np.clip(priors, FLOOR, None))[None, :] + _vote_log_sums(v, np.clip(confusion, FLOOR, None))
    joint -= joint.max(axis=1, keepdims=True)
    prob = np.exp(joint[free])
    cum = np.cumsum(prob, axis=1)
    u = rng.random(free.size) * cum[:, -1]
    classes: np.ndarray = np.minimum((u[:, None] > cum).sum(axis=1), k - 1)
    return classes


def sample_classes(fit: LatentClassFit, *, draws: int, seed: int = 0, burn_in: int = 200) -> np.ndarray:
    """Joint draws of every item's true class from the model's posterior with its parameters
    unknown: a Gibbs sampler over classes and parameters under the Dirichlet(1 + smoothing)
    prior whose mode :func:`dawid_skene` finds (data augmentation, Tanner & Wong 1987).

    Each sweep draws the priors and every confusion row from their Dirichlet given the
    classes (``counts + 1 + smoothing``), then every item's class from its posterior given
    those parameters. The chain starts at ``fit``'s MAP classes, runs ``burn_in`` sweeps and
    keeps the next ``draws``, one per sweep. Unlike independent draws from ``fit.posterior``
    (the plug-in posterior), the items of one draw share one draw of the parameters, so a
    share of classes over many items carries the parameters' uncertainty.

    Args:
        fit: the EM fit (its votes are drawn on; its MAP classes start the chain; its smoothing
            sets the prior; every draw keeps the human labels it was given).
        draws: how many draws to keep.
        seed: the chain's seed (``numpy.random.default_rng(seed)``).
        burn_in: sweeps run before the first kept draw.

    Returns:
        ``(draws, n_items)`` class indices (int8 for K < 128).
    """
    k, n = fit.n_classes, fit.n_items
    v = _votes(fit.items, fit.jurors, fit.labels, k, n, fit.n_jurors)
    if int(draws) < 1 or int(burn_in) < 0:
        raise ValueError(f"need draws >= 1 and burn_in >= 0, got {draws} and {burn_in}")
    kn = fit.known
    is_known = kn >= 0
    active = (np.bincount(v.items, minlength=n) > 0) | is_known
    rng = np.random.default_rng(seed)
    concentration = 1.0 + fit.smoothing
    z = np.where(is_known, kn, fit.verdict).astype(np.int64)
    out = np.empty((int(draws), n), dtype=np.int8 if k < 128 else np.int64)
    free = np.flatnonzero(~is_known)
    for sweep in range(int(burn_in) + int(draws)):
        priors, confusion = _draw_parameters(rng, v, z, active, concentration)
        z[free] = _draw_classes(rng, v, priors, confusion, free)
        if sweep >= burn_in:
            out[sweep - int(burn_in)] = z
    return out
