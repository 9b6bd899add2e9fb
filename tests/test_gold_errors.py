"""A question whose gold query fails: left out of every denominator (the default) or, as BIRD's
scripts do, a wrong answer for every model (`--gold-errors fail`; issue 42.3).

The expected numbers come from BIRD's own comparison (``execute_sql`` of its evaluation.py,
read from ../shared/anchors, with its ``execute_model``'s rule: any exception scores 0), run here
on every row, never from jury's output."""

from __future__ import annotations

import ast
import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE, REPO

ANCHOR = REPO.parent / "shared" / "anchors" / "bird_evaluation" / "evaluation.py"
BROKEN = "SELECT no_such_column FROM superhero"
MODELS = ("gsr", "codes-1b", "ta-sql-gpt4")


def _bird_execute_sql():
    """BIRD's execute_sql, taken from its evaluation.py as published (its module imports
    func_timeout, which the comparison itself does not need)."""
    tree = ast.parse(ANCHOR.read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "execute_sql")
    namespace: dict = {"sqlite3": sqlite3}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(ANCHOR), "exec"), namespace)
    return namespace["execute_sql"]


@pytest.fixture
def broken_gold_project(tmp_path: Path) -> tuple[Path, list[dict], list[dict]]:
    """The example with question gold[5]'s SQL broken, and three of its systems' answers."""
    gold = json.loads((EXAMPLE / "dev.json").read_text())
    gold[5] = {**gold[5], "SQL": BROKEN}
    (tmp_path / "dev.json").write_text(json.dumps(gold))
    (tmp_path / "databases").symlink_to(EXAMPLE / "databases")
    (tmp_path / "jury.toml").write_text((EXAMPLE / "jury.toml").read_text())
    runs = [r for r in map(json.loads, (EXAMPLE / "run.jsonl").read_text().splitlines()) if r["model"] in MODELS]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return tmp_path, gold, runs


@pytest.mark.skipif(not ANCHOR.is_file(), reason="../shared/anchors/bird_evaluation not present")
def test_gold_errors_fail_is_birds_number_and_exclude_leaves_them_out(broken_gold_project, example_store):
    project, gold, runs = broken_gold_project
    execute_sql = _bird_execute_sql()
    db = str(EXAMPLE / "databases" / "superhero" / "superhero.sqlite")
    sql_of = {q["question_id"]: q["SQL"] for q in gold}
    bird: dict[str, int] = {}
    for r in runs:
        try:
            res = execute_sql(r["sql"], sql_of[r["question_id"]], db)
        except Exception:  # evaluation.py's execute_model: any failure scores 0
            res = 0
        bird[r["model"]] = bird.get(r["model"], 0) + res
    rows = len(gold)

    def scored(*flags: str) -> dict:
        res = run_jury(["score", "run.jsonl", "--store", example_store, "--comparator", "bird", "-f", "json", *flags], project)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    doc = scored("--gold-errors", "fail")
    assert doc["settings"]["gold_errors"] == "fail"
    assert [e["question_id"] for e in doc["gold_errors"]] == [gold[5]["question_id"]]
    assert {m["model"]: (m["strict"]["k"], m["strict"]["n"]) for m in doc["models"]} == {m: (bird[m], rows) for m in MODELS}
    left_out = scored()  # the default: out of every denominator, the same matches
    assert left_out["settings"]["gold_errors"] == "exclude"
    assert {m["model"]: (m["strict"]["k"], m["strict"]["n"]) for m in left_out["models"]} == {
        m: (bird[m], rows - 1) for m in MODELS
    }

    # every output names the failing gold query and the rule applied to it
    res = run_jury(["score", "run.jsonl", "--store", example_store, "--gold-errors", "fail"], project)
    assert (
        f"1 gold query that fails, counted wrong for every model (--gold-errors fail, BIRD's rule): {gold[5]['question_id']}"
        in res.stdout
    )
    res = run_jury(["score", "run.jsonl", "--store", example_store, "-f", "md"], project)
    assert "1 gold query that fails, left out of every denominator" in res.stdout
    res = run_jury(["report", "run.jsonl", "--store", example_store, "--gold-errors", "fail", "-f", "csv"], project)
    assert res.returncode == 0, res.stderr
    assert {r["model"]: int(r["strict_n"]) for r in csv.DictReader(io.StringIO(res.stdout))} == dict.fromkeys(MODELS, rows)

    # Soft-F1 under BIRD's rule: the failing gold's row scores 0, in the mean over every row
    f1 = {m["model"]: m["soft_f1"] for m in scored("--gold-errors", "fail", "--soft-f1")["models"]}
    f1_out = {m["model"]: m["soft_f1"] for m in scored("--soft-f1")["models"]}
    for m in MODELS:
        assert f1[m]["n"] == rows and f1_out[m]["n"] == rows - 1
        assert f1[m]["value"] == pytest.approx(f1_out[m]["value"] * (rows - 1) / rows, abs=1e-12)


def test_an_unknown_gold_errors_rule_is_one_line(broken_gold_project):
    project, _gold, _runs = broken_gold_project
    res = run_jury(["score", "run.jsonl", "--gold-errors", "ignore"], project)
    assert res.returncode == 1 and "unknown gold-errors rule 'ignore'; choose one of: exclude, fail" in res.stderr
    (project / "jury.toml").write_text((project / "jury.toml").read_text() + 'gold_errors = "drop"\n')
    res = run_jury(["score", "run.jsonl"], project)
    assert res.returncode == 1 and "gold_errors must be one of exclude, fail, got 'drop'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
