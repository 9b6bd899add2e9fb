"""Locked verdict files: the audit flag rule, verdicts recomputed from their votes, audits tied
to their gold, prompt templates bound by name, `reaudit --check` that cannot check,
superseded files and idempotent reruns."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_audit import FIVE, audit_juror
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import VerdictError
from jury.judging.rules import audit_flag
from jury.verdicts.documents import LOCK_KEY
from jury.verdicts.lock import content_hash, load_locked
from jury.verdicts.verify import verify_file
from tests.support.badinput import Case, check_case, locked_audit
from tests.support.fakellm import Reply
from tests.support.helpers import REPO
from tests.support.jurytest import says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    return " ".join(text.split())


def audit_panel(project, fake_llm, flags=None):
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror((flags or {}).get(name, set())))
    return write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")


def relock(path: Path, mutate) -> None:
    """Forge a file the way a careless or dishonest editor would: change it, then re-lock it."""
    data = json.loads(path.read_text())
    mutate(data)
    data.pop(LOCK_KEY, None)
    data[LOCK_KEY] = content_hash(data)
    path.write_text(json.dumps(data, indent=2))


# ------------------------------------------------------------------ one juror cannot flag


def test_a_flag_needs_a_strict_majority_of_the_panel():
    assert audit_flag(["defective", None, None, None, None]) == (False, False)  # was (True, True)
    assert audit_flag(["defective", "defective", "defective", None, None]) == (True, True)
    assert audit_flag(["defective", "defective", None, "valid", "valid"]) == (False, False)  # undecided
    assert audit_flag(["defective", "valid", "valid", None, "valid"]) == (False, True)
    assert audit_flag(["defective", None, "valid"], quorum=2) == (False, False)
    assert audit_flag(["defective", "defective", "valid"], quorum=2) == (True, True)


def test_one_juror_of_five_does_not_flag_a_gold_query(project, fake_llm):
    fake_llm.script("ja", audit_juror({1}))
    for name in ("jb", "jc", "jd", "je"):
        fake_llm.script(name, Reply(content="no idea"))  # abstains on everything
    panel = write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = invoke("audit-gold", "gold.json", "--panel", panel, "--question-id", "1", "-o", "verdicts/a.json")
    assert res.exit_code == 0, res.output
    (rec,) = load_locked(project / "verdicts" / "a.json").records
    assert (rec.flagged, rec.decided) == (False, False)
    assert "flagged 0 of 1 gold queries" in flat(res.output) and "undecided 1" in flat(res.output)


# ------------------------------------------------------------------ verdicts follow from votes


def test_a_forged_audit_flag_is_refused_even_with_a_fresh_lock(project, fake_llm):
    panel = audit_panel(project, fake_llm)
    assert invoke("audit-gold", "gold.json", "--panel", panel, "-o", "verdicts/a.json").exit_code == 0
    path = project / "verdicts" / "a.json"

    def forge(data):  # flag question 2 although all five jurors said valid; keep the summary consistent
        rec = next(r for r in data["records"] if r["question_id"] == 2)
        rec["flagged"] = True
        data["summary"]["overall"]["flagged"] += 1

    relock(path, forge)
    with pytest.raises(VerdictError, match=r"records\.1 \(question 2\): flagged=True"):
        load_locked(path)
    res = invoke("score", "run.jsonl", "--audit", path)
    assert res.exit_code == 1 and "records.1 (question 2)" in res.output
    res = invoke("verify", path)
    assert res.exit_code == 1 and "FAILED" in res.output and "records.1" in res.output


def test_a_forged_adjudication_verdict_is_refused(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json").exit_code == 0
    path = project / "verdicts" / "adj.json"
    original = path.read_text()

    def credit_first(data):  # credit one failure; verdict, credited and summary agree with each other
        data["records"][0]["verdict"] = "gold_defect"
        data["records"][0]["credited"] = True
        data["summary"]["credited"] += 1

    relock(path, credit_first)
    res = invoke("score", "run.jsonl", "--verdicts", path)
    assert res.exit_code == 1 and "records.0 (model" in res.output and "'genuine_error'" in res.output

    def relabel_votes(data):  # change the mapped categories too, but not what the jurors answered
        for v in data["records"][0]["votes"]:
            v["category"] = "gold_defect"

    path.write_text(original)
    relock(path, lambda d: (credit_first(d), relabel_votes(d)))
    with pytest.raises(VerdictError, match="does not follow from its answer"):
        load_locked(path)

    path.write_text(original)
    relock(path, lambda d: d["summary"].__setitem__("credited", 5))
    with pytest.raises(VerdictError, match="summary.credited"):
        load_locked(path)


# ------------------------------------------------------------------ audits tied to their gold


def test_an_audit_of_another_gold_is_refused(project, fake_llm):
    panel = audit_panel(project, fake_llm, {n: {1} for n in ("ja", "jb", "jc")})
    assert invoke("audit-gold", "gold.json", "--panel", panel, "-o", "verdicts/a.json").exit_code == 0
    doc = load_locked(project / "verdicts" / "a.json")
    from jury.execution.store import execution_key
    from jury.inputs.io import sha256_file

    db_sha = sha256_file(project / "dbs" / "shop" / "shop.sqlite")
    rec = next(r for r in doc.records if r.question_id == 1)
    assert rec.gold_key == execution_key(db_sha, "SELECT name FROM item WHERE colour = 'red'")
    assert invoke("score", "run.jsonl", "--audit", "verdicts/a.json").exit_code == 0

    gold = json.loads((project / "gold.json").read_text())
    gold[0]["SQL"] = "SELECT name FROM item WHERE colour = 'red' ORDER BY name"  # the gold query changed
    (project / "gold2.json").write_text(json.dumps(gold))
    for cmd in ("score", "report"):
        res = invoke(cmd, "run.jsonl", "--gold", "gold2.json", "--audit", "verdicts/a.json")
        assert res.exit_code == 1 and "question 1: the audit judged another gold query" in flat(res.output), cmd
    original = json.loads((project / "gold.json").read_text())
    (project / "gold3.json").write_text(json.dumps([g for g in original if g["question_id"] != 4]))
    res = invoke("score", "run.jsonl", "--gold", "gold3.json", "--audit", "verdicts/a.json")
    assert res.exit_code == 1 and "audits question 4, which is not in the gold file" in flat(res.output)


def test_an_audit_without_gold_keys_is_accepted_only_for_the_gold_it_bound(project, fake_llm):
    panel = audit_panel(project, fake_llm, {n: {1} for n in ("ja", "jb", "jc")})
    assert invoke("audit-gold", "gold.json", "--panel", panel, "-o", "verdicts/a.json").exit_code == 0
    path = project / "verdicts" / "a.json"
    relock(path, lambda d: [r.pop("gold_key") for r in d["records"]])  # as the previous version wrote it
    assert invoke("score", "run.jsonl", "--audit", path).exit_code == 0  # same gold bytes: safe
    gold = json.loads((project / "gold.json").read_text())
    gold[0]["SQL"] += " ORDER BY name"
    (project / "gold.json").write_text(json.dumps(gold))
    res = invoke("score", "run.jsonl", "--audit", path)
    assert res.exit_code == 1 and "re-run `jury audit-gold`" in flat(res.output)


# ------------------------------------------------------------------ templates bound by name


def test_prompt_templates_are_bound_by_name_not_by_install_path(project, fake_llm, tmp_path_factory):
    panel = audit_panel(project, fake_llm)
    assert invoke("audit-gold", "gold.json", "--panel", panel, "--question-id", "1", "-o", "verdicts/a.json").exit_code == 0
    doc = load_locked(project / "verdicts" / "a.json")
    assert {k: b.path for k, b in doc.prompts.items()} == {"audit-v1": "jury:prompts/audit-v1.md"}
    # the whole project moved elsewhere: the shipped template is still found and checked
    moved = tmp_path_factory.mktemp("moved") / "proj"
    shutil.copytree(project, moved)
    report = verify_file(moved / "verdicts" / "a.json")
    assert report.ok and "prompts[audit-v1] jury:prompts/audit-v1.md" in report.checked, report


def test_a_custom_template_is_bound_relative_to_its_panel(project, fake_llm):
    from jury.judging.panels import PROMPTS_DIR

    (project / "prompts").mkdir()
    template = project / "prompts" / "my-audit.md"
    template.write_text((PROMPTS_DIR / "audit-v1.md").read_text())
    panel = audit_panel(project, fake_llm)
    panel.write_text(panel.read_text().replace("k = 5\n", 'k = 5\nprompt = "my-audit.md"\n', 1))
    assert invoke("audit-gold", "gold.json", "--panel", panel, "--question-id", "1", "-o", "verdicts/a.json").exit_code == 0
    doc = load_locked(project / "verdicts" / "a.json")
    assert [b.path for b in doc.prompts.values()] == ["panel:prompts/my-audit.md"]
    assert "prompts[my-audit] panel:prompts/my-audit.md" in verify_file(project / "verdicts" / "a.json").checked
    template.write_text(template.read_text() + "\nBe strict.\n")
    res = invoke("verify", "verdicts/a.json")
    assert res.exit_code == 1 and "prompts[my-audit]" in res.output


# ------------------------------------------------------------------ reaudit --check that cannot check


def test_reaudit_check_exits_4_when_it_cannot_check(project, fake_llm):
    panel = audit_panel(project, fake_llm)
    assert invoke("audit-gold", "gold.json", "--panel", panel, "--question-id", "1").exit_code == 0
    assert invoke("reaudit", "--check").exit_code == 0
    panel.rename(project / "audit-moved.toml")
    res = invoke("reaudit", "--check")
    assert res.exit_code == 4 and "panel file ../audit.toml is absent" in flat(res.output)
    res = invoke("reaudit")
    assert res.exit_code == 4 and "cannot check 1 of 1" in flat(res.output)
    (project / "audit-moved.toml").rename(panel)
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    assert invoke("reaudit", "--check").exit_code == 1  # stale stays 1


# ------------------------------------------------------------------ superseded files


def swap_juror(panel: Path, old: str, new: str) -> None:
    panel.write_text(
        panel.read_text().replace(f'name = "{old}"\nmodel = "openai/{old}"', f'name = "{new}"\nmodel = "openai/{new}"')
    )


def test_superseded_files_verify_and_are_refused_by_score_and_report(project, fake_llm):
    panel = audit_panel(project, fake_llm, {"ja": {1}, "jb": {1}, "jc": {1}})
    fake_llm.script("je2", audit_juror({2}))
    assert invoke("audit-gold", "gold.json", "--panel", panel, "-o", "verdicts/a.json").exit_code == 0
    swap_juror(panel, "je", "je2")
    res = invoke("reaudit")
    assert res.exit_code == 0, res.output
    (new,) = [p for p in (project / "verdicts").glob("*.json") if p.name != "a.json"]
    res = invoke("verify", "verdicts/a.json", new)
    assert res.exit_code == 0, res.output
    assert f"OK verdicts/a.json (valid, superseded by verdicts/{new.name}" in flat(res.output)
    for cmd in ("score", "report"):
        res = invoke(cmd, "run.jsonl", "--audit", "verdicts/a.json")
        assert res.exit_code == 1 and f"superseded by verdicts/{new.name}" in flat(res.output), cmd
        assert "--allow-superseded" in res.output
        assert invoke(cmd, "run.jsonl", "--audit", "verdicts/a.json", "--allow-superseded").exit_code == 0, cmd
        assert invoke(cmd, "run.jsonl", "--audit", new).exit_code == 0, cmd
    # a superseded file whose lock no longer holds still fails
    old = project / "verdicts" / "a.json"
    old.write_text(old.read_text().replace("scripted audit of 1", "scripted audit of 9", 1))
    assert invoke("verify", old).exit_code == 1


def readme_recipes() -> tuple[str, str]:
    """The cron line and the CI `run:` line of the docs' re-audit page, as written there."""
    text = (REPO / "docs" / "reaudit.md").read_text()
    cron = re.search(r"```cron\n\S+ \S+ \S+ \S+ \S+\s+(.*?)\n```", text, re.S).group(1)
    ci = re.search(r"- run: pip install -e \. && (.*?)\n", text).group(1)
    return cron, ci


