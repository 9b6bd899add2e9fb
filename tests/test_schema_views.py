"""The audit panel's `schema` view: touched (as always), database (every table, with BIRD's
descriptions, within a token budget) and linked; and the wrong_table defect type."""

import csv
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.execution.schema_views import database_tables, describe_view, linked_tables, words_of
from jury.judging.ballots import REPLY_SCHEMAS, reply_schema
from jury.judging.gold_audit import plan_audit
from jury.judging.panels import load_panel
from jury.judging.plan import plan_rows
from jury.judging.schema_view import count_tokens
from jury.verdicts.lock import load_locked
from tests.support.fakellm import json_reply
from tests.support.jurytest import user_text, write_panel

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bird-superhero" / "databases" / "superhero"
DB = EXAMPLE / "superhero.sqlite"
JURORS = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google")]

# Gold items built on the superhero database: 1 and 2 read a table other than the one the
# question is about (attribute for superpowers, race for the publisher); 3 is right.
GOLD = [
    {
        "question_id": 1,
        "db_id": "superhero",
        "question": "Please list all the superpowers of 3-D Man.",
        "SQL": "SELECT T3.attribute_name FROM superhero AS T1 INNER JOIN hero_attribute AS T2 ON T1.id = T2.hero_id "
        "INNER JOIN attribute AS T3 ON T2.attribute_id = T3.id WHERE T1.superhero_name = '3-D Man'",
        "difficulty": "simple",
    },
    {
        "question_id": 2,
        "db_id": "superhero",
        "question": "Which publisher published 3-D Man?",
        "SQL": "SELECT T2.race FROM superhero AS T1 INNER JOIN race AS T2 ON T1.race_id = T2.id "
        "WHERE T1.superhero_name = '3-D Man'",
        "difficulty": "simple",
    },
    {
        "question_id": 3,
        "db_id": "superhero",
        "question": "Please list all the superpowers of A-Bomb.",
        "SQL": "SELECT T3.power_name FROM superhero AS T1 INNER JOIN hero_power AS T2 ON T1.id = T2.hero_id "
        "INNER JOIN superpower AS T3 ON T2.power_id = T3.id WHERE T1.superhero_name = 'A-Bomb'",
        "difficulty": "simple",
    },
]


def ballot_juror(req):
    """Answers from what the ballot shows only: "wrong_table" when the schema block lists a table
    whose name is one of the question's words (plural s dropped) and the gold SQL does not read it."""
    text = user_text(req)
    question = re.search(r"<question>\n(.*?)\n</question>", text, re.S).group(1)
    schema = re.search(r"<schema>\n(.*?)\n</schema>", text, re.S).group(1)
    sql = re.search(r"<gold_sql>\n(.*?)\n</gold_sql>", text, re.S).group(1)
    shown = set(re.findall(r"^table (\w+)$", schema, re.M)) | set(re.findall(r"^(\w+)\(", schema, re.M))
    asked = {w.lower().removesuffix("s") for w in re.findall(r"[A-Za-z]+", question)}
    read = {t.lower() for t in re.findall(r"(?:FROM|JOIN)\s+(\w+)", sql, re.I)}
    missed = sorted(t for t in shown if t.lower() in asked and t.lower() not in read)
    if missed:
        return json_reply(
            {"reasoning": f"the question is about {missed[0]}", "verdict": "defective", "defect_type": "wrong_table"}
        )
    return json_reply({"reasoning": "reads the tables the question is about", "verdict": "valid", "defect_type": None})


@pytest.fixture
def hero_project(tmp_path, monkeypatch):
    dbs = tmp_path / "dbs" / "superhero"
    dbs.mkdir(parents=True)
    shutil.copy(DB, dbs / "superhero.sqlite")
    shutil.copytree(EXAMPLE / "database_description", dbs / "database_description")
    (tmp_path / "gold.json").write_text(json.dumps(GOLD))
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def panel_with(tmp, base_url, name, extra=""):
    path = write_panel(tmp, base_url, JURORS, style="audit", k=3, name=name)
    if extra:
        path.write_text(extra + "\n" + path.read_text())
    return path


def audit(panel) -> dict:
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    paths = sorted((Path("verdicts")).glob("audit-*.json"), key=lambda p: p.stat().st_mtime)
    return {r.question_id: r for r in load_locked(paths[-1]).records}


@pytest.mark.slow
def test_wrong_table_flagged_under_database_and_linked_not_touched(hero_project, fake_llm):
    for name, _ in JURORS:
        fake_llm.script(name, ballot_juror)
    touched = audit(panel_with(hero_project, fake_llm.base_url, "touched.toml"))
    assert [q for q, r in touched.items() if r.flagged] == []  # the touched view hides the table the question is about
    for view in ("database", "linked"):
        recs = audit(panel_with(hero_project, fake_llm.base_url, f"{view}.toml", f'schema = "{view}"'))
        assert sorted(q for q, r in recs.items() if r.flagged) == [1, 2], view
        assert recs[1].defect_types == ["wrong_table"] and not recs[3].flagged
    texts = [user_text(r) for r in fake_llm.requests]
    assert any("table superpower" in t and "attribute_name" in t for t in texts)


