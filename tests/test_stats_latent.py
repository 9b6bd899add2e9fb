"""Issue 33 item 1: the Dawid–Skene latent-class model (jury.stats.latent).

Independent sources: crowd-kit's ``DawidSkene`` (the same EM from the same majority-vote
start; skipped without crowd-kit), one EM iteration derived by hand with fractions, and a
simulated panel of known confusion matrices (tests/support/panel_simulation.py)."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from jury.stats.latent import dawid_skene, e_step, juror_accuracy, majority_shares, sample_classes
from tests.support import panel_simulation as sim


def random_ballots(seed: int, n: int = 150, jurors: int = 5, k: int = 4):
    """Votes with missing (item, juror) pairs, repeats of one juror on one item and abstentions."""
    rng = np.random.default_rng(seed)
    z = rng.choice(k, size=n, p=np.array([0.2, 0.1, 0.55, 0.15])[:k] / np.array([0.2, 0.1, 0.55, 0.15])[:k].sum())
    conf = np.empty((jurors, k, k))
    for j in range(jurors):
        a = rng.uniform(0.55, 0.9)
        conf[j] = (1 - a) / (k - 1)
        np.fill_diagonal(conf[j], a)
    rows = []
    for i in range(n):
        for j in range(jurors):
            if rng.random() < 0.8:  # the juror saw the item
                for _ in range(1 if rng.random() < 0.75 else 2):  # sometimes twice (repeats)
                    label = -1 if rng.random() < 0.05 else int(rng.choice(k, p=conf[j, z[i]]))  # -1: abstained
                    rows.append((i, j, label))
    items, jurors_, labels = (np.array(c) for c in zip(*rows))
    return items, jurors_, labels, z


def crowdkit_matrices(ds, jurors: int, k: int) -> np.ndarray:
    """crowd-kit's errors_ (indexed [worker, observed], columns true) as [juror, true, vote]."""
    e = ds.errors_
    return np.array([[[e.loc[(j, vote), true] for vote in range(k)] for true in range(k)] for j in range(jurors)])


@pytest.mark.filterwarnings("ignore")  # crowd-kit's own pandas deprecation warnings
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("supervised", [False, True])
def test_em_is_crowdkits_dawid_skene_iteration_for_iteration(seed, supervised):
    """Same start (majority-vote shares), same E and M steps: after N iterations crowd-kit's
    posteriors are ours after N, its error matrices ours after N + 1 (the module doc). With
    smoothing 0 the only differences are floating-point order and crowd-kit clipping its
    posteriors at 1e-10 in place (in its ELBO), so the tolerance is 1e-8."""
    crowdkit = pytest.importorskip("crowdkit.aggregation")
    import pandas as pd

    items, jurors, labels, z = random_ballots(seed)
    voted = labels >= 0  # crowd-kit has no abstentions: they are simply not votes
    df = pd.DataFrame({"task": items[voted], "worker": jurors[voted], "label": labels[voted]})
    known = np.full(z.size, -1)
    true_labels = None
    if supervised:
        anchored = np.arange(0, z.size, 7)
        known[anchored] = z[anchored]
        true_labels = pd.Series(z[anchored], index=anchored)
    for n_iter in (1, 12):
        ds = crowdkit.DawidSkene(n_iter=n_iter, tol=-np.inf).fit(df, true_labels)
        after_n = dawid_skene(items, jurors, labels, n_classes=4, known=known, smoothing=0, max_iter=n_iter, tol=-np.inf)
        after_next = dawid_skene(items, jurors, labels, n_classes=4, known=known, smoothing=0, max_iter=n_iter + 1, tol=-np.inf)
        probas = ds.probas_.sort_index()[list(range(4))].to_numpy()
        assert ds.probas_.index.sort_values().tolist() == list(range(z.size))
        np.testing.assert_allclose(after_n.posterior, probas, atol=1e-8)
        np.testing.assert_allclose(after_next.confusion, crowdkit_matrices(ds, 5, 4), atol=1e-8)
        np.testing.assert_allclose(after_next.priors, ds.priors_.sort_index().to_numpy(), atol=1e-8)
        assert after_n.iterations == n_iter and not after_n.converged
    assert after_n.n_known == (len(range(0, z.size, 7)) if supervised else 0)
    assert after_n.n_abstentions == int((~voted).sum()) and after_n.n_votes == int(voted.sum())


