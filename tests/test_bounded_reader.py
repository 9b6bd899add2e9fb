"""One bounded reader for every input (issue 43.1 and 43.4): BIRD's description CSVs and
`jury labels import csv` read regular files only, inside the folder they were found in,
under a size cap; malformed CSV and decoding errors are one line naming file and line; an
error quotes at most a short printable excerpt, and never a file reached through a link out
of its folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.errors import InputError
from jury.execution.schema_views import add_descriptions, database_tables, describe_view
from jury.inputs.reader import MAX_EXCERPT_CHARS, excerpt, read_bounded
from tests.support.helpers import write_gold
from tests.support.jurytest import write_panel

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bird-superhero" / "databases" / "superhero"
SECRET = "root:$6$SECRETHASHxyz:19000:0:99999:7:::"
# A BIRD-shaped description of `colour` whose text must never reach a ballot when it sits outside the database folder.
OUTSIDE_CSV = "original_column_name,column_name,column_description,data_format,value_description\nid,id,LEAKEDOUTSIDE,integer,\n"


@pytest.fixture
def hero(tmp_path: Path) -> Path:
    """A copy of the superhero database folder (the database linked, its descriptions copied)."""
    folder = tmp_path / "dbs" / "superhero"
    folder.mkdir(parents=True)
    (folder / "superhero.sqlite").symlink_to(EXAMPLE / "superhero.sqlite")
    shutil.copytree(EXAMPLE / "database_description", folder / "database_description")
    return folder / "superhero.sqlite"


def _colour(db: Path) -> Path:
    path = db.parent / "database_description" / "colour.csv"
    path.unlink()
    return path


def _view(db: Path) -> str:
    return describe_view(db, "database", "What colour?", ["colour"], 100_000, len)


def test_a_relative_link_inside_the_folder_is_read(hero):
    colour = _colour(hero)
    (hero.parent / "database_description" / "shared").mkdir()
    (hero.parent / "database_description" / "shared" / "colour.csv").write_text(OUTSIDE_CSV.replace("LEAKEDOUTSIDE", "INSIDE"))
    colour.symlink_to(Path("shared") / "colour.csv")
    assert "INSIDE" in _view(hero)


def test_a_link_out_of_the_database_folder_is_refused_before_it_is_read(hero, tmp_path):
    (tmp_path / "elsewhere.csv").write_text(OUTSIDE_CSV)
    _colour(hero).symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(InputError, match="colour.csv: a link to a file outside") as exc:
        _view(hero)
    assert "LEAKEDOUTSIDE" not in str(exc.value) and "\n" not in str(exc.value)


def test_audit_gold_plan_never_puts_an_outside_file_in_a_ballot(hero, tmp_path, monkeypatch):
    (tmp_path / "elsewhere.csv").write_text(OUTSIDE_CSV)
    _colour(hero).symlink_to(tmp_path / "elsewhere.csv")
    gold = [{"question_id": 1, "db_id": "superhero", "question": "Which colour?", "SQL": "SELECT colour FROM colour"}]
    write_gold(tmp_path, gold)
    panel = write_panel(tmp_path, "http://127.0.0.1:9", [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")], style="audit")
    panel.write_text('schema = "database"\n' + panel.read_text())
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", "panel.toml", "--db-root", "dbs", "--plan"])
    assert "LEAKEDOUTSIDE" not in res.output
    assert res.exit_code == 1 and "a link to a file outside" in res.output, res.output


def test_a_fifo_is_refused_without_waiting(hero, tmp_path):
    os.mkfifo(_colour(hero))
    code = (
        "import sys; from jury.execution.schema_views import describe_view\n"
        "try:\n    describe_view(sys.argv[1], 'database', 'q', [], 10**6, len)\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code, str(hero)], capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.startswith("InputError ") and "colour.csv: not a regular file" in out.stdout, out


def test_a_directory_named_like_the_csv_is_one_line(hero):
    _colour(hero).mkdir()
    with pytest.raises(InputError, match=r"colour\.csv: is a directory, expected a file"):
        _view(hero)


def test_a_binary_file_is_one_line(hero):
    _colour(hero).write_bytes(b"original_column_name,column_description\nid,\x00\xff\xfe\x01binary\n")
    with pytest.raises(InputError, match=r"colour\.csv:2: a NUL byte") as exc:
        _view(hero)
    assert "\n" not in str(exc.value)


def test_a_200000_character_cell_is_one_line(hero):
    _colour(hero).write_text("original_column_name,column_description\nid," + "x" * 200_000 + "\n")
    with pytest.raises(InputError, match=r"colour\.csv:2: malformed CSV: a cell longer than 131072 characters") as exc:
        _view(hero)
    assert "xxxxxxxxxx" not in str(exc.value)


def test_a_description_over_the_cap_is_refused(hero, monkeypatch):
    import jury.execution.schema_views as views

    monkeypatch.setattr(views, "MAX_DESCRIPTION_BYTES", 20_000)
    _colour(hero).write_text("original_column_name,column_description\n" + "id,a colour\n" * 2_000)
    with pytest.raises(
        InputError, match=r"colour\.csv: \d+ bytes is larger than the 20000 bytes limit of a database description"
    ):
        _view(hero)


def test_a_device_and_a_growing_file_are_refused(tmp_path):
    with pytest.raises(InputError, match="/dev/zero: not a regular file"):
        read_bounded("/dev/zero", 100)
    # a file that grows past the cap between fstat and read: fstat says 50 bytes, read finds more
    grows = tmp_path / "grows.csv"
    grows.write_text("x" * 50)
    real_fstat = os.fstat

    class Small:
        def __init__(self, info):
            self.st_mode, self.st_size = info.st_mode, 10

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fstat", lambda fd: Small(real_fstat(fd)))
        with pytest.raises(InputError, match="grows.csv: larger than the 20 bytes limit"):
            read_bounded(grows, 20)
        grows.write_text("y" * 15)  # grown since fstat's 10 bytes, still within the cap: read whole
        assert read_bounded(grows, 20) == b"y" * 15


def test_a_hard_link_is_the_same_regular_file(tmp_path):
    """A hard link cannot be told apart from the file it links: it is read."""
    (tmp_path / "a").mkdir()
    (tmp_path / "secret.txt").write_text("hard")
    os.link(tmp_path / "secret.txt", tmp_path / "a" / "linked.txt")
    assert read_bounded(tmp_path / "a" / "linked.txt", 100) == b"hard"


def test_descriptions_without_links_are_as_before(hero):
    tables = database_tables(hero)
    assert add_descriptions(hero, tables)
    colour = next(t for t in tables if t.name == "colour")
    assert any(c.description for c in colour.columns)


def test_labels_import_csv_of_a_link_to_a_secret_never_shows_it(tmp_path, monkeypatch):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "shadow").write_text(SECRET + "\nbin:*:19000:0:99999:7:::\n")
    (tmp_path / "work").mkdir()
    write_gold(tmp_path / "work")
    (tmp_path / "work" / "mine.csv").symlink_to(tmp_path / "etc" / "shadow")
    monkeypatch.chdir(tmp_path / "work")
    res = runner.invoke(app, ["labels", "import", "csv", "mine.csv", "--gold", "gold.json", "-o", "labels.jsonl"])
    assert res.exit_code == 1 and "mine.csv: a link to a file outside its own folder" in res.output, res.output
    assert "SECRET" not in res.output and "root" not in res.output


def test_labels_import_csv_quotes_a_short_printable_excerpt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_gold(tmp_path)
    (tmp_path / "mine.csv").write_text("\x1b[2J" + "h" * 300 + ",b\n1,2\n")
    res = runner.invoke(app, ["labels", "import", "csv", "mine.csv", "--gold", "gold.json", "-o", "labels.jsonl"])
    assert res.exit_code == 1 and "mine.csv:1: missing column 'question_id'" in res.output, res.output
    assert "\x1b" not in res.output and "h" * (MAX_EXCERPT_CHARS + 1) not in res.output


def test_excerpt_is_short_printable_and_quoted():
    assert excerpt("abc") == "'abc'"
    assert excerpt("a\x1b[2J\nb") == "'a\\x1b[2J\\nb'"
    long = excerpt("x" * 500)
    assert len(long) <= MAX_EXCERPT_CHARS + 3 and long.endswith("…'")
    assert excerpt(12) == "12"
