"""Profile the execution path of `jury score`: executing, storing and comparing.

Builds the 15 models x 129 superhero questions (../shared BIRD predictions when present,
else the bundled example), then
  --profile   cProfile of one cold evaluation (empty store) with one worker, top functions;
  (default)   wall time of a cold evaluation with 1 and with 2 workers, best of --repeat,
              and checks both give identical pairs.
`--distinct N` makes every model's SQL distinct N times over (a trailing comment per copy),
so the store holds N times more executions: the shape of a 100-model run.

Usage: python bench/exec_profile.py [--profile] [--repeat 3] [--distinct 1] [--shared DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from jury.compare.outcomes import Settings, evaluate
from jury.execution.store import Store
from jury.inputs.importers import Selection, import_bird_predictions
from jury.inputs.io import load_gold, load_gold_list, load_runs


def load(shared: Path, example: Path):
    if (shared / "predictions").is_dir():
        dev = load_gold_list(shared / "dev.json")
        gold = {g.question_id: g for g in dev}
        records = []
        for f in sorted((shared / "predictions").iterdir()):
            model = f.name.rsplit(".", 1)[0] if not f.name.endswith(".txt") else f.name[:-4]
            records += import_bird_predictions(f, dev, model, Selection(only_db={"superhero"})).records
        return gold, records, shared / "databases", f"shared predictions in {shared}"
    gold = load_gold(example / "dev.json")
    return gold, load_runs([example / "run.jsonl"], gold), example / "databases", f"the bundled example {example}"


def widen(records, copies: int):
    """`copies` distinct-SQL copies of every model (a comment makes each SQL text distinct)."""
    if copies <= 1:
        return records
    out = []
    for c in range(copies):
        for r in records:
            sql = None if r.sql is None else f"{r.sql} -- copy {c}"
            out.append(r.model_copy(update={"model": f"{r.model}#{c}", "sql": sql}))
    return out


def cold(gold, records, db_root, workers: int):
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
        t0 = time.perf_counter()
        ev = evaluate(gold, records, db_root, store, Settings(comparator="bird", workers=workers))
        return time.perf_counter() - t0, ev


def main() -> None:
    here = Path(__file__).resolve()
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--distinct", type=int, default=1)
    ap.add_argument("--shared", default=str(here.parents[2] / "shared/data/bird"))
    ap.add_argument("--example", default=str(here.parents[1] / "examples/bird-superhero"))
    args = ap.parse_args()
    gold, records, db_root, source = load(Path(args.shared), Path(args.example))
    records = widen(records, args.distinct)
    print(f"{len({r.model for r in records})} models, {len(records)} pairs, from {source}")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        t, ev = cold(gold, records, db_root, 1)
        prof.disable()
        print(f"cold, 1 worker, under cProfile: {t:.2f} s, executed {ev.executed}")
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    best: dict[int, float] = {}
    pairs: dict[int, list] = {}
    for _ in range(args.repeat):
        for workers in (1, 2):
            t, ev = cold(gold, records, db_root, workers)
            best[workers] = min(best.get(workers, t), t)
            pairs[workers] = [asdict(p) for p in ev.pairs]
    print(
        f"cold wall, best of {args.repeat}: workers 1 {best[1]:.2f} s, workers 2 {best[2]:.2f} s, ratio {best[1] / best[2]:.2f}x"
    )
    if pairs[1] != pairs[2]:
        sys.exit("workers 1 and workers 2 give different pairs")
    print("workers 1 and 2 give identical pairs")


if __name__ == "__main__":
    main()
