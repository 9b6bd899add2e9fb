"""Extension points (jury.plugins): a comparator installed as another package is used by name
from the command line and the library, recorded in the output's provenance; a plugin that fails
to load, is no function, or takes a name jury ships is one line naming it.

The plugin package (tests/support/plugins.py) is a module and its dist-info directory, as pip
leaves them, on a path of this process or a child's PYTHONPATH. Its comparator, same_count,
counts a prediction as correct when it returns as many rows as the gold. On the shop database
(tests/support/helpers.py) by hand:

- question 1, gold ``SELECT name ... colour = 'red'`` (apple, plum): the model writes the gold's
  query: correct under strict and under same_count;
- question 2, gold names by price (4 rows): the model returns the 4 colours: wrong under strict,
  correct under same_count (4 rows = 4 rows);
- question 3, gold ``count(*)`` (1 row): the model returns the 4 ids: wrong under both.

So strict is 1 of 3 and same_count 2 of 3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import jury
from jury.compare import comparators
from jury.compare.comparators import COMPARATORS, get_comparator
from jury.errors import InputError, PluginError
from jury.inputs.importers import IMPORTERS
from tests.support.clirun import run_jury_inprocess
from tests.support.helpers import GOLD, make_db, write_gold, write_runs
from tests.support.plugins import env_with, write_plugin

RUNS = [
    {"model": "m", "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
    {"model": "m", "question_id": 2, "sql": "SELECT colour FROM item"},
    {"model": "m", "question_id": 3, "sql": "SELECT id FROM item"},
]
ARGS = ["score", "run.jsonl", "--gold", "gold.json", "--db-root", "dbs", "--workers", "1"]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    make_db(tmp_path / "dbs")
    write_gold(tmp_path, GOLD[:3])
    write_runs(tmp_path, RUNS)
    return tmp_path


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """install(**write_plugin options): the plugin package on this process's sys.path, the
    registry reading the metadata afresh; both undone after the test."""
    modules: list[str] = []

    def installed(name: str = "plugin", **options) -> Path:
        root = write_plugin(tmp_path / name, **options)
        monkeypatch.syspath_prepend(str(root))  # also invalidates importlib's caches
        modules.append(options.get("module", "jury_same_count"))
        COMPARATORS.refresh()
        IMPORTERS.refresh()
        return root

    yield installed
    for module in modules:
        sys.modules.pop(module, None)
    COMPARATORS.refresh()  # read again (without the plugin) at the next look-up
    IMPORTERS.refresh()


def _json(stdout: str) -> dict:
    return json.loads(stdout)


def _check_same_count(doc: dict) -> None:
    """The hand-derived numbers of the module docstring: chosen same_count 2/3, strict 1/3."""
    (model,) = doc["models"] if "models" in doc else doc["scores"]
    assert (model["strict"]["k"], model["strict"]["n"]) == (2, 3)  # the chosen comparator's column
    assert (model["comparators"]["same_count"]["k"], model["comparators"]["strict"]["k"]) == (2, 1)
    assert doc["settings"]["comparator"] == "same_count"
    assert doc["settings"]["comparator_plugin"] == {
        "name": "same_count",
        "distribution": "jury-same-count",
        "version": "0.1.0",
        "entry_point": "jury_same_count:same_count",
    }


def test_a_plugin_comparator_is_chosen_by_name_on_the_command_line(shop: Path, install) -> None:
    install()
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count", "-f", "json"], shop)
    assert done.returncode == 0, done.stderr
    _check_same_count(_json(done.stdout))


@pytest.mark.slow
def test_a_plugin_installed_for_a_child_process_is_used_by_jury_score(shop: Path, tmp_path: Path) -> None:
    """The real thing: a fresh `python -m jury` whose PYTHONPATH holds the installed package."""
    root = write_plugin(tmp_path / "site")
    done = subprocess.run(
        [sys.executable, "-m", "jury", *ARGS, "--comparator", "same_count", "-f", "json"],
        cwd=shop,
        env=env_with(root),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    _check_same_count(_json(done.stdout))
    without = subprocess.run(
        [sys.executable, "-m", "jury", *ARGS, "--comparator", "same_count"], cwd=shop, capture_output=True, text=True, timeout=120
    )
    assert without.returncode == 1
    assert without.stderr.strip().splitlines() == [
        "Error: unknown comparator 'same_count'; choose one of: bird, bird_normalized, relaxed, spider2, strict, subset"
    ]


def test_a_plugin_comparator_is_used_by_name_from_the_library(shop: Path, install, monkeypatch: pytest.MonkeyPatch) -> None:
    install()
    monkeypatch.chdir(shop)
    fn = get_comparator("same_count")
    assert fn([(1,), (2,)], [("a",), ("b",)], order_matters=True, options=comparators.NormalizeOptions())
    assert "same_count" in COMPARATORS and "same_count" in list(COMPARATORS)
    result = jury.score("run.jsonl", gold="gold.json", db_root="dbs", comparator="same_count", workers=1)
    doc = result.model_dump(mode="json")
    doc["settings"] = result.evaluation.settings.describe()
    _check_same_count(doc)


def test_a_shipped_comparator_is_no_plugin_in_provenance(shop: Path, install) -> None:
    install()
    done = run_jury_inprocess([*ARGS, "--comparator", "strict", "-f", "json"], shop)
    assert done.returncode == 0, done.stderr
    doc = _json(done.stdout)
    assert "comparator_plugin" not in doc["settings"]
    assert doc["models"][0]["strict"]["k"] == 1  # strict 1 of 3 (module docstring)


def test_jury_ships_spider2_through_the_entry_point_path() -> None:
    """jury's own spider2 is an entry point of the jury distribution (pyproject.toml), loaded
    as a plugin's is, and recorded as jury's own."""
    (ep,) = [e for e in entry_points(group="jury.comparators") if e.name == "spider2"]
    assert ep.dist is not None and ep.dist.name == "jury-sql"  # the distribution (import name jury)
    assert ep.value == "jury.compare.comparators:spider2"
    assert get_comparator("spider2") is comparators.spider2
    plugin = COMPARATORS.plugin("spider2")
    assert plugin.shipped and plugin.distribution == "jury-sql"
    assert comparators.comparator_plugin("spider2") is None


def test_a_plugin_that_fails_to_import_is_one_line(shop: Path, install) -> None:
    install(entry_points={"jury.comparators": {"broken": "jury_no_such_module:fn"}})
    done = run_jury_inprocess([*ARGS, "--comparator", "broken"], shop)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: comparator plugin 'broken' (jury-same-count 0.1.0: jury_no_such_module:fn) failed to load: "
        "ModuleNotFoundError: No module named 'jury_no_such_module'"
    ]
    # a broken plugin nobody asks for does not stand in the way of the others
    assert run_jury_inprocess([*ARGS, "--comparator", "strict"], shop).returncode == 0


def test_a_plugin_taking_a_shipped_name_is_refused_in_one_line(shop: Path, install) -> None:
    install(entry_points={"jury.comparators": {"strict": "jury_same_count:same_count"}})
    done = run_jury_inprocess([*ARGS], shop)  # whichever comparator is chosen: the names are ambiguous
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: comparator plugin 'strict' (jury-same-count 0.1.0: jury_same_count:same_count, entry point group "
        "jury.comparators) takes the name of jury's own comparator 'strict'; rename it in the entry points of "
        "jury-same-count or uninstall one of the two"
    ]


def test_a_plugin_taking_the_name_of_jurys_entry_point_is_refused(install) -> None:
    install(entry_points={"jury.comparators": {"spider2": "jury_same_count:same_count"}})
    with pytest.raises(PluginError, match=r"^comparator plugin 'spider2' \(jury-same-count .* jury's own comparator 'spider2'"):
        get_comparator("strict")


def test_two_plugins_of_one_name_are_refused(install) -> None:
    install(
        "second",
        distribution="jury-other",
        module="jury_other",
        entry_points={"jury.comparators": {"twin": "jury_other:same_count"}},
    )
    install(
        "third",
        distribution="jury-third",
        module="jury_third",
        entry_points={"jury.comparators": {"twin": "jury_third:same_count"}},
    )
    with pytest.raises(PluginError, match=r"takes the name of the comparator of jury-(other|third) 0\.1\.0"):
        list(COMPARATORS)


def test_a_plugin_that_is_no_function_is_refused(install) -> None:
    install(source="same_count = 42\n", entry_points={"jury.comparators": {"forty_two": "jury_same_count:same_count"}})
    with pytest.raises(PluginError) as info:
        get_comparator("forty_two")
    assert str(info.value) == (
        "comparator plugin 'forty_two' (jury-same-count 0.1.0: jury_same_count:same_count) is not callable (it is a int)"
    )


def test_a_plugin_comparator_that_raises_is_one_line_naming_it(shop: Path, install) -> None:
    install(source="def same_count(gold_rows, pred_rows, **_):\n    return 1 / 0\n")
    done = run_jury_inprocess([*ARGS, "--comparator", "same_count"], shop)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: model 'm', question 1: comparator plugin 'same_count' (jury-same-count 0.1.0: jury_same_count:same_count) "
        "failed: ZeroDivisionError: division by zero"
    ]


def test_an_unknown_name_lists_the_installed_plugins(install) -> None:
    install()
    with pytest.raises(InputError) as info:
        get_comparator("same_cont")
    assert str(info.value) == (
        "unknown comparator 'same_cont'; did you mean 'same_count'? choose one of: "
        "bird, bird_normalized, relaxed, same_count, spider2, strict, subset"
    )


# An importer of another tool's files: a CSV of question_id,sql (the model's answers).
CSV_IMPORTER = """
import csv

