"""Time `jury score` on the bundled example, against BIRD's own evaluation.py, and as it scales.

Runs from a plain checkout on examples/bird-superhero (15 published systems x 129 superhero
questions of BIRD dev, the real database). Every jury run is the real CLI in a fresh process
(`python -m jury score ... --comparator bird -f json`, a new store for a cold run, the same
store again for a warm one), so interpreter start and imports count, as they do for BIRD's
script. Wall time, CPU (user + system of that process and its worker processes, from
os.wait4) and peak memory (ru_maxrss: the largest of the jury process and its workers) are
taken per run.

1. BIRD side by side (when ../shared/anchors/bird_evaluation/evaluation.py is present, see
   its README; it needs `pip install func_timeout`): the floor (bench/score_floor.py: each
   distinct query executed once with sqlite3, every row fetched, sets compared, in one process;
   its match counts must equal jury's), jury cold (a new store) and warm (that store again) on
   all 15 systems at once, then BIRD's script once per system as its README
   says (--num_cpus = --workers, --meta_time_out 30, on files written from the same run and
   gold), the three alternating 3 times so that both sides run under the same load (a first,
   discarded jury run writes the bytecode, as an installed package has it). Prints the
   medians, every run's wall time, the ratios of the medians jury/BIRD cold and warm and the
   load average, and checks that each system's `bird` match count from jury equals BIRD's
   accuracy x 129 (exit 1 otherwise). With --before REV, that revision's jury (a git worktree)
   runs cold and warm too, in the same alternation: before and after side by side in one run.
2. Scaling: 15, 36 and 100 models with distinct SQL. Model i is system i mod 15 with every
   SQL text made unique by a trailing comment `-- m<i>` on its own line (SQLite ignores it,
   so each variant must score exactly as the system it copies, which is checked); the
   published texts are kept as they are for i < 15. Cold and warm per size: time per
   distinct execution (cold) and per (model, question) pair, peak memory.
3. Workers: the 100-model cold run with --workers 1 and with --workers 2.

Usage: python bench/score_bench.py [--workers 2] [--sizes 15 36 100] [--example DIR] [--anchor DIR]
       [--skip-bird] [--skip-scaling] [--before REV]
The numbers depend on the machine and on what else runs on it: they are printed, never asserted.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bytecode is cached as in any installed package (a discarded first run writes it): a
# PYTHONDONTWRITEBYTECODE inherited from the shell would recompile jury on every run.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
ALTERNATIONS = 3


@dataclass
class Run:
    wall: float
    cpu: float  # user + system of the process and the children it waited for
    maxrss_mb: float  # the largest resident set among them
    out: str


def run_reaped(cmd: list[str]) -> Run:
    """Run cmd (cmd[0] is this Python) and reap it with os.wait4: the rusage is this run's own."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        pid = os.posix_spawn(sys.executable, [sys.executable, *cmd[1:]], ENV, file_actions=_redirect(out, err))
        _pid, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"failed ({code}): {' '.join(cmd)}\n{errors[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text)


def _redirect(out, err) -> list:
    return [(os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]


def jury_score(runs: Path, gold: Path, db_root: Path, store: Path, workers: int, code: Path = ROOT) -> tuple[Run, dict[str, int]]:
    """`jury score` of the jury in ``code`` (this checkout, or --before's), as `python -m jury`
    runs it (its __main__: jury.cli.main), with ``code`` first on the path."""
    cmd = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(code)!r}); from jury.cli import main; main()",
        "score",
        str(runs),
        "--gold",
        str(gold),
        "--db-root",
        str(db_root),
        "--store",
        str(store),
        "--workers",
        str(workers),
        "--comparator",
        "bird",
        "-f",
        "json",
    ]
    run = run_reaped(cmd)
    doc = json.loads(run.out)
    return run, {m["model"]: m["strict"]["k"] for m in doc["models"]}


