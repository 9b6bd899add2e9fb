"""Gold checks at a real benchmark's size: `jury check-gold --workers 1` vs `--workers 2`, and
the gold-check phase of `jury audit-gold` run twice on one store (issue 32).

Runs on the workload of bench/workload.py (36 models x 759 questions from the bundled
example; its gold is dev.json, its databases the example's superhero database), built in
DEST when it is not there yet.

1. check-gold: the real CLI in a fresh process each (`python -m jury check-gold dev.json
   --workers N -f json`, a new store each), reaped with os.wait4: wall time, CPU (user +
   system of the process and its workers) and the ratio of the two runs; the two reports
   must be identical (exit 1 otherwise). With --repeats R the two alternate R times and the
   ratio is of the median walls; "cores used" (CPU / wall) shows how much of the machine a
   run got (on a machine other work saturates, no worker count can go faster).
2. audit-gold's gold-check phase: the library function the audit calls
   (jury.compare.gold_check_store.stored_gold_checks, with the audit's settings: the default
   passes, comparator strict, timeout 30 s, --workers processes) on a new store, then again
   on the same store: wall, CPU (this process and its workers), checks run, checks reused and
   gold executions made, per run.

The machine's load (uptime) is printed beside every figure: the numbers depend on what else
runs; the ratios side by side are what count. Nothing is asserted about time.

Usage: python bench/gold_checks_bench.py DEST [--workers 2] [--questions 759] [--passes 5,10,10,10] [--repeats 1]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load unknown"


def spawn(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and the workers it reaped, stdout) of one fresh process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=out, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        text, errors = out.read(), err.read()
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{errors[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, text


def cpu_now() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def check_gold(dest: Path, workers: int, passes: str, tmp: Path) -> tuple[float, float, dict]:
    store = tmp / f"check-gold-{workers}.db"
    cmd = [sys.executable, "-m", "jury", "check-gold", "dev.json", "--workers", str(workers), "--passes", passes]
    wall, cpu, out = spawn([*cmd, "--store", str(store), "-f", "json"], dest)
    return wall, cpu, json.loads(out)


def audit_phase(dest: Path, workers: int, passes: str, store_path: Path) -> dict:
    """One run of the audit's gold-check phase on the store at store_path."""
    from jury.compare.gold_check_store import stored_gold_checks
    from jury.compare.gold_checks import parse_passes, select_items
    from jury.compare.outcomes import resolve_databases
    from jury.execution.engine_urls import DatabaseURLs
    from jury.execution.store import Store
    from jury.inputs.io import load_gold
    from jury.vocab import DEFAULT_COMPARATOR, DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S

    t0, c0 = time.perf_counter(), cpu_now()
    with Store(store_path) as store:
        gold = dest / "dev.json"
        items = select_items(list(load_gold(gold).values()), [], [], gold, "audit")
        databases = resolve_databases([i for i in items if not i.has_recording], dest / "databases", store, DatabaseURLs())
        settings = dict(
            passes=tuple(parse_passes(passes)),
            comparator=DEFAULT_COMPARATOR,
            timeout_s=DEFAULT_TIMEOUT_S,
            row_cap=DEFAULT_ROW_CAP,
        )
        if "settings" in inspect.signature(stored_gold_checks).parameters:  # the settings as one argument
            run = stored_gold_checks(store, items, databases, settings, workers=workers)
        else:  # a tree from before that (--before)
            run = stored_gold_checks(store, items, databases, workers=workers, **settings)
    findings = [(r.question_id, [f.name for f in r.checks]) for r in run.results]
    return {
        "wall": time.perf_counter() - t0,
        "cpu": cpu_now() - c0,
        "checked": run.checked,
        "reused": run.reused,
        "executions": run.executions,
        "findings": findings,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--questions", type=int, default=759)
    ap.add_argument("--passes", default="5,10,10,10")
    ap.add_argument("--repeats", type=int, default=1, help="check-gold runs per worker count, alternated")
    args = ap.parse_args()
    dest: Path = args.dest
    if not (dest / "dev.json").exists():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "workload.py"), str(dest), "--questions", str(args.questions)], check=True
        )
    n = len(json.loads((dest / "dev.json").read_text()))
    print(f"workload {dest}: {n} gold queries, passes {args.passes}")
    with tempfile.TemporaryDirectory(prefix="gold-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"\n1. jury check-gold (a fresh process and store each)   [{uptime()}]")
        walls: dict[int, list[float]] = {1: [], args.workers: []}
        reports = []
        for rep in range(1, args.repeats + 1):  # alternated, so both see the same load
            for w in (1, args.workers):
                wall, cpu, report = check_gold(dest, w, args.passes, tmp)
                walls[w].append(wall)
                reports.append(report)
                print(
                    f"   run {rep} --workers {w}: wall {wall:7.1f} s  CPU {cpu:7.1f} s  "
                    f"(cores used {cpu / wall:.2f})   [{uptime()}]"
                )
        w1, w2 = statistics.median(walls[1]), statistics.median(walls[args.workers])
        print(f"   speed-up --workers {args.workers} vs 1 (median walls): {w1 / w2:.2f}x")
        same = all(r == reports[0] for r in reports)
        print(f"   reports identical: {same}")

        print(f"\n2. audit-gold's gold-check phase (stored_gold_checks, --workers {args.workers}), twice on one store")
        store = tmp / "audit.db"
        first = audit_phase(dest, args.workers, args.passes, store)
        print(f"   first run:  wall {first['wall']:7.1f} s  CPU {first['cpu']:7.1f} s  checks run {first['checked']:4d}  "
              f"reused {first['reused']:4d}  gold executions {first['executions']:6d}   [{uptime()}]")  # fmt: skip
        second = audit_phase(dest, args.workers, args.passes, store)
        print(f"   second run: wall {second['wall']:7.1f} s  CPU {second['cpu']:7.1f} s  checks run {second['checked']:4d}  "
              f"reused {second['reused']:4d}  gold executions {second['executions']:6d}   [{uptime()}]")  # fmt: skip
        print(f"   second / first: wall {second['wall'] / first['wall']:.3f}x, CPU {second['cpu'] / first['cpu']:.3f}x")
        same_findings = first["findings"] == second["findings"]
        print(f"   findings identical: {same_findings}")
    if not (same and same_findings):
        sys.exit(1)


if __name__ == "__main__":
    main()
