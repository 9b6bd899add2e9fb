"""The floor of `jury score`'s cold work, for bench/score_bench.py: what scoring costs when
nothing but the work is done, in one process.

Reads the gold (BIRD's dev.json shape) and the runs (jury's run JSONL), executes each distinct
(database, SQL text) once with sqlite3 on a read-only connection opened once per database,
fetches every row, and compares each pair as BIRD's evaluation.py does (set(predicted) ==
set(gold)); a query that fails is a mismatch. No store, no timeouts, no row cap, no checks:
jury's cold score does all of that besides, so its CPU over this one says what jury adds.

Prints one JSON object: matches per model (which score_bench checks against jury's and BIRD's
counts) and the distinct executions.

Usage: python bench/score_floor.py GOLD RUNS DB_ROOT
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path


def main() -> int:
    gold_path, runs_path, db_root = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    gold = {g["question_id"]: g for g in json.loads(gold_path.read_text())}
    runs = [json.loads(line) for line in runs_path.read_text().splitlines() if line.strip()]
    conns: dict[str, sqlite3.Connection] = {}
    results: dict[tuple[str, str], frozenset | None] = {}

    def result(db: str, sql: str) -> frozenset | None:
        key = (db, sql)
        if key not in results:
            conn = conns.get(db)
            if conn is None:
                uri = (db_root / db / f"{db}.sqlite").resolve().as_uri() + "?mode=ro"
                conn = conns[db] = sqlite3.connect(uri, uri=True)
            try:
                results[key] = frozenset(conn.execute(sql).fetchall())
            except sqlite3.Error:
                results[key] = None
        return results[key]

    matches: dict[str, int] = {}
    for r in runs:
        g = gold[r["question_id"]]
        want, got = result(g["db_id"], g["SQL"]), result(g["db_id"], r["sql"])
        matches[r["model"]] = matches.get(r["model"], 0) + (want is not None and got is not None and got == want)
    print(json.dumps({"matches": matches, "executions": len(results)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