def test_one_em_iteration_by_hand():
    """Three items, two jurors, K = 2, smoothing 1 (Laplace). Votes: item 0: j0 0, j1 0;
    item 1: j0 0, j1 1; item 2: j0 1, j1 abstains.

    Start (vote shares): T = [(1, 0), (1/2, 1/2), (0, 1)].
    M-step: priors ((3/2 + 1) / 5, (3/2 + 1) / 5) = (1/2, 1/2).
    juror 0, true 0: votes 0 weigh 1 + 1/2, votes 1 weigh 0 -> (5/2, 1) / (7/2) = (5/7, 2/7);
             true 1: votes 0 weigh 0 + 1/2, votes 1 weigh 1  -> (3/2, 2) / (7/2) = (3/7, 4/7).
    juror 1, true 0: votes 0 weigh 1, votes 1 weigh 1/2      -> (2, 3/2) / (7/2) = (4/7, 3/7);
             true 1: votes 0 weigh 0, votes 1 weigh 1/2      -> (1, 3/2) / (5/2) = (2/5, 3/5).
    E-step: item 0: (1/2 * 5/7 * 4/7, 1/2 * 3/7 * 2/5) = (10/49, 3/35) -> (50/71, 21/71);
            item 1: (1/2 * 5/7 * 3/7, 1/2 * 3/7 * 3/5) = (15/98, 9/70) -> (25/46, 21/46);
            item 2: (1/2 * 2/7, 1/2 * 4/7) -> (1/3, 2/3).
    Log-likelihood: log(71/245) + log(69/245) + log(3/7)."""
    fit = dawid_skene([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], [0, 0, 0, 1, 1, -1], n_classes=2, smoothing=1, max_iter=1)
    expected_posterior = [[F(50, 71), F(21, 71)], [F(25, 46), F(21, 46)], [F(1, 3), F(2, 3)]]
    expected_confusion = [[[F(5, 7), F(2, 7)], [F(3, 7), F(4, 7)]], [[F(4, 7), F(3, 7)], [F(2, 5), F(3, 5)]]]
    np.testing.assert_allclose(fit.posterior, np.array(expected_posterior, dtype=float), atol=1e-15)
    np.testing.assert_allclose(fit.confusion, np.array(expected_confusion, dtype=float), atol=1e-15)
    np.testing.assert_allclose(fit.priors, [0.5, 0.5], atol=1e-15)
    assert fit.log_likelihood == pytest.approx(math.log(71 / 245) + math.log(69 / 245) + math.log(3 / 7), abs=1e-12)
    assert fit.verdict.tolist() == [0, 0, 1] and fit.iterations == 1
    assert fit.n_abstentions == 1 and fit.votes_per_juror.tolist() == [3, 2]
    # accuracy = sum_c prior_c * confusion[j, c, c]
    np.testing.assert_allclose(fit.accuracy, [0.5 * 5 / 7 + 0.5 * 4 / 7, 0.5 * 4 / 7 + 0.5 * 3 / 5], atol=1e-15)
    # the E-step on its own, at the same parameters, gives the same posteriors
    np.testing.assert_allclose(
        e_step([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [0, 0, 0, 1, 1], fit.priors, fit.confusion), fit.posterior
    )


def test_majority_shares_count_repeats_and_skip_abstentions():
    shares = majority_shares([0, 0, 0, 1, 1, 2], [0, 0, 1, 2, -1, -1], n_items=4, n_classes=3)
    np.testing.assert_allclose(shares, [[2 / 3, 1 / 3, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])


def test_known_items_are_clamped_and_anchor_the_fit():
    """A juror who always says the opposite: without labels the model cannot tell which of the
    two coalitions is right on a 2-2 tie; human labels on two items decide it."""
    # items 0..5: jurors 0, 1 vote the truth, jurors 2, 3 the opposite; the truth is 0 on 0..2, 1 on 3..5
    truth = [0, 0, 0, 1, 1, 1]
    items = [i for i in range(6) for _ in range(4)]
    jurors = [j for _ in range(6) for j in range(4)]
    labels = [t if j < 2 else 1 - t for t in truth for j in range(4)]
    known = [0, -1, -1, 1, -1, -1]
    fit = dawid_skene(items, jurors, labels, n_classes=2, known=known)
    assert fit.n_known == 2
    assert fit.posterior[0].tolist() == [1.0, 0.0] and fit.posterior[3].tolist() == [0.0, 1.0]
    assert fit.verdict.tolist() == truth
    assert fit.accuracy[:2].min() > 0.9 and fit.accuracy[2:].max() < 0.1
    flipped = dawid_skene(items, jurors, labels, n_classes=2, known=[1, -1, -1, 0, -1, -1])
    assert flipped.verdict.tolist() == [1 - t for t in truth]


def test_empty_cells_and_unvoted_items_give_no_nan():
    """Items 0, 1 are known class 0 and item 2 class 1; juror 1 votes only on items 0 and 1, so
    it never saw a class-1 item: its class-1 row is uniform (smoothing, or the floor with
    smoothing 0), never 0/0; item 3 has no vote and keeps the priors; nothing is NaN."""
    votes = ([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [0, 0, 0, 0, 1])
    for smoothing in (0.01, 0):
        fit = dawid_skene(*votes, n_classes=2, n_items=4, known=[0, 0, 1, -1], smoothing=smoothing)
        assert np.isfinite(fit.posterior).all() and np.isfinite(fit.confusion).all() and np.isfinite(fit.log_likelihood)
        np.testing.assert_allclose(fit.posterior[3], fit.priors)
        np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0)
        assert fit.confusion[1, 1].tolist() == [0.5, 0.5]
    # with smoothing 0.01: juror 1's class-0 row is (2 + 0.01, 0.01) / 2.02; priors (2.01, 1.01) / 3.02
    fit = dawid_skene(*votes, n_classes=2, n_items=4, known=[0, 0, 1, -1])
    np.testing.assert_allclose(fit.confusion[1, 0], [2.01 / 2.02, 0.01 / 2.02])
    np.testing.assert_allclose(fit.priors, [2.01 / 3.02, 1.01 / 3.02])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"items": [0, 1], "jurors": [0], "labels": [0, 1]},
        {"items": [0], "jurors": [0], "labels": [2]},
        {"items": [-1], "jurors": [0], "labels": [0]},
        {"items": [0.5], "jurors": [0], "labels": [0]},
        {"items": [0], "jurors": [0], "labels": [0], "known": [0, 1]},
        {"items": [0], "jurors": [0], "labels": [0], "smoothing": -1},
        {"items": [0], "jurors": [0], "labels": [0], "n_items": 0},
    ],
)
def test_bad_ballots_are_refused(kwargs):
    with pytest.raises(ValueError):
        dawid_skene(n_classes=2, **kwargs)


