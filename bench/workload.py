"""Generate the benchmark-size workload: 36 models x 759 questions, from the bundled example.

The bundled example (examples/bird-superhero) holds 15 published systems over 129 BIRD dev
questions of the superhero database. The workload at the size the benchmark jury reproduces
is made from it, so anyone can rebuild the scale figures:

- questions: the 129 are replicated under new ids until there are N (759 by default): copy k
  of question q has id q + 100000 * k and its gold SQL gets a trailing `-- q<k>` line (SQLite
  ignores it), so each copy is an execution of its own and scores exactly as the original;
- models: model i copies system i mod 15 (its name `<system>~m<i>` for i >= 15), each SQL
  text made distinct by a trailing `-- m<i>` line (and `-- q<k>` on question copies).

The result is a project folder: dev.json, run.jsonl, jury.toml (gold, db_root) and a
`databases` link to the example's databases, so `jury score run.jsonl` runs in it as in the
example. Every (model, question) pair of the workload scores as its source pair, which
`expected_matches` gives for a check.

Usage: python bench/workload.py DEST [--models 36] [--questions 759] [--example DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bird-superhero"
COPY_STRIDE = 100_000


def _tagged(sql: str | None, *tags: str) -> str | None:
    if sql is None:
        return None
    for tag in tags:
        if tag:
            sql = f"{sql}\n-- {tag}"
    return sql


def questions(gold: list[dict], n: int) -> list[dict]:
    """n questions: the gold's, then copies under ids q + 100000 * k with `-- q<k>` on the SQL."""
    out: list[dict] = []
    k = 0
    while len(out) < n:
        for q in gold:
            if len(out) == n:
                break
            if k == 0:
                out.append(dict(q))
            else:
                out.append({**q, "question_id": q["question_id"] + COPY_STRIDE * k, "SQL": _tagged(q["SQL"], f"q{k}")})
        k += 1
    return out


def runs(source_runs: list[dict], gold: list[dict], n_models: int) -> list[dict]:
    """Model i copies system i mod 15 on every workload question (copies included)."""
    systems = list(dict.fromkeys(r["model"] for r in source_runs))
    by_pair = {(r["model"], r["question_id"]): r for r in source_runs}
    out = []
    for i in range(n_models):
        base = systems[i % len(systems)]
        name = base if i < len(systems) else f"{base}~m{i}"
        for q in gold:
            k, source_qid = divmod(q["question_id"], COPY_STRIDE)
            r = by_pair.get((base, source_qid))
            if r is None:
                continue
            sql = _tagged(r.get("sql"), f"m{i}" if i >= len(systems) else "", f"q{k}" if k else "")
            out.append({**r, "model": name, "question_id": q["question_id"], "sql": sql})
    return out


def write_workload(dest: Path, n_models: int = 36, n_questions: int = 759, example: Path = EXAMPLE) -> Path:
    """Write the project folder `dest` (created; must be empty or absent) and return it."""
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise SystemExit(f"{dest}: not empty")
    gold = questions(json.loads((example / "dev.json").read_text()), n_questions)
    source = [json.loads(line) for line in (example / "run.jsonl").read_text().splitlines() if line.strip()]
    (dest / "dev.json").write_text(json.dumps(gold, indent=1))
    (dest / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs(source, gold, n_models)))
    (dest / "jury.toml").write_text('gold = "dev.json"\ndb_root = "databases"\n')
    os.symlink((example / "databases").resolve(), dest / "databases")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--models", type=int, default=36)
    ap.add_argument("--questions", type=int, default=759)
    ap.add_argument("--example", type=Path, default=EXAMPLE)
    args = ap.parse_args()
    dest = write_workload(args.dest, args.models, args.questions, args.example)
    n_runs = sum(1 for _ in (dest / "run.jsonl").open())
    print(f"wrote {dest}: {args.models} models x {args.questions} questions ({n_runs} answers)")


if __name__ == "__main__":
    main()
