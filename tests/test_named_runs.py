"""BIRD's files as published (issue 42.6): every system's file is predict_dev.json, so a run
file may be given as NAME=PATH (jury.inputs.run_files), the name recorded with the file in a
verdict file; and --db keeps to the databases one has of a gold naming others."""

from __future__ import annotations

import json
import shutil

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE, SHARED_BIRD

A, B = "gsr", "ta-sql-gpt4"  # the example's models the two predict_dev.json files hold
SEPARATOR = "\t----- bird -----\t"


@pytest.fixture
def folder(tmp_path):
    """The example's gold and databases, and two of its models' answers as BIRD publishes them:
    dir1/predict_dev.json (gsr's) and dir2/predict_dev.json (ta-sql-gpt4's), indexed by the
    example's gold positions."""
    for name in ("dev.json", "jury.toml", "run.jsonl"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "databases").symlink_to(EXAMPLE / "databases")
    position = {g["question_id"]: i for i, g in enumerate(json.loads((EXAMPLE / "dev.json").read_text()))}
    runs = [json.loads(line) for line in (EXAMPLE / "run.jsonl").read_text().splitlines()]
    for folder, model in (("dir1", A), ("dir2", B)):
        (tmp_path / folder).mkdir()
        entries = {str(position[r["question_id"]]): r["sql"] + SEPARATOR + "superhero" for r in runs if r["model"] == model}
        (tmp_path / folder / "predict_dev.json").write_text(json.dumps(entries))
    return tmp_path


def _scores(res) -> dict[str, tuple[int, int]]:
    assert res.returncode == 0, res.stderr
    return {m["model"]: (m["strict"]["k"], m["strict"]["n"]) for m in json.loads(res.stdout)["models"]}


def test_two_predict_dev_files_score_as_the_models_named(folder):
    both = _scores(run_jury(["score", "a=dir1/predict_dev.json", "b=dir2/predict_dev.json", "-f", "json"], folder))
    # independent: each file alone, named after its own file as before NAME=PATH
    shutil.copy(folder / "dir1" / "predict_dev.json", folder / "a.json")
    shutil.copy(folder / "dir2" / "predict_dev.json", folder / "b.json")
    alone = {
        **_scores(run_jury(["score", "a.json", "-f", "json"], folder)),
        **_scores(run_jury(["score", "b.json", "-f", "json"], folder)),
    }
    assert both == alone and list(both) == ["a", "b"]
    # and the run JSONL they came from
    jsonl = _scores(run_jury(["score", "run.jsonl", "-f", "json"], folder))
    assert (both["a"], both["b"]) == (jsonl[A], jsonl[B])
    # unnamed, the two are one model twice: refused, with the way out
    res = run_jury(["score", "dir1/predict_dev.json", "dir2/predict_dev.json"], folder)
    assert res.returncode == 1 and "NAME=PATH" in res.stderr and len(res.stderr.splitlines()) == 1
    # the library: the same spelling, or a mapping
    kw = {"gold": folder / "dev.json", "db_root": folder / "databases", "store": folder / "s.db"}
    by_arg = jury.score([f"a={folder}/dir1/predict_dev.json", f"b={folder}/dir2/predict_dev.json"], **kw)
    by_map = jury.score({"a": folder / "dir1" / "predict_dev.json", "b": folder / "dir2" / "predict_dev.json"}, **kw)
    for scored in (by_arg, by_map):
        assert {s.model: (s.strict["k"], s.strict["n"]) for s in scored.scores} == both
    assert [str(r) for r in by_map.runs] == [f"a={folder}/dir1/predict_dev.json", f"b={folder}/dir2/predict_dev.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["=dir1/predict_dev.json"], "=dir1/predict_dev.json: empty model name"),
        (
            ["a=dir1/predict_dev.json", "a=dir2/predict_dev.json"],
            "a=dir2/predict_dev.json: model 'a' is also a=dir1/predict_dev.json",
        ),
        (
            ["gsr=dir1/predict_dev.json", "run.jsonl"],
            "model 'gsr' is both the NAME of gsr=dir1/predict_dev.json and a model of the run files",
        ),
        (["x=run.jsonl"], "x=run.jsonl: NAME=PATH names a prediction file's model, and run.jsonl is a run file"),
        (["a=dir1/nope.json"], "a=dir1/nope.json: no such file, nor is dir1/nope.json"),
    ],
)
def test_a_name_that_does_not_fit_is_one_line(folder, args, message):
    res = run_jury(["score", *args], folder)
    assert res.returncode == 1 and res.stdout == "" and len(res.stderr.splitlines()) == 1, res.stderr
    assert message in res.stderr


