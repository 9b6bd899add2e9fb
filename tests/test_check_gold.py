"""`jury check-gold`: deterministic gold checks pinned by hand-built databases."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from jury.compare.gold_checks import check_gold_item, parse_passes, shape_findings
from jury.compare.gold_probes import bare_column_probes, limit_probe
from jury.execution.sqlite import execute
from jury.inputs.records import ExecResult, GoldItem
from tests.support.badinput import Case, check_case, run_jury
from tests.support.helpers import write_gold


def _db(root: Path) -> Path:
    """t: two rows tie on score 9 at the top; g groups hold several names."""
    path = root / "league" / "league.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score INT, team TEXT);
        INSERT INTO t VALUES (1,'ann',9,'red'),(2,'bob',9,'red'),(3,'cy',5,'blue'),(4,'dee',3,'blue'),
                             (5,'eve',3,'green'),(6,'fay',1,'green');
        CREATE TABLE e(x INT);
        """
    )
    conn.commit()
    conn.close()
    return path


def _item(sql: str, qid: int = 1) -> GoldItem:
    return GoldItem(question_id=qid, db_id="league", sql=sql)


def _names(result) -> list[str]:
    return [f.name for f in result.checks]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return _db(tmp_path / "dbs")


def test_limit_one_over_a_tie_is_flagged_with_both_rows(db: Path) -> None:
    # ann and bob both score 9: LIMIT 1 picks one of them.
    r = check_gold_item(_item("SELECT name FROM t ORDER BY score DESC LIMIT 1"), db, passes=(2,))
    assert _names(r) == ["limit_tie"]
    ev = r.checks[0].evidence
    assert "2 rows tie" in ev and "(9,)" in ev and "'ann'" in ev and "'bob'" in ev and "LIMIT 1" in ev


def test_tie_at_an_offset_and_in_an_expression_key(db: Path) -> None:
    # ranks by -score: ann/bob tie at 1-2, dee/eve tie at 4-5; LIMIT 1 OFFSET 3 keeps dee, cuts eve
    r = check_gold_item(_item("SELECT name FROM t ORDER BY -score, id > 100 LIMIT 1 OFFSET 3"), db, passes=(1,))
    assert _names(r) == ["limit_tie"]
    assert "(-3, 0)" in r.checks[0].evidence
    # LIMIT 2 takes both tied rows: nothing is cut among equal keys
    assert _names(check_gold_item(_item("SELECT name FROM t ORDER BY score DESC LIMIT 2"), db, passes=(1,))) == []


def test_tied_rows_that_return_the_same_values_are_not_flagged(db: Path) -> None:
    # ann and bob tie, but the query returns their team: both 'red'
    r = check_gold_item(_item("SELECT team FROM t ORDER BY score DESC LIMIT 1"), db, passes=(1,))
    assert _names(r) == []


def test_a_deterministic_gold_is_not_flagged(db: Path) -> None:
    r = check_gold_item(_item("SELECT name, score FROM t WHERE score > 2 ORDER BY score DESC, name LIMIT 3"), db, passes=(3, 3))
    assert r.checks == [] and r.executions == 7  # 6 in passes + 1 reversed


def test_group_by_with_a_bare_column_is_flagged(db: Path) -> None:
    r = check_gold_item(_item("SELECT team, name FROM t GROUP BY team"), db, passes=(1,))
    assert _names(r) == ["bare_column"]
    assert "name has 2 values" in r.checks[0].evidence
    # MAX() makes SQLite take the bare column from the max row: defined, not flagged
    assert _names(check_gold_item(_item("SELECT team, name, MAX(score) FROM t GROUP BY team"), db, passes=(1,))) == []


def test_limit_without_order_changes_under_reversed_scans(db: Path) -> None:
    r = check_gold_item(_item("SELECT name FROM t WHERE score = 9 LIMIT 1"), db, passes=(2,))
    assert _names(r) == ["row_order"]
    assert "reverse_unordered_selects" in r.checks[0].evidence and "'ann'" in r.checks[0].evidence


def test_unordered_rows_are_not_row_order_when_order_does_not_matter(db: Path) -> None:
    # a full table scan comes back reversed, but strict ignores order for a gold without ORDER BY
    assert _names(check_gold_item(_item("SELECT name FROM t"), db, passes=(1,))) == []
    # ... and counts it when the item says its order matters
    item = GoldItem(question_id=1, db_id="league", sql="SELECT name FROM t", order_matters=True)
    assert _names(check_gold_item(item, db, passes=(1,))) == ["row_order"]


