"""Time the questions + jury bootstrap at the benchmark's size, beside the report's rank stability.

The benchmark's size: 36 models x 759 questions. About 30 % of the pairs reached a panel of
four jurors (8,200 records, 32,800 votes), and an audit of four jurors voted on every question.
The data are synthetic, built like tests/support/panel_simulation.py. Printed:

1. ``jury.results.ranks.bootstrap_ranks`` on the strict column: the report's rank stability,
   over questions only;
2. ``jury_bootstrap`` with plug-in draws, and ``jury_ranks`` on its adjudicated column, with
   the ratio to (1);
3. the Dawid–Skene fits, the Gibbs draws of ``sample_classes`` (verdicts and flags) and
   ``jury_bootstrap`` with those joint draws.

Usage: python bench/stats_bench.py [--resamples 2000] [--seed 0]
The numbers depend on the machine and on what else runs on it: they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jury.results.ranks import bootstrap_ranks
from jury.stats.latent import dawid_skene, sample_classes
from jury.stats.uncertainty import ClassDraws, ModelRecords, credit_probability, jury_bootstrap, jury_intervals, jury_ranks


def build(rng: np.random.Generator, models: int = 36, questions: int = 759):
    strict = rng.random((models, questions)) < rng.uniform(0.3, 0.7, size=(models, 1))
    jury = ~strict & (rng.random((models, questions)) < 0.6)
    rec_m, rec_q = np.nonzero(jury)
    r = rec_m.size
    z = rng.choice(4, size=r, p=[0.2, 0.15, 0.55, 0.1])
    acc = np.array([0.9, 0.85, 0.75, 0.7])
    right = rng.random((4, r)) < acc[:, None]
    wrong = (z[None] + rng.integers(1, 4, size=(4, r))) % 4
    labels = np.where(right, z[None], wrong)
    votes = (np.tile(np.arange(r), 4), np.repeat(np.arange(4), r), labels.ravel())
    defect = rng.random(questions) < 0.12
    flags = np.where(defect[None], rng.random((4, questions)) < 0.85, rng.random((4, questions)) < 0.15)
    audit = (np.tile(np.arange(questions), 4), np.repeat(np.arange(4), questions), np.where(flags, 0, 1).ravel())
    return strict, jury, rec_m, rec_q, votes, audit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    b = args.resamples
    strict, jury, rec_m, rec_q, votes, audit = build(np.random.default_rng(args.seed))
    m, q = strict.shape
    print(f"{m} models x {q} questions, {rec_m.size:,} jury records, {votes[0].size:,} votes, {b:,} resamples")

    t = time.perf_counter()
    bootstrap_ranks(strict.astype(float), np.ones((m, q)), b, args.seed)
    t_ranks = time.perf_counter() - t
    print(f"1. report's rank stability (questions only):       {t_ranks:6.2f} s")

    t = time.perf_counter()
    fit = dawid_skene(*votes, n_classes=4, n_items=rec_m.size)
    audit_fit = dawid_skene(*audit, n_classes=2, n_items=q)
    t_fit = time.perf_counter() - t
    credit = np.zeros((m, q))
    credit[rec_m, rec_q] = credit_probability(fit.posterior, [0, 1])
    majority = np.zeros((m, q), dtype=bool)
    majority[rec_m, rec_q] = credit[rec_m, rec_q] > 0.5
    records = ModelRecords(
        np.ones((m, q), bool), strict, jury, credit, majority, audit_fit.posterior[:, 0], audit_fit.posterior[:, 0] > 0.5
    )

    t = time.perf_counter()
    boot = jury_bootstrap(records, resamples=b, seed=args.seed)
    jury_intervals(records, boot, "adjudicated")
    jury_ranks(boot, "adjudicated")
    t_plug = time.perf_counter() - t
    print(f"2. questions + jury, plug-in (bootstrap + ranks):  {t_plug:6.2f} s  ({t_plug / t_ranks:.1f} x (1))")

    t = time.perf_counter()
    z = sample_classes(fit, draws=b, seed=args.seed)
    za = sample_classes(audit_fit, draws=b, seed=args.seed)
    t_gibbs = time.perf_counter() - t
    t = time.perf_counter()
    joint = jury_bootstrap(
        records,
        resamples=b,
        seed=args.seed,
        verdicts=ClassDraws(z, rec_q, rec_m, (0, 1)),
        flags=ClassDraws(za, np.arange(q), None, (0,)),
    )
    jury_ranks(joint, "adjudicated")
    t_joint = time.perf_counter() - t
    print(f"3. Dawid-Skene fits ({fit.iterations} + {audit_fit.iterations} EM iterations):      {t_fit:6.2f} s")
    print(f"   Gibbs draws (verdicts and flags, 200 burn-in):  {t_gibbs:6.2f} s")
    print(
        f"   questions + jury, joint (bootstrap + ranks):    {t_joint:6.2f} s  ({(t_gibbs + t_joint) / t_ranks:.1f} x (1) with the draws)"
    )


if __name__ == "__main__":
    main()