def test_the_model_recovers_the_simulated_jurors_and_beats_the_majority():
    """The simulated panel (70–90 % accurate, two lenient, one position-biased), 20 benchmarks
    of 300 questions (about 270 jury records each): each juror's estimated accuracy is within
    0.02 of its true one on average (the MC error of a mean of 20 fits is about 0.005), and the
    model's verdicts are right more often than the strict majority's."""
    rng = np.random.default_rng(2024)
    estimated, model_right, majority_right = [], [], []
    for _ in range(20):
        s = sim.simulate(rng, 300)
        estimated.append(s.fit.accuracy)
        model_right.append(np.mean(s.fit.verdict == s.true_verdict))
        majority_right.append(np.mean(s.majority_verdict == s.true_verdict))
        assert s.fit.converged
    np.testing.assert_allclose(np.mean(estimated, axis=0), sim.true_juror_accuracy(), atol=0.02)
    assert np.mean(model_right) > np.mean(majority_right)
    np.testing.assert_allclose(juror_accuracy(sim.PRIORS, sim.effective_confusions()), sim.true_juror_accuracy())


def test_joint_draws_keep_labels_and_carry_the_parameters_uncertainty():
    """Gibbs draws: known items never move; with many sharp votes the draws agree with the EM
    posterior; the share of a class over all items varies more across joint draws than across
    independent draws from the plug-in posterior (the parameters are shared within a draw)."""
    items, jurors, labels, z = random_ballots(5, n=120, jurors=3, k=2)
    known = np.full(z.size, -1)
    known[:10] = z[:10]
    fit = dawid_skene(items, jurors, labels, n_classes=2, known=known)
    draws = sample_classes(fit, draws=1500, seed=1, burn_in=100)
    assert draws.shape == (1500, z.size)
    assert (draws[:, :10] == z[:10]).all()
    frequency = (draws == 1).mean(axis=0)
    assert np.abs(frequency - fit.posterior[:, 1]).mean() < 0.05
    rng = np.random.default_rng(0)
    plug_in = (rng.random((1500, z.size)) < fit.posterior[:, 1]).mean(axis=1)
    assert (draws == 1).mean(axis=1).std() > plug_in.std()
    again = sample_classes(fit, draws=1500, seed=1, burn_in=100)
    assert (again == draws).all()


