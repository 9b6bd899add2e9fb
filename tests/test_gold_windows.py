"""`jury check-gold --windows N --window-gap SECONDS`: Spider 2.0-AIFunc's final stability check,
the last pass repeated in separate time windows, each window's passes recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import jury
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import make_db, write_gold

GOLD = [
    {"question_id": 1, "db_id": "shop", "SQL": "SELECT count(*) FROM item"},
    {"question_id": 2, "db_id": "shop", "SQL": "SELECT name FROM item WHERE id = 1"},
]


def _project(tmp_path: Path) -> Path:
    db = make_db(tmp_path / "dbs")
    write_gold(tmp_path, GOLD)
    return db


def test_a_result_that_drifts_between_windows_is_flagged_with_each_windows_passes(tmp_path: Path, monkeypatch) -> None:
    """The pause between windows is replaced by one that adds a row to the table (what a model
    inside the query does to its result over hours, made certain): the count is 4 in window 1
    (3 of 3 executions of the last pass agree), 5 in window 2 and 6 in window 3 (0 of 3 agree
    with window 1's first result); question 2's row is untouched (3 of 3 in every window)."""
    db = _project(tmp_path)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO item(name, price, colour) VALUES ('kiwi', 1.0, 'green')")

    monkeypatch.setattr("jury.compare.gold_windows.sleep", pause)
    monkeypatch.chdir(tmp_path)
    found = jury.check_gold("gold.json", db_root="dbs", passes="2,3", windows=3, window_gap=600, store="s.db")
    assert pauses == [600, 600]
    by_id = {r.question_id: r for r in found.results}
    assert [(w["window"], w["executions"], w["agree"], w["failed"]) for w in by_id[1].windows] == [
        (1, 3, 3, 0),
        (2, 3, 0, 0),
        (3, 3, 0, 0),
    ]
    assert [w["agree"] for w in by_id[2].windows] == [3, 3, 3]
    assert [f.name for f in by_id[1].checks] == ["row_order"] and not by_id[2].checks
    assert "window 2 execution 1 gave [(5,)]" in by_id[1].checks[0].evidence
    assert found.counts["row_order"] == 1
    report = json.loads(found.render("json"))
    assert report["settings"]["windows"] == 3 and report["settings"]["window_gap_s"] == 600
    assert [w["agree"] for w in report["items"][0]["windows"]] == [3, 0, 0]
    text = found.render("table")
    assert "1 of 2 golds gave their first result in every execution of every window" in text
    assert "window 1 6/6, window 2 3/6, window 3 3/6" in text


def test_cli_records_every_window(tmp_path: Path) -> None:
    """Through the command: 2 windows, no pause; each item has both windows' records (a stable
    database: every execution agrees); without --windows there is no window record."""
    _project(tmp_path)
    args = ["check-gold", "gold.json", "--db-root", "dbs", "--store", "s.db", "--passes", "1,2"]
    proc = run_jury([*args, "--windows", "2", "--window-gap", "0", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    items = json.loads(proc.stdout)["items"]
    assert [[(w["window"], w["executions"], w["agree"]) for w in i["windows"]] for i in items] == [[(1, 2, 2), (2, 2, 2)]] * 2
    plain = json.loads(run_jury([*args, "-f", "json"], tmp_path).stdout)
    assert "windows" not in plain["items"][0] and "windows" not in plain["settings"]


@pytest.mark.parametrize(
    "case",
    [
        Case("windows-without-gap", ["check-gold", "gold.json", "--db-root", "dbs", "--windows", "3"], "needs --window-gap"),
        Case(
            "negative-gap",
            ["check-gold", "gold.json", "--db-root", "dbs", "--windows", "2", "--window-gap", "-1"],
            "window gap must be zero or more",
        ),
    ],
    ids=lambda c: c.id,
)
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