def run_shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_readme_cron_and_ci_recipes_survive_two_reaudits(project, fake_llm):
    cron, ci = readme_recipes()
    assert "jury verify verdicts/*.json" in ci and "reaudit --check" in ci and "reaudit --check" in cron
    cron = re.sub(r"^cd \S+ && ", "", cron)
    assert shutil.which("jury", path=str(Path(sys.executable).parent)), "the jury script is not installed"
    panel = audit_panel(project, fake_llm, {"ja": {1}, "jb": {1}})
    # the recipes cap the cost (--max-cost 25): loopback test jurors have no price, so they say they are free
    Path(panel).write_text(Path(panel).read_text().replace("[[jurors]]\n", "[[jurors]]\nfree = true\n"))
    fake_llm.script("je2", audit_juror({1}))
    fake_llm.script("je3", audit_juror(set()))
    assert invoke("audit-gold", "gold.json", "--panel", panel).exit_code == 0
    assert run_shell(ci, project).returncode == 0
    for old, new in (("je", "je2"), ("je2", "je3")):  # the panel changes twice; cron re-audits each time
        swap_juror(panel, old, new)
        assert run_shell(ci, project).returncode == 1  # stale: CI notices
        proc = run_shell(cron, project)
        assert proc.returncode == 0, (proc.stdout, proc.stderr, (project / "reaudit.log").read_text())
        proc = run_shell(ci, project)
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
    files = sorted((project / "verdicts").glob("audit-*.json"))
    assert len(files) == 3
    assert "superseded by" in run_shell("jury verify verdicts/*.json", project).stdout
    assert "re-ran" in (project / "reaudit.log").read_text()


