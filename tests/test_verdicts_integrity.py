"""What protects a published number: locked files are never overwritten, and verdicts are
only credited to the exact answers they judged."""

import json
import os
import stat

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.jurytest import adjudicate_project, make_project, write_panel

runner = CliRunner()


@pytest.fixture
def adjudicated(tmp_path, monkeypatch, fake_llm):
    """verdicts/adj.json: every failure judged format-equivalent by the loopback panel."""
    monkeypatch.chdir(tmp_path)
    return adjudicate_project(tmp_path, fake_llm, "format_equivalence")


def test_no_command_writes_over_a_locked_file(adjudicated):
    before = (adjudicated / "verdicts" / "adj.json").read_bytes()
    for args in (
        ["score", "run.jsonl", "-o", "verdicts/adj.json"],
        ["score", "run.jsonl", "--per-question", "verdicts/adj.json"],
        ["report", "run.jsonl", "-f", "csv", "-o", "verdicts/adj.json"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 1 and "never overwritten" in res.output, args
    assert (adjudicated / "verdicts" / "adj.json").read_bytes() == before
    assert runner.invoke(app, ["verify", "verdicts/adj.json"]).exit_code == 0


def test_a_damaged_verdict_json_stops_the_reaudit_check(adjudicated):
    (adjudicated / "verdicts" / "adj.json").write_text("garbage, not json")
    res = runner.invoke(app, ["reaudit", "--check"])
    assert res.exit_code == 1 and "not readable JSON" in res.output


def test_verdicts_are_not_credited_to_changed_answers(adjudicated):
    res = runner.invoke(app, ["score", "run.jsonl", "--verdicts", "verdicts/adj.json", "-f", "json"])
    assert res.exit_code == 0
    runs = adjudicated / "run.jsonl"
    lines = [json.loads(x) for x in runs.read_text().splitlines()]
    lines[1]["sql"] = "SELECT 'garbage', 12345"  # still a mismatch, but not the judged answer
    runs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for cmd in ("score", "report"):
        res = runner.invoke(app, [cmd, "run.jsonl", "--verdicts", "verdicts/adj.json"])
        # refused, naming the bound run file whose bytes changed (before: "the verdict judged another answer")
        assert res.exit_code == 1 and "verdicts/adj.json was made for another run file" in res.output, cmd


def test_shared_calls_are_counted_once_in_totals_and_split_between_models(adjudicated):
    from jury.execution.store import Store

    doc = load_locked(adjudicated / "verdicts" / "adj.json")
    with Store(adjudicated / ".jury" / "store.db") as st:
        calls, cost = st.db.execute("SELECT sum(attempts), sum(cost_usd) FROM calls").fetchone()
    assert doc.totals.calls == calls  # both models gave the same SQL: shared requests, each counted once
    assert sum(doc.summary["calls_by_model"].values()) == pytest.approx(calls)
    # the scripted jurors have no litellm price: each model's cost is unknown (null), not $0
    assert doc.summary["cost_by_model"] == {"gpt-x": None, "claude-y": None} and cost == 0


def test_a_wrong_kind_of_panel_is_a_one_line_error(adjudicated):
    from jury.judging.panels import PANELS_DIR

    res = runner.invoke(app, ["audit-gold", "--panel", str(PANELS_DIR / "default.toml"), "--plan"])
    assert res.exit_code == 1 and "needs ballot_style" in res.output
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(PANELS_DIR / "audit.toml"), "--plan"])
    assert res.exit_code == 1 and "is an audit panel" in res.output


def test_plots_into_a_file_is_a_one_line_error(adjudicated):
    res = runner.invoke(app, ["report", "run.jsonl", "--verdicts", "verdicts/adj.json", "--plots", "run.jsonl"])
    assert res.exit_code == 1 and "plots folder run.jsonl: cannot write there" in res.output


def test_written_files_follow_the_umask(adjudicated):
    old = os.umask(0o022)
    try:
        res = runner.invoke(app, ["score", "run.jsonl", "-f", "csv", "-o", "scores.csv"])
    finally:
        os.umask(old)
    assert res.exit_code == 0
    assert stat.S_IMODE((adjudicated / "scores.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((adjudicated / "verdicts" / "adj.json").stat().st_mode) & 0o044  # readable by others


def test_jury_toml_quorum_is_honoured(tmp_path, monkeypatch, fake_llm):
    from test_audit import FIVE, audit_juror

    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2} if name == "ja" else set()))
    panel = write_panel(tmp_path, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    (tmp_path / "jury.toml").write_text((tmp_path / "jury.toml").read_text() + "quorum = 1\n")
    assert runner.invoke(app, ["audit-gold", "--panel", str(panel), "-o", "verdicts/a.json"]).exit_code == 0
    doc = load_locked(tmp_path / "verdicts" / "a.json")
    assert doc.panel.quorum == 1 and [r.question_id for r in doc.records if r.flagged] == [2]
