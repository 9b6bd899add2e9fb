"""What the juror commands print and count: calls and retries, cost, files written beside the output."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.fakellm import Reply
from tests.support.jurytest import says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def flat(text: str) -> str:
    return " ".join(text.split())


def adjudicate(*args):
    return runner.invoke(app, ["adjudicate", "run.jsonl", *args], catch_exceptions=False)


def test_a_retried_call_is_named_in_the_line_and_in_the_totals(project, fake_llm):
    """Printed "calls this run: 901" beside totals.calls 907: a retried request is counted as such in
    the printed line and in the verdict file (calls = ballots_asked + retries)."""
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    fake_llm.fail_next("ja", Reply(status=429, retry_after=0.05))  # ja's first request is refused once
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate("--panel", panel, "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    totals = load_locked(project / "verdicts" / "a.json").totals
    asked, retries = totals.ballots_asked, totals.retries
    assert asked and retries >= 1 and totals.calls == asked + retries == fake_llm.calls()  # >= 1: a busy machine may time out
    shown = f"{retries} retr{'y' if retries == 1 else 'ies'}"
    assert f"calls this run: {asked} ballots asked, {asked + retries} requests sent ({shown});" in flat(res.output)
    raw = json.loads((project / "verdicts" / "a.json").read_text())["totals"]
    assert raw["calls"] == asked + retries and raw["ballots_asked"] == asked and raw["retries"] == retries
    # the same verdicts again from the store: nothing sent, and the file's totals are the same
    res = adjudicate("--panel", panel, "-o", "verdicts/b.json")
    assert "calls this run: 0 ballots asked, 0 requests sent (0 retries);" in flat(res.output)
    assert load_locked(project / "verdicts" / "b.json").totals == totals


def test_an_unpriced_juror_makes_the_run_cost_unknown_not_zero(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = str(write_panel(project, fake_llm.base_url, FOUR))  # openai/ja ... : litellm has no price for them
    res = adjudicate("--panel", panel, "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    out = flat(res.output)
    assert "cost this run unknown (litellm has no price for openai/ja" in out
    assert "cost this run $0.0000" not in out


def test_a_verdict_file_outside_the_verdicts_folder_says_where_its_schema_went(project, fake_llm):
    """`-o x.json` wrote schema/ into the working directory without a word."""
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = str(write_panel(project, fake_llm.base_url, FOUR))
    res = adjudicate("--panel", panel, "-o", "x.json")
    assert res.exit_code == 0, res.output
    assert (project / "schema").is_dir()
    assert "wrote schema/ beside x.json: the JSON Schemas its $schema names" in flat(res.output)
    res = adjudicate("--panel", panel, "-o", "y.json")  # the folder is there now: nothing to say
    assert res.exit_code == 0 and "wrote schema/" not in res.output


def test_review_export_says_wrote_once(reviewable):
    _tmp, files = reviewable
    res = runner.invoke(app, ["review", "export", "-o", "labels.jsonl", "--verdicts", str(files["adj"])])
    assert res.exit_code == 0, res.output
    assert res.output.count("wrote") == 1 and "wrote 0 labels to labels.jsonl" in res.output
