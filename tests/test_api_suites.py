"""`jury.suites`: PLSQLBench's metrics through the library, rendering exactly what `jury suites`
prints; format and error-classification ballots with loopback jurors; bad input is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.helpers import REPO
from tests.support.jurytest import write_panel
from tests.test_suite_classify import RUNS, picker
from tests.test_suites import WORKED, equivalent_when_dates, write_run

FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FORMATS = ("table", "csv", "json", "md")


@pytest.fixture
def example(tmp_path: Path, monkeypatch) -> Path:
    shutil.copy(REPO / "examples" / "plsql-suite" / "run.jsonl", tmp_path / "run.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_bundled_example_renders_as_the_command_prints_it(example: Path) -> None:
    found = jury.suites("run.jsonl", taxonomy="plsqlbench")
    assert isinstance(found, jury.SuiteScores)
    assert {row.model for row in found.strict} == {"model-a", "model-b"} and found.adjudicated is None
    assert found.error_counts is not None and found.error_counts["taxonomy"] == "plsqlbench"
    plain = jury.suites(["run.jsonl"])
    assert plain.error_counts is None
    for fmt in FORMATS:
        with_tax = run_jury(["suites", "run.jsonl", "--taxonomy", "plsqlbench", "-f", fmt], example)
        without = run_jury(["suites", "run.jsonl", "-f", fmt], example)
        assert with_tax.returncode == without.returncode == 0, with_tax.stderr + without.stderr
        assert found.render(fmt) == with_tax.stdout, fmt
        assert plain.render(fmt) == without.stdout, fmt
    assert json.loads(found.to_json())["error_categories"] == found.error_counts


def test_adjudicate_locks_the_verdicts_and_renders_as_the_command(tmp_path: Path, monkeypatch, fake_llm) -> None:
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, WORKED)
    for name, _ in FOUR:
        fake_llm.script(name, equivalent_when_dates)
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    plan = jury.suites("run.jsonl", adjudicate=True, panel=panel, plan_only=True)
    assert fake_llm.requests == [] and not (tmp_path / "verdicts").exists()  # a plan makes no call
    assert plan.plan_only and plan.plan is not None and sum(r["ballots"] for r in plan.plan.rows) == 6
    planned = run_jury(["suites", "run.jsonl", "--adjudicate", "--panel", panel, "--plan"], tmp_path)
    assert planned.returncode == 0 and plan.render() == planned.stdout

    found = jury.suites("run.jsonl", adjudicate=True, panel=panel)
    assert len(fake_llm.requests) == 6  # two candidates x three non-openai jurors
    assert found.path is not None and found.path.parent.name == "verdicts"
    assert {(r["question_id"], r["test"]): r["verdict"] for r in found.records} == {
        ("c", "t1"): "format_equivalence",
        (7, "t1"): "genuine_error",
    }
    assert any(note.startswith("calls this run: 6 ballots asked") for note in found.notes)
    episodes = {(r.model, "episodes"): r.episodes for r in found.adjudicated or []}
    assert episodes[("gpt-x", "episodes")].episode_pass.value == 1  # the credited date makes the episode pass
    # the command finds the same verdict set locked (no call) and prints the same metrics
    again = run_jury(["suites", "run.jsonl", "--adjudicate", "--panel", panel, "-f", "json"], tmp_path)
    assert again.returncode == 0 and len(fake_llm.requests) == 6
    assert found.render("json") == again.stdout and f"up to date: {found.path}" in again.stderr
    from_file = jury.suites("run.jsonl", verdicts=found.path)
    assert from_file.render("csv") == found.render("csv") and from_file.notes == []


def test_classify_counts_the_jurors_categories_as_the_command(tmp_path: Path, monkeypatch, fake_llm) -> None:
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, RUNS)
    for name, _ in FOUR:
        fake_llm.script(name, picker(name))
    panel = write_panel(tmp_path, fake_llm.base_url, FOUR)
    found = jury.suites("run.jsonl", taxonomy="plsqlbench", classify=True, panel=panel, verdicts_out="c.json")
    assert found.path == Path("c.json") and found.error_counts is not None
    assert found.error_counts["models"]["gpt-x"]["logic"] == 1  # the unruled error: three of three pick logic
    assert "by_source" in found.error_counts  # the rules' counts and the jurors' apart
    proc = run_jury(["suites", "run.jsonl", "--taxonomy", "plsqlbench", "--verdicts", "c.json", "-f", "md"], tmp_path)
    assert proc.returncode == 0 and found.render("md") == proc.stdout


def test_plan_and_verdicts_out_go_with_a_juror_job(example: Path) -> None:
    with pytest.raises(jury.InputError, match="plan and verdicts_out go with adjudicate or classify"):
        jury.suites("run.jsonl", plan_only=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"adjudicate": True, "classify": True, "taxonomy": "plsqlbench"}, "adjudicate and classify each write a verdict file"),
        ({"classify": True}, "classify needs a taxonomy"),
        ({"verdicts_out": "v.json"}, "plan and verdicts_out go with adjudicate or classify"),
        ({"taxonomy": "nope"}, "taxonomy file not found"),
        ({"outputs": ["run.jsonl"]}, "run.jsonl: is the input file"),
        ({"adjudicate": True, "verdicts_out": "run.jsonl"}, "run.jsonl: is the input file"),
        ({"adjudicate": True, "panel": "audit", "plan_only": True}, "is an audit panel"),
        ({"verdicts": "run.jsonl"}, "run.jsonl"),
    ],
)
def test_bad_input_is_one_line(example: Path, kwargs: dict, message: str) -> None:
    before = (example / "run.jsonl").read_bytes()
    with pytest.raises(jury.JuryError) as caught:
        jury.suites("run.jsonl", **kwargs)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert (example / "run.jsonl").read_bytes() == before


def test_a_sql_run_is_not_a_test_suite_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path, [{"model": "m", "question_id": 1, "sql": "SELECT 1"}])
    with pytest.raises(jury.InputError, match="no test-suite records"):
        jury.suites("run.jsonl")
