"""--swap (each juror judges both answer orders) and --review-passes (a sample of strict
matches goes to the jury too), against the loopback juror server through real litellm."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.judging.rules import check_document
from jury.verdicts.documents import AdjudicationFile
from jury.verdicts.lock import load_locked
from tests.support.fakellm import ballot_reply
from tests.support.helpers import write_runs
from tests.support.jurytest import GOLD_SQL, says, write_panel

runner = CliRunner()
THREE = [("ja", "google"), ("jb", "xai"), ("jc", "meta")]


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def only_file(tmp):
    (path,) = sorted((tmp / "verdicts").glob("adjudication-*.json"))
    return path


def always_first(request):
    return ballot_reply("answer_1", reasoning="scripted: always the first answer")


def test_swap_counts_a_vote_only_when_both_orders_agree(project, fake_llm):
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", always_first)  # gold_defect in one order, genuine_error in the other
    fake_llm.script("jc", says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, THREE)
    res = run("adjudicate", "run.jsonl", "--panel", str(panel), "--swap")
    assert res.exit_code == 0, res.output
    doc = load_locked(only_file(project))
    assert doc.settings["swap"] is True and len(doc.records) == 6
    for rec in doc.records:
        votes = {v.juror: v for v in rec.votes}
        assert votes["ja"].category == "gold_defect" and votes["ja"].swapped.category == "gold_defect"
        assert {votes["ja"].order, votes["ja"].swapped.order} == {"gold_first", "candidate_first"}
        assert votes["jb"].inconsistent and votes["jb"].abstained and votes["jb"].category is None
        assert {votes["jb"].swapped.category, "gold_defect", "genuine_error"} == {"gold_defect", "genuine_error"}
        assert rec.verdict == "gold_defect"  # two consistent votes of three
    # every juror was asked each distinct failure in both orders: 3 SQL texts x 3 jurors x 2
    # (the two models gave the same wrong SQL, and a request asked once is never paid twice)
    asked = {(r["model"], json.dumps(r["messages"])) for r in fake_llm.requests}
    assert len(asked) == len(fake_llm.requests) == 18
    assert run("verify", str(only_file(project))).exit_code == 0


def test_swap_plan_shows_the_doubled_cost_and_a_panel_can_ask_for_it(project, fake_llm):
    one = run("adjudicate", "run.jsonl", "--panel", str(write_panel(project, fake_llm.base_url, THREE)), "--plan")
    panel = write_panel(project, fake_llm.base_url, THREE, name="swap.toml")
    panel.write_text(panel.read_text().replace("k = 3\n", "k = 3\nswap = true\n"))
    two = run("adjudicate", "run.jsonl", "--panel", str(panel), "--plan")
    assert one.exit_code == two.exit_code == 0
    ballots = [int(next(line for line in r.output.splitlines() if " ballots for " in line).split()[0]) for r in (one, two)]
    assert ballots[1] == 2 * ballots[0] == 36
    assert fake_llm.requests == []


def test_swap_refuses_early_stop(project, fake_llm):
    res = run("adjudicate", "run.jsonl", "--panel", str(write_panel(project, fake_llm.base_url, THREE)), "--swap", "--early-stop")
    assert res.exit_code == 1 and "cannot be combined" in res.output


def _swapped_doc(project, fake_llm) -> dict:
    for name, _ in THREE:
        fake_llm.script(name, says("gold_defect"))
    assert run("adjudicate", "run.jsonl", "--panel", str(write_panel(project, fake_llm.base_url, THREE)), "--swap").exit_code == 0
    return json.loads(only_file(project).read_text())


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda v: v.update(category="genuine_error"), "does not follow"),
        (lambda v: v["swapped"].update(order=v["order"]), "same order"),
        (lambda v: v["swapped"].update(category="genuine_error"), "does not follow from its answer"),
        (lambda v: v.update(inconsistent=True), "does not follow from its two orders"),
    ],
)
def test_a_swapped_vote_that_does_not_follow_from_its_two_orders_is_caught(project, fake_llm, tamper, message):
    raw = _swapped_doc(project, fake_llm)
    tamper(raw["records"][0]["votes"][0])
    problem = check_document(AdjudicationFile.model_validate(raw))
    assert problem is not None and message in problem


def test_review_passes_measure_false_passes(tmp_path, monkeypatch, fake_llm):
    from tests.support.helpers import make_db, write_gold

    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    recs = [{"model": "gpt-x", "question_id": q, "sql": sql} for q, sql in GOLD_SQL.items()]  # three strict matches
    recs += [
        {"model": "claude-y", "question_id": 1, "sql": GOLD_SQL[1]},
        {"model": "claude-y", "question_id": 3, "sql": "SELECT 99"},
    ]
    write_runs(tmp_path, recs)
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)
    for name, _ in THREE:  # "neither": a genuine error whichever order (a pass shows the same SQL twice)
        fake_llm.script(name, says("neither"))
    panel = write_panel(tmp_path, fake_llm.base_url, THREE)
    res = run("adjudicate", "run.jsonl", "--panel", str(panel), "--review-passes", "0.5", "-o", "adj.json")
    assert res.exit_code == 0, res.output
    doc = load_locked(tmp_path / "adj.json")
    reviewed = [r for r in doc.records if r.review_pass]
    # ceil(0.5 x 3) = 2 of gpt-x's matches, ceil(0.5 x 1) = 1 of claude-y's; claude-y's failure as usual
    assert sorted(r.model for r in reviewed) == ["claude-y", "gpt-x", "gpt-x"]
    assert all(r.false_pass and not r.credited for r in reviewed)
    assert doc.summary["failures"] == 1 and doc.settings["reviewed_passes"]["gpt-x"] == {"sampled": 2, "matches": 3}
    assert run("verify", "adj.json").exit_code == 0

    # the sample is seeded: the same questions again, and a larger fraction keeps them
    again = run("adjudicate", "run.jsonl", "--panel", str(panel), "--review-passes", "0.9", "-o", "adj2.json")
    assert again.exit_code == 0, again.output
    first = {(r.model, r.question_id) for r in reviewed}
    second = {(r.model, r.question_id) for r in load_locked(tmp_path / "adj2.json").records if r.review_pass}
    assert first < second and len(second) == 4

    # score: the one-sided adjudicated column ignores the reviews; the report shows the false-pass rate
    from jury.compare.outcomes import Settings, evaluate
    from jury.execution.store import Store
    from jury.inputs.io import load_gold, load_runs
    from jury.results.columns import adjudicated, pass_reviews, routed_by_model, two_sided, verdict_index

    gold = load_gold(tmp_path / "gold.json")
    with Store(tmp_path / "s.db") as st:
        ev = evaluate(gold, load_runs([tmp_path / "run.jsonl"], gold), tmp_path / "dbs", st, Settings(workers=1))
    docs = [("adj.json", doc)]
    one_sided = adjudicated(ev.pairs, verdict_index(docs))
    assert one_sided["gpt-x"]["value"] == 1.0
    reviews = pass_reviews(ev.pairs, docs)
    assert reviews["gpt-x"]["false_passes"] == 2 and reviews["gpt-x"]["false_pass_rate"]["value"] == 1.0
    routed = {m: len(ps) for m, ps in routed_by_model(ev.pairs).items()}
    both = two_sided(one_sided, reviews, routed)
    # every sampled pass was false: all 3 of gpt-x's matches are estimated false passes
    assert both["gpt-x"]["value"] == 0.0 and both["gpt-x"]["estimated_false_passes"] == 3.0
    assert both["gpt-x"]["low"] == 0.0 and 0.0 < both["gpt-x"]["high"] < 1.0

    # jury report shows the same, in JSON, CSV and the table
    rep = run("report", "run.jsonl", "--verdicts", "adj.json", "--format", "json", "-o", "rep.json")
    assert rep.exit_code == 0, rep.output
    rows = {m["model"]: m for m in json.loads((tmp_path / "rep.json").read_text())["models"]}
    assert rows["gpt-x"]["pass_review"]["false_pass_rate"] == reviews["gpt-x"]["false_pass_rate"]
    assert rows["gpt-x"]["two_sided_adjudicated"] == both["gpt-x"]
    assert rows["gpt-x"]["adjudicated"]["value"] == 1.0  # the one-sided column is unchanged
    table = run("report", "run.jsonl", "--verdicts", "adj.json")
    assert "false-pass rate" in table.output and "two-sided adjudicated" in table.output


def test_review_passes_must_be_a_fraction(project, fake_llm):
    res = run("adjudicate", "run.jsonl", "--panel", str(write_panel(project, fake_llm.base_url, THREE)), "--review-passes", "1.5")
    assert res.exit_code != 0