def score_floor(gold: Path, runs: Path, db_root: Path) -> tuple[Run, dict[str, int]]:
    """bench/score_floor.py in a fresh process: the work of a cold score and nothing else."""
    run = run_reaped([sys.executable, str(ROOT / "bench" / "score_floor.py"), str(gold), str(runs), str(db_root)])
    return run, json.loads(run.out)["matches"]


def load_example(example: Path) -> tuple[list[dict], list[dict]]:
    gold = json.loads((example / "dev.json").read_text())
    runs = [json.loads(line) for line in (example / "run.jsonl").read_text().splitlines() if line.strip()]
    return gold, runs


def distinct_queries(gold: list[dict], runs: list[dict]) -> int:
    db = {g["question_id"]: g["db_id"] for g in gold}
    texts = {(db[g["question_id"]], g["SQL"]) for g in gold}
    texts |= {(r.get("db_id") or db[r["question_id"]], r["sql"]) for r in runs if r.get("sql") is not None}
    return len(texts)


# --------------------------------------------------------------------------- BIRD's script


def bird_inputs(tmp: Path, gold: list[dict], runs: list[dict]) -> dict[str, Path]:
    """Per model a PRED_DIR/predict_dev.json in the gold's order, plus GOLD_DIR and DIFF.json."""
    gold_dir = tmp / "gold"
    gold_dir.mkdir()
    (gold_dir / "dev_gold.sql").write_text("".join(f"{' '.join(g['SQL'].split())}\t{g['db_id']}\n" for g in gold))
    (tmp / "diff.json").write_text(json.dumps(gold))
    by_model: dict[str, dict] = {}
    for r in runs:
        by_model.setdefault(r["model"], {})[r["question_id"]] = r
    dirs = {}
    for i, (model, recs) in enumerate(by_model.items()):
        pred: dict[str, str | None] = {}
        for idx, g in enumerate(gold):
            rec = recs.get(g["question_id"])
            sql = None if rec is None else rec.get("sql")
            chosen = (rec or {}).get("db_id") or g["db_id"]
            pred[str(idx)] = None if sql is None else f"{sql}\t----- bird -----\t{chosen}"
        d = tmp / f"pred{i}"
        d.mkdir()
        (d / "predict_dev.json").write_text(json.dumps(pred))
        dirs[model] = d
    return dirs


def run_bird(anchor: Path, tmp: Path, db_root: Path, gold: list[dict], runs: list[dict], workers: int):
    dirs = bird_inputs(tmp, gold, runs)
    total = Run(0.0, 0.0, 0.0, "")
    counts = {}
    for model, d in dirs.items():
        r = run_reaped(
            [
                sys.executable,
                str(anchor / "evaluation.py"),
                "--predicted_sql_path",
                f"{d}/",
                "--ground_truth_path",
                f"{tmp / 'gold'}/",
                "--data_mode",
                "dev",
                "--db_root_path",
                f"{db_root}/",
                "--num_cpus",
                str(workers),
                "--meta_time_out",
                "30",
                "--diff_json_path",
                str(tmp / "diff.json"),
            ]
        )
        m = re.search(r"^accuracy\s+.*?([\d.]+)\s*$", r.out, re.M)
        if m is None:
            sys.exit(f"BIRD's script printed no accuracy for {model}:\n{r.out[-2000:]}")
        counts[model] = round(float(m.group(1)) * len(gold) / 100)
        total = Run(total.wall + r.wall, total.cpu + r.cpu, max(total.maxrss_mb, r.maxrss_mb), "")
    return total, counts


# --------------------------------------------------------------------------- scaling


