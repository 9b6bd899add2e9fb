"""Time scoring BIRD predictions on the superhero questions.

By default it uses the 15 shared BIRD prediction files in ../shared/data/bird when they are
there, and otherwise the bundled example (examples/bird-superhero: the same questions and
models, as run JSONL), so it runs from a plain checkout.

Three runs side by side in one process:
  cold     jury with an empty store (every distinct SQL executed once);
  warm     jury again on the same store (nothing executed);
  baseline BIRD's own per-pair approach: for every (model, question) pair execute the
           candidate and the gold afresh and compare set(rows), with the same number of
           worker processes.
Prints the times and the ratios baseline/cold and baseline/warm, and checks that the
baseline and jury's `bird` comparator agree on every model's match count.

Usage: python bench/score_bench.py [--workers N] [--shared ../shared/data/bird] [--example examples/bird-superhero]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

from jury.compare.outcomes import Settings, evaluate
from jury.execution.store import Store
from jury.inputs.importers import import_bird_predictions
from jury.inputs.io import database_path, load_gold, load_gold_list, load_runs
from jury.results.scoring import score_all


def bird_pair(job: tuple[str, str, str]) -> int:
    """BIRD's evaluation of one pair: fresh connections, execute both, compare sets."""
    db, pred, gold = job
    try:
        conn = sqlite3.connect(db)
        pred_rows = conn.execute(pred).fetchall()
        gold_rows = conn.execute(gold).fetchall()
        conn.close()
        return int(set(pred_rows) == set(gold_rows))
    except Exception:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--shared",
        default=str(Path(__file__).resolve().parents[2] / "shared/data/bird"),
        help="BIRD data with predictions/ (used when present)",
    )
    ap.add_argument(
        "--example",
        default=str(Path(__file__).resolve().parents[1] / "examples/bird-superhero"),
        help="the bundled example, used when --shared has no predictions",
    )
    args = ap.parse_args()
    shared = Path(args.shared)
    if (shared / "predictions").is_dir():
        dev = load_gold_list(shared / "dev.json")
        gold = {g.question_id: g for g in dev}
        records = []
        for f in sorted((shared / "predictions").iterdir()):
            model = f.name.rsplit(".", 1)[0] if not f.name.endswith(".txt") else f.name[:-4]
            records += import_bird_predictions(f, dev, model, only_db={"superhero"}).records
        db_root = shared / "databases"
        source = f"shared predictions in {shared}"
    else:
        example = Path(args.example)
        if not (example / "run.jsonl").is_file():
            sys.exit(f"no shared BIRD predictions at {shared} and no bundled example at {example}")
        gold = load_gold(example / "dev.json")
        records = load_runs([example / "run.jsonl"], gold)
        db_root = example / "databases"
        source = f"the bundled example {example} (no shared predictions at {shared})"
    print(f"{len({r.model for r in records})} models, {len(records)} pairs, workers={args.workers}, from {source}")

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(comparator="bird", workers=args.workers)
        with Store(Path(tmp) / "store.db") as store:
            t0 = time.perf_counter()
            cold = evaluate(gold, records, db_root, store, settings)
            t_cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            warm = evaluate(gold, records, db_root, store, settings)
            t_warm = time.perf_counter() - t0
    jury_counts = {s.model: s.strict["k"] for s in score_all(cold.pairs)}

    jobs = [(str(database_path(db_root, gold[r.question_id].db_id)), r.sql or "", gold[r.question_id].sql) for r in records]
    t0 = time.perf_counter()
    with Pool(args.workers) as pool:
        results = pool.map(bird_pair, jobs, chunksize=16)
    t_base = time.perf_counter() - t0
    base_counts: dict[str, int] = {}
    for r, ok in zip(records, results):
        base_counts[r.model] = base_counts.get(r.model, 0) + ok

    print(f"cold     {t_cold:7.2f} s  executed {cold.executed} distinct queries")
    print(f"warm     {t_warm:7.2f} s  executed {warm.executed}")
    print(f"baseline {t_base:7.2f} s  executed {2 * len(jobs)} queries (2 per pair)")
    print(f"ratio baseline/cold = {t_base / t_cold:.2f}x   baseline/warm = {t_base / t_warm:.2f}x")
    agree = jury_counts == base_counts
    print(f"match counts agree with the baseline on every model: {agree}")
    if not agree:
        for m in sorted(base_counts):
            if jury_counts.get(m) != base_counts[m]:
                print(f"  {m}: jury {jury_counts.get(m)} baseline {base_counts[m]}")
        sys.exit(1)


if __name__ == "__main__":
    main()