def test_an_existing_file_is_a_path_even_with_an_equals_sign(folder):
    shutil.copy(folder / "dir1" / "predict_dev.json", folder / "x=y.json")
    assert list(_scores(run_jury(["score", "x=y.json", "-f", "json"], folder))) == ["x=y"]
    res = run_jury(["suites", "x=run.jsonl"], folder)  # suites read run JSONL only: a NAME is refused there too
    assert res.returncode == 1 and "NAME=PATH names a prediction file's model" in res.stderr


def test_the_names_survive_the_verdict_file_a_reaudit_and_the_report(folder, fake_llm):
    from jury.verdicts.lock import load_locked
    from tests.support.jurytest import says, write_panel

    four = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
    for name in ("ja", "jb", "jc", "jd", "jx"):
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(folder, fake_llm.base_url, four)
    (folder / "families.toml").write_text('[families]\nundisclosed = ["^a$", "^b$"]\n')
    runs = ["a=dir1/predict_dev.json", "b=dir2/predict_dev.json"]
    res = run_jury(["adjudicate", *runs, "--panel", panel, "--families", "families.toml", "-o", "verdicts/adj.json"], folder)
    assert res.returncode == 0, res.stderr
    doc = load_locked(folder / "verdicts" / "adj.json")
    assert [(b.path, b.model) for b in doc.inputs.runs] == [("../dir1/predict_dev.json", "a"), ("../dir2/predict_dev.json", "b")]
    assert {r.model for r in doc.records} == {"a", "b"}
    assert run_jury(["verify", "verdicts/adj.json"], folder).returncode == 0
    assert run_jury(["reaudit", "--check", "verdicts/adj.json"], folder).returncode == 0  # current as it is
    # a juror replaced: the re-run reads the files as the models they were named
    panel.write_text(panel.read_text().replace('name = "jd"\nmodel = "openai/jd"', 'name = "jx"\nmodel = "openai/jx"'))
    res = run_jury(["reaudit", "verdicts/adj.json"], folder)
    assert res.returncode == 0, res.stdout + res.stderr
    new = next(p for p in (folder / "verdicts").glob("*.json") if p.name != "adj.json")
    new_doc = load_locked(new)
    assert [b.model for b in new_doc.inputs.runs] == ["a", "b"] and {r.model for r in new_doc.records} == {"a", "b"}
    assert len(new_doc.records) == len(doc.records)
    # the report takes the same names, with the verdicts made for them
    rep = run_jury(["report", *runs, "--verdicts", new, "-f", "json"], folder)
    assert rep.returncode == 0, rep.stderr
    assert [m["model"] for m in json.loads(rep.stdout)["models"]] == ["a", "b"]


def test_a_gold_with_a_database_not_there_names_the_db_option(folder):
    """A gold naming a database without a file stops at it, saying which --db keeps to those there."""
    gold = json.loads((folder / "dev.json").read_text())
    gold.append({"question_id": 1, "db_id": "california_schools", "question": "q", "evidence": "", "SQL": "SELECT 1"})
    (folder / "two.json").write_text(json.dumps(gold))
    (folder / "more.jsonl").write_text(
        (folder / "run.jsonl").read_text() + json.dumps({"model": A, "question_id": 1, "sql": "SELECT 1"}) + "\n"
    )
    res = run_jury(["score", "more.jsonl", "--gold", "two.json"], folder)
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1
    assert "no database file for db_id 'california_schools'" in res.stderr and "with --db superhero" in res.stderr
    kept = run_jury(["score", "more.jsonl", "--gold", "two.json", "--db", "superhero", "-f", "json"], folder)
    assert _scores(kept) == _scores(run_jury(["score", "run.jsonl", "-f", "json"], folder))
    res = run_jury(["score", "run.jsonl", "--gold", "two.json", "--db", "superheros"], folder)
    assert res.returncode == 1 and "no db_id 'superheros' in it; did you mean 'superhero'?" in res.stderr


@pytest.mark.skipif(not (SHARED_BIRD / "dev.json").is_file(), reason="../shared BIRD dev.json not present")
def test_db_superhero_of_the_full_dev_scores_as_the_examples_gold(folder):
    full = SHARED_BIRD / "dev.json"
    res = run_jury(["score", "run.jsonl", "--gold", full, "--db", "superhero", "-f", "json"], folder)
    example = run_jury(["score", "run.jsonl", "-f", "json"], folder)
    assert res.returncode == 0, res.stderr
    got, want = json.loads(res.stdout)["models"], json.loads(example.stdout)["models"]
    assert len(got) == 15 and all(m["questions"] == 129 for m in got)
    assert [(m["model"], m["strict"]) for m in got] == [(m["model"], m["strict"]) for m in want]
    lib = jury.score(folder / "run.jsonl", gold=full, db="superhero", db_root=folder / "databases", store=folder / "s.db")
    assert {s.model: s.strict["k"] for s in lib.scores} == {m["model"]: m["strict"]["k"] for m in want}
    assert jury.report(lib).sources.dbs == ["superhero"]
