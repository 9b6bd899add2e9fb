"""Each job's options are declared once, in its options model (jury.options, issue 45): the
command is generated from the model, the library function takes the model or its fields as
keyword arguments, and --help prints each field's description.

The walk over every command fails on a command option declared by hand that duplicates a field
of its job's model; the commands not generated from a model yet are listed in NOT_YET (the list
may only shrink: a command converted must leave it)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Annotated

import pytest
import typer
from pydantic import Field
from typer.testing import CliRunner

import jury
from jury.cli import COMMANDS, app
from jury.cli.common import handle_errors
from jury.options import Flag, OneOrMany, Options, description
from jury.options.command import MODEL_ATTRIBUTE, command
from jury.options.score import ScoreOptions
from tests.test_calibrate import shop  # noqa: F401  (the fixture)

runner = CliRunner()

# the commands whose options are still declared one by one (typer.Option in the signature)
NOT_YET: set[str] = set()  # every command is generated from its job's model


def command_functions() -> dict[str, object]:
    """{"score": its function, "store merge": ..., ...}: every command of `jury`, groups' included."""
    found: dict[str, object] = {}
    for name, (module, attr, group) in COMMANDS.items():
        target = getattr(import_module(f"jury.cli.{module}"), attr)
        if not group:
            found[name] = target
            continue
        for info in target.registered_commands:
            found[f"{name} {info.name or info.callback.__name__.replace('_', '-')}"] = info.callback
    return found


def click_command(path: str):
    cmd = typer.main.get_command(app)
    for word in path.split():
        cmd = cmd.commands[word]
    return cmd


def test_every_command_is_generated_from_its_model_but_the_ones_not_yet():
    functions = command_functions()
    generated = {path.split()[0] for path, fn in functions.items() if hasattr(fn, MODEL_ATTRIBUTE)}
    assert "score" in generated
    assert generated.isdisjoint(NOT_YET), f"converted, so no longer NOT_YET: {sorted(generated & NOT_YET)}"
    assert {path.split()[0] for path in functions} - generated == NOT_YET


@pytest.mark.parametrize("path", sorted(p for p, fn in command_functions().items() if hasattr(fn, MODEL_ATTRIBUTE)))
def test_no_option_declared_by_hand_duplicates_a_field_and_every_field_is_an_option(path):
    model = getattr(command_functions()[path], MODEL_ATTRIBUTE)
    params = {p.name: p for p in click_command(path).params}
    fields = model.model_fields
    field_flags = {flag for name in fields if name in params for flag in params[name].opts}
    by_hand = [p for name, p in params.items() if name not in fields]
    for p in by_hand:  # declared beside the model (the command's arguments): none duplicates a field
        spelled = {p.name, p.name.replace("_", "-"), *(o.lstrip("-").replace("-", "_") for o in p.opts)}
        assert not spelled & set(fields), f"jury {path}: {p.opts} declared by hand duplicates a field of {model.__name__}"
        assert not set(p.opts) & field_flags, f"jury {path}: {p.opts} declared by hand reuses a field's flag"
    for name, field in fields.items():
        assert name in params, f"jury {path}: {model.__name__}.{name} is no option"
        assert params[name].help == description(field), (path, name)
    assert [name for name in params if name in fields] == list(fields)  # the model's order


def test_every_field_of_score_options_is_an_option_of_jury_score_with_its_description():
    params = {p.name: p for p in click_command("score").params}
    for name, field in ScoreOptions.model_fields.items():
        assert params[name].help == description(field) != "", name
        default = field.get_default(call_default_factory=True)
        assert params[name].default == default or (default == [] and params[name].default in (None, [], ())), name


# ------------------------------------------------------------------ the mechanism on a model of its own


class Toy(Options):
    name: str = "x"
    """A name."""
    count: int = Field(2, ge=1, le=5)
    """How many."""
    tag: OneOrMany[str] = []
    """A tag (repeatable)."""
    out: Annotated[Path | None, Flag(flags=("-o", "--out"), writable=True)] = None
    """Where to write."""
    loud: bool = False
    """Shout."""
    fold: Annotated[bool, Flag(negatable=True)] = True
    """Fold case."""


