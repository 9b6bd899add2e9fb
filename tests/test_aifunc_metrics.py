"""Spider 2.0-AIFunc's figures through `jury score` and `jury.score`: execution accuracy per
AI-function type, the execution-error rate, the median and all-solved time ratios."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy.stats import norm

from jury.compare.efficiency import PairTiming, all_solved_time_ratios, efficiency_scores
from tests.support.badinput import run_jury
from tests.support.helpers import make_db, write_gold, write_runs

PATTERN = "re:UPPER|LENGTH|LOWER"


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval written out: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z = norm.ppf(0.975)
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def _project(tmp_path: Path) -> list[str]:
    """Gold: q1 calls UPPER, q2 LENGTH, q3 UPPER and LENGTH, q4 none (of the pattern).
    m: q1 ✓, q2 ✗ (id 1's length 5, gold id 2's 4), q3 ✓, q4 fails (no column nope).
    n: q1 ✗ ('apple' is not 'APPLE' under strict), q2 ✓, q3 fails, q4 ✓."""
    make_db(tmp_path / "dbs")
    write_gold(
        tmp_path,
        [
            {"question_id": 1, "db_id": "shop", "SQL": "SELECT UPPER(name) FROM item WHERE id = 1"},
            {"question_id": 2, "db_id": "shop", "SQL": "SELECT LENGTH(name) FROM item WHERE id = 2"},
            {"question_id": 3, "db_id": "shop", "SQL": "SELECT UPPER(name), LENGTH(name) FROM item WHERE id = 3"},
            {"question_id": 4, "db_id": "shop", "SQL": "SELECT name FROM item WHERE id = 4"},
        ],
    )
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 1, "sql": "SELECT upper(name) FROM item WHERE id = 1"},
            {"model": "m", "question_id": 2, "sql": "SELECT LENGTH(name) FROM item WHERE id = 1"},
            {"model": "m", "question_id": 3, "sql": "SELECT UPPER(name), LENGTH(name) FROM item WHERE id = 3"},
            {"model": "m", "question_id": 4, "sql": "SELECT nope FROM item"},
            {"model": "n", "question_id": 1, "sql": "SELECT LOWER(name) FROM item WHERE id = 1"},
            {"model": "n", "question_id": 2, "sql": "SELECT LENGTH(name) FROM item WHERE id = 2"},
            {"model": "n", "question_id": 3, "sql": "SELECT nope FROM item"},
            {"model": "n", "question_id": 4, "sql": "SELECT name FROM item WHERE id = 4"},
        ],
    )
    return ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]


def test_execution_accuracy_per_function_type(tmp_path: Path) -> None:
    """By hand: a question counts under each function its gold calls.
    m: UPPER q1 ✓ q3 ✓ -> 2/2; LENGTH q2 ✗ q3 ✓ -> 1/2; (none) q4 ✗ -> 0/1.
    n: UPPER q1 ✗ q3 ✗ -> 0/2; LENGTH q2 ✓ q3 ✗ -> 1/2; (none) q4 ✓ -> 1/1."""
    args = _project(tmp_path)
    proc = run_jury([*args, "--function-set", PATTERN, "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    types = {m["model"]: m["function_types"] for m in json.loads(proc.stdout)["models"]}
    got = {model: {name: (p["k"], p["n"]) for name, p in t.items()} for model, t in types.items()}
    assert got == {
        "m": {"LENGTH": (1, 2), "UPPER": (2, 2), "(none)": (0, 1)},
        "n": {"LENGTH": (1, 2), "UPPER": (0, 2), "(none)": (1, 1)},
    }
    low, high = _wilson(1, 2)
    assert types["m"]["LENGTH"]["low"] == pytest.approx(low) and types["m"]["LENGTH"]["high"] == pytest.approx(high)
    csv = run_jury([*args, "--function-set", PATTERN, "-f", "csv"], tmp_path).stdout.splitlines()
    header = csv[0].split(",")
    n_row = dict(zip(header, csv[2].split(",")))
    assert (n_row["ex_UPPER_k"], n_row["ex_UPPER_n"], n_row["ex_UPPER"]) == ("0", "2", "0.0")
    assert n_row["ex_(none)"] == "1.0"
    table = run_jury([*args, "--function-set", PATTERN], tmp_path).stdout
    assert "execution accuracy by function type" in table and "(2/2)" in table and "EX LENGTH" in table
    md = run_jury([*args, "--function-set", PATTERN, "-f", "md"], tmp_path).stdout
    assert "| m | 0.500 [" in md and "(1/2) | 1.000 [" in md
    plain = json.loads(run_jury([*args, "-f", "json"], tmp_path).stdout)
    assert plain["models"][0]["function_types"] is None
    assert "by function type" not in run_jury(args, tmp_path).stdout


def test_execution_error_rate_is_a_named_figure(tmp_path: Path) -> None:
    """Each model has one failing answer of its 4 routed questions: rate 1/4 with Wilson's
    interval. A misrouted answer that fails is outside the denominator (model o: 1 of its 3
    routed questions fails, its misrouted one is not counted)."""
    args = _project(tmp_path)
    runs = (tmp_path / "run.jsonl").read_text().splitlines()
    extra = [
        {"model": "o", "question_id": 1, "sql": "SELECT nope FROM item", "db_id": "other"},
        {"model": "o", "question_id": 2, "sql": "SELECT LENGTH(name) FROM item WHERE id = 2"},
        {"model": "o", "question_id": 3, "sql": "SELECT nope FROM item"},
        {"model": "o", "question_id": 4, "sql": "SELECT name FROM item WHERE id = 4"},
    ]
    make_db(tmp_path / "dbs", "other")
    (tmp_path / "run.jsonl").write_text("\n".join(runs + [json.dumps(r) for r in extra]) + "\n")
    import jury

    result = jury.score(tmp_path / "run.jsonl", gold=tmp_path / "gold.json", db_root=tmp_path / "dbs",
                        store=tmp_path / "s.db", workers=1)  # fmt: skip
    errors = {s.model: s.execution_errors for s in result.scores}
    assert {m: (e["k"], e["n"], e["errors"], e["timeouts"]) for m, e in errors.items()} == {
        "m": (1, 4, 1, 0),
        "n": (1, 4, 1, 0),
        "o": (1, 3, 1, 0),
    }
    low, high = _wilson(1, 3)
    assert errors["o"]["value"] == pytest.approx(1 / 3)
    assert (errors["o"]["low"], errors["o"]["high"]) == (pytest.approx(low), pytest.approx(high))
    csv = run_jury([*args, "-f", "csv"], tmp_path).stdout.splitlines()
    header = csv[0].split(",")
    assert dict(zip(header, csv[3].split(",")))["execution_error_rate"] == str(1 / 3)
    assert "exec error rate" not in run_jury(args, tmp_path).stdout  # the table: with --wide
    wide = run_jury([*args, "--wide"], tmp_path).stdout
    assert "exec error rate (n)" in wide and "0.333 (1)" in wide


class _Pair:
    def __init__(self, model: str, question_id: int, outcome: str, routed: bool = True) -> None:
        self.model, self.question_id, self.outcome, self.routed = model, question_id, outcome, routed
        self.excluded = outcome == "gold_error"  # as PairResult.excluded under the default gold-errors rule


def _timing(ratio: float | None) -> PairTiming:
    """Gold 1 s three times, the candidate `ratio` s (None: its timing failed)."""
    return PairTiming([1.0] * 3, None if ratio is None else [ratio] * 3, "2026-01-01T00:00:00Z", False)


def test_median_and_all_solved_time_ratios_by_hand() -> None:
    """t_pred/t_gold per match: a q1 2, q2 4, q3 1, q4 8, q5 1; b q1 0.5, q3 3, q5 timing failed.
    a: mean (2+4+1+8+1)/5 = 3.2, median 2; b: mean (0.5+3)/2 = 1.75, median 1.75.
    Solved by both with a timing: q1 and q3 (q2 b mismatches, q4 b has no answer, q5 b's
    timing failed): a mean (2+1)/2 = 1.5, median 1.5; b mean 1.75, median 1.75."""
    pairs = [
        _Pair("a", 1, "match"), _Pair("a", 2, "match"), _Pair("a", 3, "match"), _Pair("a", 4, "match"), _Pair("a", 5, "match"),
        _Pair("b", 1, "match"), _Pair("b", 2, "mismatch"), _Pair("b", 3, "match"), _Pair("b", 5, "match"),
    ]  # fmt: skip
    ratios = [2, 4, 1, 8, 1, 0.5, None, 3, None]
    timings = {i: _timing(r) for i, r in enumerate(ratios) if i != 6}
    table = efficiency_scores(pairs, timings, 3, "cpu")
    assert table["a"]["time_ratio"] == pytest.approx(3.2) and table["a"]["time_ratio_median"] == pytest.approx(2)
    assert table["b"]["time_ratio"] == pytest.approx(1.75) and table["b"]["time_ratio_median"] == pytest.approx(1.75)
    solved = all_solved_time_ratios(pairs, timings)
    assert solved["a"] == {"all_solved_questions": 2, "time_ratio_all_solved": 1.5, "time_ratio_all_solved_median": 1.5}
    assert solved["b"] == {"all_solved_questions": 2, "time_ratio_all_solved": 1.75, "time_ratio_all_solved_median": 1.75}


def test_all_solved_is_none_when_no_question_is_solved_by_all() -> None:
    pairs = [_Pair("a", 1, "match"), _Pair("b", 1, "error"), _Pair("b", 2, "match", routed=False)]
    solved = all_solved_time_ratios(pairs, {0: _timing(2.0), 2: _timing(1.0)})
    assert solved["b"] == {"all_solved_questions": 0, "time_ratio_all_solved": None, "time_ratio_all_solved_median": None}


def test_cli_reports_median_and_all_solved(tmp_path: Path) -> None:
    """Through `jury score --efficiency`: m matches q1 and q3, n q2 and q4 in _project; a third
    model p matching q1 and q3 as m does makes {q1, q3} solved by m and p only, so with n no
    question is solved by every model (0); without n, two (q1, q3), and m's all-solved mean
    is its mean over all its timed matches (the same two questions)."""
    args = _project(tmp_path)
    runs = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    p = [{**r, "model": "p"} for r in runs if r["model"] == "m" and r["question_id"] in (1, 3)]
    write_runs(tmp_path, runs + p)
    proc = run_jury([*args, "--efficiency", "--repeats", "3", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    eff = {m["model"]: m["efficiency"] for m in json.loads(proc.stdout)["models"]}
    assert [eff[m]["all_solved_questions"] for m in "mnp"] == [0, 0, 0]
    assert eff["m"]["time_ratio_all_solved"] is None and eff["m"]["time_ratio_median"] is not None
    write_runs(tmp_path, [r for r in runs if r["model"] == "m"] + p)
    eff = {
        m["model"]: m["efficiency"]
        for m in json.loads(run_jury([*args, "--efficiency", "--repeats", "3", "-f", "json"], tmp_path).stdout)["models"]
    }
    assert eff["m"]["all_solved_questions"] == eff["p"]["all_solved_questions"] == 2
    assert eff["m"]["time_ratio_all_solved"] == pytest.approx(eff["m"]["time_ratio"])
    table = run_jury([*args, "--efficiency", "--repeats", "3"], tmp_path).stdout
    assert "t_pred/t_gold median" in table and "over the 2 questions every model matched" in table
    csv = run_jury([*args, "--efficiency", "--repeats", "3", "-f", "csv"], tmp_path).stdout.splitlines()
    assert {"time_ratio_median", "all_solved_questions", "time_ratio_all_solved_median"} <= set(csv[0].split(","))


def test_report_carries_the_execution_error_rate(tmp_path: Path) -> None:
    """`jury report` (JSON and CSV) and `jury.report`: the same 1 of 4 for m and n as the score."""
    import jury

    args = _project(tmp_path)
    proc = run_jury(["report", *args[1:], "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    errors = {m["model"]: m["execution_errors"] for m in json.loads(proc.stdout)["models"]}
    assert {m: (e["k"], e["n"]) for m, e in errors.items()} == {"m": (1, 4), "n": (1, 4)}
    csv = run_jury(["report", *args[1:], "-f", "csv"], tmp_path).stdout.splitlines()
    header = csv[0].split(",")
    assert dict(zip(header, csv[1].split(",")))["execution_error_rate"] == "0.25"
    score = jury.score(tmp_path / "run.jsonl", gold=tmp_path / "gold.json", db_root=tmp_path / "dbs", store=tmp_path / "s.db")
    rows = json.loads(jury.report(score).render("json"))["models"]
    assert [r["execution_errors"]["value"] for r in rows] == [0.25, 0.25]
