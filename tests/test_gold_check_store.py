"""Gold checks in parallel (check_gold workers=) and stored for reuse (jury.compare.gold_check_store)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import jury.compare.gold_check_store as gold_check_store
from jury.cli import app
from jury.compare.gold_check_store import CheckSettings, encode_check, stored_gold_checks
from jury.compare.gold_checks import check_gold
from jury.execution.store import Store
from jury.inputs.io import load_gold
from tests.support.helpers import make_db, write_gold

runner = CliRunner()

# the shop database (tests.support.helpers.make_db): apple 1.5 red, pear 2.0 green, plum 0.5 red, fig 3.25 NULL
SHOP_GOLD = [
    ("SELECT name FROM item WHERE colour = 'red'", []),  # apple, plum: the same set every time
    ("SELECT name FROM item WHERE colour = 'blue'", ["empty_result"]),
    ("SELECT colour FROM item WHERE id = 4", ["null_value"]),  # fig's colour is NULL
    ("SELECT nope FROM item", ["gold_fails"]),
    ("SELECT colour, name FROM item GROUP BY colour", ["bare_column"]),  # red: apple and plum
    ("SELECT name FROM item WHERE colour IS NOT NULL ORDER BY colour DESC LIMIT 1", ["limit_tie"]),  # red ties
    ("SELECT count(*) FROM item", []),
]
PASSES = (1, 2)


def _items(tmp_path: Path):
    make_db(tmp_path / "dbs")
    gold = [{"question_id": n, "db_id": "shop", "question": f"q{n}", "SQL": sql} for n, (sql, _) in enumerate(SHOP_GOLD, 1)]
    return list(load_gold(write_gold(tmp_path, gold)).values())


def _databases(store: Store, root: Path) -> dict:
    path = root / "shop" / "shop.sqlite"
    return {"shop": (path, store.file_sha256(path))}


def _findings(results) -> list[tuple]:
    return [(r.question_id, [f.name for f in r.checks], r.executions) for r in results]


def _comparable(result) -> dict:
    data = json.loads(encode_check(result))
    if data["reference"] is not None:
        data["reference"]["elapsed_s"] = None  # the one value that differs between two runs
    return data


def test_parallel_checks_equal_serial_ones_in_order(tmp_path):
    items = _items(tmp_path)
    with Store(tmp_path / "store.db") as store:
        databases = _databases(store, tmp_path / "dbs")
    serial = check_gold(items, databases, passes=PASSES, workers=1)
    parallel = check_gold(items, databases, passes=PASSES, workers=2)
    # by hand: each success runs 1 + 2 passes and the reversed run (4 executions); the failure stops at its first
    expected = [(n, names, 1 if names == ["gold_fails"] else 4) for n, (_, names) in enumerate(SHOP_GOLD, 1)]
    assert _findings(serial) == expected
    assert _findings(parallel) == expected
    assert [_comparable(r) for r in parallel] == [_comparable(r) for r in serial]
    assert [r.model_dump() for r in parallel] == [r.model_dump() for r in serial]


def test_check_gold_cli_workers_gives_the_same_report(tmp_path, monkeypatch):
    _items(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = {}
    for n in (1, 2):
        res = runner.invoke(
            app, ["check-gold", "gold.json", "--db-root", "dbs", "--passes", "1,2", "--workers", str(n), "-f", "json"]
        )
        assert res.exit_code == 0, res.output
        out[n] = json.loads(res.output)
    assert out[1] == out[2]
    assert [i["question_id"] for i in out[2]["items"]] == list(range(1, len(SHOP_GOLD) + 1))
    res = runner.invoke(app, ["check-gold", "gold.json", "--db-root", "dbs", "--workers", "0"])
    assert res.exit_code == 1 and "workers must be at least 1, got 0" in res.output


def _run(store, items, databases, passes=PASSES):
    return stored_gold_checks(
        store, items, databases, CheckSettings(passes=tuple(passes), comparator="strict", timeout_s=30.0, row_cap=1000)
    )


def test_a_second_run_reuses_every_check_and_a_change_reruns_them(tmp_path):
    items = _items(tmp_path)
    with Store(tmp_path / "store.db") as store:
        databases = _databases(store, tmp_path / "dbs")
        first = _run(store, items, databases)
        assert (first.checked, first.reused, first.executions) == (7, 0, 6 * 4 + 1)
        second = _run(store, items, databases)
        assert (second.checked, second.reused, second.refused, second.executions) == (0, 7, 0, 0)
        assert [_comparable(r) for r in second.results] == [_comparable(r) for r in first.results]
        # other passes: every check runs again (and the first passes' rows stay reusable)
        other = _run(store, items, databases, passes=(1, 3))
        assert (other.checked, other.reused) == (7, 0) and other.results[0].executions == 5
        assert _run(store, items, databases).reused == 7
        # a changed copy of the database: a new fingerprint, every check runs again and sees the change
        copy = tmp_path / "copy" / "shop" / "shop.sqlite"
        copy.parent.mkdir(parents=True)
        shutil.copy(databases["shop"][0], copy)
        with sqlite3.connect(copy) as conn:
            conn.execute("UPDATE item SET colour = 'blue' WHERE colour = 'red'")
        conn.close()
        changed = _run(store, items, {"shop": (copy, store.file_sha256(copy))})
        assert (changed.checked, changed.reused) == (7, 0)
        assert [f.name for f in changed.results[0].checks] == ["empty_result"]  # q1 finds no red item now
        assert [f.name for f in changed.results[1].checks] == []  # and q2 finds the blue ones
        # an edited gold SQL is another key: that item alone runs again
        edited = [i.model_copy(update={"sql": i.sql + " "}) if i.question_id == 3 else i for i in items]
        again = _run(store, edited, databases)
        assert (again.checked, again.reused) == (1, 6)


def _tamper(store: Store, question_id: int, sql: str, *args) -> None:
    store.conn.execute(f"UPDATE gold_checks SET {sql} WHERE question_id = ?", [*args, json.dumps(question_id)])


def test_a_tampered_stored_check_is_not_trusted(tmp_path):
    items = _items(tmp_path)
    with Store(tmp_path / "store.db") as store:
        databases = _databases(store, tmp_path / "dbs")
        first = _run(store, items, databases)
        # q4's gold_fails finding removed from its stored result (the digest no longer matches)
        _tamper(store, 4, "result = replace(result, '\"gold_fails\"', '\"empty_result\"')")
        # q1's row given q2's result with a digest recomputed for it (another question's result)
        row = store.conn.execute("SELECT key, result FROM gold_checks WHERE question_id = '2'").fetchone()
        key1 = store.conn.execute("SELECT key FROM gold_checks WHERE question_id = '1'").fetchone()[0]
        forged = gold_check_store._digest(key1, row[1])
        _tamper(store, 1, "result = ?, digest = ?", row[1], forged)
        # q3's stored inputs edited (they no longer hash to the key)
        _tamper(store, 3, "inputs = replace(inputs, 'shop', 'shoq')")
        again = _run(store, items, databases)
        assert (again.refused, again.checked, again.reused) == (3, 3, 4)
        assert _findings(again.results) == _findings(first.results)
        # the refused rows were replaced: a third run trusts every row
        assert _run(store, items, databases).reused == 7


def test_a_stored_check_from_other_check_code_runs_again(tmp_path, monkeypatch):
    items = _items(tmp_path)
    with Store(tmp_path / "store.db") as store:
        databases = _databases(store, tmp_path / "dbs")
        _run(store, items, databases)
        monkeypatch.setattr(gold_check_store, "check_code_version", lambda: "another version of the checks")
        assert _run(store, items, databases).checked == 7


@pytest.fixture
def counted(monkeypatch):
    """The items each run of the gold checks executes (audit-gold, reaudit), one list per run."""
    seen: list[list] = []
    real = gold_check_store.check_gold

    def counting(items, *args, **kwargs):
        seen.append([i.question_id for i in items])
        return real(items, *args, **kwargs)

    monkeypatch.setattr(gold_check_store, "check_gold", counting)
    return seen


@pytest.mark.slow
def test_audit_and_reaudit_reuse_the_stored_checks(project, fake_llm, counted):
    from tests.support.fakellm import json_reply
    from tests.support.jurytest import write_panel

    three = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]
    for j, _ in three:
        fake_llm.script(j, lambda _r: json_reply({"reasoning": "scripted", "verdict": "valid", "defect_type": None}))
    panel = str(write_panel(project, fake_llm.base_url, three, style="audit", k=3, name="audit.toml"))
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", panel], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert counted == [[1, 2, 3, 4]]
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", panel], catch_exceptions=False)
    assert res.exit_code == 0 and "up to date" in " ".join(res.output.split()), res.output
    assert counted[-1] == []  # the second audit executed no gold check
    # a changed juror: the reaudit re-runs the audit and executes no gold check
    Path(panel).write_text(Path(panel).read_text() + "\n# edited\n")
    res = runner.invoke(app, ["reaudit"], catch_exceptions=False)
    assert res.exit_code == 0 and "re-ran" in res.output, res.output
    assert counted[-1] == []
    # a changed database: the checks run again
    with sqlite3.connect(project / "dbs" / "shop" / "shop.sqlite") as conn:
        conn.execute("UPDATE item SET colour = 'blue' WHERE colour = 'red'")
    conn.close()
    res = runner.invoke(app, ["reaudit"], catch_exceptions=False)
    assert res.exit_code == 0 and "re-ran" in res.output, res.output
    assert counted[-1] == [1, 2, 3, 4]
    newest = max((project / "verdicts").glob("audit-*.json"), key=lambda p: p.stat().st_mtime_ns)
    assert [c["name"] for c in json.loads(newest.read_text())["records"][0]["checks"]] == ["empty_result"]


def test_a_merged_store_brings_its_gold_checks_only_when_trusted(tmp_path):
    from jury.execution.merge import merge_stores
    from jury.judging.vote_check import VoteCheck

    items = _items(tmp_path)
    with Store(tmp_path / "elsewhere.db") as store:
        _run(store, items, _databases(store, tmp_path / "dbs"))
    report = merge_stores([tmp_path / "elsewhere.db"], tmp_path / "untrusted.db", votes=VoteCheck())
    assert report.untrusted["gold_checks"] == 7
    with Store(tmp_path / "untrusted.db") as store:
        assert _run(store, items, _databases(store, tmp_path / "dbs")).checked == 7
    report = merge_stores([tmp_path / "elsewhere.db"], tmp_path / "trusted.db", votes=VoteCheck(), trust_executions=True)
    assert report.added["gold_checks"] == 7
    with Store(tmp_path / "trusted.db") as store:
        assert _run(store, items, _databases(store, tmp_path / "dbs")).reused == 7
