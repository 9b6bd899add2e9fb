"""`jury score --efficiency`: BIRD's VES and Spider 2.0-AIFunc's time ratio."""

from __future__ import annotations

import inspect
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from jury.compare.efficiency import (
    PairTiming,
    clean_abnormal,
    efficiency_scores,
    pred_gold_ratio,
    r_ves_reward,
    ves_ratio,
)
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


def _bird_time_ratio(gold_times, pred_times):  # BIRD iterated_execute_sql's loop after the timings
    diff_list = [g / p for g, p in zip(gold_times, pred_times)]
    processed_diff_list = _bird_clean_abnormal(diff_list)
    return sum(processed_diff_list) / len(processed_diff_list)


def _bird_execute_model(gold_times, pred_times):  # BIRD execute_model: any exception scores 0
    try:
        return _bird_time_ratio(gold_times, pred_times)
    except Exception:
        return 0


def _mini_dev_reward(time_ratio):  # bird-bench/mini_dev evaluation_ves.py iterated_execute_sql, verbatim
    if time_ratio == 0:
        reward = 0
    elif time_ratio >= 2:
        reward = 1.25
    elif time_ratio >= 1 and time_ratio < 2:
        reward = 1
    elif time_ratio >= 0.5 and time_ratio < 1:
        reward = 0.75
    elif time_ratio >= 0.25 and time_ratio < 0.5:
        reward = 0.5
    else:
        reward = 0.25
    return reward


def _mini_dev_compute_ves(exec_results):  # mini_dev evaluation_ves.py compute_ves (R-VES), verbatim
    num_queries = len(exec_results)
    total_reward = 0
    for result in exec_results:
        total_reward += math.sqrt(result["reward"]) * 100
    return total_reward / num_queries


class _Pair:
    def __init__(self, model: str, outcome: str, routed: bool = True) -> None:
        self.model, self.outcome, self.routed = model, outcome, routed
        self.excluded = outcome == "gold_error"  # as PairResult.excluded under the default gold-errors rule


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


@pytest.mark.parametrize("seed", range(20))
def test_r_ves_matches_mini_devs_formula(seed: int) -> None:
    """R-VES: mini-dev's reward buckets of BIRD's cleaned time ratio, square-rooted, x100, averaged."""
    rng = np.random.default_rng(seed)
    exec_results, pairs, timings = [], [], {}
    for i in range(15):
        gold = list(rng.lognormal(-6, 1.0, 12))
        pred = list(rng.lognormal(-6, 1.0, 12) * rng.choice([0.1, 0.3, 1, 3, 10]))
        match = rng.random() < 0.7
        exec_results.append({"reward": _mini_dev_reward(_bird_time_ratio(gold, pred)) if match else 0})
        pairs.append(_Pair("m", "match" if match else "mismatch"))
        timings[i] = PairTiming(gold, pred, "t", False)
    ours = efficiency_scores(pairs, timings, 12, "cpu")["m"]["r_ves"]
    assert ours == pytest.approx(_mini_dev_compute_ves(exec_results))


@pytest.mark.parametrize(
    ("ratio", "reward"),
    [(5.0, 1.25), (2.0, 1.25), (1.999, 1.0), (1.0, 1.0), (0.999, 0.75), (0.5, 0.75), (0.49, 0.5), (0.25, 0.5), (0.2, 0.25)],
)
def test_r_ves_buckets(ratio: float, reward: float) -> None:
    assert r_ves_reward(ratio) == reward == _mini_dev_reward(ratio)


def test_outlier_rule_works_at_100_repeats_and_is_inert_at_10() -> None:
    """A 1000x hiccup among ratios that vary a little: BIRD's rule (pinned against its own function)
    drops it at 100 repetitions; at 10 no value can lie beyond 3 population SDs (Samuelson)."""
    rng = np.random.default_rng(7)
    for n, dropped in ((100, True), (10, False)):
        ratios = list(rng.uniform(0.9, 1.1, n - 1)) + [1000.0]
        assert clean_abnormal(ratios) == pytest.approx(_bird_clean_abnormal(ratios))
        assert (1000.0 not in clean_abnormal(ratios)) is dropped
        gold, pred = ratios, [1.0] * n
        assert ves_ratio(gold, pred) == pytest.approx(_bird_time_ratio(gold, pred))
        assert bool(ves_ratio(gold, pred) < 2) is dropped


def test_all_equal_ratios_differ_from_bird_by_design() -> None:
    """Every ratio equal: BIRD's rule keeps nothing, its script divides by zero and scores the item
    0; jury keeps every ratio (the item scores sqrt(ratio) x 100)."""
    gold, pred = [2.0] * 100, [1.0] * 100
    with pytest.raises(ZeroDivisionError):
        _bird_time_ratio(gold, pred)
    assert _bird_execute_model(gold, pred) == 0
    assert ves_ratio(gold, pred) == 2.0
    got = efficiency_scores([_Pair("m", "match")], {0: PairTiming(gold, pred, "t", False)}, 100, "cpu")["m"]
    assert got["ves"] == pytest.approx(100 * math.sqrt(2)) and got["r_ves"] == pytest.approx(100 * math.sqrt(1.25))


