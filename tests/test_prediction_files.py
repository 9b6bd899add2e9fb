"""BIRD's prediction files as they are published, wherever a run file is accepted: BIRD's
predict_dev.json (`{"0": "SQL\\t----- bird -----\\tdb"}`), DAIL-SQL's one SQL per line `.txt`
and GSR's `.sql`, each one model named after its file, indexing a gold file by position
(`--positions-from`, else the gold file itself). The expected match counts are the ones an
independent implementation of BIRD's rule measured (tests/test_bird_reproduction.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE, SHARED_BIRD
from tests.test_bird_reproduction import PINNED

PREDICTIONS = SHARED_BIRD / "predictions"
needs_shared = pytest.mark.skipif(not PREDICTIONS.is_dir(), reason="../shared BIRD predictions not present")
FILES = sorted(PREDICTIONS.glob("*")) if PREDICTIONS.is_dir() else []


@pytest.fixture
def example(tmp_path):
    """A copy of the example folder (its jury.toml: the 129 superhero questions)."""
    for name in ("dev.json", "jury.toml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    (tmp_path / "databases").symlink_to(EXAMPLE / "databases")
    return tmp_path


@needs_shared
def test_every_published_file_scores_as_it_is(example):
    """All 15 files at once: BIRD's JSON, DAIL-SQL's .txt and GSR's .sql, read by their content."""
    res = run_jury(["score", *FILES, "--positions-from", SHARED_BIRD / "dev.json", "--comparator", "bird", "-f", "json"], example)
    assert res.returncode == 0, res.stderr
    models = {m["model"]: m for m in json.loads(res.stdout)["models"]}
    assert sorted(models) == sorted(p.stem for p in FILES) and len(models) == 15
    assert all((m["questions"], m["answered"], m["routed"]) == (129, 129, 129) for m in models.values())
    assert {name: models[name]["strict"]["k"] for name in PINNED} == PINNED
    assert res.stderr == ""  # complete: no coverage warning


@needs_shared
def test_without_positions_the_error_names_the_option_and_the_library_takes_them_too(example):
    res = run_jury(["score", PREDICTIONS / "gsr.sql"], example)
    assert res.returncode == 1
    assert "1534 lines but the gold file has only 129 questions" in res.stderr and "--positions-from" in res.stderr
    res = run_jury(["score", PREDICTIONS / "codes-15b.json"], example)
    assert "key '129' is outside the gold file's 129 questions" in res.stderr and "--positions-from" in res.stderr
    scored = jury.score(
        PREDICTIONS / "ta-sql-gpt4.json",
        gold=example / "dev.json",
        db_root=example / "databases",
        comparator="bird",
        positions_from=SHARED_BIRD / "dev.json",
        store=example / "s.db",
    )
    assert [(s.model, s.strict["k"]) for s in scored.scores] == [("ta-sql-gpt4", PINNED["ta-sql-gpt4"])]
    # jury.toml's positions_from serves every command
    (example / "jury.toml").write_text((example / "jury.toml").read_text() + f'positions_from = "{SHARED_BIRD / "dev.json"}"\n')
    assert run_jury(["score", PREDICTIONS / "gsr.sql", "--comparator", "bird"], example).returncode == 0


@needs_shared
def test_import_in_the_example_folder_maps_the_full_devs_positions(example):
    """`jury import bird-predictions … --gold dev.json` failed in the example folder (key '129' is
    outside the gold's 129 questions): with --positions-from the full dev it keeps the gold's 129;
    --model defaults to the file's name."""
    bad = run_jury(["import", "bird-predictions", PREDICTIONS / "codes-15b.json", "--gold", "dev.json"], example)
    assert bad.returncode == 1 and "--positions-from" in bad.stderr
    args = ["import", "bird-predictions", PREDICTIONS / "codes-15b.json", "--gold", "dev.json"]
    res = run_jury([*args, "--positions-from", SHARED_BIRD / "dev.json", "-o", "codes.jsonl"], example)
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in (example / "codes.jsonl").read_text().splitlines()]
    gold_ids = [g["question_id"] for g in json.loads((example / "dev.json").read_text())]
    assert [r["question_id"] for r in lines] == gold_ids and {r["model"] for r in lines} == {"codes-15b"}
    assert "codes-15b: 129 answers from 1534 entries" in res.stderr
    scored = json.loads(run_jury(["score", "codes.jsonl", "--comparator", "bird", "-f", "json"], example).stdout)
    direct = json.loads(
        run_jury(
            [
                "score",
                PREDICTIONS / "codes-15b.json",
                "--positions-from",
                SHARED_BIRD / "dev.json",
                "--comparator",
                "bird",
                "-f",
                "json",
            ],
            example,
        ).stdout
    )
    assert scored["models"] == direct["models"]


def _gold(tmp: Path) -> None:
    """The example's gold, databases and its first three questions' positions."""
    for name in ("dev.json", "jury.toml"):
        shutil.copy(EXAMPLE / name, tmp / name)
    (tmp / "databases").symlink_to(EXAMPLE / "databases")