def test_touched_ballots_are_as_before(hero_project, fake_llm):
    """A panel without the option and one saying schema = "touched" make the same requests, on
    audit-v1.md, with the reply schema's five defect types of before wrong_table."""
    plain = load_panel(panel_with(hero_project, fake_llm.base_url, "a.toml"))
    said = load_panel(panel_with(hero_project, fake_llm.base_url, "b.toml", 'schema = "touched"'))
    from jury.inputs.io import load_gold

    items = list(load_gold("gold.json").values())
    dbs = {"superhero": (hero_project / "dbs" / "superhero" / "superhero.sqlite", "x")}
    a, b = plan_audit(items, plain, dbs), plan_audit(items, said, dbs)
    assert [x.request_sha256 for x in a.ballots()] == [x.request_sha256 for x in b.ballots()]
    assert plain.prompt_path.name == "audit-v1.md" and all(x.taxonomy is None for x in a.ballots())
    five = ["sql_vs_question", "sql_vs_data", "domain_knowledge", "ambiguous_question", "other", None]
    assert REPLY_SCHEMAS["audit"]["properties"]["defect_type"]["enum"] == five
    assert "wrong_table" not in user_text({"messages": a.ballots()[0].messages})
    db = load_panel(panel_with(hero_project, fake_llm.base_url, "c.toml", 'schema = "database"'))
    c = plan_audit(items, db, dbs)
    assert reply_schema("audit", c.ballots()[0].taxonomy)["properties"]["defect_type"]["enum"] == [
        *five[:-1],
        "wrong_table",
        None,
    ]
    assert {x.request_sha256 for x in c.ballots()}.isdisjoint(x.request_sha256 for x in a.ballots())  # a change of view re-audits
    # --plan prices the ballot text: the database view costs more prompt tokens than the touched one
    assert plan_rows(c.ballots())[0]["prompt_tokens"] > plan_rows(a.ballots())[0]["prompt_tokens"]


def test_database_view_lists_every_table_with_keys_and_descriptions():
    with sqlite3.connect(DB) as conn:
        names = sorted((r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")), key=str.lower)
        fks = conn.execute("PRAGMA foreign_key_list(hero_power)").fetchall()
    text = describe_view(DB, "database", "anything", [], 100_000, count_tokens)
    assert re.findall(r"^table (\w+)$", text, re.M) == names
    assert "cut to the schema budget" not in text
    for fk in fks:  # (id, seq, table, from, to, ...)
        assert re.search(rf"^- {fk[3]} \w+ REFERENCES {fk[2]}\({fk[4]}\)", text, re.M)
    with open(EXAMPLE / "database_description" / "superpower.csv", encoding="utf-8-sig") as fh:
        row = next(r for r in csv.DictReader(fh) if r["original_column_name"].strip() == "power_name")
    assert f"- power_name TEXT: {' '.join(row['column_description'].split())}" in text
    assert "- id INTEGER PRIMARY KEY" in text


def test_budget_cut_is_said_and_kept():
    full = describe_view(DB, "database", "q", ["superhero"], 100_000, count_tokens)
    n = count_tokens(full)
    assert describe_view(DB, "database", "q", ["superhero"], n, count_tokens) == full  # fits exactly: no cut
    small = describe_view(DB, "database", "q", ["superhero"], 300, count_tokens)
    assert "(cut to the schema budget of 300 tokens: left out value and column descriptions; " in small
    assert count_tokens(small) <= 300
    assert "table superhero" in small  # the gold's table is kept longest
    dropped = re.search(r"(\d+) tables? \(([^)]*)\)\)$", small)
    shown = re.findall(r"^table (\w+)$", small, re.M)
    assert dropped and int(dropped[1]) == len(dropped[2].split(", ")) == 10 - len(shown)
    mid = describe_view(DB, "database", "q", [], n - 1, count_tokens)
    assert mid.endswith(f"(cut to the schema budget of {n - 1} tokens: left out value descriptions)")


def test_linker_adds_tables_the_question_names():
    tables = database_tables(DB)
    # "publisher" -> publisher (its name) and superhero (its column publisher_id, "the id of the
    # publisher"); race is the touched table; "published" stays itself (no stemming beyond -s/-es)
    assert linked_tables("Which publisher published 3-D Man?", tables, ["race"]) == ["publisher", "race", "superhero"]
    assert "superpower" in linked_tables("Please list all the superpowers of 3-D Man.", tables, [])
    assert words_of("The Colours of heroes") == ["colour", "hero"]


@pytest.mark.parametrize(
    ("extra", "style", "message"),
    [
        ('schema = "all"', "audit", "schema = 'all'"),
        ('schema = "database"', "blind", "schema = 'database' applies to audit panels"),
        ('schema = "database"\nprompt = "audit-v1.md"', "audit", "needs a template that says which view it shows"),
        ('schema = "linked"\nschema_budget = 10', "audit", "schema_budget = 10"),
    ],
)
def test_bad_schema_options_are_one_line(tmp_path, extra, style, message):
    from jury.errors import ConfigError

    path = write_panel(tmp_path, "http://127.0.0.1:9", JURORS, style=style, k=3)
    path.write_text(extra + "\n" + path.read_text())
    with pytest.raises(ConfigError, match=re.escape(message)) as exc:
        load_panel(path)
    assert "\n" not in str(exc.value)