def test_matches_never_timed_are_left_out_and_counted() -> None:
    """A recorded match (never timed) is out of VES's denominator and counted; a match whose timing
    failed (an error or timeout in a repetition) scores 0, as in BIRD."""
    pairs = [_Pair("m", "match"), _Pair("m", "match"), _Pair("m", "match"), _Pair("m", "mismatch")]
    timings = {
        0: PairTiming([4.0] * 10, [1.0] * 10, "t", False),  # ratio 4: VES item 200, R-VES item sqrt(1.25) x 100
        2: PairTiming(None, [1.0] * 10, "t", False),  # the gold failed while being timed
    }
    got = efficiency_scores(pairs, timings, 10, "cpu")["m"]
    assert got["untimed_matches"] == 1 and got["failed_timings"] == 1 and got["ves_n"] == 3
    assert got["ves"] == pytest.approx(200 / 3) and got["r_ves"] == pytest.approx(100 * math.sqrt(1.25) / 3)
    assert got["timed_matches"] == 1


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
    assert eff["slow"]["timed_matches"] == 1 and eff["slow"]["repeats"] == 5 and eff["slow"]["cpu"]
    assert eff["wrong"]["ves"] == 0 and eff["wrong"]["time_ratio"] is None
    conn = sqlite3.connect(tmp_path / "s.db")
    stored = conn.execute("SELECT repeats, gold_times, pred_times, cpu FROM timings").fetchall()
    assert len(stored) == 2 and all(r[0] == 5 and len(json.loads(r[1])) == 5 for r in stored)
    # the figures are BIRD's and mini_dev's formulas over the times stored (no threshold on the
    # times themselves: they are this machine's, under whatever load it has)
    [(gold_times, pred_times)] = conn.execute("SELECT gold_times, pred_times FROM timings WHERE pred_sql = ?", [slow])
    gold_times, pred_times = json.loads(gold_times), json.loads(pred_times)
    ratio = _bird_execute_model(gold_times, pred_times)
    assert eff["slow"]["ves"] == pytest.approx(_bird_compute_ves([{"time_ratio": ratio}]))
    assert eff["slow"]["r_ves"] == pytest.approx(100 * math.sqrt(_mini_dev_reward(ratio)))
    kept_gold, kept_pred = _bird_clean_abnormal(gold_times), _bird_clean_abnormal(pred_times)
    t_ratio = (sum(kept_pred) / len(kept_pred)) / (sum(kept_gold) / len(kept_gold))  # t_pred / t_gold
    assert eff["slow"]["time_ratio"] == pytest.approx(t_ratio) and eff["slow"]["faster_share"] == float(t_ratio < 1)
    again = json.loads(run_jury([*args, "--efficiency", "--repeats", "5", "-f", "json"], tmp_path).stdout)
    assert {m["model"]: m["efficiency"] for m in again["models"]} == eff  # served from the store
    assert eff["wrong"]["r_ves"] == 0
    table_proc = run_jury([*args, "--efficiency", "--repeats", "5"], tmp_path)
    assert "VES" in table_proc.stdout and "R-VES" in table_proc.stdout and "measured on this machine" in table_proc.stdout
    assert "outlier rule" in table_proc.stderr  # 5 repeats: BIRD's 3-sigma rule can drop nothing
    csv = run_jury([*args, "--efficiency", "--repeats", "5", "-f", "csv"], tmp_path).stdout.splitlines()
    assert {"ves", "r_ves", "untimed_matches", "failed_timings"} <= set(csv[0].split(","))


def test_cli_leaves_recorded_matches_out_and_says_how_many(tmp_path: Path) -> None:
    """q2's match is recorded elsewhere (never timed): out of VES's denominator, counted."""
    _slow_db(tmp_path / "dbs")
    write_gold(
        tmp_path,
        [
            {"question_id": 1, "db_id": "shop", "SQL": "SELECT COUNT(*) FROM n"},
            {"question_id": 2, "db_id": "shop", "SQL": "SELECT MAX(i) FROM n"},
        ],
    )
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 1, "sql": "SELECT COUNT(*) FROM n"},
            {"model": "m", "question_id": 2, "sql": "SELECT MAX(i) FROM n", "recorded": {"match": True, "preview": "2999"}},
        ],
    )
    args = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]
    proc = run_jury([*args, "--efficiency", "--repeats", "3", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    eff = json.loads(proc.stdout)["models"][0]["efficiency"]
    assert eff["untimed_matches"] == 1 and eff["timed_matches"] == 1 and eff["ves_n"] == 1
    assert eff["ves"] > 0 and eff["r_ves"] > 0  # the one timed match alone, not halved by the recorded one
    table = run_jury([*args, "--efficiency", "--repeats", "3"], tmp_path).stdout
    assert "matches never timed (recorded outcomes): 1" in table


def test_default_repeats_is_birds_100() -> None:
    from jury.cli.score import score
    from jury.vocab import DEFAULT_EFFICIENCY_REPEATS

    assert DEFAULT_EFFICIENCY_REPEATS == 100
    assert inspect.signature(score).parameters["repeats"].default.default == 100


BAD = [Case("zero-repeats", ["score", "run.jsonl", "--efficiency", "--repeats", "0"], "--repeats")]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
