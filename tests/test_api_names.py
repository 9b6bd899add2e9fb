"""The library and the command line agree on names and positions: every option of a job's
command is an argument of its function under the option's own name (snake case), the file a
job reads first is its first positional argument, the old spellings still work as aliases,
the filters are spelled alike on check-gold and audit-gold, and a rank is printed alike by
score and report."""

from __future__ import annotations

import inspect
import re

import pytest
import typer
from test_api_jobs import adjudication_panel, audit_panel, cli

import jury
from jury.cli import app
from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE

JOBS = {
    "score": "score",
    "report": "report",
    "adjudicate": "adjudicate",
    "audit-gold": "audit_gold",
    "check-gold": "check_gold",
    "reaudit": "reaudit",
    "calibrate": "calibrate",
    "suites": "suites",
    "verify": "verify",
    "compare-panels": "compare_panels",
}
# what a command renders or where it writes it: the command's own, not the job's
PRESENTATION = {"fmt", "output", "per_question", "wide", "plots", "json_out", "csv_out", "markdown_out"}
PRESENTATION |= {"gold_defects"}  # `jury report --gold-defects` is another job: jury.gold_defects (test_gold_defects.py)
# `jury score --error-sample` is another job on the score: jury.error_sample(score, group=, per_stratum=, seed=)
PRESENTATION |= {"error_sample", "group", "per_stratum", "seed"}


def arguments(job) -> dict:
    """A job function's keyword arguments and their defaults, the fields of its ``options`` model
    (jury.score's ScoreOptions, jury.report's ReportOptions, each also a keyword argument) included."""
    params = inspect.signature(job).parameters
    found = {n: p.default for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    if "options" in params:  # `options: SomeOptions | None`, its fields the function's **overrides
        model = job.__globals__[params["options"].annotation.split(" | ")[0]]
        del found["options"]
        found.update({n: f.get_default(call_default_factory=True) for n, f in model.model_fields.items()})
    return found


@pytest.mark.parametrize("command", sorted(JOBS))
def test_every_option_of_a_command_is_an_argument_of_its_function_by_the_options_name(command):
    cmd = typer.main.get_command(app).commands[command]
    params = inspect.signature(getattr(jury, JOBS[command])).parameters
    names = arguments(getattr(jury, JOBS[command]))
    first = next(iter(params.values()))
    for p in cmd.params:
        if not any(o.startswith("--") for o in p.opts):  # the command's argument is the function's first
            assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, command
            continue
        if p.name in PRESENTATION:
            continue
        first_long = next(o for o in p.opts if o.startswith("--"))
        assert first_long.lstrip("-").replace("-", "_") == p.name, (command, p.opts, p.name)
        assert p.name in names, f"jury {command} {p.opts}: jury.{JOBS[command]}() has no argument {p.name!r}"


def test_check_gold_takes_the_gold_file_first_as_audit_gold_and_score_take_theirs(monkeypatch):
    monkeypatch.chdir(EXAMPLE)
    for job in (jury.check_gold, jury.audit_gold, jury.score, jury.adjudicate):
        first = next(iter(inspect.signature(job).parameters.values()))
        assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, job.__name__
    given = jury.check_gold("dev.json", db_root="databases", passes="1", question_id=[736, 717])
    named = jury.check_gold(gold="dev.json", db_root="databases", passes="1", question_id=[736, 717])
    assert given.to_json() == named.to_json()
    assert [r.question_id for r in given.results] == [717, 736]


def test_plan_and_model_are_named_as_the_options_and_the_old_names_are_aliases(project, fake_llm):
    panel = adjudication_panel(project, fake_llm)
    shown = cli("adjudicate", "run.jsonl", "--panel", panel, "--plan", "--model", "gpt-x").stdout
    new = jury.adjudicate("run.jsonl", panel=panel, plan=True, model="gpt-x")
    old = jury.adjudicate("run.jsonl", panel=panel, plan_only=True, models=["gpt-x"])
    assert str(new) == str(old) == shown
    assert {r["model"] for r in new.plan.rows} == {"gpt-x"} and new.plan_only
    with pytest.raises(jury.JuryError, match=r"model= and models= are the same argument"):
        jury.adjudicate("run.jsonl", panel=panel, plan=True, model="gpt-x", models="claude-y")
    audit = audit_panel(project, fake_llm)
    assert str(jury.audit_gold(panel=audit, plan=True)) == str(jury.audit_gold(panel=audit, plan_only=True))
    assert fake_llm.calls() == 0


def test_audit_gold_accepts_question_as_check_gold_does(project, fake_llm):
    audit = audit_panel(project, fake_llm)
    short = run_jury(["audit-gold", "--panel", audit, "--plan", "--question", "2"], project)
    long = run_jury(["audit-gold", "--panel", audit, "--plan", "--question-id", "2"], project)
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "1 gold queries" in short.stdout.replace("1 gold query", "1 gold queries")
    assert short.stdout != run_jury(["audit-gold", "--panel", audit, "--plan"], project).stdout
    checked = run_jury(["check-gold", "--question", "2", "--passes", "1", "-f", "json"], project)
    assert checked.returncode == 0 and '"question_id": 2' in checked.stdout


def test_score_and_report_print_a_rank_alike(example_store):
    """score showed "0.845 (2nd)" where report shows "0.845 [...] 2nd": one spelling, report's."""
    score = run_jury(["score", "run.jsonl", "--wide", "-f", "md", "--store", example_store], EXAMPLE)
    report = run_jury(["report", "run.jsonl", "-f", "md", "--store", example_store], EXAMPLE)
    assert score.returncode == report.returncode == 0, score.stderr + report.stderr
    assert not re.search(r"\(\d+(st|nd|rd|th)\)", score.stdout)
    assert re.search(r"\| 0\.\d{3} \d+(st|nd|rd|th) \|", score.stdout)  # a side comparator: "0.822 5th"
    assert re.search(r"\] \d+(st|nd|rd|th) \|", report.stdout) and "bird acc rank" in score.stdout


# what a job's function takes that no command option gives: the caller's own objects and hooks,
# the old spellings kept as aliases, and what `jury report` reads from a Score or a site folder
LIBRARY_ONLY = {"project", "progress", "outputs", "site_dir", "models", "plan_only"}
COMMAND_ARGUMENT = {"report": "score_or_runs", "verify": "paths"}  # the command's positional, named for the library


@pytest.mark.parametrize("command", sorted(JOBS))
def test_every_argument_of_a_function_is_an_option_of_its_command_with_the_same_default(command):
    """The other direction of the contract: what the library can be asked, the command line can
    be asked too, and an option left out means what the argument left out means."""
    cmd = typer.main.get_command(app).commands[command]
    options = {p.name: p for p in cmd.params}
    for name, default in arguments(getattr(jury, JOBS[command])).items():
        if name in LIBRARY_ONLY or COMMAND_ARGUMENT.get(command) == name:
            continue
        assert name in options, f"jury.{JOBS[command]}({name}=...) has no option in `jury {command}`"
        given = options[name].default
        if default is inspect.Parameter.empty or name in PRESENTATION:
            continue
        if default is None or isinstance(default, tuple | list):  # a multiple option: [] or () is "none given"
            assert given in (None, [], ()) or list(given) == list(default or []), (command, name, given, default)
        else:
            assert given == default, (
                f"jury {command} --{name.replace('_', '-')} defaults to {given!r}, the function to {default!r}"
            )
