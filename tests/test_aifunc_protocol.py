"""Spider 2.0-AIFunc's execution protocol in `jury score`: a prediction re-run up to N times
before it is called a timeout (--timeout-retries), and gold and prediction executed in the same
time window (--same-window: nothing reused from the store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import jury
import jury.compare.outcomes as outcomes
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import make_db, write_gold, write_runs

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000000) SELECT count(*) FROM c"


def _project(tmp_path: Path, pred_sql: str, gold_sql: str = "SELECT 0") -> list[str]:
    make_db(tmp_path / "dbs")
    write_gold(
        tmp_path,
        [
            {"question_id": 1, "db_id": "shop", "SQL": gold_sql},
            {"question_id": 2, "db_id": "shop", "SQL": "SELECT count(*) FROM item"},
        ],
    )
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 1, "sql": pred_sql},
            {"model": "m", "question_id": 2, "sql": "SELECT count(*) FROM item"},
        ],
    )
    return ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1", "--store", "s.db"]


def test_a_prediction_that_always_times_out_is_rerun_n_times_and_recorded(tmp_path: Path) -> None:
    """The endless query times out on its first run and on both re-runs: executed = gold 2 +
    predictions 2 (one shared with a gold: the same SQL on the same database is one execution,
    so 3) + 2 re-runs = 5; the timeout stands, 1 of 2 answers re-run, 0 recovered."""
    _project(tmp_path, ENDLESS)
    result = jury.score(tmp_path / "run.jsonl", gold=tmp_path / "gold.json", db_root=tmp_path / "dbs",
                        store=tmp_path / "s.db", workers=1, timeout=0.2, timeout_retries=2)  # fmt: skip
    assert result.executed == 5
    (s,) = result.scores
    assert s.outcomes["timeout"] == 1
    e = s.execution_errors
    assert (e["timeouts"], e["timeouts_rerun"], e["rerun_recovered"]) == (1, 1, 0)
    report = json.loads(result.render("json"))
    assert report["settings"]["timeout_retries"] == 2 and "same_window" not in report["settings"]
    without = json.loads(
        jury.score(
            tmp_path / "run.jsonl",
            gold=tmp_path / "gold.json",
            db_root=tmp_path / "dbs",
            store=tmp_path / "s.db",
            workers=1,
            timeout=0.2,
        ).render("json")  # fmt: skip
    )
    assert "timeout_retries" not in without["settings"] and "timeouts_rerun" not in without["models"][0]["execution_errors"]


def test_a_rerun_that_finishes_is_scored(tmp_path: Path, monkeypatch) -> None:
    """The prediction joins a 3,000-row table with itself three times (2.7e10 rows: far beyond
    a 0.2 s timeout); before its re-run the table is emptied (the transient load gone), so the re-run
    returns min(1, 0) = 0, the gold's result: a match after 1 re-run, recovered."""
    _project(tmp_path, "SELECT min(1, count(*)) FROM big a, big b, big c")
    with sqlite3.connect(tmp_path / "dbs" / "shop" / "shop.sqlite") as conn:
        conn.execute("CREATE TABLE big(x)")
        conn.executemany("INSERT INTO big VALUES (?)", [(i,) for i in range(3000)])
    real = outcomes.run_executions

    def run(jobs, databases, store, settings, progress=None, *, rerun=()):
        if rerun and not settings.same_window:
            with sqlite3.connect(tmp_path / "dbs" / "shop" / "shop.sqlite") as conn:
                conn.execute("DELETE FROM big")
        return real(jobs, databases, store, settings, progress, rerun=rerun)

    monkeypatch.setattr(outcomes, "run_executions", run)
    monkeypatch.chdir(tmp_path)
    result = jury.score("run.jsonl", gold="gold.json", db_root="dbs", store="s.db", workers=1, timeout=0.2, timeout_retries=3)
    (s,) = result.scores
    assert s.outcomes["match"] == 2 and s.outcomes["timeout"] == 0
    assert (s.execution_errors["timeouts_rerun"], s.execution_errors["rerun_recovered"]) == (1, 1)
    assert result.executed == 3 + 1  # gold 1, gold 2 = prediction 2, prediction 1; one re-run


def test_same_window_executes_gold_and_predictions_again(tmp_path: Path) -> None:
    """A second run reuses every stored result (0 executed); with --same-window it executes
    the 3 distinct queries again (gold 1, gold 2 = prediction 2, prediction 1) and says so."""
    args = _project(tmp_path, "SELECT 0")
    kwargs = {"gold": tmp_path / "gold.json", "db_root": tmp_path / "dbs", "store": tmp_path / "s.db", "workers": 1}
    assert jury.score(tmp_path / "run.jsonl", **kwargs).executed == 2  # SELECT 0 is gold 1's SQL too
    assert jury.score(tmp_path / "run.jsonl", **kwargs).executed == 0
    again = jury.score(tmp_path / "run.jsonl", same_window=True, **kwargs)
    assert again.executed == 2 and again.scores[0].outcomes["match"] == 2
    proc = run_jury([*args, "--same-window", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["settings"]["same_window"] is True


@pytest.mark.parametrize(
    "case",
    [
        Case(
            "negative-retries",
            ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--timeout-retries", "-1"],
            "timeout retries must be zero or more, got -1",
        )
    ],
    ids=lambda c: c.id,
)
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