def variants(runs: list[dict], n_models: int) -> list[dict]:
    """n_models models; model i copies system i mod 15, its SQL made distinct by `-- m<i>`."""
    systems = list(dict.fromkeys(r["model"] for r in runs))
    by_system: dict[str, list[dict]] = {}
    for r in runs:
        by_system.setdefault(r["model"], []).append(r)
    out = []
    for i in range(n_models):
        base = systems[i % len(systems)]
        for r in by_system[base]:
            sql = r.get("sql")
            if sql is not None and i >= len(systems):
                sql = f"{sql}\n-- m{i}"
            out.append({**r, "model": base if i < len(systems) else f"{base}~m{i}", "sql": sql})
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def checkout(rev: str, into: Path) -> Path:
    """A detached git worktree of ``rev`` at ``into`` (removed again by ``remove_checkout``)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(into), rev], check=True, capture_output=True)
    atexit.register(remove_checkout, into)
    return into


def remove_checkout(path: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False, capture_output=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False, capture_output=True)


def median_run(runs: list[Run]) -> Run:
    """The median of each measure on its own (wall, cpu, peak memory)."""
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        statistics.median(r.maxrss_mb for r in runs),
        "",
    )


def walls(runs: list[Run]) -> str:
    return " ".join(f"{r.wall:.2f}" for r in runs) + " s"


def line(label: str, r: Run, extra: str = "") -> str:
    return f"  {label:<22} wall {r.wall:7.2f} s  cpu {r.cpu:7.2f} s  peak rss {r.maxrss_mb:6.0f} MB{extra}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sizes", type=int, nargs="+", default=[15, 36, 100])
    ap.add_argument("--example", type=Path, default=ROOT / "examples/bird-superhero")
    ap.add_argument("--anchor", type=Path, default=ROOT.parent / "shared/anchors/bird_evaluation")
    ap.add_argument("--skip-bird", action="store_true")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--before", metavar="REV", help="Also time this git revision's jury, alternating with the checkout's.")
    args = ap.parse_args()
    example = args.example.resolve()
    gold, runs = load_example(example)
    gold_path, db_root = example / "dev.json", example / "databases"
    models = list(dict.fromkeys(r["model"] for r in runs))
    print(
        f"{len(models)} systems x {len(gold)} questions = {len(runs)} pairs from {example}; "
        f"workers {args.workers}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}"
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        jury_score(example / "run.jsonl", gold_path, db_root, tmp / "warm-up.db", args.workers)  # bytecode written
        anchor = args.anchor
        bird_runs = not args.skip_bird and (anchor / "evaluation.py").is_file()
        before = None if args.before is None else checkout(args.before, tmp / "before-code")
        if before is not None:
            jury_score(example / "run.jsonl", gold_path, db_root, tmp / "warm-up-before.db", args.workers, before)
        colds: list[Run] = []
        warms: list[Run] = []
        bases: list[Run] = []
        floors: list[Run] = []
        floor_counts: dict[str, int] = {}
        before_colds: list[Run] = []
        before_warms: list[Run] = []
        counts: dict[str, int] = {}
        bird_counts: dict[str, int] = {}
        for i in range(ALTERNATIONS):  # [before cold, warm], jury cold, warm, BIRD, alternating: all under the same load
            if before is not None:
                store = tmp / f"before-store{i}.db"
                before_colds.append(jury_score(example / "run.jsonl", gold_path, db_root, store, args.workers, before)[0])
                before_warms.append(jury_score(example / "run.jsonl", gold_path, db_root, store, args.workers, before)[0])
            floor, floor_counts = score_floor(gold_path, example / "run.jsonl", db_root)
            floors.append(floor)
            store = tmp / f"bird-store{i}.db"
            cold, counts = jury_score(example / "run.jsonl", gold_path, db_root, store, args.workers)
            warm, counts_warm = jury_score(example / "run.jsonl", gold_path, db_root, store, args.workers)
            colds.append(cold)
            warms.append(warm)
            if counts != counts_warm:
                print("  FAILED: warm counts differ from cold")
                failed = True
            if bird_runs:
                (tmp / f"bird{i}").mkdir()
                base, bird_counts = run_bird(anchor, tmp / f"bird{i}", db_root, gold, runs, args.workers)
                bases.append(base)
        print(f"\n1. jury score vs BIRD's evaluation.py (15 systems; {ALTERNATIONS} alternations, medians)")
        print(line("jury cold", median_run(colds), f"  ({distinct_queries(gold, runs)} distinct queries)"))
        print(line("jury warm", median_run(warms)))
        print(f"  every run's wall: cold {walls(colds)}, warm {walls(warms)}")
        floor = median_run(floors)
        print(line("floor", floor, "  (bench/score_floor.py: each distinct query once, sqlite3, sets compared)"))
        print(
            f"  jury cold / floor (medians): {median_run(colds).cpu / floor.cpu:.2f}x cpu, "
            f"{median_run(colds).wall / floor.wall:.2f}x wall   goal <= 2x cpu"
        )
        if floor_counts != counts:
            print(f"  FAILED: the floor's match counts differ from jury's: {floor_counts} vs {counts}")
            failed = True
        if args.skip_bird:
            print("  BIRD's script: skipped (--skip-bird)")
        elif not bird_runs:
            print(f"  BIRD's script: not run (no {anchor / 'evaluation.py'})")
        else:
            base = median_run(bases)
            print(line("BIRD evaluation.py", base, f"  ({len(models)} runs, {2 * len(runs)} executions)"))
            print(f"  every run's wall: BIRD {walls(bases)}")
            sides = [("jury", colds, warms)]
            if before is not None:
                sides.insert(0, (f"before ({args.before})", before_colds, before_warms))
                print(line(f"before cold ({args.before})", median_run(before_colds)))
                print(line(f"before warm ({args.before})", median_run(before_warms)))
                print(f"  every run's wall: before cold {walls(before_colds)}, before warm {walls(before_warms)}")
            for name, side_colds, side_warms in sides:
                cold, warm = median_run(side_colds), median_run(side_warms)
                print(
                    f"  ratio {name}/BIRD (medians): cold {cold.wall / base.wall:.3f}x wall ({cold.cpu / base.cpu:.3f}x cpu), "
                    f"warm {warm.wall / base.wall:.3f}x wall ({warm.cpu / base.cpu:.3f}x cpu)   goals <= 0.15x, <= 0.05x"
                )
            same = counts == bird_counts
            print(f"  `bird` match counts identical on every system: {same}")
            for m in models:
                if counts.get(m) != bird_counts.get(m):
                    print(f"    {m}: jury {counts.get(m)}  BIRD {bird_counts.get(m)}")
            failed = failed or not same
        print(f"  load average after: {os.getloadavg()[0]:.2f}")

        if not args.skip_scaling:
            print(f"\n2. scaling: models with distinct SQL (workers {args.workers})")
            size_colds: dict[int, Run] = {}
            for n in args.sizes:
                rows = variants(runs, n)
                path = write_jsonl(tmp / f"run{n}.jsonl", rows)
                distinct = distinct_queries(gold, rows)
                store = tmp / f"store{n}.db"
                c, cc = jury_score(path, gold_path, db_root, store, args.workers)
                w, _ = jury_score(path, gold_path, db_root, store, args.workers)
                size_colds[n] = c
                print(f" {n} models, {len(rows)} pairs, {distinct} distinct queries")
                print(line("cold", c, f"  {1000 * c.wall / distinct:.2f} ms/execution, {1000 * c.wall / len(rows):.3f} ms/pair"))
                print(line("warm", w, f"  {1000 * w.wall / len(rows):.3f} ms/pair"))
                wrong = [m for m, k in cc.items() if k != counts[m.split("~")[0]]]
                if wrong:
                    print(f"  FAILED: variants scored differently from their system: {wrong[:5]}")
                    failed = True
            n = max(args.sizes)
            rows = variants(runs, n)
            path = tmp / f"run{n}.jsonl"
            print(f"\n3. workers, {n} models cold")
            by_workers = {}
            for workers in (1, 2):
                r, _ = jury_score(path, gold_path, db_root, tmp / f"store{n}-w{workers}.db", workers)
                by_workers[workers] = r
                print(line(f"--workers {workers}", r))
            print(f"  workers 2 / workers 1 wall: {by_workers[2].wall / by_workers[1].wall:.2f}x (below 1: 2 is faster)")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