# ------------------------------------------------------------------ idempotent reruns


@pytest.mark.slow
def test_rerunning_the_same_job_with_the_same_output_is_up_to_date(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json").exit_code == 0
    path = project / "verdicts" / "adj.json"
    before, calls = path.read_bytes(), fake_llm.calls()
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json")
    assert res.exit_code == 0, res.output
    assert "up to date" in flat(res.output) and path.read_bytes() == before and fake_llm.calls() == calls
    # without -o the same job finds the locked file too: no second copy
    res = invoke("adjudicate", "run.jsonl", "--panel", panel)
    assert res.exit_code == 0 and "up to date" in flat(res.output)
    assert [p.name for p in (project / "verdicts").glob("*.json")] == ["adj.json"]
    audit = audit_panel(project, fake_llm)
    assert invoke("audit-gold", "gold.json", "--panel", audit, "-o", "verdicts/a.json").exit_code == 0
    calls = fake_llm.calls()
    res = invoke("audit-gold", "gold.json", "--panel", audit, "-o", "verdicts/a.json")
    assert res.exit_code == 0 and "up to date" in flat(res.output) and fake_llm.calls() == calls


def test_another_verdict_set_aimed_at_a_locked_file_is_refused_before_any_call(project, fake_llm):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    assert invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json").exit_code == 0
    path = project / "verdicts" / "adj.json"
    before, calls = path.read_bytes(), fake_llm.calls()
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "--seed", "5", "-o", "verdicts/adj.json")
    assert res.exit_code == 1 and "settings.seed" in res.output and "nothing was called" in flat(res.output)
    assert fake_llm.calls() == calls and path.read_bytes() == before
    swap_juror(panel, "jd", "jx")
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/adj.json")
    assert res.exit_code == 1 and "panel.jurors" in res.output and fake_llm.calls() == calls
    audit = audit_panel(project, fake_llm)
    res = invoke("audit-gold", "gold.json", "--panel", audit, "-o", "verdicts/adj.json")
    assert res.exit_code == 1 and "kind" in res.output and fake_llm.calls() == calls
    (project / "verdicts" / "notes.json").write_text("{}")
    res = invoke("audit-gold", "gold.json", "--panel", audit, "-o", "verdicts/notes.json")
    assert res.exit_code == 1 and "not a locked verdict file" in res.output and fake_llm.calls() == calls


