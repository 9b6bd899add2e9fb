"""Coverage of the people-anchored adjudicated accuracy (jury.stats.correction.corrected_accuracies)
by simulation: known truth, many replications (tests/support/people_simulation.py).

Scenarios, 150 questions per model unless said: (a) jurors who err independently (accuracy 0.8);
(b) jurors who err together (on 30 % of the records a shared wrong answer, each juror copies it
with probability 0.7: the case that breaks the questions + jury interval); (c) independent
jurors whose accuracy differs by model (0.55, 0.9, 0.99), 400 questions per model: the pooled
sensitivity and specificity then describe no model (the method's assumption fails); (d) as (c),
the sample drawn by model and each model corrected by its own records (what ``jury report``
does for a sample drawn ``--by model``). Human samples of 60 and 100 records.

Usage: python bench/people_anchored_coverage.py [--replications 1000] [--seed 0]
Each line: scenario, sample size, coverage over replications x 3 models (a refused interval
counts as a miss), refused intervals, and the coverage of the intervals given.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.people_simulation import coverage

SCENARIOS = {
    "(a) independent jurors": {"shared": False},
    "(b) jurors err together": {"shared": True},
    "(c) accuracy by model, pooled": {"shared": False, "accuracy": (0.55, 0.9, 0.99), "questions": 400},
    "(d) accuracy by model, sample by model": {
        "shared": False,
        "accuracy": (0.55, 0.9, 0.99),
        "questions": 400,
        "per_model": True,
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'scenario':40} {'sample':>6} {'coverage':>9} {'refused':>7} {'of given':>8} {'seconds':>7}")
    for name, scenario in SCENARIOS.items():
        for size in (60, 100):
            start = time.perf_counter()
            cov, refused = coverage(args.replications, args.seed, sample=size, **scenario)  # type: ignore[arg-type]
            given = 3 * args.replications - refused
            of_given = 100 * cov * 3 * args.replications / given if given else float("nan")
            print(f"{name:40} {size:>6} {100 * cov:>8.1f}% {refused:>7} {of_given:>7.1f}% {time.perf_counter() - start:>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