def test_two_jurors_do_not_identify_the_model_and_the_report_refuses_their_fit():
    """Two jurors' votes have K^2 - 1 free frequencies and the model K - 1 + 2K(K - 1)
    parameters, so the votes cannot give the jurors' errors back (Allman, Matias & Rhodes
    2009: three jurors can). Ballots whose pair frequencies are exactly those of a known truth
    (priors 0.85 / 0.15; juror 0 [[0.8, 0.2], [0.3, 0.7]], juror 1 [[0.9, 0.1], [0.4, 0.6]]; by
    hand: P(0, 0) = 0.85·0.8·0.9 + 0.15·0.3·0.4 = 0.630, P(0, 1) = 0.095, P(1, 0) = 0.195,
    P(1, 1) = 0.080, times 2,000 records): the fit's defect share is far from 0.15 however many
    records (measured 0.217 on 50,000 simulated ones), so the report refuses a fit of two jurors
    and keeps the published verdicts (before, it fitted them and centred its interval there)."""
    from jury.results.report.latent import fit_refusal

    pairs = {(0, 0): 1260, (0, 1): 190, (1, 0): 390, (1, 1): 160}
    v0 = np.concatenate([np.full(n, a) for (a, _), n in pairs.items()])
    v1 = np.concatenate([np.full(n, b) for (_, b), n in pairs.items()])
    n = v0.size
    items, jurors, labels = np.repeat(np.arange(n), 2), np.tile([0, 1], n), np.stack([v0, v1], axis=1).ravel()
    fit = dawid_skene(items, jurors, labels, n_classes=2)
    assert abs(fit.priors[1] - 0.15) > 0.04  # not identified: EM returns another truth with these votes
    assert fit_refusal(items, jurors, labels) is not None
    assert fit_refusal(items, jurors, labels).startswith("2 jurors voted")
    # a third juror's votes on the same records: the refusal rule lets the fit through
    third = np.random.default_rng(7).integers(0, 2, n)
    items3 = np.concatenate([items, np.arange(n)])
    jurors3 = np.concatenate([jurors, np.full(n, 2)])
    assert fit_refusal(items3, jurors3, np.concatenate([labels, third])) is None
