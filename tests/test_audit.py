"""`jury audit-gold`, and the gold-clean and adjudicated columns of `jury score`."""

import json
import re

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.fakellm import Reply, json_reply
from tests.support.jurytest import executed, says, user_text, write_panel

runner = CliRunner()
FIVE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai"), ("je", "deepseek")]


def audit_juror(defective_qids: set[int], defect_type="sql_vs_question"):
    """Votes defective on the questions whose text is listed (question text -> id by the gold file)."""
    text_to_q = {"Names of red items?": 1, "Items by price, cheapest first?": 2, "How many items?": 3, "Broken gold": 4}

    def respond(req):
        text = user_text(req)
        q = text_to_q[re.search(r"<question>\n(.*?)\n</question>", text, re.S).group(1)]
        bad = q in defective_qids
        return json_reply(
            {
                "reasoning": f"scripted audit of {q}",
                "verdict": "defective" if bad else "valid",
                "defect_type": defect_type if bad else None,
            }
        )

    return respond


def audit_panel(tmp, base_url, **kw):
    return write_panel(tmp, base_url, FIVE, style="audit", k=5, name="audit.toml", **kw)


def run_audit(*args):
    return runner.invoke(app, ["audit-gold", "gold.json", *args], catch_exceptions=False)


def test_audit_flags_by_majority_and_summarizes(project, fake_llm):
    fake_llm.script("ja", audit_juror({1, 2}))
    fake_llm.script("jb", audit_juror({1, 2}, "sql_vs_data"))
    fake_llm.script("jc", audit_juror({1}))
    fake_llm.script("jd", audit_juror(set()))
    fake_llm.script("je", Reply(content="no idea"))  # abstains on everything
    res = run_audit("--panel", str(audit_panel(project, fake_llm.base_url)), "--split", "dev")
    assert res.exit_code == 0, res.output
    path = next((project / "verdicts").glob("audit-*.json"))
    doc = load_locked(path)
    recs = {r.question_id: r for r in doc.records}
    # q1: 3 of 4 valid votes defective -> flagged; q2: 2 of 4 -> tie, not flagged, undecided
    assert recs[1].flagged and recs[1].decided
    assert not recs[2].flagged and not recs[2].decided
    assert not recs[3].flagged and recs[3].decided
    assert recs[1].defect_types == ["sql_vs_data", "sql_vs_question"]
    assert all(v.abstained for r in doc.records for v in r.votes if v.juror == "je")
    s = doc.summary
    assert s["overall"] == {"flagged": 1, "questions": 4, "rate": 0.25}
    assert s["by_difficulty"]["simple"] == {"flagged": 1, "questions": 2, "rate": 0.5}
    assert s["by_difficulty"]["moderate"]["flagged"] == 0
    assert s["by_split"] == {"dev": {"flagged": 1, "questions": 4, "rate": 0.25}}
    assert s["jurors"]["ja"]["flag_rate"] == 0.5 and s["jurors"]["jd"]["flag_rate"] == 0.0
    assert s["jurors"]["je"]["abstentions"] == 4
    # Fleiss' kappa by hand: 4 subjects x 4 raters, categories (defective, valid):
    # rows (3,1), (2,2), (0,4), (0,4); P_i = (6+0)/12=.5, (2+2)/12=1/3, 1, 1 -> P̄ = 17/24
    # p_def = 5/16, p_val = 11/16 -> P_e = (25 + 121) / 256
    p_bar, p_e = (0.5 + 1 / 3 + 1 + 1) / 4, (25 + 121) / 256
    assert s["fleiss_kappa"] == pytest.approx((p_bar - p_e) / (1 - p_e))
    assert "flagged 1 of 4 gold queries (25.0%)" in res.output


def test_audit_ballot_shows_gold_and_columns_only(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    assert run_audit("--panel", str(audit_panel(project, fake_llm.base_url)), "--question-id", "1").exit_code == 0
    assert fake_llm.calls() == 5
    text = user_text(fake_llm.requests[0])
    assert "SELECT name FROM item WHERE colour = 'red'" in text
    assert "item(id INTEGER, name TEXT, price REAL, colour TEXT)" in text
    assert "green" not in text  # no model output: runs are never read


def test_audit_quorum_and_plan(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2} if name == "ja" else set()))
    panel = str(audit_panel(project, fake_llm.base_url))
    res = run_audit("--panel", panel, "--plan")
    assert res.exit_code == 0 and fake_llm.calls() == 0
    assert "20 ballots for 4 gold queries" in res.output.replace("\n", " ")
    assert run_audit("--panel", panel, "--quorum", "1").exit_code == 0
    doc = load_locked(next((project / "verdicts").glob("audit-*.json")))
    assert [r.question_id for r in doc.records if r.flagged] == [2]
    assert doc.panel.quorum == 1


