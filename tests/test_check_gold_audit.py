"""The deterministic gold checks as the first stage of `jury audit-gold` (loopback jurors)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import VerdictError
from jury.judging.ballots import Template, check_template
from jury.judging.panels import PROMPTS_DIR
from jury.judging.rules import check_document
from jury.verdicts.documents import validate_document
from jury.verdicts.lock import load_locked
from tests.support.badinput import Case, check_case
from tests.support.fakellm import json_reply
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
THREE = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]


def _valid(_request):
    return json_reply({"reasoning": "scripted", "verdict": "valid", "defect_type": None})


def _panel(project: Path, fake_llm, extra: str = "", name: str = "audit.toml") -> Path:
    for j, _ in THREE:
        fake_llm.script(j, _valid)
    path = write_panel(project, fake_llm.base_url, THREE, style="audit", k=3, name=name)
    if extra:
        path.write_text(path.read_text().replace("k = 3\n", f"k = 3\n{extra}\n", 1))
    return path


def audit(*args: str):
    return runner.invoke(app, ["audit-gold", "gold.json", *args], catch_exceptions=False)


def test_audit_records_the_checks_before_any_call_and_verify_accepts_them(project, fake_llm):
    panel = _panel(project, fake_llm)
    res = audit("--panel", str(panel), "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    data = json.loads((project / "verdicts" / "a.json").read_text())
    assert data["settings"]["checks"] == {"passes": [5, 10, 10, 10], "comparator": "strict", "timeout_s": 30.0}
    checks = {r["question_id"]: r["checks"] for r in data["records"]}
    assert checks[1] == [] and checks[2] == [] and checks[3] == []  # ran, flagged nothing
    [fails] = checks[4]  # SELECT nope FROM item
    assert fails["name"] == "gold_fails" and "no such column: nope" in fails["evidence"]
    assert "gold checks flagged 1 of 4 gold queries: gold_fails 1" in " ".join(res.output.split())
    # the jurors did not see them (show_checks is off)
    assert fake_llm.calls() == 12 and not any("<gold_checks>" in user_text(r) for r in fake_llm.requests)
    assert runner.invoke(app, ["verify", "verdicts/a.json"]).exit_code == 0
    assert load_locked(project / "verdicts" / "a.json").records[3].checks[0].name == "gold_fails"


def test_no_checks_leaves_the_file_as_before(project, fake_llm):
    panel = _panel(project, fake_llm)
    assert audit("--panel", str(panel), "--no-checks", "-o", "verdicts/a.json").exit_code == 0
    data = json.loads((project / "verdicts" / "a.json").read_text())
    assert "checks" not in data["settings"] and all("checks" not in r for r in data["records"])


def test_rerunning_a_job_made_without_checks_is_up_to_date(project, fake_llm):
    """A file written before the checks existed (or with --no-checks) holds the same verdict
    set: the checks change no vote. Rerunning the same command (checks on by default) reuses
    it, with -o and without, and writes nothing."""
    panel = str(_panel(project, fake_llm))
    assert audit("--panel", panel, "--no-checks", "-o", "verdicts/a.json").exit_code == 0
    path = project / "verdicts" / "a.json"
    before, calls = path.read_bytes(), fake_llm.calls()
    res = audit("--panel", panel, "-o", "verdicts/a.json")
    assert res.exit_code == 0 and "up to date" in " ".join(res.output.split()), res.output
    res = audit("--panel", panel)
    assert res.exit_code == 0 and "up to date" in " ".join(res.output.split()), res.output
    assert path.read_bytes() == before and fake_llm.calls() == calls
    assert [p.name for p in (project / "verdicts").glob("*.json")] == ["a.json"]
    # a job with checks rerun is up to date too; another job at that -o is still refused
    assert audit("--panel", panel, "-o", "verdicts/b.json").exit_code == 0
    b = (project / "verdicts" / "b.json").read_bytes()
    res = audit("--panel", panel, "-o", "verdicts/b.json")
    assert res.exit_code == 0 and "up to date" in " ".join(res.output.split())
    assert (project / "verdicts" / "b.json").read_bytes() == b
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", panel, "--question-id", "1", "-o", "verdicts/b.json"])
    assert res.exit_code == 1 and "settings.question_ids" in " ".join(res.output.split())


def test_show_checks_states_them_to_the_jurors(project, fake_llm):
    panel = _panel(project, fake_llm, "show_checks = true")
    assert audit("--panel", str(panel), "-o", "verdicts/a.json").exit_code == 0
    texts = {}
    for r in fake_llm.requests:
        text = user_text(r)
        texts[text.split("<question>\n", 1)[1].split("\n", 1)[0]] = text
    broken = texts["Broken gold"]
    assert "<gold_checks>\n- gold_fails: error: no such column: nope" in broken
    assert broken.rstrip().endswith("</gold_checks>")  # appended: the shipped template has no $checks_block
    assert "- none of the checks flagged this query" in texts["How many items?"]
    assert "$checks_block" not in (PROMPTS_DIR / "audit-v1.md").read_text()


def test_a_template_places_the_checks_block_itself(project, fake_llm):
    shipped = (PROMPTS_DIR / "audit-v1.md").read_text()
    (project / "prompts").mkdir()
    custom = project / "prompts" / "audit-checks.md"
    custom.write_text(shipped.replace("$preview_block", "$preview_block$checks_block", 1))
    check_template(Template.load(custom), "audit")  # an allowed placeholder
    panel = _panel(project, fake_llm, 'show_checks = true\nprompt = "audit-checks.md"')
    res = audit("--panel", str(panel), "--question-id", "4", "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    text = user_text(fake_llm.requests[-1])
    assert text.index("</gold_checks>") < text.index("Reply with a JSON object only")
    assert text.count("<gold_checks>") == 1


def test_a_record_with_checks_needs_the_setting(project, fake_llm):
    panel = _panel(project, fake_llm)
    assert audit("--panel", str(panel), "-o", "verdicts/a.json").exit_code == 0
    data = json.loads((project / "verdicts" / "a.json").read_text())
    assert check_document(validate_document(data)) is None
    del data["settings"]["checks"]
    problem = check_document(validate_document(data))
    assert problem is not None and "records.0 (question 1): has gold checks" in problem
    data["records"][0]["checks"] = [{"name": "no_such_check", "evidence": "x"}]
    with pytest.raises(VerdictError, match="records.0.checks.0.name"):
        validate_document(data)


def test_reaudit_reruns_the_checks(project, fake_llm):
    panel = _panel(project, fake_llm)
    assert audit("--panel", str(panel)).exit_code == 0
    [old] = (project / "verdicts").glob("audit-*.json")
    assert json.loads(old.read_text())["records"][0]["checks"] == []
    conn = sqlite3.connect(project / "dbs" / "shop" / "shop.sqlite")
    conn.execute("UPDATE item SET colour = 'blue' WHERE colour = 'red'")  # q1's gold now returns nothing
    conn.commit()
    conn.close()
    res = runner.invoke(app, ["reaudit"], catch_exceptions=False)
    assert res.exit_code == 0 and "re-ran" in res.output, res.output
    [new] = [p for p in (project / "verdicts").glob("audit-*.json") if p != old]
    data = json.loads(new.read_text())
    assert data["settings"]["checks"]["passes"] == [5, 10, 10, 10]
    assert [c["name"] for c in data["records"][0]["checks"]] == ["empty_result"]
    assert load_locked(new).supersedes == load_locked(old).content_sha256


def test_reaudit_of_a_file_without_checks_keeps_it_without(project, fake_llm):
    panel = _panel(project, fake_llm)
    assert audit("--panel", str(panel), "--no-checks").exit_code == 0
    panel.write_text(panel.read_text() + "\n# edited\n")
    assert runner.invoke(app, ["reaudit"], catch_exceptions=False).exit_code == 0
    for p in (project / "verdicts").glob("audit-*.json"):
        data = json.loads(p.read_text())
        assert "checks" not in data["settings"] and all("checks" not in r for r in data["records"])


def _audit_panel_text(extra: str, style: str = "audit") -> str:
    return (
        f'name = "p"\nballot_style = "{style}"\nk = 1\n{extra}\n[[jurors]]\nname = "ja"\nmodel = "openai/ja"\n'
        'family = "openai"\napi_base = "http://127.0.0.1:9"\n'
    )


BAD = [
    Case(
        "show-checks-on-a-blind-panel",
        ["audit-gold", "gold.json", "--panel", "p.toml"],
        "show_checks = true applies to audit panels",
        lambda t: (t / "p.toml").write_text(_audit_panel_text("show_checks = true", "blind")),
    ),
    Case(
        "show-checks-without-checks",
        ["audit-gold", "gold.json", "--panel", "p.toml", "--no-checks"],
        "sets show_checks: the jurors need the checks (checks cannot be off)",
        lambda t: (t / "p.toml").write_text(_audit_panel_text("show_checks = true")),
    ),
    Case(
        "show-checks-not-a-boolean",
        ["audit-gold", "gold.json", "--panel", "p.toml"],
        "show_checks",
        lambda t: (t / "p.toml").write_text(_audit_panel_text('show_checks = "yes"')),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_input(case: Case, tmp_path: Path) -> None:
    check_case(case, tmp_path)
