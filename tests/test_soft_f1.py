"""BIRD mini-dev's Soft-F1 (`jury score --soft-f1`): its script's definition, quirks included.

The fast tests derive every score by hand; the slow one runs mini-dev's own functions
(tests/support/minidev_f1.py, restated from its evaluation_f1.py) side by side with jury on
every shipped SQLite prediction file of mini-dev, on its 52 superhero questions, and asks for
the same score on every question."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import jury
from tests.support import minidev_f1
from tests.support.badinput import run_jury
from tests.support.helpers import SHARED_BIRD

MINI_DEV = SHARED_BIRD / "mini-dev"
SUPERHERO = SHARED_BIRD / "databases" / "superhero" / "superhero.sqlite"

# question: (gold SQL, candidate SQL, Soft-F1 worked out by hand from evaluation_f1.py)
CASES = {
    # mini-dev's README example: the script counts NULL as a value (tp 2, fp 1, fn 1 in units of
    # row width: P = R = 2/3); the README, leaving blanks out, says 0.8
    1: ("SELECT name, n FROM fruit ORDER BY id", "SELECT n, name FROM pred ORDER BY id", 2 / 3),
    2: ("SELECT name FROM fruit ORDER BY id", "SELECT name FROM fruit ORDER BY id DESC", 1 / 3),  # rows paired by position
    # duplicates dropped, the first kept: pred (Apple),(Apple),(Pear) is (Apple),(Pear): tp 1 (Apple-Apple), then
    # Pear vs Orange: fp 1, fn 1; Banana unmatched: fn 1 -> P 1/2, R 1/3
    3: ("SELECT name FROM fruit ORDER BY id", "SELECT 'Apple' UNION ALL SELECT 'Apple' UNION ALL SELECT 'Pear'", 0.4),
    4: ("SELECT name FROM fruit WHERE id > 9", "SELECT name FROM fruit WHERE id > 99", 1.0),  # both empty
    5: ("SELECT name FROM fruit ORDER BY id", "SELECT nope FROM fruit", 0.0),  # an error scores 0
    # a value counts each time it appears: pred (325, 325) against gold ('Apple', 325): tp 2/2, fp 0, fn 1/2
    6: ("SELECT name, n FROM fruit WHERE id = 1", "SELECT n, n FROM fruit WHERE id = 1", 0.8),
    7: ("SELECT n FROM fruit WHERE id = 1", "SELECT 325.0", 1.0),  # 325 == 325.0 in Python: found
}


def _project(tmp: Path) -> Path:
    db = tmp / "dbs" / "fruit" / "fruit.sqlite"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        CREATE TABLE fruit(id INTEGER PRIMARY KEY, name TEXT, n INT);
        INSERT INTO fruit VALUES (1, 'Apple', 325), (2, 'Orange', NULL), (3, 'Banana', 119);
        CREATE TABLE pred(id INTEGER PRIMARY KEY, n INT, name TEXT);
        INSERT INTO pred VALUES (1, 325, 'Apple'), (2, 191, 'Orange'), (3, NULL, 'Banana');
        """
    )
    conn.commit()
    conn.close()
    gold = [{"question_id": q, "db_id": "fruit", "SQL": g} for q, (g, _c, _f) in CASES.items()]
    (tmp / "gold.json").write_text(json.dumps(gold))
    runs = [{"model": "m", "question_id": q, "sql": c} for q, (_g, c, _f) in CASES.items()]
    (tmp / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\n')
    return tmp


def test_soft_f1_per_question_and_per_model_as_derived_by_hand(tmp_path):
    _project(tmp_path)
    res = run_jury(["score", "run.jsonl", "--soft-f1", "--per-question", "pq.jsonl", "-f", "json"], tmp_path)
    assert res.returncode == 0, res.stderr
    per_q = {
        json.loads(line)["question_id"]: json.loads(line)["soft_f1"] for line in (tmp_path / "pq.jsonl").read_text().splitlines()
    }
    assert per_q == pytest.approx({q: f for q, (_g, _c, f) in CASES.items()}, abs=1e-12)
    (m,) = json.loads(res.stdout)["models"]
    expected = sum(f for _g, _c, f in CASES.values()) / len(CASES)
    assert m["soft_f1"]["n"] == len(CASES) and m["soft_f1"]["value"] == pytest.approx(expected, abs=1e-12)
    table = run_jury(["score", "run.jsonl", "--soft-f1"], tmp_path).stdout
    assert "Soft-F1 (mini-dev)" in table and f"{expected:.3f}" in table
    csv = run_jury(["score", "run.jsonl", "--soft-f1", "-f", "csv"], tmp_path).stdout.splitlines()
    row = dict(zip(csv[0].split(","), csv[1].split(",")))
    assert float(row["soft_f1"]) == pytest.approx(expected) and row["soft_f1_n"] == str(len(CASES))
    # the library, and without the flag nothing changes
    lib = jury.score(
        tmp_path / "run.jsonl", soft_f1=True, project=jury.Project.load(tmp_path), store=tmp_path / ".jury" / "store.db"
    )
    assert lib.scores[0].soft_f1["value"] == pytest.approx(expected)
    plain = run_jury(["score", "run.jsonl", "-f", "json", "--per-question", "plain.jsonl"], tmp_path)
    assert json.loads(plain.stdout)["models"][0]["soft_f1"] is None
    assert "soft_f1" not in json.loads((tmp_path / "plain.jsonl").read_text().splitlines()[0])


def test_a_result_over_the_row_cap_has_no_soft_f1_rather_than_a_guess(tmp_path):
    _project(tmp_path)
    res = run_jury(["score", "run.jsonl", "--soft-f1", "--row-cap", "2", "-f", "json"], tmp_path)
    assert res.returncode == 0, res.stderr
    (m,) = json.loads(res.stdout)["models"]
    assert m["soft_f1"]["value"] is None and m["soft_f1"]["undecided"] >= 1
    assert "Soft-F1 left out" in res.stderr and "--row-cap" in res.stderr


def _superhero_gold(tmp: Path) -> list[dict]:
    rows = json.loads((MINI_DEV / "data" / "mini_dev_sqlite.json").read_text())
    kept = [r for r in rows if r["db_id"] == "superhero"]
    (tmp / "gold.json").write_text(json.dumps(kept))
    (tmp / "dbs" / "superhero").mkdir(parents=True)
    (tmp / "dbs" / "superhero" / "superhero.sqlite").symlink_to(SUPERHERO)
    return rows


SQLITE_FILES = sorted(p for p in MINI_DEV.glob("predictions/*/*.json") if "sqlite" in p.name.lower()) if MINI_DEV.is_dir() else []


@pytest.mark.slow
@pytest.mark.skipif(not SQLITE_FILES or not SUPERHERO.is_file(), reason="../shared mini-dev data not present")
def test_soft_f1_equals_mini_devs_script_on_every_superhero_question_of_every_sqlite_file(tmp_path):
    """13 prediction files x 52 superhero questions: jury's per-question Soft-F1 equals mini-dev's
    calculate_f1_score on the rows its execute_sql fetches, exactly (==, not approximately)."""
    rows = _superhero_gold(tmp_path)
    gold_sql = [line.strip().split("\t")[0] for line in (MINI_DEV / "data" / "mini_dev_sqlite_gold.sql").read_text().splitlines()]
    assert len(SQLITE_FILES) == 13
    args = ["score", *SQLITE_FILES, "--gold", "gold.json", "--db-root", "dbs"]
    args += [
        "--positions-from",
        MINI_DEV / "data" / "mini_dev_sqlite.json",
        "--soft-f1",
        "--per-question",
        "pq.jsonl",
        "-f",
        "json",
    ]
    res = run_jury(args, tmp_path)
    assert res.returncode == 0, res.stderr
    ours = {}
    for line in (tmp_path / "pq.jsonl").read_text().splitlines():
        r = json.loads(line)
        ours[(r["model"], r["question_id"])] = r["soft_f1"]
    checked = differ = 0
    positions = [i for i, r in enumerate(rows) if r["db_id"] == "superhero"]
    for path in SQLITE_FILES:
        preds = minidev_f1.predictions(path)
        for i in positions:
            theirs = minidev_f1.run_pair(preds[i], gold_sql[i], SUPERHERO)
            mine = ours[(path.stem, rows[i]["question_id"])]
            checked += 1
            differ += mine != theirs
            assert mine == theirs, (path.name, rows[i]["question_id"], mine, theirs)
    assert (checked, differ) == (13 * 52, 0)
    # the per-model column is the mean of the same numbers (every superhero question answered and routed)
    for m in json.loads(res.stdout)["models"]:
        scores = [ours[(m["model"], rows[i]["question_id"])] for i in positions]
        assert m["soft_f1"]["n"] == 52 and m["soft_f1"]["value"] == pytest.approx(sum(scores) / 52, abs=1e-12)