def score_json(*args):
    res = runner.invoke(app, ["score", "run.jsonl", "--format", "json", *args])
    assert res.exit_code == 0, res.output
    return {m["model"]: m for m in json.loads(res.stdout)["models"]}


def test_gold_clean_and_adjudicated_columns(project, fake_llm):
    # runs: both models fail all three questions (mismatches); add matches for a richer case
    runs = project / "run.jsonl"
    lines = [json.loads(x) for x in runs.read_text().splitlines()]
    lines[0]["sql"] = "SELECT name FROM item WHERE colour = 'red'"  # gpt-x q1 now matches
    runs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1}))
    assert run_audit("--panel", str(audit_panel(project, fake_llm.base_url))).exit_code == 0
    audit = next((project / "verdicts").glob("audit-*.json"))
    # gpt-x: routed 3 (q1 match, q2 q3 mismatch); q1 flagged -> gold-clean 0/2 (a flagged match never counts)
    cols = score_json("--audit", str(audit))
    assert (cols["gpt-x"]["gold_clean"]["k"], cols["gpt-x"]["gold_clean"]["n"]) == (0, 2)
    assert (cols["claude-y"]["gold_clean"]["k"], cols["claude-y"]["gold_clean"]["n"]) == (0, 2)

    for name in ("ja", "jb", "jc", "jd", "je"):
        fake_llm.script(name, says("format_equivalence"))
    panel = write_panel(project, fake_llm.base_url, FIVE[:4])
    assert runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"]).exit_code == 0
    cols = score_json("--verdicts", "verdicts/adj.json", "--audit", str(audit))
    # gpt-x: 1 match + 2 credited of 3; claude-y: 0 + 3 of 3
    assert (cols["gpt-x"]["adjudicated"]["k"], cols["gpt-x"]["adjudicated"]["n"]) == (3, 3)
    assert (cols["claude-y"]["adjudicated"]["k"], cols["claude-y"]["adjudicated"]["n"]) == (3, 3)
    assert cols["gpt-x"]["adjudicated_rank"] == 1
    res = runner.invoke(app, ["score", "run.jsonl", "--verdicts", "verdicts/adj.json", "--audit", str(audit), "--format", "csv"])
    header = res.stdout.splitlines()[0].split(",")
    assert {"gold_clean_accuracy", "gold_clean_low", "adjudicated_accuracy", "adjudicated_high", "adjudicated_rank"} <= set(
        header
    )


def test_a_changed_byte_makes_verify_and_score_refuse(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1}))
    assert run_audit("--panel", str(audit_panel(project, fake_llm.base_url))).exit_code == 0
    audit = next((project / "verdicts").glob("audit-*.json"))
    assert runner.invoke(app, ["verify", str(audit)]).exit_code == 0
    text = audit.read_text()
    audit.write_text(text.replace("scripted audit of 1", "scripted audit of 7", 1))
    res = runner.invoke(app, ["verify", str(audit)])
    assert res.exit_code == 1 and audit.name in res.output
    res = runner.invoke(app, ["score", "run.jsonl", "--audit", str(audit)])
    assert res.exit_code == 1 and "content hash mismatch" in res.output


def test_adjudicated_column_requires_every_failure_judged(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FIVE[:4])
    assert (
        runner.invoke(
            app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--model", "gpt-x", "-o", "verdicts/a.json"]
        ).exit_code
        == 0
    )
    res = runner.invoke(app, ["score", "run.jsonl", "--verdicts", "verdicts/a.json"])
    assert res.exit_code == 1 and "model 'claude-y': 3 jury-eligible failures have no verdict" in res.output


