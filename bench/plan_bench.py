"""`jury adjudicate --plan`, this tree against a base commit, side by side in one run.

Each case runs the plan as a user does (`python -m jury adjudicate run.jsonl --plan`) in a
project folder, once per tree to warm the store and the page cache, then `--runs` times
alternating base / this tree, and prints the medians of the CPU time (user + system, from
os.wait4's rusage: less sensitive to a shared machine's load than wall time) and of the wall
time, with the load average. One more instrumented run per tree counts what the plan does:
sqlglot.parse calls and distinct texts parsed, sqlite3 connections by database file, the CPU
of plan_adjudication itself, whether litellm was imported, and a sha256 of every ballot's
messages (the text jurors see, part of each request hash). The plan's output and the ballots'
digest must be byte-identical between the trees: the bench says so, or exits 1.

Cases: the bundled example (examples/bird-superhero, copied to a temporary folder) with the
default panel and with `--panel local-demo`, and the 36-model x 759-question workload of
bench/workload.py (built in a temporary folder unless --workload names one).

The base tree is a temporary `git worktree` at --base (default: the merge-base of HEAD and
main), run with this virtualenv's packages and PYTHONPATH pointing at it.

Usage: python bench/plan_bench.py [--base REF] [--new REF] [--runs 3] [--workload DIR] [--skip-workload]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bird-superhero"

# Run inside the measured process (PYTHONPATH = the tree under test): counts, then the CLI.
PROBE = r"""
import atexit, hashlib, json, os, runpy, sqlite3, sys, time
import sqlglot
counts = {"parse": 0, "texts": set(), "connect": {}, "plan_cpu": 0.0, "digest": None}
_parse = sqlglot.parse
def parse(sql, *a, **k):
    counts["parse"] += 1
    counts["texts"].add(sql)
    return _parse(sql, *a, **k)
sqlglot.parse = parse
_connect = sqlite3.connect
def connect(database, *a, **k):
    name = str(database).split("?")[0].rsplit("/", 1)[-1]
    counts["connect"][name] = counts["connect"].get(name, 0) + 1
    return _connect(database, *a, **k)
sqlite3.connect = connect
import jury.judging.adjudication as adjudication
_plan = adjudication.plan_adjudication
def plan_adjudication(*a, **k):
    t = time.process_time()
    plan = _plan(*a, **k)
    counts["plan_cpu"] += time.process_time() - t
    h = hashlib.sha256()
    for ballot in plan.ballots():
        h.update(json.dumps(ballot.messages, sort_keys=True).encode())
    counts["digest"] = h.hexdigest()
    return plan
adjudication.plan_adjudication = plan_adjudication
def dump():
    out = dict(counts, texts=len(counts["texts"]), litellm="litellm" in sys.modules)
    with open(os.environ["PLAN_BENCH_COUNTS"], "w") as f:
        json.dump(out, f)
