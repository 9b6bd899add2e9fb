"""Coverage of the corrected rate's intervals (jury.stats.correction.corrected_rate) by
simulation: known truth, many replications (tests/test_stats_correction.py's populations).

759 golds, prevalence 0.2, the panel's Se 0.6-0.85 and Sp 0.85-0.95 by difficulty; strata flag x
difficulty. Designs: (1) a proportional sample of 100, at least 5 per stratum; (2) 15-20 labelled
items per stratum, inclusion probabilities 0.05-0.9 (issue 44 item 4's regime). Both targets;
the delta interval and the bootstrap percentile interval.

Usage: python bench/corrected_rate_coverage.py [--replications 2000] [--resamples 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jury.stats.correction import corrected_rate
from jury.stats.sampling import stratified_sample
from tests.test_stats_correction import population


def run(design: str, target: str, replications: int, resamples: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    delta = boot = 0
    for r in range(replications):
        defect, flag, strata = population(rng)
        if design == "proportional":
            s = stratified_sample(strata, n=100, minimum=5, seed=r)
        else:
            s = stratified_sample(
                strata, sizes={k: min(v, 15 + int(rng.integers(6))) for k, v in Counter(strata).items()}, seed=r
            )
        res = corrected_rate(flag, strata, s.indices, defect[s.indices], target=target, resamples=resamples, seed=r)
        truth = 0.2 if target == "superpopulation" else defect.mean()
        delta += res.value is not None and res.low <= truth <= res.high
        b = res.bootstrap
        boot += b.low is not None and b.high is not None and b.low <= truth <= b.high
    return delta / replications, boot / replications


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'design':14} {'target':16} {'delta':>7} {'bootstrap':>9} {'seconds':>7}")
    for design in ("proportional", "small strata"):
        for target in ("superpopulation", "finite"):
            start = time.perf_counter()
            d, b = run(design, target, args.replications, args.resamples, args.seed)
            print(f"{design:14} {target:16} {100 * d:>6.1f}% {100 * b:>8.1f}% {time.perf_counter() - start:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
