"""How often the dependence check against people's labels (jury.stats.dependence.people_check)
says the jurors err together, by simulation: known truth, many replications
(tests/support/dependence_simulation.py).

Panels of 3 and 5 jurors (one position-biased) on 400 records of four classes, 60 or 100 of them
labelled by people. Votes: (a) independent jurors; (b) on 30 % of the records a shared wrong
answer that each juror copies with probability 0.7; a pair where juror 1 copies juror 0 on half
the records. Sample: stratified by the published verdict (the check's condition holds) or the
records the panel split on first (it fails).

Usage: python bench/people_dependence.py [--replications 1000] [--seed 0]
Each line: votes, sample, jurors, labelled records, the share of replications with p < 0.05.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.dependence_simulation import firing_rate

ROWS = [
    ("independent", "verdict"),
    ("shared", "verdict"),
    ("copying", "verdict"),
    ("independent", "split"),
    ("shared", "split"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{'votes':12} {'sample':8} {'jurors':>6} {'labelled':>8} {'fired':>7} {'seconds':>7}")
    for scenario, selection in ROWS:
        for jurors in (3, 5):
            for labelled in (60, 100):
                start = time.perf_counter()
                rate = firing_rate(
                    args.replications, args.seed, scenario=scenario, selection=selection, jurors=jurors, labelled=labelled
                )
                took = time.perf_counter() - start
                print(f"{scenario:12} {selection:8} {jurors:>6} {labelled:>8} {100 * rate:>6.1f}% {took:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