atexit.register(dump)
sys.argv = ["jury", *sys.argv[1:]]
runpy.run_module("jury", run_name="__main__")
"""


def run(tree: Path, cwd: Path, args: list[str], out: Path, probe: Path | None = None) -> tuple[float, float]:
    """(CPU s, wall s) of one `jury` run of `tree` in `cwd`, its stdout written to `out`."""
    env = {**os.environ, "PYTHONPATH": str(tree), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "jury", *args]
    if probe is not None:
        env["PLAN_BENCH_COUNTS"] = str(probe)
        cmd = [sys.executable, "-c", PROBE, *args]
    start = time.perf_counter()
    with out.open("wb") as stdout:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tree} in {cwd}: jury {' '.join(args)} exited {proc.returncode}: {err.decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def case(name: str, cwd: Path, args: list[str], trees: dict[str, Path], runs: int, scratch: Path) -> bool:
    """Print one case's figures; True when the trees' outputs and ballots are identical."""
    outs = {label: scratch / f"{name}-{label}.out" for label in trees}
    for label, tree in trees.items():  # warm-up: the store, the page cache, the bytecode
        run(tree, cwd, args, outs[label])
    cpu: dict[str, list[float]] = {label: [] for label in trees}
    wall: dict[str, list[float]] = {label: [] for label in trees}
    loads = [os.getloadavg()[0]]
    for _ in range(runs):
        for label, tree in trees.items():
            c, w = run(tree, cwd, args, outs[label])
            cpu[label].append(c)
            wall[label].append(w)
        loads.append(os.getloadavg()[0])
    probes = {}
    for label, tree in trees.items():
        probe = scratch / f"{name}-{label}.json"
        run(tree, cwd, args, scratch / f"{name}-{label}.probe.out", probe)
        probes[label] = json.loads(probe.read_text())
    same_out = len({o.read_bytes() for o in outs.values()}) == 1
    same_ballots = len({p["digest"] for p in probes.values()}) == 1
    print(f"\n== {name}: jury {' '.join(args)}   (load average 1 min: {min(loads):.2f}-{max(loads):.2f})")
    print(f"{'':32}" + "".join(f"{label:>18}" for label in trees) + f"{'ratio':>10}")
    base, new = list(trees)

    def row(what: str, values: dict[str, float], fmt: str = "{:.2f}") -> None:
        ratio = values[new] / values[base] if values[base] else float("nan")
        print(f"{what:32}" + "".join(f"{fmt.format(values[label]):>18}" for label in trees) + f"{ratio:>9.2f}x")

    row("CPU s (median)", {k: statistics.median(v) for k, v in cpu.items()})
    row("wall s (median)", {k: statistics.median(v) for k, v in wall.items()})
    row("plan_adjudication CPU s", {k: p["plan_cpu"] for k, p in probes.items()})
    row("sqlglot.parse calls", {k: p["parse"] for k, p in probes.items()}, "{:.0f}")
    row("distinct SQL texts parsed", {k: p["texts"] for k, p in probes.items()}, "{:.0f}")
    for db in sorted({db for p in probes.values() for db in p["connect"]}):
        row(f"connections to {db}"[:32], {k: p["connect"].get(db, 0) for k, p in probes.items()}, "{:.0f}")
    print(f"{'litellm imported':32}" + "".join(f"{str(p['litellm']):>18}" for p in probes.values()))
    print(f"CPU runs: {json.dumps({k: [round(x, 2) for x in v] for k, v in cpu.items()})}")
    print(f"output byte-identical: {same_out}; ballot messages identical: {same_ballots}")
    return same_out and same_ballots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=None, help="base commit (default: merge-base of HEAD and main)")
    ap.add_argument(
        "--new", default=None, help="a commit to run instead of this working tree (checked out in a temporary worktree)"
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workload", type=Path, default=None, help="a bench/workload.py folder to reuse")
    ap.add_argument("--skip-workload", action="store_true", help="only the bundled example")
    args = ap.parse_args()
    base = args.base or subprocess.check_output(["git", "merge-base", "HEAD", "main"], cwd=ROOT, text=True).strip()
    scratch = Path(tempfile.mkdtemp(prefix="plan-bench-"))
    base_tree = scratch / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), base], cwd=ROOT, check=True, capture_output=True)
    new_tree = ROOT
    if args.new is not None:
        new_tree = scratch / "new"
        subprocess.run(["git", "worktree", "add", "--detach", str(new_tree), args.new], cwd=ROOT, check=True, capture_output=True)
    trees = {f"base {base[:8]}": base_tree, f"new {args.new[:8]}" if args.new else "this tree": new_tree}
    ok = True
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} alternating runs per tree after a warm-up")
        example = scratch / "example"
        example.mkdir()
        for f in ("dev.json", "run.jsonl", "jury.toml"):
            shutil.copy(EXAMPLE / f, example / f)
        os.symlink((EXAMPLE / "databases").resolve(), example / "databases")
        ok &= case("example", example, ["adjudicate", "run.jsonl", "--plan"], trees, args.runs, scratch)
        ok &= case(
            "example-local-demo",
            example,
            ["adjudicate", "run.jsonl", "--plan", "--panel", "local-demo"],
            trees,
            args.runs,
            scratch,
        )
        if not args.skip_workload:
            workload = args.workload
            if workload is None:
                workload = scratch / "workload"
                subprocess.run([sys.executable, str(ROOT / "bench" / "workload.py"), str(workload)], check=True)
            ok &= case("36x759", workload, ["adjudicate", "run.jsonl", "--plan"], trees, args.runs, scratch)
    finally:
        for tree in {base_tree, new_tree} - {ROOT}:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    if not ok:
        raise SystemExit("the plans differ between the trees")


if __name__ == "__main__":
    main()