def toy_app(seen: list) -> typer.Typer:
    def run(src: str, o: Toy) -> None:
        """Run the toy."""
        seen.append((src, o))

    built = typer.Typer(rich_markup_mode=None)
    built.command("toy")(
        handle_errors(command(Toy, run, arguments=[inspect.Parameter("src", 1, default=typer.Argument(...), annotation=str)]))
    )
    built.command("other")(lambda: None)  # two commands: `toy` is a subcommand
    return built


def test_a_generated_command_parses_every_field_into_the_model():
    seen: list = []
    result = runner.invoke(
        toy_app(seen), ["toy", "in", "--name", "n", "--count", "3", "--tag", "a", "--tag", "b", "-o", "f", "--loud", "--no-fold"]
    )
    assert result.exit_code == 0, result.output
    assert seen == [("in", Toy(name="n", count=3, tag=["a", "b"], out=Path("f"), loud=True, fold=False))]
    assert runner.invoke(toy_app(seen), ["toy", "in"]).exit_code == 0 and seen[-1] == ("in", Toy())


def test_a_generated_command_has_the_fields_help_and_flags_and_the_models_limits():
    shown = runner.invoke(toy_app([]), ["toy", "--help"], env={"COLUMNS": "200", "TYPER_USE_RICH": "0"}).output
    assert "Run the toy." in shown and "How many." in shown
    assert "-o, --out" in shown and "--fold / --no-fold" in shown and "--no-loud" not in shown
    # the limit is the model's, said as the library and jury.toml say it (not click's range error, exit 2)
    out_of_range = runner.invoke(toy_app([]), ["toy", "in", "--count", "9"])
    assert out_of_range.exit_code == 1 and out_of_range.output == "Error: --count must be at most 5, got 9\n"


# ------------------------------------------------------------------ the library takes the model or its fields


def test_score_takes_the_options_model_or_its_fields_alike(example_store, monkeypatch):
    from tests.support.helpers import EXAMPLE

    monkeypatch.chdir(EXAMPLE)
    by_keyword = jury.score("run.jsonl", store=example_store, comparator="bird")
    by_model = jury.score("run.jsonl", jury.ScoreOptions(store=example_store, comparator="bird"))
    overridden = jury.score("run.jsonl", jury.ScoreOptions(store=example_store), comparator="bird")
    assert by_keyword.to_json() == by_model.to_json() == overridden.to_json()


def test_score_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"score\(\) got an unexpected keyword argument 'gold_file'"):
        jury.score("run.jsonl", gold_file="dev.json")
    with pytest.raises(jury.InputError, match=r"^repeats must be at least 1, got 0$"):
        jury.score("run.jsonl", repeats=0)
    with pytest.raises(jury.InputError, match=r"^timeout must be a number, got 'soon'$"):
        jury.score("run.jsonl", timeout="soon")


def test_the_options_models_load_without_typer():
    code = "import sys, jury.options.score, jury.options.report, jury.options.adjudicate, jury.options.audit, jury.options.reaudit, jury.options.compare_panels, jury.options.check_gold, jury.options.calibrate, jury.options.suites, jury.options.verify, jury.options.store, jury.options.batch, jury.options.db, jury.options.local_juror, jury.options.imports, jury.options.labels; assert 'typer' not in sys.modules and 'jury.jobs' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_report_takes_the_options_model_or_its_fields_alike(example_store, monkeypatch):
    from tests.support.helpers import EXAMPLE

    monkeypatch.chdir(EXAMPLE)
    by_keyword = jury.report("run.jsonl", store=example_store, comparator="bird", seed=3)
    by_model = jury.report("run.jsonl", jury.ReportOptions(store=example_store, comparator="bird", seed=3))
    overridden = jury.report("run.jsonl", jury.ReportOptions(store=example_store, seed=3), comparator="bird")
    assert by_keyword.render("json") == by_model.render("json") == overridden.render("json")
    scored = jury.score("run.jsonl", store=example_store, db="superhero")
    assert jury.report(scored, jury.ReportOptions(seed=3)).render("json") == jury.report(scored, seed=3).render("json")
    with pytest.raises(jury.InputError, match=r"^db=\['other'\], but the Score was made with db=\['superhero'\]"):
        jury.report(scored, jury.ReportOptions(db="other"))  # db given in the model is checked as a keyword is


