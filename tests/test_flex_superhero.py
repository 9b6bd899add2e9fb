"""FLEX's 15 categorised pairs on the bundled superhero database, scored from the real
database: jury's own execution reproduces the execution-match outcome FLEX recorded."""

from __future__ import annotations

import json

import pytest

from tests.support.clirun import run_jury_inprocess
from tests.support.helpers import SHARED_BIRD

FLEX = SHARED_BIRD.parent / "labels" / "flex" / "results" / "categorization_agreement"
pytestmark = pytest.mark.skipif(not FLEX.is_dir(), reason="../shared (FLEX labels, BIRD superhero) not present")


def jury(tmp, *args):
    done = run_jury_inprocess(args, tmp)
    assert done.returncode == 0, done.stderr
    return done


def test_the_superhero_pairs_executed_here_match_flexs_recorded_outcomes(tmp_path):
    files = [FLEX / "categorized_fn100.jsonl", FLEX / "categorized_fp100.jsonl", FLEX / "experts_categorization.csv"]
    jury(
        tmp_path, "labels", "import", "flex-categories", *map(str, files), "--gold", str(SHARED_BIRD / "dev.json"),
        "-o", "labels.jsonl", "--runs-out", "run.jsonl", "--gold-out", "gold.jsonl",
    )  # fmt: skip
    runs = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    gold = {g["question_id"]: g for g in map(json.loads, (tmp_path / "gold.jsonl").read_text().splitlines())}
    mine = [r for r in runs if r["db_id"] == "superhero"]
    assert len(mine) == 15
    recorded = {(r["model"], r["question_id"]): r.pop("recorded")["match"] for r in mine}
    (tmp_path / "sh_run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mine))
    items = [{k: v for k, v in gold[q].items() if k != "recorded"} for q in {r["question_id"] for r in mine}]
    (tmp_path / "sh_gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in items))

    out = jury(
        tmp_path, "score", "sh_run.jsonl", "--gold", "sh_gold.jsonl", "--db-root", str(SHARED_BIRD / "databases"),
        "--comparator", "bird", "--per-question", "pq.jsonl", "--format", "json", "--workers", "1",
    )  # fmt: skip
    assert json.loads(out.stdout)["recorded_pairs"] == 0  # every query executed on the real database
    pairs = [json.loads(line) for line in (tmp_path / "pq.jsonl").read_text().splitlines()]
    executed = {(p["model"], p["question_id"]): p["outcome"] == "match" for p in pairs}
    assert executed == recorded
    assert sorted(set(recorded.values())) == [False, True]  # both outcomes occur among the 15
