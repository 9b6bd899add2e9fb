"""`jury.check_gold`: the deterministic gold checks through the library, rendering exactly what
`jury check-gold` prints, on the bundled example and on a small hand-built database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import jury
from tests.support.badinput import run_jury
from tests.support.helpers import EXAMPLE, write_gold


def _league(tmp: Path) -> Path:
    """dbs/league/league.sqlite: ann and bob tie on the top score; each team has several names."""
    path = tmp / "dbs" / "league" / "league.sqlite"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score INT, team TEXT);
        INSERT INTO t VALUES (1,'ann',9,'red'),(2,'bob',9,'red'),(3,'cy',5,'blue'),(4,'dee',3,'blue');
        """
    )
    conn.commit()
    conn.close()
    items = [
        {"question_id": 1, "db_id": "league", "SQL": "SELECT name FROM t ORDER BY score DESC LIMIT 1"},
        {"question_id": 2, "db_id": "league", "SQL": "SELECT COUNT(*) FROM t"},
        {"question_id": 3, "db_id": "league", "SQL": "SELECT team, name FROM t GROUP BY team"},
        {"question_id": 4, "db_id": "league", "SQL": "SELECT name FROM t WHERE score > 100"},
    ]
    return write_gold(tmp, items)


@pytest.fixture
def league(tmp_path: Path, monkeypatch) -> Path:
    _league(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_findings_of_a_made_database_and_every_format_as_the_command_prints_it(league: Path) -> None:
    found = jury.check_gold(gold="gold.json", db_root="dbs", passes="2,2")
    assert isinstance(found, jury.GoldCheck)
    by_question = {r.question_id: [f.name for f in r.checks] for r in found.results}
    assert by_question == {1: ["limit_tie"], 2: [], 3: ["bare_column"], 4: ["empty_result"]}
    assert [r.question_id for r in found.flagged] == [1, 3, 4]
    assert found.counts["limit_tie"] == 1 and found.counts["row_order"] == 0
    assert [r.executions for r in found.results] == [5, 5, 5, 5]  # 2 + 2 passes and the reversed scan
    for fmt in ("table", "csv", "json", "md"):
        proc = run_jury(["check-gold", "gold.json", "--db-root", "dbs", "--passes", "2,2", "-f", fmt], league)
        assert proc.returncode == 0, proc.stderr
        assert found.render(fmt) == proc.stdout, fmt
    # the filters, and passes given as numbers
    one = jury.check_gold(gold="gold.json", db_root="dbs", passes=(1,), question_id=3, db="league")
    assert [r.question_id for r in one.results] == [3] and one.settings["passes"] == [1]


@pytest.mark.slow  # four checks of 129 gold queries, three through subprocesses: the test above renders a small gold
def test_the_bundled_example_renders_as_the_command_prints(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store.db"
    project = jury.Project.load(EXAMPLE)  # the example's jury.toml: its gold and databases
    found = jury.check_gold(passes="1", store=store, project=project)
    assert len(found.results) == len(jury.load_gold(EXAMPLE / "dev.json"))
    args = ["check-gold", EXAMPLE / "dev.json", "--db-root", EXAMPLE / "databases", "--passes", "1", "--store", store]
    for fmt in ("table", "md"):
        proc = run_jury([*args, "-f", fmt], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert found.render(fmt) == proc.stdout
    written = found.write(tmp_path / "checks.csv")
    assert written.read_text() == run_jury([*args, "-f", "csv"], tmp_path).stdout


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"passes": "5,x"}, "passes must be comma-separated positive integers"),
        ({"passes": (0,)}, "passes must be comma-separated positive integers"),
        ({"question_id": 99}, "gold.json: no question 99"),
        ({"db": "nowhere"}, "gold.json: no questions to check after the filters"),
        ({"comparator": "fuzzy"}, "fuzzy"),
        ({"timeout": 0}, "timeout must be greater than 0"),
        ({"outputs": ["gold.json"]}, "gold.json: is the input file"),
        ({"gold": "missing.json"}, "missing.json"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(league: Path, kwargs: dict, message: str) -> None:
    before = (league / "gold.json").read_bytes()
    with pytest.raises(jury.JuryError) as caught:
        jury.check_gold(**{"gold": "gold.json", "db_root": "dbs", **kwargs})
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert (league / "gold.json").read_bytes() == before


def test_no_gold_file_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no jury.toml, no gold given
    with pytest.raises(jury.InputError, match="no gold file"):
        jury.check_gold()
