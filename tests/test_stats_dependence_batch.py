"""Issue 46: the dependence check's bootstrap refits run as batches (jury.stats.latent.refit_batch,
jury.stats.dependence._simulate) and must give what refitting each resample on its own gave.

The reference here is the per-resample computation as it was before the batching: draw each
resample's labels, refit it with :func:`jury.stats.latent.dawid_skene` and take the largest
standardised excess of :func:`jury.stats.dependence.pair_agreement` on it."""

from __future__ import annotations

import numpy as np
import pytest

from jury.stats import dependence
from jury.stats.dependence import _largest, _refit_statistics, _simulate, dependence_check, pair_agreement
from jury.stats.latent import LatentClassFit, dawid_skene, refit_batch


def _reference_simulate(fit: LatentClassFit, items: np.ndarray, jurors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    k = fit.n_classes
    z = rng.choice(k, size=fit.n_items, p=fit.priors)
    cum = np.cumsum(fit.confusion[jurors, z[items]], axis=1)
    u = rng.random(items.size) * cum[:, -1]
    labels: np.ndarray = np.minimum((u[:, None] > cum).sum(axis=1), k - 1)
    return labels


def _reference(fit, items, jurors, labels, *, resamples, seed, min_common=5, max_iter=1000, tol=1e-10):
    """The check one resample at a time: (p-value, the resamples' labels, their fits, their statistics)."""
    it, ju, la = np.asarray(items), np.asarray(jurors), np.asarray(labels)
    statistic = _largest(pair_agreement(it, ju, la, fit.priors, fit.confusion, min_common=min_common)).z
    keep = la >= 0
    it, ju = it[keep], ju[keep]
    rng = np.random.default_rng(seed)
    sims, fits, tops = [], [], []
    for _ in range(resamples):
        sim = _reference_simulate(fit, it, ju, rng)
        refit = dawid_skene(
            it,
            ju,
            sim,
            n_classes=fit.n_classes,
            n_items=fit.n_items,
            n_jurors=fit.confusion.shape[0],
            smoothing=fit.smoothing,
            max_iter=max_iter,
            tol=tol,
        )
        top = _largest(pair_agreement(it, ju, sim, refit.priors, refit.confusion, min_common=min_common))
        sims.append(sim)
        fits.append(refit)
        tops.append(np.nan if top is None or top.z is None else top.z)
    at_least = sum(1 for t in tops if t >= statistic)
    return (1 + at_least) / (1 + resamples), np.array(sims), fits, np.array(tops)


def _votes(seed: int, n_items: int, n_jurors: int, k: int, abstain: bool):
    """Noisy jurors, 0 to 2 votes per (item, juror) (repeats, missing votes, items without votes)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    items, jurors, labels = [], [], []
    for i in range(n_items):
        for j in range(n_jurors):
            for _ in range(int(rng.integers(0, 3))):
                items.append(i)
                jurors.append(j)
                wrong = int(rng.integers(-1 if abstain else 0, k))
                labels.append(int(truth[i]) if rng.random() < 0.7 else wrong)
    return np.array(items), np.array(jurors), np.array(labels)


CASES = [
    # (seed, items, jurors, classes, abstentions, smoothing, max_iter)
    (1, 300, 3, 4, True, 0.01, 1000),
    (2, 200, 4, 2, False, 0.01, 1000),
    (3, 60, 5, 3, True, 0.0, 1000),
    (4, 80, 3, 9, True, 0.01, 1000),  # K >= 8: the classes summed as numpy sums longer rows
    (5, 150, 3, 4, False, 0.01, 3),  # stopped by max_iter, not converged
]


@pytest.mark.parametrize(("seed", "n_items", "n_jurors", "k", "abstain", "smoothing", "max_iter"), CASES)
def test_the_batched_refits_are_the_refits_one_by_one(seed, n_items, n_jurors, k, abstain, smoothing, max_iter, monkeypatch):
    items, jurors, labels = _votes(seed, n_items, n_jurors, k, abstain)
    fit = dawid_skene(items, jurors, labels, n_classes=k, n_items=n_items, n_jurors=n_jurors, smoothing=smoothing)
    resamples = 25
    p_value, sims, fits, tops = _reference(fit, items, jurors, labels, resamples=resamples, seed=seed, max_iter=max_iter)
    keep = labels >= 0
    it, ju = items[keep], jurors[keep]

    assert np.array_equal(_simulate(fit, it, ju, np.random.default_rng(seed), resamples), sims)

    priors, confusion, iterations, converged = refit_batch(
        it, ju, sims, n_classes=k, n_items=n_items, n_jurors=n_jurors, smoothing=smoothing, max_iter=max_iter, tol=1e-10
    )
    assert iterations.tolist() == [f.iterations for f in fits]
    assert converged.tolist() == [f.converged for f in fits]
    assert np.max(np.abs(priors - np.array([f.priors for f in fits]))) <= 1e-12
    assert np.max(np.abs(confusion - np.array([f.confusion for f in fits]))) <= 1e-12

    monkeypatch.setattr(dependence, "BATCH_CELLS", 7 * n_items * k)  # batches of 7: 25 = 7 + 7 + 7 + 4
    new = _refit_statistics(fit, it, ju, sims, min_common=5, max_iter=max_iter, tol=1e-10)
    assert np.array_equal(np.isnan(new), np.isnan(tops))
    assert np.nanmax(np.abs(new - tops)) <= 1e-12

    check = dependence_check(fit, resamples=resamples, seed=seed, max_iter=max_iter)
    assert check.p_value == p_value