from jury.inputs.importers import ImportReport
from jury.inputs.records import RunRecord


def read_csv(path, gold_items, model):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    records = [RunRecord(model=model, question_id=int(r["question_id"]), sql=r["sql"]) for r in rows]
    return ImportReport(records=records, entries=len(rows))


def not_a_report(path, gold_items, model):
    return [("q", "sql")]
"""
CSV = "question_id,sql\n1,SELECT name FROM item WHERE colour = 'red'\n99,SELECT 1\n3,SELECT id FROM item\n1,SELECT 2\n"
IMPORTER_POINTS = {"jury.importers": {"csv-answers": "jury_csv:read_csv", "listing": "jury_csv:not_a_report"}}


def test_an_importer_plugin_reads_its_files_into_run_jsonl_from_the_command_line(shop: Path, install) -> None:
    install(distribution="jury-csv", module="jury_csv", source=CSV_IMPORTER, entry_points=IMPORTER_POINTS)
    (shop / "answers.csv").write_text(CSV)
    done = run_jury_inprocess(["import", "with", "csv-answers", "answers.csv", "--gold", "gold.json", "-o", "m.jsonl"], shop)
    assert done.returncode == 0, done.stderr
    # the gold holds questions 1-3: question 99 is odd, the second answer to 1 too; 1 and 3 are kept
    lines = [json.loads(line) for line in (shop / "m.jsonl").read_text().splitlines()]
    assert [(r["model"], r["question_id"], r["sql"]) for r in lines] == [
        ("answers", 1, "SELECT name FROM item WHERE colour = 'red'"),
        ("answers", 3, "SELECT id FROM item"),
    ]
    assert "answers: 2 answers from 4 entries; 0 missing, 2 odd" in done.stderr
    # the imported run scores as any run: question 1 right, question 3 wrong (module docstring)
    scored = run_jury_inprocess(["score", "m.jsonl", "--gold", "gold.json", "--db-root", "dbs", "-f", "json"], shop)
    assert scored.returncode == 0, scored.stderr
    assert _json(scored.stdout)["models"][0]["comparators"]["strict"]["k"] == 1


def test_an_importer_plugin_is_used_from_the_library(shop: Path, install, monkeypatch: pytest.MonkeyPatch) -> None:
    from jury.jobs.imports import import_bird_predictions

    install(distribution="jury-csv", module="jury_csv", source=CSV_IMPORTER, entry_points=IMPORTER_POINTS)
    (shop / "answers.csv").write_text(CSV)
    monkeypatch.chdir(shop)
    result = import_bird_predictions("answers.csv", gold="gold.json", model="m", importer="csv-answers", family="fam")
    assert [(r.model, r.question_id, r.family) for r in result.records] == [("m", 1, "fam"), ("m", 3, "fam")]
    assert result.odd == [
        "question 99 is not a question of the gold file",
        "question 1 is answered twice; the first answer counts",
    ]


def test_an_importer_plugin_returning_no_report_is_one_line(shop: Path, install) -> None:
    install(distribution="jury-csv", module="jury_csv", source=CSV_IMPORTER, entry_points=IMPORTER_POINTS)
    (shop / "answers.csv").write_text(CSV)
    done = run_jury_inprocess(["import", "with", "listing", "answers.csv", "--gold", "gold.json"], shop)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: importer plugin 'listing' (jury-csv 0.1.0: jury_csv:not_a_report) returned list, "
        "not an ImportReport of RunRecords (jury.inputs.importers)"
    ]
    unknown = run_jury_inprocess(["import", "with", "csv-answer", "answers.csv", "--gold", "gold.json"], shop)
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "Error: unknown importer 'csv-answer'; did you mean 'csv-answers'? choose one of: bird-predictions, csv-answers, listing"
    ]