def test_report_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"report\(\) got an unexpected keyword argument 'gold_file'"):
        jury.report("run.jsonl", gold_file="dev.json")
    with pytest.raises(jury.InputError, match=r"^seed must be a whole number, got 'soon'$"):
        jury.report("run.jsonl", seed="soon")
    with pytest.raises(jury.InputError, match=r"^unknown strength 'strong'"):
        jury.report("run.jsonl", jury.ReportOptions(strength="strong"))


def test_adjudicate_takes_the_options_model_or_its_fields_alike(project, fake_llm):
    from test_api_jobs import adjudication_panel, cli

    panel = adjudication_panel(project, fake_llm)
    shown = cli("adjudicate", "run.jsonl", "--panel", panel, "--plan", "--model", "gpt-x", "--repeats", "2").stdout
    by_keyword = jury.adjudicate("run.jsonl", panel=panel, plan=True, model="gpt-x", repeats=2)
    by_model = jury.adjudicate("run.jsonl", jury.AdjudicateOptions(panel=panel, plan=True, model=["gpt-x"], repeats=2))
    overridden = jury.adjudicate("run.jsonl", jury.AdjudicateOptions(panel=panel, plan=True), model="gpt-x", repeats=2)
    assert str(by_keyword) == str(by_model) == str(overridden) == shown
    assert fake_llm.calls() == 0


def test_adjudicate_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"adjudicate\(\) got an unexpected keyword argument 'panels'"):
        jury.adjudicate("run.jsonl", panels="default")
    with pytest.raises(jury.InputError, match=r"^repeats must be at least 1, got 0$"):
        jury.adjudicate("run.jsonl", repeats=0)
    with pytest.raises(jury.InputError, match=r"^review_passes must be at most 1, got 2$"):
        jury.adjudicate("run.jsonl", review_passes=2)


def test_audit_gold_takes_the_options_model_or_its_fields_alike(project, fake_llm):
    from test_api_jobs import audit_panel, cli

    panel = audit_panel(project, fake_llm)
    shown = cli("audit-gold", "--panel", panel, "--plan", "--question", "2", "--question", "3", "--no-checks").stdout
    by_keyword = jury.audit_gold(panel=panel, plan=True, question_id=[2, 3], checks=False)
    by_model = jury.audit_gold(None, jury.AuditOptions(panel=panel, plan=True, question_id=["2", "3"], checks=False))
    overridden = jury.audit_gold(
        options=jury.AuditOptions(panel=panel, question_id=2, checks=False), plan=True, question_id=[2, 3]
    )
    assert str(by_keyword) == str(by_model) == str(overridden) == shown != str(jury.audit_gold(panel=panel, plan=True))
    assert fake_llm.calls() == 0


def test_audit_gold_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"audit_gold\(\) got an unexpected keyword argument 'questions'"):
        jury.audit_gold("dev.json", questions=[1])
    with pytest.raises(jury.InputError, match=r"^quorum must be at least 1, got 0$"):
        jury.audit_gold("dev.json", quorum=0)


def test_reaudit_takes_the_options_model_or_its_fields_alike(project, fake_llm):
    from test_api_jobs import audit_panel, cli

    jury.audit_gold(panel=audit_panel(project, fake_llm), question_id=1)
    shown = cli("reaudit", "--check").stdout
    by_keyword = jury.reaudit(check=True)
    by_model = jury.reaudit(None, jury.ReauditOptions(check=True))
    overridden = jury.reaudit(options=jury.ReauditOptions(max_cost=1), check=True)
    assert str(by_keyword) == str(by_model) == str(overridden) == shown
    assert by_keyword.check and by_keyword.exit_code == 0


def test_reaudit_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"reaudit\(\) got an unexpected keyword argument 'check_only'"):
        jury.reaudit(check_only=True)
    with pytest.raises(jury.InputError, match=r"^max_cost must be at least 0, got -1$"):
        jury.reaudit(max_cost=-1)


