"""`jury suites --taxonomy NAME --classify`: errors of test-suite runs that the taxonomy's rules
leave unclassified go to family-disjoint loopback jurors for one category each; the majority
is locked in a verdict file that `jury verify` re-checks and `--verdicts` reads back."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.inputs.records import RunRecord
from jury.judging.ballots import make_parser, reply_schema
from jury.judging.suite_classify import classify_candidates
from jury.judging.taxonomies import load_taxonomy
from jury.verdicts.lock import content_hash, load_locked
from jury.vocab import CLASSIFY_STYLE, NONE_FITS
from tests.support.badinput import Case, check_case
from tests.support.fakellm import ballot_reply
from tests.support.helpers import write_runs
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
RULED = "ORA-00942: table or view does not exist"  # the plsqlbench rules: grounding
UNRULED = "ORA-20001: balance went negative after the transfer"  # no rule matches: to the jurors
SPLIT = "ORA-06550: line 1, column 7: statement ignored"  # no rule: the jurors split

RUNS = [
    {
        "model": "gpt-x",
        "question_id": 1,
        "meta": {"question": "Write a procedure that transfers money between accounts."},
        "tests": [
            {"name": "a", "passed": False, "error": RULED},
            {"name": "b", "passed": False, "expected": "balance 10", "error": UNRULED},
            {"name": "c", "passed": False, "error": SPLIT},
            {"name": "d", "passed": False, "expected": "1", "actual": "2"},  # no error: not classified
            {"name": "e", "passed": True},
        ],
    },
    # a reference failure: never classified, never sent
    {"model": "gpt-x", "question_id": 2, "reference_error": True, "tests": [{"name": "a", "passed": False, "error": UNRULED}]},
]

# Which category each juror picks for the error it is shown (none_fits, and a split on SPLIT).
PICKS = {
    "ja": {UNRULED: "logic", SPLIT: "logic"},
    "jb": {UNRULED: "logic", SPLIT: "artifact"},
    "jc": {UNRULED: "logic", SPLIT: "grounding"},
    "jd": {UNRULED: "artifact", SPLIT: NONE_FITS},
}


def picker(name: str):
    def respond(request):
        error = re.search(r"<error>\n(.*?)\n</error>", user_text(request), re.S).group(1)
        return ballot_reply(PICKS[name][error], reasoning=f"scripted: {name}")

    return respond


@pytest.fixture
def project(tmp_path, monkeypatch, fake_llm):
    monkeypatch.chdir(tmp_path)
    write_runs(tmp_path, RUNS)
    for name, _ in FOUR:
        fake_llm.script(name, picker(name))
    write_panel(tmp_path, fake_llm.base_url, FOUR)
    return tmp_path


def classify(*extra: str):
    args = ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "--classify", "--panel", "panel.toml", *extra]
    return runner.invoke(app, args, catch_exceptions=False)


def test_only_the_errors_the_rules_leave_reach_the_jurors(project, fake_llm):
    res = classify("-f", "json", "-o", "m.json")
    assert res.exit_code == 0, res.output
    shown = [user_text(r) for r in fake_llm.requests]
    assert len(shown) == 6  # two tests x three jurors outside gpt-x's family (openai)
    assert fake_llm.calls("ja") == 0
    assert not any(RULED in t for t in shown)  # the rules classified it: no juror saw it
    assert sum(UNRULED in t for t in shown) == 3 and sum(SPLIT in t for t in shown) == 3
    ballot = next(t for t in shown if UNRULED in t)
    assert "transfers money between accounts" in ballot and "<test>\nb\n</test>" in ballot
    assert "<expected>\nbalance 10\n</expected>" in ballot
    assert all(f'"{i}"' in ballot for i in ("logic", "artifact", "grounding", NONE_FITS))
    schema = fake_llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdict"]["enum"] == ["logic", "artifact", "grounding", NONE_FITS]


def test_the_majority_is_locked_and_counted_by_source(project, fake_llm):
    res = classify("-f", "json", "-o", "m.json")
    assert res.exit_code == 0, res.output
    [path] = (project / "verdicts").glob("adjudication-*.json")
    doc = load_locked(path)
    assert doc.panel.ballot_style == CLASSIFY_STYLE and doc.settings["taxonomy"]["name"] == "plsqlbench"
    by = {r.test: r for r in doc.records}
    assert set(by) == {"b", "c"}
    assert by["b"].error_category == "logic" and by["b"].verdict == "genuine_error" and not by["b"].credited
    assert by["c"].error_category is None  # artifact, grounding, none_fits: no majority
    assert [v.error_category for v in by["c"].votes] == ["artifact", "grounding", None]
    assert [v.raw_verdict for v in by["c"].votes][-1] == NONE_FITS
    cats = json.loads((project / "m.json").read_text())["error_categories"]
    assert cats["source"] == "rules and jurors"
    assert cats["models"]["gpt-x"] == {"logic": 1, "artifact": 0, "grounding": 1, "no majority": 1, "unclassified": 0}
    assert cats["by_source"]["gpt-x"] == {
        "rules": {"logic": 0, "artifact": 0, "grounding": 1},
        "jurors": {"logic": 1, "artifact": 0, "grounding": 0, "no majority": 1},
    }
    # read back from the locked file, no jurors: the same counts; rules alone leave two unclassified
    again = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "--verdicts", str(path), "-f", "json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["error_categories"] == cats
    assert "adjudicated_value" not in again.output  # a classification file credits nothing
    md = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "--verdicts", str(path), "-f", "md"]).output
    assert "gpt-x: logic 1 (jurors 1), artifact 0, grounding 1 (rules 1), no majority 1 (jurors 1), unclassified 0" in md
    rules_only = runner.invoke(app, ["suites", "run.jsonl", "--taxonomy", "plsqlbench", "-f", "json"]).output
    assert json.loads(rules_only)["error_categories"]["models"]["gpt-x"]["unclassified"] == 2


def test_rerun_makes_no_calls_and_verify_passes(project, fake_llm):
    assert classify().exit_code == 0
    calls = len(fake_llm.requests)
    [path] = (project / "verdicts").glob("adjudication-*.json")
    before = path.read_bytes()
    res = classify()
    assert res.exit_code == 0, res.output
    assert len(fake_llm.requests) == calls and "up to date" in res.output
    assert list((project / "verdicts").glob("adjudication-*.json")) == [path] and path.read_bytes() == before
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0


def test_early_stop_skips_once_a_category_is_settled_and_verify_agrees(project, fake_llm):
    res = classify("--early-stop")
    assert res.exit_code == 0, res.output
    assert len(fake_llm.requests) == 5  # b: jb and jc both pick logic, jd is not asked; c: all three
    [path] = (project / "verdicts").glob("adjudication-*.json")
    by = {r.test: r for r in load_locked(path).records}
    assert [v.skipped for v in by["b"].votes] == [False, False, True] and by["b"].error_category == "logic"
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0


def test_plan_makes_no_calls(project, fake_llm):
    res = classify("--plan")
    assert res.exit_code == 0, res.output
    assert "6 ballots for 2 errors the rules leave" in " ".join(res.output.split())
    assert fake_llm.requests == [] and not (project / "verdicts").exists()


def _tampered(project, change) -> str:
    assert classify().exit_code == 0
    [path] = (project / "verdicts").glob("adjudication-*.json")
    data = json.loads(path.read_text())
    change(data)
    data["content_sha256"] = content_hash(data)  # re-locked: only the rules can catch it
    bad = project / "bad.json"
    bad.write_text(json.dumps(data))
    res = runner.invoke(app, ["verify", str(bad)])
    assert res.exit_code == 1
    return res.output


def test_verify_catches_a_tampered_category(project, fake_llm):
    def change(data):
        record = next(r for r in data["records"] if r["test"] == "b")
        record["error_category"] = "grounding"

    assert "error_category 'grounding' does not follow from its votes (the majority pick is 'logic')" in _tampered(
        project, change
    )


def test_verify_catches_a_pick_that_is_not_the_jurors_answer(project, fake_llm):
    def change(data):
        record = next(r for r in data["records"] if r["test"] == "c")
        record["votes"][0]["error_category"] = "grounding"  # the juror answered artifact

    assert "does not follow from its answer 'artifact'" in _tampered(project, change)


def test_verify_catches_a_skip_before_a_category_was_settled(project, fake_llm):
    assert classify("--early-stop").exit_code == 0
    [path] = (project / "verdicts").glob("adjudication-*.json")
    data = json.loads(path.read_text())
    record = next(r for r in data["records"] if r["test"] == "c")  # artifact, grounding, none_fits: nothing settled
    vote = record["votes"][2]
    vote.update({"skipped": True, "category": None, "raw_verdict": None, "reasoning": None})
    data["content_sha256"] = content_hash(data)
    bad = project / "bad.json"
    bad.write_text(json.dumps(data))
    res = runner.invoke(app, ["verify", str(bad)])
    assert res.exit_code == 1 and "no strict majority of the panel picked one category" in res.output


def test_the_parser_and_schema_keep_to_the_taxonomy():
    tax = load_taxonomy("spider2-aifunc")
    parse = make_parser(CLASSIFY_STYLE, tax)
    assert parse('{"reasoning": "r", "verdict": "c3"}') == {"reasoning": "r", "verdict": "C3"}
    assert parse('{"reasoning": "r", "verdict": "none_fits"}')["verdict"] == NONE_FITS
    with pytest.raises(ValueError, match="verdict must be one of C1, C2, C3, C4, C5, none_fits"):
        parse('{"reasoning": "r", "verdict": "genuine_error"}')
    assert reply_schema(CLASSIFY_STYLE, tax)["properties"]["verdict"]["enum"] == [*tax.ids, NONE_FITS]


def test_candidates_leave_out_ruled_errors_and_reference_failures():
    tax = load_taxonomy("plsqlbench")
    got = classify_candidates([RunRecord.model_validate(r) for r in RUNS], tax)
    assert [(r.question_id, r.tests[i].name) for r, i in got] == [(1, "b"), (1, "c")]


def _setup(t):
    write_runs(t, RUNS, name="suite.jsonl")


def _with_classification(t):
    """A classification file (no error left to jurors, so no calls) and a taxonomy file of other bytes."""
    import contextlib

    from jury.judging.taxonomies import TAXONOMIES_DIR

    write_runs(t, [{"model": "m", "question_id": 1, "tests": [{"name": "a", "passed": False, "error": RULED}]}], "suite.jsonl")
    (t / "p.toml").write_text(
        'name = "p"\nk = 1\n[[jurors]]\nname = "j"\nmodel = "openai/j"\nfamily = "anthropic"\napi_base = "http://127.0.0.1:9"\n'
    )
    args = ["suites", "suite.jsonl", "--taxonomy", "plsqlbench", "--classify", "--panel", "p.toml", "--verdicts-out", "c.json"]
    with contextlib.chdir(t):
        res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    (t / "other.toml").write_text((TAXONOMIES_DIR / "plsqlbench.toml").read_text() + "\n# edited\n")


BAD = [
    Case("classify-without-taxonomy", ["suites", "suite.jsonl", "--classify"], "classify needs a taxonomy", _setup),
    Case(
        "classify-and-adjudicate",
        ["suites", "suite.jsonl", "--classify", "--adjudicate", "--taxonomy", "plsqlbench"],
        "adjudicate and classify each write a verdict file",
        _setup,
    ),
    Case("plan-alone", ["suites", "suite.jsonl", "--plan"], "plan and verdicts_out go with adjudicate or classify", _setup),
    Case(
        "classify-unknown-taxonomy",
        ["suites", "suite.jsonl", "--classify", "--taxonomy", "nope"],
        "taxonomy file not found",
        _setup,
    ),
    Case(
        "classification-without-taxonomy",
        ["suites", "suite.jsonl", "--verdicts", "c.json"],
        "c.json: holds error classifications (`jury suites --classify`): give the taxonomy plsqlbench",
        _with_classification,
    ),
    Case(
        "classification-of-another-taxonomy",
        ["suites", "suite.jsonl", "--verdicts", "c.json", "--taxonomy", "other.toml"],
        "c.json: classified with taxonomy 'plsqlbench'",
        _with_classification,
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_input(case: Case, tmp_path) -> None:
    check_case(case, tmp_path)
