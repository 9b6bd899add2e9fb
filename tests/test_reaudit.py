"""`jury reaudit`: stale detection, re-running only changed jurors, supersession, diffs."""

from test_audit import FIVE, audit_juror
from typer.testing import CliRunner

from jury.cli import app
from jury.verdicts.lock import load_locked
from tests.support.jurytest import says, write_panel

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_changed_juror_is_the_only_one_called_again(project, fake_llm):
    # old panel: q1 flagged by 2 of 5 (not flagged), q2 by 3 of 5 (flagged)
    fake_llm.script("ja", audit_juror({1, 2}))
    fake_llm.script("jb", audit_juror({1, 2}))
    fake_llm.script("jc", audit_juror(set()))
    fake_llm.script("jd", audit_juror(set()))
    fake_llm.script("je", audit_juror({2}))
    fake_llm.script("je2", audit_juror({1}))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel)).exit_code == 0
    (old,) = (project / "verdicts").glob("audit-*.json")
    old_bytes = old.read_bytes()
    assert invoke("reaudit", "--check").exit_code == 0  # nothing changed yet

    # swap juror je (deepseek) for je2 (deepseek)
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    res = invoke("reaudit", "--check")
    assert res.exit_code == 1 and "STALE" in res.output and "panel" in res.output
    before = {m: fake_llm.calls(m) for m in ("ja", "jb", "jc", "jd", "je", "je2")}
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    after = {m: fake_llm.calls(m) for m in before}
    assert {m: after[m] - before[m] for m in before} == {"ja": 0, "jb": 0, "jc": 0, "jd": 0, "je": 0, "je2": 4}

    new = next(p for p in (project / "verdicts").glob("audit-*.json") if p != old)
    old_doc, new_doc = load_locked(old), load_locked(new)
    assert new_doc.supersedes == old_doc.content_sha256
    assert {r.question_id for r in new_doc.records if r.flagged} == {1}
    out = " ".join(res.output.split())
    assert "newly flagged: 1 [1]" in out and "cleared: 1 [2]" in out
    assert "agree on 50.0%" in out and "0 of 1 flags also flagged" in out
    assert "added je2" in out and "removed je" in out
    assert invoke("reaudit", "--check").exit_code == 0  # the new file is current
    assert old.read_bytes() == old_bytes  # the old file is untouched: its lock still holds,
    res = invoke("verify", str(old))  # and verify says it is valid but superseded (its panel changed: expected)
    assert res.exit_code == 0 and f"superseded by {new}" in " ".join(res.output.split())


def test_changed_prompt_template_makes_a_file_stale(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    (project / "prompts").mkdir()
    template = project / "prompts" / "my-audit.md"  # a panel's own templates live in prompts/ beside it
    from jury.judging.panels import PROMPTS_DIR

    template.write_text((PROMPTS_DIR / "audit-v1.md").read_text())
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    panel.write_text(panel.read_text().replace("k = 5\n", 'k = 5\nprompt = "my-audit.md"\n', 1))
    assert invoke("audit-gold", "gold.json", "--panel", str(panel)).exit_code == 0
    assert invoke("reaudit", "--check").exit_code == 0
    template.write_text(template.read_text() + "\nBe strict.\n")
    res = invoke("reaudit", "--check")
    assert res.exit_code == 1 and "prompt template my-audit.md changed" in res.output
    calls = fake_llm.calls()
    assert invoke("reaudit").exit_code == 0
    assert fake_llm.calls() - calls == 20  # every ballot's text changed: all asked again


def test_adjudication_reaudit_reports_flips(project, fake_llm):
    four = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", says("gold_defect"))
    fake_llm.script("jc", says("genuine_error"))
    fake_llm.script("jd", says("gold_defect"))
    fake_llm.script("jx", says("genuine_error"))
    panel = write_panel(project, fake_llm.base_url, four)
    assert invoke("adjudicate", "run.jsonl", "--panel", str(panel)).exit_code == 0
    old = next((project / "verdicts").glob("adjudication-*.json"))
    assert {r.verdict for r in load_locked(old).records} == {"gold_defect"}
    # jd (xai) replaced by jx (xai), who sides with jc: both models' panels flip to genuine_error
    panel.write_text(panel.read_text().replace('name = "jd"\nmodel = "openai/jd"', 'name = "jx"\nmodel = "openai/jx"'))
    before = fake_llm.calls()
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    new = next(p for p in (project / "verdicts").glob("adjudication-*.json") if p != old)
    jx_requests = {v.request_sha256 for r in load_locked(new).records for v in r.votes if v.juror == "jx"}
    assert fake_llm.calls() - before == fake_llm.calls("jx") == len(jx_requests) > 0  # only jx asked
    recs = {(r.model, r.question_id): r.verdict for r in load_locked(new).records}
    assert set(recs.values()) == {"genuine_error"} and len(recs) == 6
    out = " ".join(res.output.split())
    assert "verdicts flipped: 6 of 6; credit changed for 6" in out
    assert "gpt-x q1: gold_defect -> genuine_error" in out


def test_check_with_absent_inputs_is_not_stale_but_says_so(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel), "--question-id", "1").exit_code == 0
    (project / "gold.json").rename(project / "gold-moved.json")
    res = runner.invoke(app, ["reaudit", "--check"])  # cannot check: exit 4, so a schedule notices
    assert res.exit_code == 4 and "gold file ../gold.json is absent" in " ".join(res.output.split())


