"""The juror jobs of the public API (jury.adjudicate, jury.audit_gold, jury.reaudit), called
through `import jury` against the loopback scripted panel: they write the verdict files the
commands write, a plan calls nobody, the cost cap stops them, and an output that is an input
is refused before any call."""

import json
import shutil
from pathlib import Path

import pytest
from test_audit import FIVE, audit_juror
from typer.testing import CliRunner

import jury
from jury.cli import app
from tests.support.jurytest import says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
PROVENANCE = {"created_at", "content_sha256"}  # when it was written and the hash over it: nothing else may differ


def cli(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def same_but_provenance(a: Path, b: Path, also=()) -> None:
    left, right = json.loads(a.read_text()), json.loads(b.read_text())
    differ = {k for k in left.keys() | right.keys() if left.get(k) != right.get(k)}
    assert differ <= PROVENANCE | set(also)
    assert [k for k in left if k not in differ] == [k for k in right if k not in differ]  # the same order too


def adjudication_panel(project, fake_llm) -> Path:
    fake_llm.script("ja", says("gold_defect"))
    fake_llm.script("jb", says("genuine_error"))
    fake_llm.script("jc", says("gold_defect"))
    fake_llm.script("jd", says("format_equivalence"))
    return write_panel(project, fake_llm.base_url, FOUR)


def audit_panel(project, fake_llm) -> Path:
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror({1, 2} if name in ("ja", "jb") else {1} if name == "jc" else set()))
    return write_panel(project, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")


# ------------------------------------------------------------------ the same files and text as the commands


def test_adjudicate_writes_the_verdict_file_the_command_writes(project, fake_llm):
    panel = adjudication_panel(project, fake_llm)
    result = jury.adjudicate("run.jsonl", panel=panel, output="verdicts/api.json")
    assert isinstance(result, jury.Adjudication) and result.path == Path("verdicts/api.json")
    assert result.calls is not None and result.calls.asked == fake_llm.calls() > 0
    assert {r.model: r.composition["gold_defect"] for r in result.models} == {"gpt-x": 0, "claude-y": 3}
    assert len(result.records) == 6 and result.agreement is not None
    asked = fake_llm.calls()

    res = cli("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/cli.json")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == asked  # every vote came from the store
    same_but_provenance(project / "verdicts" / "api.json", project / "verdicts" / "cli.json")

    again = jury.adjudicate("run.jsonl", panel=panel, output="verdicts/api.json")  # already locked: nothing asked
    assert again.calls is None and again.path == result.path
    assert cli("adjudicate", "run.jsonl", "--panel", panel, "-o", "verdicts/api.json").stdout == again.render()
    assert "up to date: verdicts/api.json already holds this verdict set" in str(again)
    assert json.loads(again.to_json())["models"] == json.loads(result.to_json())["models"]
    assert result.to_csv().startswith("model,routed,strict,strict_low,strict_high,adjudicated,")
    assert "| claude-y | 0.000 | 1.000 [0.439, 1.000] | 3 | 3 |" in result.to_markdown()


def test_audit_gold_writes_the_audit_file_the_command_writes(project, fake_llm):
    panel = audit_panel(project, fake_llm)
    result = jury.audit_gold("gold.json", panel=panel, split="dev", output="verdicts/api.json")
    assert isinstance(result, jury.Audit) and result.summary is not None
    assert result.summary["overall"] == {"flagged": 1, "questions": 4, "rate": 0.25}
    assert result.checks is not None and result.checks["checked"] == 4  # the deterministic checks ran first
    asked = fake_llm.calls()
    assert asked == 20

    res = cli("audit-gold", "gold.json", "--panel", panel, "--split", "dev", "-o", "verdicts/cli.json")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls() == asked
    same_but_provenance(project / "verdicts" / "api.json", project / "verdicts" / "cli.json")
    again = jury.audit_gold("gold.json", panel=panel, split="dev", output="verdicts/api.json")
    assert cli("audit-gold", "gold.json", "--panel", panel, "--split", "dev", "-o", "verdicts/api.json").stdout == str(again)
    assert "flagged 1 of 4 gold queries (25.0%)" in str(again)


def test_reaudit_reruns_what_changed_as_the_command_does(project, fake_llm, monkeypatch):
    panel = audit_panel(project, fake_llm)
    jury.audit_gold(panel=panel)
    (old,) = (project / "verdicts").glob("audit-*.json")
    fresh = jury.reaudit(check=True)
    assert isinstance(fresh, jury.Reaudit) and fresh.exit_code == 0

    fake_llm.script("je2", audit_juror({2, 3}))
    panel.write_text(panel.read_text().replace('name = "je"\nmodel = "openai/je"', 'name = "je2"\nmodel = "openai/je2"'))
    checked = jury.reaudit(check=True)
    assert checked.stale == [old] and checked.exit_code == 1 and checked.reruns == []
    assert str(checked) == cli("reaudit", "--check").stdout

    before = fake_llm.calls()
    result = jury.reaudit()
    assert fake_llm.calls() - before == fake_llm.calls("je2") == 4  # only the changed juror is asked
    (rerun,) = result.reruns
    assert rerun.old == old and jury.load_verdicts(rerun.new).supersedes == jury.load_verdicts(old).content_sha256
    assert "added je2" in str(result) and f"re-ran {old} -> {rerun.new} (supersedes it)" in str(result)
    assert result.to_csv().splitlines()[1] == f"{old},stale,panel ../audit.toml changed,{rerun.new}"

    # the command, in a copy of the project as it was before the re-run (the store keeps je2's votes)
    copy = shutil.copytree(project, project.parent / f"{project.name}-cli")
    (copy / "verdicts" / rerun.new.name).unlink()
    monkeypatch.chdir(copy)
    res = cli("reaudit")
    assert res.exit_code == 0, res.output
    assert fake_llm.calls("je2") == 4  # every vote from the store
    (other,) = set((copy / "verdicts").glob("audit-*.json")) - {copy / "verdicts" / old.name}
    same_but_provenance(rerun.new, other, also={"totals"})  # totals.this_run: the copy's run called nobody
    first, second = jury.load_verdicts(rerun.new).totals, jury.load_verdicts(other).totals
    assert first.model_copy(update={"this_run": None}) == second.model_copy(update={"this_run": None})
    assert (first.this_run.ballots_asked, second.this_run.ballots_asked, second.this_run.votes_reused) == (4, 0, 20)
    called = str(result).replace(str(project), str(copy)).replace(rerun.new.name, other.name)
    assert res.stdout == called.replace("4 ballots asked, 4 requests sent", "0 ballots asked, 0 requests sent").replace(
        "votes reused from the store: 16", "votes reused from the store: 20"
    ).replace("cost this run unknown (litellm has no price for openai/je2)", "cost this run $0.0000")  # the copy called nobody
    assert "cost this run unknown (litellm has no price for openai/je2)" in str(result)  # je2 is unpriced: not $0


def test_reaudit_that_cannot_check_a_file_keeps_what_it_found(project, fake_llm):
    jury.audit_gold(panel=audit_panel(project, fake_llm), question_id=1)
    (project / "gold.json").rename(project / "gold-moved.json")
    with pytest.raises(jury.CannotCheck, match="cannot check 1 of 1 verdict files") as caught:
        jury.reaudit(check=True)
    found = caught.value.partial  # the result so far: what the command prints before the error
    assert found.blocked and "gold file ../gold.json is absent" in str(found)
    res = runner.invoke(app, ["reaudit", "--check"])
    assert res.exit_code == 4 and res.stdout == str(found)


# ------------------------------------------------------------------ plans, caps and guards


def test_plan_only_calls_nobody_and_renders_the_commands_plan(project, fake_llm):
    panel = adjudication_panel(project, fake_llm)
    plan = jury.adjudicate("run.jsonl", panel=panel, plan_only=True)
    assert sum(r["ballots"] for r in plan.plan.rows) == len(plan.plan.ballots) == 18
    assert str(plan) == cli("adjudicate", "run.jsonl", "--panel", panel, "--plan").stdout
    assert plan.path is None and plan.calls is None
    audit = jury.audit_gold(panel=audit_panel(project, fake_llm), plan_only=True)
    assert sum(r["ballots"] for r in json.loads(audit.to_json())["rows"]) == 20
    assert fake_llm.calls() == 0 and not (project / "verdicts").exists()


def test_the_cost_cap_stops_the_job_and_keeps_the_votes(project, fake_llm):
    priced = ["gpt-4o", "gpt-4.1", "gpt-4o-2024-08-06", "gpt-4.1-2025-04-14"]  # priced names, served by the loopback
    for m in priced:
        fake_llm.script(m, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, [(n, f, f"openai/{m}") for (n, f), m in zip(FOUR, priced)])
    with pytest.raises(jury.CostCapReached, match="stopped at the cost cap"):
        jury.adjudicate("run.jsonl", panel=panel, max_cost=0.02)
    asked = fake_llm.calls()
    assert 0 < asked < 18 and not (project / "verdicts").exists()
    done = jury.adjudicate("run.jsonl", panel=panel)  # no cap: the rest, nothing asked twice
    assert done.calls is not None and done.calls.reused == asked and fake_llm.calls() == asked + done.calls.asked


def test_an_output_that_is_an_input_is_refused_before_any_call(project, fake_llm):
    panel = adjudication_panel(project, fake_llm)
    runs = (project / "run.jsonl").read_bytes()
    with pytest.raises(jury.InputError, match="run.jsonl: is the input file run.jsonl"):
        jury.adjudicate("run.jsonl", panel=panel, output="run.jsonl")
    with pytest.raises(jury.InputError, match="gold.json: is the input file"):
        jury.audit_gold(panel=audit_panel(project, fake_llm), output="gold.json")
    assert fake_llm.calls() == 0 and (project / "run.jsonl").read_bytes() == runs
    result = jury.adjudicate("run.jsonl", panel=panel)
    with pytest.raises(jury.InputError, match="is the input file"):
        result.write("run.jsonl")  # a rendering never overwrites what the job read
    with pytest.raises(jury.InputError, match="is a locked verdict file"):
        result.write(result.path)
    assert (project / "run.jsonl").read_bytes() == runs


def test_a_loaded_panel_is_used_as_given_and_left_unchanged(project, fake_llm):
    panel = jury.load_panel(audit_panel(project, fake_llm))
    result = jury.audit_gold(panel=panel, quorum=1, question_id=[1, 2])
    assert panel.quorum is None  # the job's quorum went to a copy
    assert result.summary["overall"] == {"flagged": 2, "questions": 2, "rate": 1.0}  # one defective vote flags
    assert jury.load_verdicts(result.path).panel.quorum == 1


def test_sign_signs_the_written_file(project, fake_llm, tmp_path):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = tmp_path / "id_ed25519"
    key.write_bytes(
        ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
    )
    with pytest.raises(jury.JuryError, match="no such signing key file"):
        jury.adjudicate("run.jsonl", panel=adjudication_panel(project, fake_llm), sign=tmp_path / "nokey")
    assert fake_llm.calls() == 0  # the key is read before any call
    result = jury.adjudicate("run.jsonl", panel=adjudication_panel(project, fake_llm), sign=key)
    assert result.signature == Path(f"{result.path}.sig") and result.signature.is_file()
    assert f"signed {result.path}: {result.signature}" in str(result)