def test_audit_preview_of_gold_result_is_optional(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    panel = audit_panel(project, fake_llm.base_url)
    assert run_audit("--panel", str(panel), "--question-id", "3", "-o", "verdicts/plain.json").exit_code == 0
    assert "<gold_result>" not in user_text(fake_llm.requests[-1])
    panel.write_text(panel.read_text().replace("k = 5\n", "k = 5\nshow_preview = true\n", 1))
    assert run_audit("--panel", str(panel), "--question-id", "3", "-o", "verdicts/preview.json").exit_code == 0
    text = user_text(fake_llm.requests[-1])
    assert "<gold_result>\ncount(*)\n4\n(1 row in total)\n</gold_result>" in text


def test_rerunning_an_unchanged_audit_writes_no_copy(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1}))
    panel = str(audit_panel(project, fake_llm.base_url))
    assert run_audit("--panel", panel).exit_code == 0
    calls = fake_llm.calls()
    res = run_audit("--panel", panel)
    assert res.exit_code == 0 and "unchanged" in res.output
    assert fake_llm.calls() == calls
    assert len(list((project / "verdicts").glob("audit-*.json"))) == 1


def test_a_failing_gold_query_is_previewed_as_a_failure_not_an_empty_result():
    from jury.inputs.records import ExecResult
    from jury.judging.ballots import preview

    text = preview(ExecResult(status="error", error="no such column: nope"))
    assert "failed" in text and "no such column: nope" in text and "0 rows" not in text


def test_a_quorum_outside_one_to_the_panel_size_is_refused(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2}))
    panel = str(audit_panel(project, fake_llm.base_url))
    for q in ("99", "6"):
        res = run_audit("--panel", panel, "--quorum", q)
        lines = [x for x in res.output.splitlines() if x.strip()]
        assert res.exit_code == 1 and len(lines) == 1, res.output  # on main: exit 0, "flagged 0 of 4"
        assert f"quorum {q}" in lines[0] and "5 jurors" in lines[0], lines[0]
    (project / "jury.toml").write_text((project / "jury.toml").read_text() + "quorum = 7\n")
    res = run_audit("--panel", panel)
    assert res.exit_code == 1 and "quorum 7" in res.output, res.output
    assert fake_llm.calls() == 0 and not (project / "verdicts").exists()


def test_the_library_refuses_an_out_of_range_quorum(project, fake_llm):
    from jury.errors import ConfigError
    from jury.judging.panels import load_panel
    from jury.judging.rules import check_document

    panel = load_panel(audit_panel(project, fake_llm.base_url))
    for bad in (0, 6, 99, True, "3"):
        with pytest.raises(ConfigError, match="quorum"):
            panel.quorum = bad
    panel.quorum = 5
    panel.quorum = None
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2}))
    assert run_audit("--panel", str(panel.path), "-o", "verdicts/a.json").exit_code == 0
    doc = load_locked(project / "verdicts" / "a.json")
    forged = doc.model_copy(update={"panel": doc.panel.model_copy(update={"quorum": 99})})
    assert "quorum 99" in (check_document(forged) or "")  # a locked file with such a quorum fails verify


def test_the_default_quorum_is_a_majority_of_the_panel_abstentions_included(project, fake_llm):
    """Two defective, one valid, two abstentions: a majority of the valid votes, not of the panel."""
    fake_llm.script("ja", audit_juror({2}))
    fake_llm.script("jb", audit_juror({2}))
    fake_llm.script("jc", audit_juror(set()))
    fake_llm.script("jd", Reply(content="no idea"))
    fake_llm.script("je", Reply(content="no idea"))
    assert run_audit("--panel", str(audit_panel(project, fake_llm.base_url)), "-o", "verdicts/a.json").exit_code == 0
    rec = next(r for r in load_locked(project / "verdicts" / "a.json").records if r.question_id == 2)
    assert not rec.flagged and not rec.decided  # 2 of 5 < 3: not flagged; the abstentions could have: undecided


def test_a_missing_key_or_price_is_refused_before_the_gold_is_executed(project, fake_llm, monkeypatch):
    """Issue 42.5: audit-gold found a missing key only after executing and checking every gold
    query; a cost cap counted an unpriced juror as $0. Both are refused first: no SQL runs."""
    monkeypatch.delenv("JURY_TEST_KEY", raising=False)
    panel = audit_panel(project, fake_llm.base_url)
    keyed = panel.read_text().replace('family = "xai"', 'family = "xai"\napi_key_env = "JURY_TEST_KEY"')
    panel.write_text(keyed)
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel)])
    assert res.exit_code == 1 and "no API key for panel 'test': set JURY_TEST_KEY" in res.output
    assert executed(project) == 0 and fake_llm.calls() == 0
    monkeypatch.setenv("JURY_TEST_KEY", "k")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel), "--max-cost", "1", "--plan"])
    assert res.exit_code == 1 and "litellm has no price for model 'openai/ja' (and 4 more jurors)" in res.output
    assert executed(project) == 0 and fake_llm.calls() == 0
