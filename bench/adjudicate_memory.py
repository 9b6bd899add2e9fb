"""Peak memory of `jury adjudicate` at two workload sizes, side by side, and the claims it holds.

    python bench/workload.py /tmp/wl759 --questions 759 && (cd /tmp/wl759 && jury score run.jsonl)
    python bench/workload.py /tmp/wl129 --questions 129 && (cd /tmp/wl129 && jury score run.jsonl)
    python bench/adjudicate_memory.py /tmp/wl129 /tmp/wl759 [--latency 0.05] [--concurrency 8]

Each workload folder (bench/workload.py, scored once so its executions are stored) gets a
panel of four jurors (four families no workload model belongs to, k = 3) all pointed at one
loopback juror (bench/loopback_juror.py: a fixed "both" reply after --latency seconds), a
fresh copy of its store (every run asks every ballot), and `python -m jury adjudicate` in a
child process. The child's peak RSS comes from os.wait4's ru_maxrss. While it runs, the claims
table of its store is sampled every 0.2 s: the most rows seen is what one renewal touches (a
process renews exactly the claims it holds). Prints per size: failures, ballots, calls served,
wall and CPU seconds, peak RSS, claims held at most; then the RSS ratio of the big run to the
small one. The loopback's fixed answer measures nothing about judging: it only lets the calls
happen.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from loopback_juror import LoopbackJuror  # noqa: E402

JURORS = [("ja", "anthropic"), ("jb", "google"), ("jc", "xai"), ("jd", "mistral")]


def write_panel(folder: Path, base_url: str, concurrency: int) -> Path:
    lines = ['name = "bench"\nballot_style = "blind"\nk = 3\n']
    for name, family in JURORS:
        lines.append(
            f'[[jurors]]\nname = "{name}"\nmodel = "openai/{name}"\nfamily = "{family}"\n'
            f'api_base = "{base_url}"\nmax_concurrency = {concurrency}\nmax_retries = 2\ntimeout_s = 60\n'
        )
    path = folder / "bench-panel.toml"
    path.write_text("\n".join(lines))
    return path


def _sample_claims(store: Path, stop: threading.Event, seen: list[int]) -> None:
    while not stop.wait(0.2):
        try:
            conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
            try:
                n = conn.execute("SELECT count(*) FROM claims").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        seen.append(n)


def run_once(workload: Path, base_url: str, concurrency: int, memray: Path | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="adj-mem-"))
    for name in ("dev.json", "run.jsonl", "jury.toml"):
        shutil.copy(workload / name, work / name)
    os.symlink((workload / "databases").resolve(), work / "databases")
    (work / ".jury").mkdir()
    src = workload / ".jury" / "store.db"
    if not src.exists():
        raise SystemExit(f"{workload}: no .jury/store.db: run `jury score run.jsonl` in it first")
    with sqlite3.connect(src) as a, sqlite3.connect(work / ".jury" / "store.db") as b:
        a.backup(b)  # the scored executions; no votes yet (a fresh copy per run)
    panel = write_panel(work, base_url, concurrency)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "jury", "adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"]
    if memray is not None:  # where the peak is, by allocating line (memray's own memory is in the RSS then)
        cmd[1:2] = ["-m", "memray", "run", "-q", "-f", "-o", str(memray.resolve()), "-m"]
    seen: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_claims, args=(work / ".jury" / "store.db", stop, seen), daemon=True)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sampler.start()
    out_r = threading.Thread(target=lambda: setattr(proc, "_out", proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    err_r = threading.Thread(target=lambda: setattr(proc, "_err", proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    out_r.start()
    err_r.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    out_r.join()
    err_r.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"jury adjudicate failed in {work} (exit {code}): {proc._err.decode()[-2000:]}")  # type: ignore[attr-defined]
    doc = json.loads((work / "verdicts" / "adj.json").read_text())
    ballots = sum(len(r["votes"]) for r in doc["records"])
    shutil.rmtree(work)
    return {
        "failures": len(doc["records"]),
        "ballots": ballots,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,  # Linux: KiB
        "claims_max": max(seen, default=0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("small", type=Path, help="the smaller workload folder (e.g. 129 questions)")
    ap.add_argument("big", type=Path, help="the bigger workload folder (e.g. 759 questions)")
    ap.add_argument("--latency", type=float, default=0.05, help="the loopback juror's reply latency (s)")
    ap.add_argument("--concurrency", type=int, default=8, help="max_concurrency of each juror")
    ap.add_argument(
        "--memray",
        type=Path,
        help="also record each run with memray (pip install memray) into MEMRAY-small.bin / MEMRAY-big.bin: "
        "`memray stats --peak` or `memray flamegraph` show where the peak is",
    )
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}", flush=True)
    rows = {}
    with LoopbackJuror(latency_s=args.latency) as srv:
        for label, folder in (("small", args.small), ("big", args.big)):
            srv.reset()
            traced = None if args.memray is None else args.memray.with_name(f"{args.memray.name}-{label}.bin")
            rows[label] = run_once(folder, srv.base_url, args.concurrency, traced)
            rows[label]["calls"] = srv.calls()
            r = rows[label]
            print(
                f"{label:5} {folder}: {r['failures']} failures, {r['ballots']} ballots, {r['calls']} calls, "
                f"wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, peak RSS {r['rss_mb']:.0f} MB, "
                f"claims held at most {r['claims_max']} (the rows one renewal touches; "
                f"{len(JURORS)} jurors x max_concurrency {args.concurrency} = {len(JURORS) * args.concurrency})",
                flush=True,
            )
    print(f"peak RSS ratio big/small: {rows['big']['rss_mb'] / rows['small']['rss_mb']:.2f}")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
