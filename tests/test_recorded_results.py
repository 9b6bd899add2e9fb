"""Runs and gold items that carry results recorded elsewhere (engines jury cannot open)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jury.compare.outcomes import Settings, evaluate
from jury.errors import InputError
from jury.execution.store import Store
from jury.inputs.io import load_gold, load_runs
from jury.vocab import Outcome
from tests.support.clirun import run_jury_inprocess
from tests.support.helpers import make_db, write_gold, write_runs
from tests.support.jurytest import load, says, write_panel

# Gold items on a database that is not here: their results were recorded elsewhere.
REMOTE_GOLD = [
    {
        "question_id": 10,
        "db_id": "warehouse",
        "question": "Names of red items?",
        "SQL": "SELECT name FROM item WHERE colour = 'red'",
        "schema_text": "item(id INTEGER, name TEXT, colour TEXT)",
        "result": {"columns": ["name"], "rows": [["apple"], ["plum"]]},
    },
    {
        "question_id": 11,
        "db_id": "warehouse",
        "question": "How many items?",
        "SQL": "SELECT count(*) FROM item",
        "schema_text": "item(id INTEGER, name TEXT, colour TEXT)",
        "recorded": {"preview": "count(*)\n4\n(1 row)"},
    },
]


def _evaluate(tmp: Path, gold_items, runs, db_root=None):
    gold = load_gold(write_gold(tmp, gold_items))
    records = load_runs([write_runs(tmp, runs)], gold)
    with Store(tmp / "store.db") as st:
        return evaluate(gold, records, db_root, st, Settings(workers=1))


def test_structured_results_are_compared_exactly_without_a_database(tmp_path):
    runs = [
        # the same rows in another order: strict (no ORDER BY) and bird match
        {
            "model": "m",
            "question_id": 10,
            "sql": "SELECT name FROM item WHERE colour='red'",
            "result": {"columns": ["n"], "rows": [["plum"], ["apple"]]},
        },
        # one row of two: no match, overlap 0.5 -> near miss
        {"model": "k", "question_id": 10, "sql": "SELECT 'apple'", "result": {"columns": ["n"], "rows": [["apple"]]}},
        # the query failed on its engine
        {"model": "e", "question_id": 10, "sql": "SELECT nope", "result": {"error": "no such column: nope"}},
    ]
    ev = _evaluate(tmp_path, REMOTE_GOLD[:1], runs)
    by_model = {p.model: p for p in ev.pairs}
    assert by_model["m"].outcome == Outcome.MATCH and by_model["m"].comparator_matches["subset"] is True
    assert by_model["k"].outcome == Outcome.NEAR_MISS and by_model["k"].overlap == 0.5
    assert by_model["e"].outcome == Outcome.ERROR and by_model["e"].error == "no such column: nope"
    assert ev.databases == {} and ev.executed == 0
    assert ev.recorded_pairs == 3 and all(p.recorded for p in ev.pairs)


def test_a_recorded_outcome_is_the_strict_outcome_and_its_preview_reaches_the_jury(tmp_path, fake_llm):
    runs = [
        {"model": "m", "question_id": 11, "sql": "SELECT 4", "recorded": {"match": True, "preview": "4"}, "family": "fam-m"},
        {
            "model": "m",
            "question_id": 10,
            "sql": "SELECT 'fig'",
            "recorded": {"match": False, "preview": "name\nfig\n(1 row)"},
            "family": "fam-m",
        },
    ]
    ev = _evaluate(tmp_path, REMOTE_GOLD, runs)
    by_q = {p.question_id: p for p in ev.pairs}
    assert by_q[11].outcome == Outcome.MATCH and set(by_q[11].comparator_matches.values()) == {True}
    assert by_q[10].outcome == Outcome.MISMATCH and by_q[10].overlap is None

    # The failure goes to the jury with both recorded results as the shown results.
    seen = []

    def juror(request):
        seen.append(request)
        return says("format_equivalence")(request)

    fake_llm.script("j1", juror)
    write_panel(tmp_path, fake_llm.base_url, [("j1", "fam-a")], k=1)
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\n')
    done = run_jury_inprocess(["adjudicate", "run.jsonl", "--panel", "panel.toml", "-o", "adj.json"], tmp_path)
    assert done.returncode == 0, done.stderr
    text = seen[0]["messages"][1]["content"]
    assert "name\nfig\n(1 row)" in text and "(result as recorded by another evaluation)" in text
    assert "apple | plum" not in text and "apple" in text  # the gold's structured result, as a table
    assert "item(id INTEGER, name TEXT, colour TEXT)" in text  # the gold item's schema_text
    doc = load(tmp_path / "adj.json")
    assert [r["verdict"] for r in doc["records"]] == ["format_equivalence"]
    assert doc["records"][0]["answer_key"].startswith("recorded-")


def test_jury_score_says_how_many_pairs_used_recorded_results(tmp_path):
    make_db(tmp_path / "dbs")
    gold = [
        *REMOTE_GOLD,
        {"question_id": 1, "db_id": "shop", "question": "q", "SQL": "SELECT name FROM item WHERE colour = 'red'"},
    ]
    write_gold(tmp_path, gold)
    write_runs(
        tmp_path,
        [
            {"model": "m", "question_id": 11, "sql": "SELECT 4", "recorded": {"match": True, "preview": "4"}},
            {"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
        ],
    )
    done = run_jury_inprocess(["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--format", "json"], tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["recorded_pairs"] == 1 and out["models"][0]["outcomes"]["match"] == 2
    table = run_jury_inprocess(["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs"], tmp_path)
    assert "1 (model, question) pair scored on results recorded elsewhere" in table.stdout


def test_a_preview_cannot_be_compared_with_a_result(tmp_path):
    runs = [{"model": "m", "question_id": 11, "sql": "SELECT 4", "result": {"columns": ["c"], "rows": [[4]]}}]
    with pytest.raises(InputError, match="known only as recorded preview text"):
        _evaluate(tmp_path, REMOTE_GOLD, runs)


def test_an_unrecorded_answer_on_a_missing_database_is_a_clear_error(tmp_path):
    runs = [{"model": "m", "question_id": 10, "sql": "SELECT 1"}]
    with pytest.raises(InputError, match="warehouse"):
        _evaluate(tmp_path, REMOTE_GOLD, runs)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"recorded": {"preview": "x"}}, "needs `match`"),
        ({"recorded": {"match": True, "preview": "x"}, "result": {"rows": []}}, "not both"),
        ({"result": {"rows": [[1]], "colour": "x"}}, "colour"),
    ],
)
def test_bad_recordings_are_one_line_errors_naming_the_line(tmp_path, record, message):
    write_gold(tmp_path, REMOTE_GOLD)
    write_runs(tmp_path, [{"model": "m", "question_id": 10, "sql": "SELECT 1", **record}])
    done = run_jury_inprocess(["score", "run.jsonl", "--gold", "gold.json"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "run.jsonl:1:" in done.stderr and message in done.stderr


def test_recorded_results_change_the_answer_key(tmp_path):
    """A changed recording is a changed answer: verdicts bound to the old one are stale."""
    base = {"model": "m", "question_id": 10, "sql": "SELECT 1"}
    a = _evaluate(tmp_path, REMOTE_GOLD, [{**base, "recorded": {"match": False, "preview": "x"}}])
    b = _evaluate(tmp_path, REMOTE_GOLD, [{**base, "recorded": {"match": False, "preview": "y"}}])
    assert a.pairs[0].pred_key != b.pairs[0].pred_key