def test_result_shapes_and_failures(db: Path) -> None:
    assert _names(check_gold_item(_item("SELECT x FROM e"), db, passes=(1,))) == ["empty_result"]
    assert _names(check_gold_item(_item("SELECT MAX(x) FROM e"), db, passes=(1,))) == ["null_value"]
    assert _names(check_gold_item(_item("SELECT NULL, NULL FROM t WHERE id < 3"), db, passes=(1,))) == ["all_null"]
    failed = check_gold_item(_item("SELECT nope FROM t"), db, passes=(5, 10))
    assert _names(failed) == ["gold_fails"] and failed.executions == 1 and "no such column" in failed.checks[0].evidence
    slow = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT MAX(i) FROM c"
    timed = check_gold_item(_item(slow), db, passes=(5,), timeout_s=0.2)
    assert _names(timed) == ["gold_timeout"] and timed.executions == 1


def test_shape_of_a_truncated_result_is_not_guessed() -> None:
    res = ExecResult(status="ok", columns=["a"], rows=[(None,)], row_count=5, truncated=True)
    assert shape_findings(res) == []


def test_reverse_pragma_never_writes_and_is_not_allowed_to_queries(db: Path) -> None:
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    res = execute(db, "SELECT name FROM t", reverse_unordered=True)
    assert res.ok and res.rows[0] == ("fay",)
    # the query itself still cannot set a pragma, with or without the flag
    for flag in (False, True):
        denied = execute(db, "PRAGMA reverse_unordered_selects = ON", reverse_unordered=flag)
        assert denied.status == "error" and "not authorized" in (denied.error or "")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_probes() -> None:
    p = limit_probe("SELECT name AS n, COUNT(*) AS c FROM t GROUP BY name ORDER BY c DESC LIMIT 2, 1", 2)
    assert p is not None and (p.limit, p.offset, p.key_columns) == (1, 2, (1,))
    assert limit_probe("SELECT DISTINCT name FROM t ORDER BY score LIMIT 1", 1) is None
    assert [b.bare for b in bare_column_probes("SELECT a.team, a.name FROM t AS a GROUP BY a.team")] == [("a.name",)]
    assert bare_column_probes("SELECT team, COUNT(*) FROM t GROUP BY team") == []
    assert parse_passes("5,10,10,10") == (5, 10, 10, 10)


def test_cli_counts_and_formats(tmp_path: Path) -> None:
    _db(tmp_path / "dbs")
    items = [
        {"question_id": 1, "db_id": "league", "SQL": "SELECT name FROM t ORDER BY score DESC LIMIT 1"},
        {"question_id": 2, "db_id": "league", "SQL": "SELECT COUNT(*) FROM t"},
        {"question_id": 3, "db_id": "league", "SQL": "SELECT team, name FROM t GROUP BY team"},
    ]
    write_gold(tmp_path, items)
    proc = run_jury(["check-gold", "gold.json", "--db-root", "dbs", "--passes", "2,2", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["gold_queries"] == 3 and doc["flagged"] == 2
    assert doc["counts"]["limit_tie"] == 1 and doc["counts"]["bare_column"] == 1 and doc["counts"]["row_order"] == 0
    assert [i["executions"] for i in doc["items"]] == [5, 5, 5]
    csv = run_jury(["check-gold", "gold.json", "--db-root", "dbs", "--passes", "1", "-f", "csv", "--question", "1"], tmp_path)
    assert csv.stdout.splitlines()[0] == "question_id,db_id,check,evidence" and len(csv.stdout.splitlines()) == 2


BAD = [
    Case("passes-not-numbers", ["check-gold", "--passes", "5,x"], "passes must be comma-separated positive integers"),
    Case("passes-zero", ["check-gold", "--passes", "0"], "passes must be comma-separated positive integers"),
    Case("unknown-question", ["check-gold", "--question", "99"], "no question 99"),
    Case("unknown-comparator", ["check-gold", "--comparator", "fuzzy"], "fuzzy"),
    Case("no-db-matches", ["check-gold", "--db", "nowhere"], "no questions to check"),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
