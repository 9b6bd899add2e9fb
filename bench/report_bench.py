"""`jury report` at a real benchmark's size (36 models x 759 questions), two revisions side by side.

The workload is bench/workload.py's project folder (the bundled example's 15 systems and 129
questions replicated to 36 x 759), with two locked verdict files made here: an adjudication
of every jury-eligible failure (three labelled votes with a reasoning each; the verdicts
cycle through every kind, a few without a majority) and an audit of every question (5 %
flagged). They are synthetic test data that the report accepts (locks, rules, gold and
answer keys all hold), never reported as real numbers.

Each revision runs ``python -m jury report run.jsonl --audit A --verdicts V -f FORMAT`` in
the project folder from its own tree (PYTHONPATH), alternately, ``--runs`` times:

- cold: the execution store removed first, so the report executes every query again;
- warm: the store as a previous run left it (the report's own work: loading, scoring from
  the store, building and rendering), with ``jury score`` of the same files beside it (the
  scoring part, which is not the report's);
- formats: table (text), json, html (a site folder, written anew each run).

CPU time (user + system of the child, os.wait4) is the main figure: the machine may be
shared. Prints a table of medians (CPU and wall) per side and the after/before ratio, and
the load (os.getloadavg) before and after.

Usage: python bench/report_bench.py [--before REV] [--runs 3] [--no-cold] [--keep DIR]
(--before: the revision of the before side, default ``git merge-base HEAD main``; the after side
is the working tree.)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.workload import write_workload  # noqa: E402

CATEGORIES = ("gold_defect", "format_equivalence", "genuine_error", "genuine_error", "genuine_error", "ambiguous")
JURORS = (("ja", "openai-j"), ("jb", "anthropic-j"), ("jc", "google-j"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _header(project: Path, kind: str, style: str, databases: dict) -> dict:
    return {
        "kind": kind,
        "jury_version": "bench",
        "created_at": "2026-01-01T00:00:00Z",
        "inputs": {
            "gold": {"path": "../dev.json", "sha256": _sha(project / "dev.json")},
            "runs": [{"path": "../run.jsonl", "sha256": _sha(project / "run.jsonl")}],
            "databases": {db: {"path": str(p), "sha256": h} for db, (p, h) in sorted(databases.items())},
        },
        "prompts": {},
        "panel": {
            "name": "bench",
            "ballot_style": style,
            "k": len(JURORS),
            "jurors": [{"name": j, "model": f"openai/{j}", "family": f} for j, f in JURORS],
        },
        "settings": {},
        "totals": {},
    }


def _vote(juror: str, family: str, category: str) -> dict:
    return {
        "juror": juror,
        "family": family,
        "model": f"openai/{juror}",
        "order": "gold_first",
        "raw_verdict": category,
        "category": category,
        "reasoning": f"Juror {juror} compared both results row by row and judged this {category.replace('_', ' ')}: "
        "the candidate returns the same entities in another shape (an extra column, another order) or misses a filter.",
    }


def write_verdicts(project: Path) -> tuple[Path, Path, int]:
    """Score the workload (this fills its store), then write verdicts/adj.json and
    verdicts/audit.json, locked. Returns their paths and the number of failures judged."""
    from jury.compare.outcomes import Settings, gold_result_key
    from jury.execution.store import Store
    from jury.judging.rules import adjudication_verdict
    from jury.pipeline.jobs import load_and_evaluate
    from jury.verdicts.lock import write_locked
    from jury.vocab import JURY_ELIGIBLE

    (project / ".jury").mkdir(exist_ok=True)
    store = Store(project / ".jury" / "store.db")
    gold, _records, ev = load_and_evaluate(
        project / "dev.json", [project / "run.jsonl"], project / "databases", store, Settings()
    )
    records = []
    for i, p in enumerate(ev.pairs):
        if p.outcome != JURY_ELIGIBLE or not p.routed:
            continue
        cats = [CATEGORIES[i % len(CATEGORIES)]] * 3 if i % 13 else ["gold_defect", "ambiguous", "genuine_error"]
        verdict = adjudication_verdict(cats, 3)
        records.append(
            {
                "question_id": p.question_id,
                "db_id": p.db_id,
                "model": p.model,
                "families": p.families,
                "jurors": [j for j, _ in JURORS],
                "votes": [_vote(j, f, c) for (j, f), c in zip(JURORS, cats)],
                "verdict": verdict,
                "credited": verdict in ("gold_defect", "format_equivalence"),
                "answer_key": p.pred_key,
                "gold_key": p.gold_key,
            }
        )
    audit = []
    for n, (q, item) in enumerate(sorted(gold.items(), key=lambda kv: str(kv[0]))):
        flagged = n % 20 == 0
        cat = "defective" if flagged else "valid"
        audit.append(
            {
                "question_id": q,
                "db_id": item.db_id,
                "difficulty": item.difficulty,
                "jurors": [j for j, _ in JURORS],
                "votes": [{**_vote(j, f, cat), "order": None} for j, f in JURORS],
                "flagged": flagged,
                "decided": True,
                "gold_key": gold_result_key(item, ev.databases),
            }
        )
    folder = project / "verdicts"
    folder.mkdir()
    adj = write_locked({**_header(project, "adjudication", "labelled", ev.databases), "records": records}, folder / "adj.json")
    aud = write_locked({**_header(project, "audit", "audit", ev.databases), "records": audit}, folder / "audit.json")
    return adj, aud, len(records)


def timed(code: Path, argv: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU s, wall s) of ``python -m jury ARGV`` run from the tree ``code``; a failure stops the bench."""
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200"}
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "jury", *argv], cwd=cwd, env=env, stdout=null, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{code}: jury {' '.join(argv)} failed: {err.read().decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(into), rev], check=True, capture_output=True)
    return into


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="git revision of the before side (default: git merge-base HEAD main)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold runs (each executes every query again)")
    ap.add_argument("--models", type=int, default=36)
    ap.add_argument("--questions", type=int, default=759)
    ap.add_argument("--keep", type=Path, help="build the workload here and keep it (must be empty or absent)")
    args = ap.parse_args(argv)
    before = (
        args.before
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="jury-report-bench-") as tmp_name:
        tmp = Path(tmp_name)
        base = checkout(before, tmp / "before-code")
        try:
            project = write_workload(args.keep or tmp / "wl", args.models, args.questions)
            adj, aud, n_failures = write_verdicts(project)
            store = project / ".jury" / "store.db"
            warm_store = tmp / "warm-store.db"
            shutil.copy2(store, warm_store)
            verdicts = ["--audit", str(aud.relative_to(project)), "--verdicts", str(adj.relative_to(project))]
            cases: list[tuple[str, list[str], bool]] = [("score (warm)", ["score", "run.jsonl", *verdicts, "-f", "json"], False)]
            for fmt in ("table", "json", "html"):
                out = ["-o", "site"] if fmt == "html" else []
                cmd = ["report", "run.jsonl", *verdicts, "-f", fmt, *out]
                if not args.no_cold:
                    cases.append((f"report {fmt} (cold)", cmd, True))
                cases.append((f"report {fmt} (warm)", cmd, False))
            sides = {"before": base, "after": REPO}
            times: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(args.runs):
                for name, cmd, cold in cases:
                    for side, code in sides.items():
                        shutil.rmtree(project / "site", ignore_errors=True)
                        for suffix in ("", "-wal", "-shm"):
                            Path(f"{store}{suffix}").unlink(missing_ok=True)
                        if not cold:
                            shutil.copy2(warm_store, store)
                        times.setdefault((name, side), []).append(timed(code, cmd, project))
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True)
    load1 = os.getloadavg()
    print(
        f"{args.models} models x {args.questions} questions, {n_failures:,} failures judged; before {before[:10]}, after the working tree"
    )
    print(f"medians of {args.runs} alternating runs; load average {load0[0]:.2f} before, {load1[0]:.2f} after")
    print(f"{'command':<22} {'before CPU':>11} {'after CPU':>10} {'ratio':>6} {'before wall':>12} {'after wall':>11}")
    for name, _cmd, _cold in cases:
        b = [statistics.median(x) for x in zip(*times[(name, "before")])]
        a = [statistics.median(x) for x in zip(*times[(name, "after")])]
        print(f"{name:<22} {b[0]:>10.2f}s {a[0]:>9.2f}s {a[0] / b[0]:>6.2f} {b[1]:>11.2f}s {a[1]:>10.2f}s")
    print("command: python -m jury " + " ".join(cases[-1][1]) + "  (in the workload folder; PYTHONPATH = each tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
