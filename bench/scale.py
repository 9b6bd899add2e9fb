"""Executions at scale: `jury score --executor local` and `--executor ray` at 1 and 2 workers.

The workload is score_bench.py's synthetic one (its helpers are imported): N models over the
bundled example (examples/bird-superhero, BIRD dev's superhero questions and database),
model i copying published system i mod 15 with every SQL text made distinct by a trailing
`-- m<i>` comment, so every model's queries are executions of their own. Each run is the
real CLI in a fresh process on a fresh store (cold: every distinct query is executed), and
a second run on the same store (warm: nothing executed) gives the fixed cost of the process
(interpreter, imports, reading and scoring), so

  per execution = (cold wall - warm wall - Ray start) / distinct queries

and, per executor, speed-up = per execution at 1 worker / per execution at 2 workers,
scaling efficiency = speed-up / workers. The ray runs start a local Ray runtime of
--workers CPUs inside the command: that start (measured apart, a few seconds once per command)
is taken out of their per-execution cost and shown in its own column.
Every run must print the same match counts (exit 1 otherwise).

Usage: python bench/scale.py [--models 36] [--workers 1 2] [--executors local ray] [--example DIR]
The numbers depend on the machine and on what else runs on it: they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score_bench import ROOT, Run, distinct_queries, load_example, run_reaped, variants, write_jsonl


def score(runs: Path, gold: Path, db_root: Path, store: Path, workers: int, executor: str) -> tuple[Run, dict[str, int]]:
    cmd = [sys.executable, "-m", "jury", "score", str(runs), "--gold", str(gold), "--db-root", str(db_root)]
    cmd += ["--store", str(store), "--workers", str(workers), "--executor", executor, "-f", "json"]
    run = run_reaped(cmd)
    return run, {m["model"]: m["strict"]["k"] for m in json.loads(run.out)["models"]}


def ray_start_s(workers: int) -> float | None:
    """Seconds to start and stop a local Ray runtime as the ray executor does (None without Ray)."""
    code = (
        "import time, tempfile, shutil, ray, logging\n"
        "d = tempfile.mkdtemp(prefix='jray-', dir='/tmp'); t = time.perf_counter()\n"
        f"ray.init(num_cpus={workers}, include_dashboard=False, log_to_driver=False, _temp_dir=d, logging_level=logging.ERROR)\n"
        "ray.shutdown(); print(time.perf_counter() - t); shutil.rmtree(d, ignore_errors=True)\n"
    )
    try:
        return float(run_reaped([sys.executable, "-c", code]).out.strip())
    except SystemExit:
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=36)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--executors", nargs="+", default=["local", "ray"], choices=["local", "ray"])
    ap.add_argument("--example", type=Path, default=ROOT / "examples/bird-superhero")
    args = ap.parse_args()
    example = args.example.resolve()
    gold, runs = load_example(example)
    rows = variants(runs, args.models)
    distinct = distinct_queries(gold, rows)
    print(
        f"{args.models} models x {len(gold)} questions = {len(rows)} pairs, {distinct} distinct queries; "
        f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}"
    )
    starts = {("local", w): 0.0 for w in args.workers}
    if "ray" in args.executors:
        for w in args.workers:
            start = ray_start_s(w)
            if start is None:
                sys.exit("--executors ray: Ray is not installed (pip install 'jury-sql[ray]')")
            starts[("ray", w)] = start
    per_exec: dict[tuple[str, int], float] = {}
    counts_seen: dict[tuple[str, int], dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        path = write_jsonl(tmp / "run.jsonl", rows)
        print(
            f"\n  {'executor':<8} {'workers':>7} {'cold s':>8} {'warm s':>7} {'start s':>8} "
            f"{'ms/execution':>13} {'speed-up':>9} {'efficiency':>10}"
        )
        for executor in args.executors:
            base = None
            for w in args.workers:
                store = tmp / f"{executor}-{w}.db"
                cold, counts = score(path, example / "dev.json", example / "databases", store, w, executor)
                warm, _ = score(path, example / "dev.json", example / "databases", store, w, executor)
                start = starts[(executor, w)]
                per = max(cold.wall - warm.wall - start, 1e-9) / distinct
                per_exec[(executor, w)], counts_seen[(executor, w)] = per, counts
                base = per if base is None else base
                speedup = base / per
                print(
                    f"  {executor:<8} {w:>7} {cold.wall:8.2f} {warm.wall:7.2f} {start:8.2f} {1000 * per:13.3f} "
                    f"{speedup:8.2f}x {speedup / (w / args.workers[0]):10.2f}"
                )
    first = next(iter(counts_seen.values()))
    same = all(c == first for c in counts_seen.values())
    print(f"\n  match counts identical in every run: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