def test_an_existing_file_that_is_not_a_verdict_file_is_refused_before_any_query_runs(project, fake_llm):
    """The writer would refuse it anyway; refusing it first spares every execution."""
    from jury.execution.store import Store

    panel = write_panel(project, fake_llm.base_url, FOUR)
    (project / "notes.json").write_text("{}")
    res = invoke("adjudicate", "run.jsonl", "--panel", panel, "-o", "notes.json")
    assert res.exit_code == 1 and "notes.json: already exists and is not a locked verdict file" in res.output
    assert "nothing was run" in flat(res.output) and fake_llm.calls() == 0
    with Store(project / ".jury" / "store.db") as store:
        assert store.db.execute("SELECT count(*) FROM executions").fetchone()[0] == 0
    assert (project / "notes.json").read_text() == "{}"


# ------------------------------------------------------------------ bad input, through the real CLI


def _superseded(tmp: Path) -> None:
    from jury.verdicts.lock import load_locked

    old = locked_audit(tmp, "a.json")
    locked_audit(tmp, "b.json", supersedes=load_locked(old).content_sha256)


BAD_INPUT = [
    Case(
        "superseded-audit-in-score",
        ["score", "run.jsonl", "--audit", "verdicts/a.json"],
        "verdicts/a.json: superseded by verdicts/b.json",
        setup=_superseded,
        unchanged=["verdicts/a.json"],
    ),
    Case(
        "superseded-audit-in-report",
        ["report", "run.jsonl", "--audit", "verdicts/a.json"],
        "pass --allow-superseded",
        setup=_superseded,
    ),
    Case(
        "flag-not-from-votes",
        ["score", "run.jsonl", "--audit", "verdicts/a.json"],
        "records.0 (question 1): flagged=True",
        setup=lambda t: locked_audit(t, flagged_q1=True),
    ),
    Case(
        "audit-of-another-gold",
        ["score", "run.jsonl", "--audit", "verdicts/a.json"],
        "audits question 99, which is not in the gold file",
        setup=lambda t: locked_audit(t, qid=99),
    ),
    Case(
        "reaudit-check-cannot-check",
        ["reaudit", "--check"],
        "cannot check 1 of 1 verdict files",
        setup=lambda t: locked_audit(t, panel_path="../panel.toml"),
        code=4,
    ),
    Case(
        "output-is-not-a-verdict-file",
        ["audit-gold", "-o", "run.jsonl", "--panel", "audit"],
        "run.jsonl: already exists and is not a locked verdict file",
        unchanged=["run.jsonl"],
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_INPUT, ids=[c.id for c in BAD_INPUT])
def test_bad_input(case, tmp_path):
    check_case(case, tmp_path)


def test_superseded_by_parses_only_files_that_can_name_the_old_one(project, fake_llm, monkeypatch):
    """A file whose text holds neither the old file's hash nor a \\u escape cannot supersede it and
    is not parsed; a successor spelling the hash in \\u escapes (the same JSON value, the same lock)
    is still found."""
    import jury.verdicts.lock as lock

    panel = audit_panel(project, fake_llm, {"ja": {1}, "jb": {1}, "jc": {1}})
    fake_llm.script("je2", audit_juror({2}))
    assert invoke("audit-gold", "gold.json", "--panel", panel, "-o", "verdicts/a.json").exit_code == 0
    assert invoke("audit-gold", "gold.json", "--panel", panel, "--split", "dev", "-o", "verdicts/other.json").exit_code == 0
    swap_juror(panel, "je", "je2")
    assert invoke("reaudit", "verdicts/a.json").exit_code == 0
    folder = project / "verdicts"
    (new,) = [p for p in folder.glob("*.json") if p.name not in ("a.json", "other.json")]
    old = load_locked(folder / "a.json")
    parsed: list[str] = []
    real = lock.loads_document
    monkeypatch.setattr(lock, "loads_document", lambda text, where: parsed.append(Path(where).name) or real(text, where))
    assert lock.superseded_by(folder / "a.json", old) == [new]
    assert parsed == [new.name]  # other.json (and any schema file) never parsed

    sha = old.content_sha256
    escaped = "".join(f"\\u{ord(c):04x}" for c in sha)
    new.write_text(new.read_text().replace(f'"supersedes": "{sha}"', f'"supersedes": "{escaped}"'))
    assert sha not in new.read_text()
    parsed.clear()
    assert lock.superseded_by(folder / "a.json", old) == [new]  # its lock still holds: the same value
    assert new.name in parsed