def test_a_quorum_added_to_the_panel_file_is_honoured_by_the_reaudit(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({2} if name == "ja" else set()))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel)).exit_code == 0
    panel.write_text(panel.read_text().replace("k = 5\n", "k = 5\nquorum = 1\n", 1))
    assert invoke("reaudit").exit_code == 0
    newest = max((project / "verdicts").glob("audit-*.json"), key=lambda p: load_locked(p).supersedes is not None)
    doc = load_locked(newest)
    assert doc.supersedes and doc.panel.quorum == 1
    assert [r.question_id for r in doc.records if r.flagged] == [2]
    assert invoke("reaudit", "--check").exit_code == 0


def test_other_json_in_the_verdicts_folder_is_passed_over_but_a_broken_lock_is_not(project, fake_llm):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(set()))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel), "--question-id", "1").exit_code == 0
    (project / "verdicts" / "notes.json").write_text('{"comment": "not a verdict file"}')
    assert invoke("reaudit", "--check").exit_code == 0
    (audit,) = (project / "verdicts").glob("audit-*.json")
    audit.write_text(audit.read_text().replace('"flagged": false', '"flagged": true', 1))
    res = runner.invoke(app, ["reaudit", "--check"])
    assert res.exit_code == 1 and "content hash mismatch" in res.output


def test_diff_lists_say_how_many_more_there_are():
    """`verdicts flipped: 160 of 387` listed 20 flips and stopped: the rest is counted."""
    from jury.verdicts.reaudit import describe_diff

    flips = [{"model": "m", "question_id": q, "old": "genuine_error", "new": "gold_defect"} for q in range(160)]
    none = {"added": [], "removed": [], "changed": []}
    adj = {"kind": "adjudication", "flipped": flips, "failures": 387, "credit_changed": 160}
    lines = describe_diff({**adj, "percent_agreement": 0.5, "cohen_kappa": 0.1, "juror_changes": none})
    assert lines[0] == "verdicts flipped: 160 of 387; credit changed for 160"
    assert sum(line.startswith("  m q") for line in lines) == 20
    assert lines[21] == "  … and 140 more"
    exact = describe_diff({**adj, "flipped": flips[:20], "percent_agreement": 0.5, "cohen_kappa": 0.1, "juror_changes": none})
    assert not any("more" in line for line in exact)
    audit = {
        "kind": "audit",
        "newly_flagged": list(range(45)),
        "cleared": [7],
        "questions": 100,
        "old_flags": 3,
        "old_flags_also_flagged": 1,
        "percent_agreement": 0.5,
        "cohen_kappa": 0.1,
        "juror_changes": none,
    }
    lines = describe_diff(audit)
    assert lines[0] == f"newly flagged: 45 {list(range(20))} … and 25 more"
    assert lines[1] == "cleared: 1 [7]"


def test_a_reaudit_says_what_this_run_called_beside_the_whole_sets_totals(project, fake_llm):
    """A user could not see that only the changed juror was called: the re-run prints a "calls
    this run" line and the new file's totals.this_run counts this run's calls apart from the
    totals of the whole set (which count the reused votes' calls as well)."""
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1}))
    fake_llm.script("je2", audit_juror(set()))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel)).exit_code == 0
    (old,) = (project / "verdicts").glob("audit-*.json")
    questions = len(load_locked(old).records)  # 4 gold queries, each asked of 5 jurors
    assert "this_run" not in old.read_text()  # a first file: its totals are its run's
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    assert (
        f"calls this run: {questions} ballots asked, {questions} requests sent (0 retries); votes reused from the store: {4 * questions}"
        in " ".join(res.output.split())
    )
    new = next(p for p in (project / "verdicts").glob("audit-*.json") if p != old)
    totals = load_locked(new).totals
    assert totals.this_run is not None
    assert (totals.this_run.ballots_asked, totals.this_run.requests, totals.this_run.votes_reused) == (
        questions,
        questions,
        4 * questions,
    )
    assert totals.ballots_asked == 5 * questions and totals.calls == 5 * questions  # the whole set
    assert invoke("verify", str(new)).exit_code == 0


def test_a_reaudit_that_called_an_unpriced_juror_says_its_cost_is_unknown_not_zero(project, fake_llm):
    """Audit finding: a re-run whose only calls went to a juror litellm has no price for printed
    "cost this run $0.0000"; `jury adjudicate` says "unknown" for the same calls. The re-run's
    line names the unpriced models it called, and only those: a re-run that called a priced juror
    alone states its cost even when reused votes came from unpriced jurors."""
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1}))
    fake_llm.script("je2", audit_juror(set()))
    fake_llm.script("gpt-4o-mini", audit_juror(set()))
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    assert invoke("audit-gold", "gold.json", "--panel", str(panel)).exit_code == 0
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "cost this run unknown (litellm has no price for openai/je2)" in out, out
    assert "cost this run $0.0000" not in out
    # now a priced juror replaces je2: this run's cost is known (the others' votes are reused)
    panel.write_text(panel.read_text().replace('model = "openai/je2"', 'model = "openai/gpt-4o-mini"'))
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if "calls this run" in x or "cost this run" in x)
    out = " ".join(res.output.split())
    assert "cost this run unknown" not in out, line
    assert fake_llm.calls("gpt-4o-mini") > 0 and "cost this run $0.0" in out and "cost this run $0.0000" not in out, out