def test_compare_panels_takes_the_options_model_or_its_fields_alike(tmp_path):
    from test_compare_panels import HAND, write_audit, write_gold

    gold = write_gold(tmp_path)
    a = write_audit(tmp_path, "a.json", {q: x for q, (x, _) in HAND.items()}, gold)
    b = write_audit(tmp_path, "b.json", {q: y for q, (_, y) in HAND.items()}, gold)
    by_keyword = jury.compare_panels(a, b, resamples=50, seed=2)
    by_model = jury.compare_panels(a, b, jury.ComparePanelsOptions(resamples=50, seed=2))
    overridden = jury.compare_panels(a, b, jury.ComparePanelsOptions(resamples=50, seed=9), seed=2)
    assert by_keyword.to_json() == by_model.to_json() == overridden.to_json() != jury.compare_panels(a, b, resamples=50).to_json()


def test_compare_panels_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"compare_panels\(\) got an unexpected keyword argument 'samples'"):
        jury.compare_panels("a.json", "b.json", samples=10)
    with pytest.raises(jury.InputError, match=r"^resamples must be at least 0, got -1$"):
        jury.compare_panels("a.json", "b.json", resamples=-1)
    with pytest.raises(jury.InputError, match=r"^confidence must be at most 0.999, got 1.5$"):
        jury.compare_panels("a.json", "b.json", confidence=1.5)


def test_check_gold_takes_the_options_model_or_its_fields_alike(monkeypatch):
    from tests.support.helpers import EXAMPLE

    monkeypatch.chdir(EXAMPLE)
    by_keyword = jury.check_gold("dev.json", passes="1", question_id=[736, 717], workers=1)
    by_model = jury.check_gold("dev.json", jury.CheckGoldOptions(passes="1", question_id=["736", "717"], workers=1))
    overridden = jury.check_gold(
        "dev.json", jury.CheckGoldOptions(passes="2", question_id=717, workers=1), passes=[1], question_id=[736, 717]
    )
    assert by_keyword.to_json() == by_model.to_json() == overridden.to_json()
    assert [r.question_id for r in by_keyword.results] == [717, 736]


def test_check_gold_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"check_gold\(\) got an unexpected keyword argument 'questions'"):
        jury.check_gold("dev.json", questions=[1])
    with pytest.raises(jury.InputError, match=r"^windows must be at least 1, got 0$"):
        jury.check_gold("dev.json", windows=0)


def test_calibrate_takes_the_options_model_or_its_fields_alike(shop):  # noqa: F811
    from tests.support.badinput import run_jury
    from tests.test_calibrate import label_lines, write_labels

    write_labels(shop, label_lines())
    shown = run_jury(["calibrate", "--labels", "labels.jsonl", "--runs", "run.jsonl", "--seed", "3"], shop)
    assert shown.returncode == 0, shown.stderr
    by_keyword = jury.calibrate(labels="labels.jsonl", runs="run.jsonl", seed=3)
    by_model = jury.calibrate(options=jury.CalibrateOptions(labels=["labels.jsonl"], runs=["run.jsonl"], seed=3))
    overridden = jury.calibrate(options=jury.CalibrateOptions(labels="labels.jsonl", seed=9), runs="run.jsonl", seed=3)
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout


def test_calibrate_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"calibrate\(\) got an unexpected keyword argument 'label'"):
        jury.calibrate(label="labels.jsonl")
    with pytest.raises(jury.InputError, match=r"^workers must be at least 1, got 0$"):
        jury.calibrate(labels="labels.jsonl", workers=0)
    with pytest.raises(jury.InputError, match=r"^seed must be a whole number, got 'soon'$"):
        jury.calibrate(labels="labels.jsonl", seed="soon")


