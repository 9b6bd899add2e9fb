"""The report is a pydantic model with a committed JSON Schema; scores, reports and verdict
files carry the provenance (jury, litellm, git revision) that reproduces them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata

import jsonschema
import pytest
from pydantic import ValidationError
from test_report import GOLD, audit_doc, make_eval, verdict_docs
from test_verdicts import make_doc
from typer.testing import CliRunner

import jury.version as version
from jury.cli import app
from jury.results.columns import Proportion
from jury.results.render import to_json
from jury.results.report.build import build_report, render_report, report_rows
from jury.results.report.model import REPORT_SCHEMA_FILENAME, ReportDocument, report_schema
from jury.verdicts.assemble import identical_file
from jury.verdicts.documents import dumps_pretty, schema_filename
from jury.verdicts.lock import load_locked, write_locked
from jury.version import git_revision, provenance
from tests.support.helpers import EXAMPLE, REPO
from tests.support.jurytest import says, write_panel

runner = CliRunner()
FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
SCHEMA_DIR = REPO / "verdicts" / "schema"
FORMATS = ("json", "csv", "md", "table")


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    return " ".join(text.split())


def full_report() -> ReportDocument:
    return build_report(make_eval(), GOLD, audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), control="C")


def report_validator(name: str = REPORT_SCHEMA_FILENAME) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# ------------------------------------------------------------------ 1. the ReportDocument model and its schema


def test_build_report_returns_a_typed_report():
    report = full_report()
    assert isinstance(report, ReportDocument)
    a = report.models[0]
    assert a.model == "A" and isinstance(a.strict, Proportion) and (a.strict.k, a.strict.n) == (1, 6)
    assert a.composition.format_equivalence == 2 and report.control.model == "C"
    assert report.correlations.gold_defect_share_vs_strength.strength == "adjudicated"
    assert [r.model for r in report.oracle_routing.models] == ["A", "B", "C", "D"]
    assert report.provenance.model_dump() == provenance()


def test_report_forbids_unknown_and_missing_fields():
    data = full_report().model_dump(mode="json")
    ReportDocument.model_validate(data)
    with pytest.raises(ValidationError, match="surprise"):
        ReportDocument.model_validate({**data, "surprise": 1})
    bad = json.loads(json.dumps(data))
    bad["models"][0]["strict"]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        ReportDocument.model_validate(bad)
    bad = json.loads(json.dumps(data))
    del bad["models"][0]["composition"]["no_majority"]
    with pytest.raises(ValidationError, match="no_majority"):
        ReportDocument.model_validate(bad)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), control="C"),
        dict(strength="strict"),
        dict(audit_docs=[audit_doc({2})], strength=None),
    ],
)
def test_json_output_is_the_model_dump_in_field_order(kwargs):
    report = build_report(make_eval(), GOLD, **kwargs)
    text = render_report(report, "json")
    data = report.model_dump(mode="json")
    assert text == to_json(data)
    optional = {"error_categories", "corrected", "repeat_stability"}  # --taxonomy files, --review-sample, --repeats files
    if "adj_docs" not in kwargs:
        optional |= {"adjudication_uncertainty"}  # written only with adjudication files
    if "audit_docs" not in kwargs:
        optional |= {"audit_uncertainty"}  # written only with audit files
    if "adj_docs" not in kwargs and "audit_docs" not in kwargs:
        optional |= {"jurors"}  # written with adjudication or audit files
    assert list(json.loads(text)) == [f for f in ReportDocument.model_fields if f not in optional]  # the model's field order
    row_fields = [f for f in type(report.models[0]).model_fields if f != "adjudicated_jury" or "adj_docs" in kwargs]
    row_fields = [f for f in row_fields if f != "gold_clean_jury" or "audit_docs" in kwargs]
    row_fields.remove("adjudicated_people")  # written only with a review sample of adjudication records
    assert list(json.loads(text)["models"][0]) == row_fields
    # a report read back from its JSON renders exactly as the model does, in every format
    back = ReportDocument.model_validate_json(text)
    assert back == report
    for fmt in FORMATS:
        assert render_report(json.loads(text), fmt, width=200) == render_report(report, fmt, width=200)
    assert report_rows(json.loads(text)) == report_rows(report)


def test_render_report_refuses_a_dict_that_is_not_a_report():
    data = full_report().model_dump(mode="json")
    del data["oracle_routing"]
    with pytest.raises(ValidationError, match="oracle_routing"):
        render_report(data, "md")


def test_committed_report_schema_is_generated_and_validates():
    committed = SCHEMA_DIR / REPORT_SCHEMA_FILENAME
    assert committed.read_text(encoding="utf-8") == dumps_pretty(report_schema()), (
        "run jury.results.report.model.write_report_schema('verdicts/schema')"
    )
    validator = report_validator()
    for kwargs in (dict(audit_docs=[audit_doc({2, 6})], adj_docs=verdict_docs(), control="C"), dict(strength="strict")):
        data = json.loads(render_report(build_report(make_eval(), GOLD, **kwargs), "json"))
        validator.validate(data)
    assert not validator.is_valid({**data, "surprise": 1})
    bad = json.loads(json.dumps(data))
    bad["models"][0]["rank_delta"] = "up"
    assert not validator.is_valid(bad)
    bad = json.loads(json.dumps(data))
    del bad["correlations"]["routing_vs_mean_difficulty"]
    assert not validator.is_valid(bad)


def test_cli_report_on_the_bundled_example_round_trips_through_the_model(example_store):
    """`jury report --format json` is exactly a ReportDocument's JSON: validated by the committed
    schema, and read back and re-rendered byte for byte (key order included)."""
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "jury",
            "report",
            "run.jsonl",
            "--format",
            "json",
            "--store",
            str(example_store),
            "--workers",
            "1",
        ],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    report_validator().validate(data)
    assert len(data["models"]) == 15 and data["provenance"] == provenance()
    assert render_report(ReportDocument.model_validate_json(res.stdout), "json") == res.stdout


def test_readme_points_to_the_schema_instead_of_typing_the_shape():
    readme = (REPO / "docs" / "report.md").read_text(encoding="utf-8")
    section = readme.split("## JSON output (`jury report --format json`)", 1)[1].split("\n## ", 1)[0]
    assert f"verdicts/schema/{REPORT_SCHEMA_FILENAME}" in section
    assert "jury.results.report.model.ReportDocument" in section
    assert '"composition_pct"' not in section and "```" not in section  # no hand-typed shape left to drift


# ------------------------------------------------------------------ 2. provenance


def test_provenance_names_jury_litellm_and_this_checkout():
    p = provenance()
    assert list(p) == ["jury_version", "litellm_version", "git_revision"]
    assert p["jury_version"] == version.__version__
    assert p["litellm_version"] == metadata.version("litellm")
    if (REPO / ".git").exists() and shutil.which("git"):
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        assert p["git_revision"] == head and len(head) == 40


def test_provenance_does_not_import_litellm():
    code = (
        "import sys; from jury.version import provenance; p = provenance(); print('litellm' in sys.modules, p['litellm_version'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", metadata.version("litellm")]


def test_litellm_not_installed_is_none(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(version.metadata, "version", missing)
    assert provenance()["litellm_version"] is None


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_revision_only_for_a_checkout_of_its_own(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True, env=env)
    assert git_revision(tmp_path) is None  # no commit yet: HEAD does not resolve
    (tmp_path / "f").write_text("x")
    subprocess.run([*git, "-C", str(tmp_path), "add", "f"], check=True, env=env)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "c"], check=True, env=env)
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    version._git_revision.cache_clear()  # read once per process: the code running is the one first loaded
    assert git_revision(tmp_path) == head
    # installed into site-packages of a virtualenv that lives inside some repository: not its revision
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    assert git_revision(site) is None


def test_git_missing_or_failing_is_none_not_an_error(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    version._git_revision.cache_clear()
    monkeypatch.setenv("PATH", str(empty))  # no git on PATH
    assert git_revision(REPO) is None
    fake_checkout = tmp_path / "checkout"
    (fake_checkout / ".git").mkdir(parents=True)
    monkeypatch.undo()
    assert git_revision(fake_checkout) is None  # git fails there

    def hangs(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], 10)

    version._git_revision.cache_clear()
    monkeypatch.setattr(version.subprocess, "run", hangs)
    assert git_revision(REPO) is None
    assert provenance()["git_revision"] is None
    version._git_revision.cache_clear()


def test_score_and_report_json_carry_provenance(project):
    res = invoke("score", "run.jsonl", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert list(data)[:3] == ["jury_version", "provenance", "settings"] and data["provenance"] == provenance()
    res = invoke("report", "run.jsonl", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["provenance"] == provenance()
    report_validator().validate(data)


def test_verdict_file_records_provenance_and_a_rerun_elsewhere_reuses_it(project, fake_llm, monkeypatch):
    for name, _ in FOUR:
        fake_llm.script(name, says("gold_defect"))
    panel = write_panel(project, fake_llm.base_url, FOUR)
    res = invoke("adjudicate", "run.jsonl", "--panel", panel)
    assert res.exit_code == 0, res.output
    [path] = (project / "verdicts").glob("adjudication-*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["provenance"] == provenance()
    assert load_locked(path).provenance.model_dump() == provenance()
    report_validator(schema_filename("adjudication")).validate(data)
    before, calls = path.read_bytes(), fake_llm.calls()
    # the same job from another commit with another litellm: the same verdict set, reused
    other = {**provenance(), "litellm_version": "0.0.1", "git_revision": "f" * 40}
    monkeypatch.setattr("jury.verdicts.assemble.provenance", lambda: other)
    res = invoke("adjudicate", "run.jsonl", "--panel", panel)
    assert res.exit_code == 0 and "up to date" in flat(res.output), res.output
    assert list((project / "verdicts").glob("adjudication-*.json")) == [path]
    assert path.read_bytes() == before and fake_llm.calls() == calls


def test_identical_rerun_ignores_provenance_but_not_the_verdicts(tmp_path):
    """identical_file (the check after a run, e.g. two runs racing) treats a rerun that differs
    only in provenance (and time) as the file already written."""
    folder = tmp_path / "verdicts"
    doc = make_doc("adjudication", tmp_path)
    doc["provenance"] = {"jury_version": "0.1.0", "litellm_version": "1.0.0", "git_revision": "a" * 40}
    path = write_locked(doc, folder / "adjudication-20261129T200000Z.json")
    again = {
        **doc,
        "created_at": "2026-11-30T08:00:00Z",
        "provenance": {"jury_version": "0.1.0", "litellm_version": "1.2.0", "git_revision": None},
    }
    assert identical_file(again, folder) == path
    assert identical_file({**again, "provenance": None}, folder) == path  # or none recorded
    assert identical_file({**again, "settings": {**doc["settings"], "seed": 8}}, folder) is None
