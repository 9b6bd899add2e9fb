"""Time and size of `jury report -f html` on a synthetic benchmark: 36 models x 1,500 questions.

Everything is scored from results recorded elsewhere (README, "Results recorded elsewhere"):
the gold items carry a recorded preview and every run record a recorded `match` and preview,
so nothing is executed. A synthetic adjudication (three votes with a reasoning per
jury-eligible failure, some verdicts of each kind) and a synthetic audit (5% of the gold
flagged) are built in memory; they are test data, never reported as real numbers. Then the
report is built (with its 1,000-resample rank-stability bootstrap) and the site written.

Prints: the time to build the report, the time to write the site, the site's files and size.
The figures depend on the machine and on what else runs on it: printed, never asserted.

Usage: python bench/site_bench.py [--models 36] [--questions 1500] [--out DIR] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from jury.compare.outcomes import Settings
from jury.execution.store import Store
from jury.pipeline.jobs import load_and_evaluate
from jury.results.report.build import build_report
from jury.results.site.build import SiteSources, build_site
from jury.verdicts.documents import validate_document

HEADER = {
    "$schema": "schema/x.json",
    "jury_version": "bench",
    "created_at": "2026-01-01T00:00:00Z",
    "inputs": {"gold": {"path": "gold.jsonl", "sha256": "0" * 64}},
    "prompts": {},
    "settings": {},
    "totals": {},
}
FAMILIES = ("openai", "anthropic", "google", "meta", "mistral", "deepseek", "qwen", "xai", "cohere")
VERDICTS = ("gold_defect", "format_equivalence", "genuine_error", "genuine_error", "genuine_error", "ambiguous", "no_majority")
JURORS = (("ja", "openai-j"), ("jb", "anthropic-j"), ("jc", "google-j"))


def write_inputs(tmp: Path, n_models: int, n_questions: int, rng: random.Random) -> tuple[Path, Path]:
    gold = []
    for q in range(1, n_questions + 1):
        gold.append(
            {
                "question_id": q,
                "db_id": f"db{q % 11}",
                "question": f"Question {q}: list the names of the items whose price is above the average of category {q % 17}?",
                "evidence": f"category {q % 17} refers to item.category = {q % 17}; price is in dollars",
                "SQL": f"SELECT name FROM item WHERE category = {q % 17} AND price > (SELECT avg(price) FROM item) ORDER BY name",
                "difficulty": ("simple", "moderate", "challenging")[q % 3],
                "recorded": {"preview": "name\n" + "\n".join(f"item {q}-{i}" for i in range(5)) + "\n(5 rows)"},
            }
        )
    (tmp / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    with (tmp / "run.jsonl").open("w") as f:
        for m in range(n_models):
            skill = 0.35 + 0.5 * m / max(n_models - 1, 1)
            for q in range(1, n_questions + 1):
                match = rng.random() < skill
                rec = {
                    "model": f"model-{m:02d}",
                    "question_id": q,
                    "family": FAMILIES[m % len(FAMILIES)],
                    "sql": f"SELECT name FROM item WHERE category = {q % 17} AND price > {rng.randint(1, 99)} -- m{m}",
                    "recorded": {"match": match, "preview": "name\n" + "\n".join(f"row {i}" for i in range(4)) + "\n(4 rows)"},
                }
                f.write(json.dumps(rec) + "\n")
    return tmp / "gold.jsonl", tmp / "run.jsonl"


def vote(juror: str, family: str, verdict: str) -> dict:
    category = None if verdict == "no_majority" else verdict
    return {
        "juror": juror,
        "family": family,
        "model": f"openai/{juror}",
        "order": "gold_first",
        "raw_verdict": {"gold_defect": "answer_2", "genuine_error": "answer_1", "format_equivalence": "both"}.get(
            verdict, "ambiguous"
        ),
        "category": category,
        "reasoning": f"Juror {juror} compared both results row by row and judged this {verdict.replace('_', ' ')}: "
        "the candidate returns the same entities in another shape (an extra column, another order) or misses a filter.",
    }


def synthetic_verdicts(ev, rng: random.Random):
    records = []
    for p in ev.pairs:
        if p.outcome != "mismatch" or not p.routed:
            continue
        verdict = rng.choice(VERDICTS)
        records.append(
            {
                "question_id": p.question_id,
                "db_id": p.db_id,
                "model": p.model,
                "families": p.families,
                "jurors": [j for j, _ in JURORS],
                "votes": [vote(j, f, verdict) for j, f in JURORS],
                "verdict": verdict,
                "credited": verdict in ("gold_defect", "format_equivalence"),
            }
        )
    panel = {"name": "bench", "ballot_style": "labelled", "k": 3, "jurors": []}
    adj = validate_document({**HEADER, "kind": "adjudication", "panel": panel, "records": records})
    questions = sorted({p.question_id for p in ev.pairs})
    audit_records = [
        {
            "question_id": q,
            "db_id": f"db{q % 11}",
            "jurors": [j for j, _ in JURORS],
            "votes": [],
            "flagged": q % 20 == 0,
            "decided": True,
        }
        for q in questions
    ]
    audit = validate_document({**HEADER, "kind": "audit", "panel": {**panel, "ballot_style": "audit"}, "records": audit_records})
    return adj, audit


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=36)
    parser.add_argument("--questions", type=int, default=1500)
    parser.add_argument("--out", type=Path, default=None, help="site folder (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        gold_path, run_path = write_inputs(tmp, args.models, args.questions, rng)
        t0 = time.perf_counter()
        gold, records, ev = load_and_evaluate(gold_path, [run_path], None, Store(tmp / "store.db"), Settings(workers=1))
        adj, audit = synthetic_verdicts(ev, rng)
        t1 = time.perf_counter()
        report = build_report(ev, gold, audit_docs=[(tmp / "audit.json", audit)], adj_docs=[(tmp / "adj.json", adj)])
        t2 = time.perf_counter()
        out = args.out or tmp / "site"
        sources = SiteSources(
            report=report,
            evaluation=ev,
            gold=gold,
            records=records,
            audit=(tmp / "audit.json", audit),
            adjudications=[(tmp / "adj.json", adj)],
            inputs=[("gold", gold_path), ("run", run_path)],
            command=["jury", "report", str(run_path), "-f", "html", "-o", str(out)],
        )
        summary = build_site(sources, out)
        t3 = time.perf_counter()
        on_disk = sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())
        print(f"{args.models} models x {args.questions:,} questions: {len(ev.pairs):,} answers, {len(adj.records):,} verdicts")
        print(f"scoring recorded results + synthetic verdicts: {t1 - t0:.1f} s")
        print(f"report (with the {report.rank_stability.resamples:,}-resample rank bootstrap): {t2 - t1:.1f} s")
        print(f"site: {t3 - t2:.1f} s, {summary.files:,} files, {on_disk / 1e6:.1f} MB ({summary.bytes / 1e6:.1f} MB written)")
        print(f"report + site: {t3 - t1:.1f} s")


if __name__ == "__main__":
    main()
