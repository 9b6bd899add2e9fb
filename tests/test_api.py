"""The public API as a whole: every exported name is used by some test through `jury.<name>`,
the building blocks give what the jobs give, results are the exported types, and each
exported error is what a library caller catches."""

import re
from pathlib import Path

import pytest

import jury
from tests.support.fakellm import error_reply
from tests.support.helpers import REPO
from tests.support.jurytest import write_panel


def test_every_exported_name_resolves_and_is_used_by_a_test():
    for name in jury.__all__:
        assert getattr(jury, name) is not None, name
    text = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").glob("test_*.py"))
    untested = [n for n in jury.__all__ if not re.search(rf"\bjury\.{re.escape(n)}\b", text)]
    assert not untested, f"exported names no test uses as jury.<name>: {untested}"


def test_the_building_blocks_give_what_score_gives(project):
    gold = jury.load_gold("gold.json")
    runs = jury.load_runs([Path("run.jsonl")], gold)
    with jury.Store(Path(".jury/store.db")) as store:
        ev = jury.evaluate(gold, runs, Path("dbs"), store, jury.Settings(workers=1))
    score = jury.score("run.jsonl")
    assert isinstance(score, jury.Score) and isinstance(score, jury.Result)
    assert [(p.model, p.question_id, p.outcome) for p in ev.pairs] == [
        (p.model, p.question_id, p.outcome) for p in score.evaluation.pairs
    ]
    report = jury.report(score)
    assert isinstance(report, jury.Report) and isinstance(report, jury.Result)
    assert [m.model for m in report.models] == ev.models()
    assert jury.__version__ in report.to_json()


def test_a_broken_jury_toml_is_a_config_error(project):
    Path("jury.toml").write_text('gold = "gold.json"\nworkers = "many"\n')
    with pytest.raises(jury.ConfigError, match="jury.toml: workers must be a whole number"):
        jury.score("run.jsonl")


def test_a_store_that_is_no_database_is_a_store_error(project):
    Path(".jury").mkdir()
    Path(".jury/store.db").write_bytes(b"not a database, " * 512)
    with pytest.raises(jury.StoreError, match=r"store.db: is not a jury store \(file is not a database\); nothing was written"):
        jury.score("run.jsonl")


def test_ballots_that_get_no_vote_are_an_incomplete_run(project, fake_llm):
    fake_llm.set_default(lambda request: error_reply(400, "invalid request"))
    panel = write_panel(project, fake_llm.base_url, [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")])
    with pytest.raises(jury.IncompleteRun) as caught:
        jury.adjudicate("run.jsonl", panel=panel, output="verdicts/adj.json")
    assert caught.value.exit_code == 3 and "no verdict file written" in str(caught.value)
    assert not Path("verdicts/adj.json").exists()


def test_jury_tomls_panel_is_a_path_from_its_folder_or_a_name_whatever_the_working_directory(tmp_path, monkeypatch):
    """Project.panel is where a panel is decided: jury.toml's path is relative to the file's folder
    (not the working directory: a library caller's Project.load(folder) runs anywhere), a bare
    name is a shipped panel, a given path is the caller's, a loaded Panel is copied."""
    folder = tmp_path / "project"
    (folder / "mine").mkdir(parents=True)
    (folder / "mine" / "p.toml").write_text(
        (REPO / "panels" / "default.toml").read_text().replace('name = "default"', 'name = "mine"')
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (folder / "jury.toml").write_text('panel = "mine/p.toml"\naudit_panel = "audit"\n')
    project = jury.Project.load(folder)
    mine = project.panel(None)
    assert mine.name == "mine" and mine.path.resolve() == (folder / "mine" / "p.toml").resolve()
    assert project.panel(None, "audit_panel", "audit.toml").path == REPO / "panels" / "audit.toml"
    assert project.panel("local").path == REPO / "panels" / "local.toml"  # a name given
    assert jury.Project.load(elsewhere).panel(None).path == REPO / "panels" / "default.toml"  # no jury.toml
    copy = project.panel(mine)
    assert copy == mine and copy is not mine
    with pytest.raises(jury.ConfigError, match="mine/p.toml: panel file not found"):
        project.panel("mine/p.toml")  # a path a caller gives is the working directory's