def test_suites_takes_the_options_model_or_its_fields_alike(tmp_path, monkeypatch):
    import shutil

    from tests.support.badinput import run_jury
    from tests.support.helpers import REPO

    shutil.copy(REPO / "examples" / "plsql-suite" / "run.jsonl", tmp_path / "run.jsonl")
    monkeypatch.chdir(tmp_path)
    shown = run_jury(["suites", "run.jsonl", "--taxonomy", "plsqlbench", "-f", "json"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    by_keyword = jury.suites("run.jsonl", taxonomy="plsqlbench")
    by_model = jury.suites("run.jsonl", jury.SuitesOptions(taxonomy="plsqlbench"))
    overridden = jury.suites("run.jsonl", jury.SuitesOptions(taxonomy="other"), taxonomy="plsqlbench")
    assert by_keyword.render("json") == by_model.render("json") == overridden.render("json") == shown.stdout
    assert by_keyword.render("json") != jury.suites("run.jsonl").render("json")


def test_suites_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"suites\(\) got an unexpected keyword argument 'verdict'"):
        jury.suites("run.jsonl", verdict="v.json")
    with pytest.raises(jury.InputError, match=r"^max_cost must be at least 0, got -1$"):
        jury.suites("run.jsonl", max_cost=-1)
    with pytest.raises(jury.InputError, match=r"^seed must be a whole number, got 'soon'$"):
        jury.suites("run.jsonl", seed="soon")


def test_verify_takes_the_options_model_or_its_fields_alike(tmp_path, monkeypatch, fake_llm):
    from test_api_verify import cli_verify

    from tests.support.jurytest import adjudicate_project

    monkeypatch.chdir(tmp_path)
    adjudicate_project(tmp_path, fake_llm, "genuine_error")
    shown = cli_verify("verdicts/adj.json", "-q")
    assert shown.exit_code == 0, shown.output
    by_keyword = jury.verify("verdicts/adj.json", quiet=True)
    by_model = jury.verify("verdicts/adj.json", jury.VerifyOptions(quiet=True))
    overridden = jury.verify("verdicts/adj.json", jury.VerifyOptions(quiet=False), quiet=True)
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout == ""
    assert jury.verify("verdicts/adj.json").render() != ""


def test_verify_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    with pytest.raises(TypeError, match=r"verify\(\) got an unexpected keyword argument 'trusted_keys'"):
        jury.verify("v.json", trusted_keys=["k.pub"])
    with pytest.raises(jury.InputError, match=r"^quiet must be true or false, got 'soon'$"):
        jury.verify("v.json", quiet="soon")


def test_store_merge_takes_the_options_model_or_its_fields_alike(tmp_path):
    from test_store_merge import count, h, make_store

    from jury.jobs.store import merge_stores

    a = make_store(tmp_path / "a.db", votes=[(h("r1"), "answer_1")], executions=[(h("e1"), "d1")])
    shown = runner.invoke(app, ["store", "merge", str(a), "-o", str(tmp_path / "cli.db"), "--trust-executions"])
    assert shown.exit_code == 0, shown.output
    by_keyword = merge_stores(a, tmp_path / "k.db", trust_executions=True)
    by_model = merge_stores([a], tmp_path / "m.db", jury.StoreMergeOptions(trust_executions=True))
    overridden = merge_stores(a, tmp_path / "o.db", jury.StoreMergeOptions(trust_executions=False), trust_executions=True)
    dumps = [r.model_dump(exclude={"output", "store_path"}) for r in (by_keyword, by_model, overridden)]
    for d in dumps:  # when each merge ran (the clock's second), not what it was asked
        assert all(s.pop("merged_at") for s in d["sources"])
    assert dumps[0] == dumps[1] == dumps[2] and by_keyword.trust_executions
    assert [count(tmp_path / f"{n}.db", "executions") for n in ("cli", "k", "m", "o")] == [1, 1, 1, 1]
    assert count(merge_stores(a, tmp_path / "u.db").output, "executions") == 0


def test_store_merge_refuses_an_unknown_keyword_and_a_bad_value_in_one_line(tmp_path):
    from jury.jobs.store import merge_stores

    with pytest.raises(TypeError, match=r"merge_stores\(\) got an unexpected keyword argument 'trusted_keys'"):
        merge_stores("a.db", tmp_path / "o.db", trusted_keys=["k.pub"])
    with pytest.raises(jury.InputError, match=r"^trust_executions must be true or false, got 'soon'$"):
        merge_stores("a.db", tmp_path / "o.db", trust_executions="soon")


def test_batch_takes_the_options_model_or_its_fields_alike(tmp_path, monkeypatch):
    from jury.jobs.batches import batch_status, collect_batches

    monkeypatch.chdir(tmp_path)
    store = tmp_path / "s.db"
    shown = runner.invoke(app, ["batch", "status", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    by_keyword = batch_status(store=store)
    by_model = batch_status(jury.BatchOptions(store=store))
    overridden = batch_status(jury.BatchOptions(store=tmp_path / "other.db"), store=store)
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout
    assert by_keyword.store_path == by_model.store_path == overridden.store_path == store
    assert collect_batches(jury.BatchOptions(store=store)).store_path == collect_batches(store=store).store_path == store


def test_batch_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    from jury.jobs.batches import batch_status, collect_batches

    with pytest.raises(TypeError, match=r"batch_status\(\) got an unexpected keyword argument 'stores'"):
        batch_status(stores="s.db")
    with pytest.raises(TypeError, match=r"collect_batches\(\) got an unexpected keyword argument 'stores'"):
        collect_batches(stores="s.db")
    with pytest.raises(jury.InputError, match=r"^store is not valid: input is not a valid path"):
        batch_status(store=3)


def test_db_takes_the_options_model_or_its_fields_alike():
    from jury.jobs.databases import reader_grants

    url = "postgresql://admin@host/bird"
    shown = runner.invoke(app, ["db", "grants", url, "--reader", "r", "--schema", "s"])
    assert shown.exit_code == 0, shown.output
    by_keyword = reader_grants(url, reader="r", pg_schema="s")
    by_model = reader_grants(url, jury.DbGrantsOptions(reader="r", pg_schema="s"))
    overridden = reader_grants(url, jury.DbGrantsOptions(reader="other", pg_schema="s"), reader="r")
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout
    assert 'GRANT USAGE ON SCHEMA "s" TO "r"' in shown.stdout


def test_db_refuses_an_unknown_keyword_and_a_bad_value_in_one_line(tmp_path):
    from jury.jobs.databases import load_database, reader_grants

    with pytest.raises(TypeError, match=r"reader_grants\(\) got an unexpected keyword argument 'schema'"):
        reader_grants("postgresql://admin@host/bird", schema="s")
    with pytest.raises(TypeError, match=r"load_database\(\) got an unexpected keyword argument 'readers'"):
        load_database(tmp_path / "a.sqlite", "duckdb:///x.duckdb", readers="r")
    with pytest.raises(jury.InputError, match=r"^no_reader must be true or false, got 'soon'$"):
        load_database(tmp_path / "a.sqlite", "duckdb:///x.duckdb", jury.DbLoadOptions(reader="r"), no_reader="soon")


def test_local_juror_takes_the_options_model_or_its_fields_alike(tmp_path):
    from jury.jobs.local_juror import local_juror_status, stop_local_juror

    shown = runner.invoke(app, ["local-juror", "status", "--state-dir", str(tmp_path)])
    assert shown.exit_code == 1, shown.output
    by_keyword = local_juror_status(state_dir=tmp_path)
    by_model = local_juror_status(jury.LocalJurorOptions(state_dir=tmp_path))
    overridden = local_juror_status(jury.LocalJurorOptions(state_dir=tmp_path / "other"), state_dir=tmp_path)
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout
    assert stop_local_juror(jury.LocalJurorOptions(state_dir=tmp_path)).state_dir == tmp_path


def test_local_juror_refuses_an_unknown_keyword_and_a_bad_value_in_one_line(tmp_path):
    from jury.jobs.local_juror import local_juror_status, start_local_juror

    with pytest.raises(TypeError, match=r"local_juror_status\(\) got an unexpected keyword argument 'folder'"):
        local_juror_status(folder=tmp_path)
    with pytest.raises(TypeError, match=r"start_local_juror\(\) got an unexpected keyword argument 'model'"):
        start_local_juror(model=["smollm2-135m"], state_dir=tmp_path)
    with pytest.raises(jury.InputError, match=r"^port must be at most 65535, got 70000$"):
        start_local_juror(jury.LocalJurorStartOptions(state_dir=tmp_path), port=70000)
    out_of_range = runner.invoke(app, ["local-juror", "start", "--threads", "0", "--state-dir", str(tmp_path)])
    assert out_of_range.exit_code == 1 and out_of_range.output == "Error: --threads must be at least 1, got 0\n"


def test_import_takes_the_options_model_or_its_fields_alike(tmp_path, monkeypatch):
    from jury.jobs.imports import import_bird_predictions
    from tests.support.helpers import EXAMPLE

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.txt").write_text("SELECT 1\nSELECT 2\n")
    gold = EXAMPLE / "dev.json"
    shown = runner.invoke(app, ["import", "bird-predictions", "p.txt", "--gold", str(gold), "--model", "m", "--family", "f"])
    assert shown.exit_code == 0, shown.output
    by_keyword = import_bird_predictions("p.txt", gold=gold, model="m", family="f")
    by_model = import_bird_predictions("p.txt", jury.ImportOptions(gold=gold, model="m", family="f"))
    overridden = import_bird_predictions("p.txt", jury.ImportOptions(gold=gold, model="x", family="f"), model="m")
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout
    assert [(r.model, r.family) for r in by_model.records] == [("m", "f"), ("m", "f")]
    written = runner.invoke(app, ["import", "with", "bird-predictions", "p.txt", "--gold", str(gold), "-o", "r.jsonl"])
    assert (
        written.exit_code == 0
        and written.stdout == ""
        and (tmp_path / "r.jsonl").read_text() == import_bird_predictions("p.txt", gold=gold).render()
    )


def test_import_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    from jury.jobs.imports import import_bird_predictions

    with pytest.raises(TypeError, match=r"import_bird_predictions\(\) got an unexpected keyword argument 'db'"):
        import_bird_predictions("p.txt", db=["superhero"])
    with pytest.raises(jury.InputError, match=r"^family must be a string, got 3$"):
        import_bird_predictions("p.txt", family=3)


def test_labels_import_takes_the_options_model_or_its_fields_alike(tmp_path, monkeypatch):
    from jury.jobs.labels import import_labels
    from tests.support.helpers import EXAMPLE

    monkeypatch.chdir(tmp_path)
    gold = EXAMPLE / "dev.json"
    (tmp_path / "mine.csv").write_text("question_id,defective,type,note,annotator\n717,true,,,ann\n")
    shown = runner.invoke(app, ["labels", "import", "csv", "mine.csv", "--gold", str(gold)])
    assert shown.exit_code == 0, shown.output
    by_keyword = import_labels("csv", ["mine.csv"], gold=gold)
    by_model = import_labels("csv", "mine.csv", jury.LabelsImportOptions(gold=gold))
    overridden = import_labels("csv", "mine.csv", jury.LabelsImportOptions(gold=tmp_path / "none.json"), gold=gold)
    assert by_keyword.render() == by_model.render() == overridden.render() == shown.stdout != ""


def test_labels_import_refuses_an_unknown_keyword_and_a_bad_value_in_one_line():
    from jury.jobs.labels import import_labels

    with pytest.raises(TypeError, match=r"import_labels\(\) got an unexpected keyword argument 'runs'"):
        import_labels("csv", "mine.csv", runs="r.jsonl")
    with pytest.raises(jury.InputError, match=r"^timeout must be greater than 0, got 0$"):
        import_labels("csv", "mine.csv", timeout=0)


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def test_each_field_has_the_description_pydantic_gives_its_docstring():
    """Options read the docstrings under the fields from one parse per module (jury.options.
    attribute_docstrings): every options model of every command has the descriptions pydantic's
    use_attribute_docstrings gives (its own search of the class's source), inherited ones included."""
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    command_functions()  # every command's module, so every options model, loaded
    models = _subclasses(Options)
    assert len(models) > 20
    for model in models:
        for name, field in model.model_fields.items():
            owner = next(c for c in model.__mro__ if name in c.__dict__.get("__annotations__", {}))
            expected = extract_docstrings_from_cls(owner, use_inspect=True).get(name)
            assert field.description == expected, (model.__qualname__, name)


def test_a_class_in_a_function_has_its_docstrings():
    class Local(Options):
        a: int = 1
        """The a.

        More."""
        b: int = 2
        pass  # a statement between b and the string: not b's docstring
        """Not b's."""

    assert Local.model_fields["a"].description == "The a.\n\nMore."
    assert Local.model_fields["b"].description is None
