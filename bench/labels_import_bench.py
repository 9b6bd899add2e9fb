"""Peak memory of `jury labels import csv` at 10^4, 10^5 and 10^6 rows, side by side.

    python bench/labels_import_bench.py                      # this checkout's code
    python bench/labels_import_bench.py --code /work/main    # another checkout's (before/after)
    python bench/labels_import_bench.py --rows 10000 100000  # other sizes

In a temporary folder: a gold file of --questions items (BIRD dev's 1534 by default) and, per
size, a labels CSV of that many rows (columns question_id, defective, type, note, annotator;
question i % questions by annotator r<i // questions>, every third row defective, so no
annotator labels a question twice and every row is a label). Each size runs

    /usr/bin/time -v python -m jury labels import csv labels-N.csv --gold gold.jsonl -o labels-N.jsonl

in a child process (PYTHONPATH = --code), and the table shows the CSV's size, the label lines
written, the wall seconds and the peak RSS ("Maximum resident set size") /usr/bin/time reports.
Needs GNU time (`apt-get install -y time`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_gold(path: Path, questions: int) -> None:
    with path.open("w") as fh:
        for q in range(questions):
            item = {"question_id": q, "db_id": f"db{q % 11}", "question": f"How many rows in table {q}?", "SQL": f"SELECT {q}"}
            fh.write(json.dumps(item) + "\n")


def write_csv(path: Path, rows: int, questions: int) -> None:
    with path.open("w") as fh:
        fh.write("question_id,defective,type,note,annotator\n")
        for i in range(rows):
            defective = "true,sql_vs_data" if i % 3 == 0 else "false,"
            fh.write(f"{i % questions},{defective},,r{i // questions}\n")


def run(folder: Path, rows: int, code: Path) -> dict[str, object]:
    csv_path, out = folder / f"labels-{rows}.csv", folder / f"labels-{rows}.jsonl"
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "jury", "labels", "import", "csv", csv_path.name]
    cmd += ["--gold", "gold.jsonl", "-o", out.name]
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    with out.open("rb") as fh:
        lines = sum(1 for _ in fh)
    return {
        "rows": rows,
        "csv MB": csv_path.stat().st_size / 1e6,
        "labels": lines,
        "wall s": wall,
        "peak RSS MB": int(peak.group(1)) / 1024 if peak else float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--questions", type=int, default=1534)
    ap.add_argument("--code", type=Path, default=REPO, help="the checkout whose jury runs (its PYTHONPATH)")
    args = ap.parse_args()
    if not Path("/usr/bin/time").exists():
        sys.exit("needs GNU time at /usr/bin/time (apt-get install -y time)")
    with tempfile.TemporaryDirectory(prefix="labels-bench-") as tmp:
        folder = Path(tmp)
        write_gold(folder / "gold.jsonl", args.questions)
        results = []
        for rows in args.rows:
            write_csv(folder / f"labels-{rows}.csv", rows, args.questions)
            results.append(run(folder, rows, args.code.resolve()))
            (folder / f"labels-{rows}.csv").unlink()
            (folder / f"labels-{rows}.jsonl").unlink()
    print(f"code: {args.code.resolve()}")
    print(f"{'rows':>10} {'csv MB':>8} {'labels':>10} {'wall s':>8} {'peak RSS MB':>12}")
    for r in results:
        print(f"{r['rows']:>10} {r['csv MB']:>8.1f} {r['labels']:>10} {r['wall s']:>8.1f} {r['peak RSS MB']:>12.0f}")
    if len(results) > 1:
        print(
            f"peak RSS ratio, {results[-1]['rows']} rows to {results[0]['rows']}: "
            f"{results[-1]['peak RSS MB'] / results[0]['peak RSS MB']:.2f}"
        )


if __name__ == "__main__":
    main()