@pytest.mark.parametrize(
    ("name", "content", "models"),
    [
        ("lower.sql", "select count(*) from superhero\nSELECT 1\n", {"lower": 2}),
        ("with.txt", "WITH t AS (SELECT 1) SELECT * FROM t\n", {"with": 1}),
        ("bom.sql", "\ufeffSELECT 1\n\nSELECT 2", {"bom": 2}),  # a BOM, an empty line (a missing answer), no final newline
        ("paren.txt", "(SELECT 1) UNION (SELECT 2)\n", {"paren": 1}),
        ("compact.json", '{"0":"SELECT 1\\t----- bird -----\\tsuperhero","1":7}', {"compact": 1}),
    ],
)
def test_spellings_of_prediction_files_are_read_by_content(tmp_path, name, content, models):
    _gold(tmp_path)
    (tmp_path / name).write_text(content, encoding="utf-8")
    res = run_jury(["score", name, "-f", "json"], tmp_path)
    assert res.returncode == 0, res.stderr
    got = {m["model"]: m["answered"] for m in json.loads(res.stdout)["models"]}
    assert got == models


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "notes.txt",
            "hello, these are notes\n",
            "not a run file (JSONL of model, question_id, sql): a BIRD prediction file is read by `jury import bird-predictions FILE --gold dev.json`",
        ),
        ("table.csv", "model,sql\nx,SELECT 1\n", "`jury import bird-predictions FILE --gold dev.json`"),
        ("keys.json", '{"zero": "SELECT 1\\t----- bird -----\\tsuperhero"}', "`jury import bird-predictions"),
        ("empty.sql", "", "file is empty"),
    ],
)
def test_a_file_that_is_no_run_names_the_importer(tmp_path, name, content, message):
    _gold(tmp_path)
    (tmp_path / name).write_text(content, encoding="utf-8")
    res = run_jury(["score", name], tmp_path)
    assert res.returncode == 1 and len(res.stderr.splitlines()) == 1 and message in res.stderr, res.stderr


def test_names_that_clash_are_refused(tmp_path):
    _gold(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "gsr.sql").write_text("SELECT 1\n")
    res = run_jury(["score", "a/gsr.sql", "b/gsr.sql"], tmp_path)
    assert res.returncode == 1 and "model 'gsr' (the file's name) is also a/gsr.sql" in res.stderr
    (tmp_path / "run.jsonl").write_text(json.dumps({"model": "gsr", "question_id": 718, "sql": "SELECT 1"}) + "\n")
    res = run_jury(["score", "run.jsonl", "a/gsr.sql"], tmp_path)
    assert res.returncode == 1 and "model 'gsr' is both a prediction file's name and a model of the run files" in res.stderr
    assert run_jury(["score", "run.jsonl", "a/gsr.sql"], tmp_path).stdout == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_kind_is_sniffed_from_a_regular_file_only(tmp_path):
    """A FIFO named like a prediction file is refused, not read (a read would block)."""
    _gold(tmp_path)
    os.mkfifo(tmp_path / "predict_dev.json")
    res = run_jury(["score", "predict_dev.json"], tmp_path)
    assert res.returncode == 1 and "not a regular file" in res.stderr, res.stderr
    (tmp_path / "dir.sql").mkdir()
    res = run_jury(["score", "dir.sql"], tmp_path)
    assert res.returncode == 1 and "is a directory" in res.stderr


@needs_shared
def test_report_and_adjudicate_take_them_and_the_verdict_file_binds_the_positions(example, fake_llm):
    from tests.support.jurytest import says, write_panel

    dev = SHARED_BIRD / "dev.json"
    files = [PREDICTIONS / "gsr.sql", PREDICTIONS / "ta-sql-gpt4.json"]
    report = run_jury(["report", *files, "--positions-from", dev, "-f", "json"], example)
    assert report.returncode == 0, report.stderr
    assert [m["model"] for m in json.loads(report.stdout)["models"]] == ["gsr", "ta-sql-gpt4"]
    four = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
    for name, _ in four:
        fake_llm.script(name, says("genuine_error"))
    panel = write_panel(example, fake_llm.base_url, four)
    families = example / "families.toml"
    families.write_text('[families]\ngsr-undisclosed = ["^gsr$"]\n')
    args = ["adjudicate", PREDICTIONS / "gsr.sql", "--positions-from", dev, "--panel", panel, "--families", families]
    res = run_jury([*args, "-o", "verdicts/adj.json"], example)
    assert res.returncode == 0, res.stderr
    doc = jury.load_verdicts(example / "verdicts" / "adj.json")
    assert doc.settings["positions_from"]["sha256"] and doc.settings["positions_from"]["path"].endswith("dev.json")
    assert [b.path.rsplit("/", 1)[-1] for b in doc.inputs.runs] == ["gsr.sql"]
    assert {r.model for r in doc.records} == {"gsr"} and len(doc.records) == 9  # gsr's 9 jury-eligible failures
    verified = run_jury(["verify", "verdicts/adj.json"], example)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    check = run_jury(["reaudit", "--check", "verdicts/adj.json"], example)
    assert check.returncode == 0 and "current" in check.stdout, check.stdout + check.stderr
