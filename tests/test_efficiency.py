"""`jury score --efficiency`: BIRD's VES and Spider 2.0-AIFunc's time ratio."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from jury.compare.efficiency import PairTiming, clean_abnormal, efficiency_scores, pred_gold_ratio, ves_ratio
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import make_db, write_gold, write_runs


def _bird_clean_abnormal(input):  # BIRD evaluation_ves.py, verbatim (numpy, population std)
    input = np.asarray(input)
    processed_list = []
    mean = np.mean(input, axis=0)
    std = np.std(input, axis=0)
    for x in input:
        if x < mean + 3 * std and x > mean - 3 * std:
            processed_list.append(x)
    return processed_list


def _bird_compute_ves(exec_results):  # BIRD evaluation_ves.py compute_ves, verbatim
    num_queries = len(exec_results)
    total_ratio = 0
    for result in exec_results:
        total_ratio += math.sqrt(result["time_ratio"]) * 100
    return total_ratio / num_queries


class _Pair:
    def __init__(self, model: str, outcome: str, routed: bool = True) -> None:
        self.model, self.outcome, self.routed = model, outcome, routed


def test_ves_by_hand() -> None:
    """Two routed questions of model m: q1 matches with gold 2 s / pred 1 s every time (ratio 2),
    q2 is a mismatch (0). VES = (sqrt(2) * 100 + 0) / 2 = 70.71; t_pred/t_gold = 0.5, faster 1/1.
    A misrouted pair and a gold error are outside the denominator."""
    pairs = [_Pair("m", "match"), _Pair("m", "mismatch"), _Pair("m", "match", routed=False), _Pair("m", "gold_error")]
    timings = {0: PairTiming([2.0] * 10, [1.0] * 10, "2025-01-01T00:00:00Z", False)}
    got = efficiency_scores(pairs, timings, 10, "cpu")["m"]
    assert got["ves"] == pytest.approx(100 * math.sqrt(2) / 2) and got["ves_n"] == 2
    assert got["time_ratio"] == pytest.approx(0.5) and got["faster_share"] == 1.0
    assert got["timed_matches"] == 1 and got["untimed_matches"] == 0 and got["measured_to"] == "2025-01-01T00:00:00Z"


def test_outlier_is_dropped_as_bird_does() -> None:
    # 19 repetitions at ratio 1.0 and one at 50 (a hiccup): 50 is beyond mean + 3 sigma
    gold = [1.0] * 19 + [50.0]
    pred = [1.0] * 20
    assert clean_abnormal([g / p for g, p in zip(gold, pred)]) == [1.0] * 19
    assert ves_ratio(gold, pred) == 1.0
    assert pred_gold_ratio(gold, pred) == 1.0


@pytest.mark.parametrize("seed", range(20))
def test_matches_birds_own_formula_on_synthetic_timings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    exec_results, pairs, timings = [], [], {}
    for i in range(15):
        gold = list(rng.lognormal(-6, 0.5, 12) * (1 + 30 * (rng.random(12) < 0.1)))
        pred = list(rng.lognormal(-6, 0.5, 12))
        match = rng.random() < 0.7
        diff = [g / p for g, p in zip(gold, pred)]
        processed = _bird_clean_abnormal(diff)
        exec_results.append({"time_ratio": sum(processed) / len(processed) if match else 0})
        assert clean_abnormal(diff) == pytest.approx(processed)
        pairs.append(_Pair("m", "match" if match else "mismatch"))
        timings[i] = PairTiming(gold, pred, "t", False)
    ours = efficiency_scores(pairs, timings, 12, "cpu")["m"]["ves"]
    assert ours == pytest.approx(_bird_compute_ves(exec_results))


def _slow_db(root: Path) -> None:
    make_db(root)
    conn = sqlite3.connect(root / "shop" / "shop.sqlite")
    conn.execute("CREATE TABLE n(i INTEGER)")
    conn.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(3000)])
    conn.commit()
    conn.close()


def test_cli_times_matches_and_reuses_timings(tmp_path: Path) -> None:
    _slow_db(tmp_path / "dbs")
    write_gold(tmp_path, [{"question_id": 1, "db_id": "shop", "SQL": "SELECT COUNT(*) FROM n"}])
    # slow: the same count through a cross join filter; fast: the gold itself
    slow = (
        "SELECT COUNT(*) FROM n AS a WHERE a.i IN (SELECT b.i FROM n AS b CROSS JOIN (SELECT 1 UNION SELECT 2) WHERE b.i = a.i)"
    )
    write_runs(
        tmp_path,
        [
            {"model": "slow", "question_id": 1, "sql": slow},
            {"model": "same", "question_id": 1, "sql": "SELECT COUNT(*) FROM n"},
            {"model": "wrong", "question_id": 1, "sql": "SELECT 1"},
        ],
    )
    args = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]
    proc = run_jury([*args, "--efficiency", "--repeats", "5", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    eff = {m["model"]: m["efficiency"] for m in json.loads(proc.stdout)["models"]}
    assert eff["slow"]["timed_matches"] == 1 and eff["slow"]["time_ratio"] > 1.5 and eff["slow"]["ves"] < 100
    assert eff["slow"]["faster_share"] == 0.0 and eff["slow"]["repeats"] == 5 and eff["slow"]["cpu"]
    assert eff["wrong"]["ves"] == 0 and eff["wrong"]["time_ratio"] is None
    conn = sqlite3.connect(tmp_path / "s.db")
    stored = conn.execute("SELECT repeats, gold_times, pred_times, cpu FROM timings").fetchall()
    assert len(stored) == 2 and all(r[0] == 5 and len(json.loads(r[1])) == 5 for r in stored)
    again = json.loads(run_jury([*args, "--efficiency", "--repeats", "5", "-f", "json"], tmp_path).stdout)
    assert {m["model"]: m["efficiency"] for m in again["models"]} == eff  # served from the store
    table = run_jury([*args, "--efficiency", "--repeats", "5"], tmp_path).stdout
    assert "VES" in table and "measured on this machine" in table


BAD = [Case("zero-repeats", ["score", "run.jsonl", "--efficiency", "--repeats", "0"], "--repeats")]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
