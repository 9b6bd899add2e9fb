"""CSV output cannot carry a formula (issue 43, item 5): jury has one CSV writer,
jury.results.render.to_csv, and it prefixes with ``'`` every text cell a spreadsheet would read as
a formula (OWASP's CSV injection rule: a first character ``=``, ``+``, ``-``, ``@``, tab or carriage
return); numbers, negative ones too, stay numbers.

Not covered, by design (the OWASP rule does not list them): a full-width ``＝``/``＋``/``－``/``＠``
or a cell whose formula follows leading spaces is written as it is."""

from __future__ import annotations

import ast
import csv
import io

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.results.render import csv_cell, to_csv
from tests.support.helpers import REPO, make_db, write_gold, write_runs

HYPERLINK = '=HYPERLINK("http://x","y")'
DDE = "@SUM(1+1)*cmd|' /C calc'!A0"


def read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize(
    "text",
    [
        HYPERLINK,
        DDE,
        "+1+cmd",
        "-1+cmd",  # a text that looks like arithmetic: text, so neutralised
        "-",
        "=",
        "\t=1+1",
        "\r=1+1",
        "\tplain",
        "\rplain",
        "@",
    ],
)
def test_a_formula_start_gets_a_quote_and_reads_back_whole(text):
    assert csv_cell(text) == "'" + text
    rows = read_back(to_csv([{"model": text, "n": 1}], ["model", "n"]))
    assert rows == [["model", "n"], ["'" + text, "1"]]


@pytest.mark.parametrize(
    "text",
    [
        "gpt-4o",
        "a=b",
        "x+1",
        "'already quoted",
        "",
        " =1+1",  # a leading space: not in the OWASP list, written as it is
        "\uff1dHYPERLINK(1)",  # a full-width equals sign: not in the list either
        "\n=1+1",  # a newline first: not in the list (the cell is quoted, the newline kept)
        "a\rb",  # a carriage return inside a cell: quoted, so a reader keeps the row whole
    ],
)
def test_other_text_is_written_as_it_is(text):
    assert csv_cell(text) == text
    assert read_back(to_csv([{"model": text}], ["model"]))[1] == [text]


@pytest.mark.parametrize("number", [-1, -0.5, 0, 3, 2.5, -1e-9, True])
def test_numbers_stay_numbers(number):
    assert csv_cell(number) is number
    assert read_back(to_csv([{"x": number}], ["x"]))[1] == [str(number)]


def test_numpy_numbers_stay_numbers():
    np = pytest.importorskip("numpy")
    for number in (np.int64(-3), np.float64(-0.25)):
        assert csv_cell(number) is number
        assert read_back(to_csv([{"x": number}], ["x"]))[1] == [str(number)]


def test_none_is_an_empty_cell_and_missing_keys_too_and_extra_keys_are_left_out():
    assert read_back(to_csv([{"a": None, "z": "=1"}], ["a", "b"])) == [["a", "b"], ["", ""]]


def test_the_header_is_neutralised_too():
    """Column names can come from the inputs (a plugin comparator's name, a taxonomy's types)."""
    assert read_back(to_csv([], ["model", "=1+1_accuracy"])) == [["model", "'=1+1_accuracy"]]


def _score_project(tmp_path, monkeypatch, name: str):
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    write_runs(
        tmp_path,
        [
            {"model": name, "question_id": 1, "sql": "SELECT name FROM item WHERE colour = 'red'"},
            {"model": name, "question_id": 3, "sql": "SELECT 0"},
            {"model": "plain", "question_id": 1, "sql": "SELECT 1"},
        ],
    )
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("command", ["score", "report"])
@pytest.mark.parametrize("name", [HYPERLINK, DDE])
def test_jury_score_and_report_csv_write_a_formula_model_name_as_text(tmp_path, monkeypatch, command, name):
    _score_project(tmp_path, monkeypatch, name)
    res = CliRunner().invoke(app, [command, "run.jsonl", "-f", "csv"])
    assert res.exit_code == 0, res.output
    rows = read_back(res.stdout)
    model = rows[0].index("model")
    names = [r[model] for r in rows[1:]]
    assert "'" + name in names and "plain" in names
    assert not [cell for r in rows for cell in r if cell[:1] in ("=", "+", "@", "\t", "\r")]
    strict = rows[0].index("strict_accuracy")
    assert {float(r[strict]) for r in rows[1:]} <= {0.0, 0.5, 1.0}  # numbers stay numbers


def csv_writers(source: str) -> list[int]:
    """The lines of ``source`` that make a csv writer: ``csv.writer``/``csv.DictWriter`` (``csv``
    under any alias) or ``from csv import writer``/``DictWriter``."""
    tree = ast.parse(source)
    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == "csv"}
    found = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr in WRITERS and isinstance(n.value, ast.Name) and n.value.id in aliases
    ]
    found += [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "csv" and any(a.name in WRITERS for a in n.names)
    ]
    return sorted(found)


WRITERS = {"writer", "DictWriter"}


@pytest.mark.parametrize(
    "source",
    [
        "import csv\nw = csv.writer(buf)\n",
        "import csv\nw = csv.DictWriter(buf, fieldnames=[])\n",
        "import csv as c\nw = c.writer(buf)\n",
        "from csv import writer\n",
        "from csv import DictWriter as W\n",
    ],
)
def test_the_writer_finder_finds_each_spelling(source):
    assert csv_writers(source)


def test_to_csv_is_the_only_csv_writer_in_jury():
    """Every CSV jury writes goes through to_csv (render.py), the one place cells are neutralised:
    a csv writer made anywhere else in jury/ would write cells raw."""
    found = {
        str(path.relative_to(REPO)): lines
        for path in sorted((REPO / "jury").rglob("*.py"))
        if (lines := csv_writers(path.read_text(encoding="utf-8")))
    }
    assert list(found) == ["jury/results/render.py"] and len(found["jury/results/render.py"]) == 1, found
