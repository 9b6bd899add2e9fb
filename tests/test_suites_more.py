"""Test-suite runs, continued: turns reusing the task's question_id (load, metrics, format
ballots with loopback jurors), `jury score` refusing suite records, and the rule-based error
categories of `jury suites --taxonomy`."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.inputs.io import load_runs
from jury.verdicts.lock import load_locked
from tests.support.badinput import Case, check_case
from tests.support.fakellm import ballot_reply
from tests.support.helpers import write_runs
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def turn(n: int, tests: list[dict], *, qid="task-1", episode="e1", model="m") -> dict:
    return {"model": model, "question_id": qid, "episode": episode, "turn": n, "tests": tests}


# PLSQLBench's worked example, every turn under the task's own question_id
REUSED = [
    turn(1, [{"name": "t1", "passed": True}, {"name": "t2", "passed": True}]),
    turn(2, [{"name": "t1", "passed": True}, {"name": "t2", "passed": True}]),
    turn(3, [{"name": "t1", "passed": True}, {"name": "t2", "passed": False, "expected": "2024-01-05", "actual": "05-JAN-24"}]),
]


def test_turns_may_reuse_the_question_id_and_the_metrics_are_plsqlbenchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_runs(tmp_path, REUSED)
    assert len(load_runs([tmp_path / "run.jsonl"])) == 3
    res = runner.invoke(app, ["suites", "run.jsonl", "-f", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    by = {(r["tasks"], r["metric"]): r["strict_value"] for r in json.loads(res.output)["metrics"]}
    assert by[("episodes", "EpisodePass@1")] == 0
    assert by[("episodes", "TurnSuitePass@1")] == pytest.approx(2 / 3)
    assert by[("episodes", "MeanTestPass@1")] == pytest.approx(5 / 6)


def test_sql_records_still_refuse_a_repeated_question(tmp_path):
    write_runs(
        tmp_path, [{"model": "m", "question_id": 1, "sql": "SELECT 1"}, {"model": "m", "question_id": 1, "sql": "SELECT 2"}]
    )
    with pytest.raises(InputError, match=r"run.jsonl:2: duplicate answer of model 'm' to question 1 \(first at .*run.jsonl:1\)"):
        load_runs([tmp_path / "run.jsonl"])
    write_runs(tmp_path, [REUSED[0], REUSED[0]])
    with pytest.raises(
        InputError, match=r"run.jsonl:2: duplicate answer of model 'm' to question 'task-1' \(episode 'e1' turn 1\)"
    ):
        load_runs([tmp_path / "run.jsonl"])


def _dates_equivalent(request):
    outputs = set(re.findall(r"<output_\d>\n(.*?)\n</output_\d>", user_text(request), re.S))
    return ballot_reply("equivalent" if outputs == {"2024-01-05", "05-JAN-24"} else "different")


def test_format_ballots_of_turns_sharing_a_question_id_are_told_apart(tmp_path, monkeypatch, fake_llm):
    """Two turns of one task, each with a failing test `t2`: one a date format, one a wrong
    value. Their verdicts are two records (episode and turn recorded) and only the first is credited."""
    monkeypatch.chdir(tmp_path)
    runs = [
        turn(1, [{"name": "t2", "passed": False, "expected": "2024-01-05", "actual": "05-JAN-24"}], model="gpt-x"),
        turn(2, [{"name": "t2", "passed": False, "expected": "3", "actual": "4"}], model="gpt-x"),
    ]
    write_runs(tmp_path, runs)
    for name, _ in FOUR:
        fake_llm.script(name, _dates_equivalent)
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    res = runner.invoke(
        app, ["suites", "run.jsonl", "--adjudicate", "--panel", str(panel), "-f", "json", "-o", "m.json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    [path] = (tmp_path / "verdicts").glob("adjudication-*.json")
    doc = load_locked(path)
    assert {(r.episode, r.turn, r.test): r.verdict for r in doc.records} == {
        ("e1", 1, "t2"): "format_equivalence",
        ("e1", 2, "t2"): "genuine_error",
    }
    by = {(r["tasks"], r["metric"]): r for r in json.loads((tmp_path / "m.json").read_text())["metrics"]}
    assert by[("episodes", "TurnSuitePass@1")]["strict_value"] == 0
    assert by[("episodes", "TurnSuitePass@1")]["adjudicated_value"] == 0.5
    again = runner.invoke(app, ["suites", "run.jsonl", "--verdicts", str(path), "-f", "json"], catch_exceptions=False)
    by = {(r["tasks"], r["metric"]): r for r in json.loads(again.output)["metrics"]}
    assert by[("episodes", "TurnSuitePass@1")]["adjudicated_value"] == 0.5
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0


ERRORS = [
    {
        "model": "m",
        "question_id": 1,
        "tests": [
            {"name": "a", "passed": False, "error": "ORA-00942: table or view does not exist"},
            {"name": "b", "passed": False, "error": "PLS-00103: Encountered the symbol"},
            {"name": "c", "passed": False, "error": "ORA-20001: custom failure"},
            {"name": "d", "passed": False, "expected": "1", "actual": "2"},  # no error: not counted
            {"name": "e", "passed": True},
        ],
    },
    {"model": "m", "question_id": 2, "reference_error": True, "tests": [{"name": "a", "passed": False, "error": "ORA-00942"}]},
    {"model": "n", "question_id": 1, "tests": [{"name": "a", "passed": False, "error": "ORA-01476: divisor is equal to zero"}]},
]


def test_suites_taxonomy_counts_errors_by_rule(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_runs(tmp_path, ERRORS)
    res = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "-f", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    cats = json.loads(res.output)["error_categories"]
    assert cats["source"] == "rules" and cats["taxonomy"] == "plsqlbench"
    assert cats["models"] == {
        "m": {"logic": 0, "artifact": 1, "grounding": 1, "unclassified": 1},  # the reference failure left out
        "n": {"logic": 1, "artifact": 0, "grounding": 0, "unclassified": 0},
    }
    text = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "-f", "md"]).output
    assert "from the taxonomy's rules" in text and "m: logic 0, artifact 1, grounding 1, unclassified 1" in text
    assert "error_categories" not in runner.invoke(app, ["suites", "run.jsonl", "-f", "json"]).output


SUITE_LINE = {"model": "m", "question_id": 1, "tests": [{"name": "a", "passed": True}]}
BAD = [
    Case(
        "score-refuses-suite-records",
        ["score", "suite.jsonl"],
        "suite.jsonl:1: model 'm' question 1 carries `tests` (a test-suite record, nothing to execute against the gold): use `jury suites suite.jsonl`",
        lambda t: write_runs(t, [SUITE_LINE], name="suite.jsonl"),
    ),
    Case(
        "report-refuses-suite-records",
        ["report", "suite.jsonl"],
        "use `jury suites suite.jsonl`",
        lambda t: write_runs(t, [SUITE_LINE], name="suite.jsonl"),
    ),
    Case(
        "unknown-taxonomy",
        ["suites", "suite.jsonl", "--taxonomy", "nope"],
        "taxonomy file not found",
        lambda t: write_runs(t, [SUITE_LINE], name="suite.jsonl"),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_input(case: Case, tmp_path) -> None:
    check_case(case, tmp_path)
