"""jury.execution.schema: the schema text a ballot shows, and planning without re-parsing."""

from __future__ import annotations

import json
import sqlite3

import sqlglot
from typer.testing import CliRunner

import jury.judging.adjudication as adjudication
from jury.cli import app
from jury.execution.schema import SchemaReader, describe_columns
from tests.support.helpers import make_db, write_gold
from tests.support.jurytest import FAILURES, GOLD_SQL, write_panel

ITEM = "item(id INTEGER, name TEXT, price REAL, colour TEXT)"  # make_db's CREATE TABLE, as typed
POWER = "power(id INTEGER, item_id INTEGER)"
QUERY = "WITH cheap AS (SELECT * FROM ITEM WHERE price < 1) SELECT * FROM cheap JOIN Power ON 1 = 1"


def shop_with_power(tmp_path):
    db = make_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE power(id INTEGER, item_id INTEGER)")
    conn.commit()
    conn.close()
    return db


def test_describe_columns_lists_the_base_tables_a_query_reads(tmp_path):
    # CTE `cheap` is no table; ITEM and Power match item and power case-insensitively and are
    # shown under their real names, alphabetically, with their declared types
    db = shop_with_power(tmp_path)
    assert describe_columns(db, QUERY) == f"{ITEM}\n{POWER}"
    assert describe_columns(db, "SELECT 99", "SELECT * FROM nowhere") == "(no tables could be identified)"


def test_the_reader_gives_describe_columns_text_from_one_connection(tmp_path, monkeypatch):
    db = shop_with_power(tmp_path)
    opened = []
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: opened.append(a[0]) or connect(*a, **k))
    with SchemaReader() as reader:
        texts = [
            reader.describe_columns(db, QUERY),
            reader.describe_columns(db, "SELECT name FROM item"),
            reader.describe_columns(db, "SELECT name FROM item", "SELECT item_id FROM POWER"),
            reader.describe_columns(db, "SELECT 99"),
        ]
    assert texts == [f"{ITEM}\n{POWER}", ITEM, f"{ITEM}\n{POWER}", "(no tables could be identified)"]
    assert len(opened) == 1


def test_the_plan_parses_each_distinct_sql_text_once(tmp_path, monkeypatch):
    # three models failing the same three questions, each with its own SQL text: the distinct
    # texts are the 3 golds and the 3 x 3 answers, 12 in all, whereas one parse per ballot
    # schema (gold + answer for each of the 9 failures) would be 18
    make_db(tmp_path / "dbs")
    write_gold(tmp_path)
    models = {"gpt-x": "openai", "claude-y": "anthropic", "grok-z": "xai"}
    runs = [
        {"model": m, "question_id": q, "sql": f"{sql} -- {m}", "family": fam}
        for m, fam in models.items()
        for q, sql in FAILURES.items()
    ]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    jurors = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
    panel = write_panel(tmp_path, "http://127.0.0.1:9/v1", jurors)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JURY_CACHE_DIR", str(tmp_path / "cache"))  # nothing remembered from other tests

    parsed: list[str] = []
    opened: list[str] = []
    planning = []
    parse, connect, plan = sqlglot.parse, sqlite3.connect, adjudication.plan_adjudication

    def counting_parse(sql, *a, **k):
        if planning:
            parsed.append(sql)
        return parse(sql, *a, **k)

    def counting_connect(database, *a, **k):
        if planning:
            opened.append(str(database))
        return connect(database, *a, **k)

    def counted_plan(*a, **k):
        planning.append(True)
        try:
            return plan(*a, **k)
        finally:
            planning.clear()

    monkeypatch.setattr(sqlglot, "parse", counting_parse)
    monkeypatch.setattr(sqlite3, "connect", counting_connect)
    monkeypatch.setattr(adjudication, "plan_adjudication", counted_plan)
    res = CliRunner().invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "27 ballots for 9 failures" in res.output.replace("\n", " ")  # 9 failures x k = 3 jurors
    expected = set(GOLD_SQL.values()) | {r["sql"] for r in runs}
    assert len(expected) == 12
    assert sorted(parsed) == sorted(expected)
    assert [p.split("?")[0].rsplit("/", 1)[-1] for p in opened] == ["shop.sqlite"]
    # the next plan parses nothing: the tables of every text were remembered (tables_cache), and
    # it prints the same plan
    parsed.clear()
    again = CliRunner().invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "--plan"], catch_exceptions=False)
    assert again.exit_code == 0 and again.output == res.output
    assert parsed == []


def test_remembered_tables_are_used_only_when_they_are_the_cache_s_own(tmp_path, monkeypatch):
    """A cache entry is a list of names under a sha256 key, for this sqlglot version; an entry
    of another shape, or a file of another version or format, is ignored and the text parsed."""
    from jury.execution import tables_cache

    db = shop_with_power(tmp_path)
    monkeypatch.setenv("JURY_CACHE_DIR", str(tmp_path / "cache"))
    with SchemaReader() as reader:
        assert reader.describe_columns(db, QUERY) == f"{ITEM}\n{POWER}"
    path = tmp_path / "cache" / tables_cache.FILE_NAME
    data = json.loads(path.read_text())
    key = tables_cache.key(QUERY, "sqlite")
    assert data["tables"] == {key: ["Power", "ITEM"]} and data["sqlglot"] == sqlglot.__version__  # as QUERY spells them

    def parses(doc: dict) -> bool:
        path.write_text(json.dumps(doc))
        seen: list[str] = []
        parse = sqlglot.parse
        monkeypatch.setattr(sqlglot, "parse", lambda sql, *a, **k: seen.append(sql) or parse(sql, *a, **k))
        with SchemaReader() as reader:
            assert reader.describe_columns(db, QUERY) == f"{ITEM}\n{POWER}"
        monkeypatch.setattr(sqlglot, "parse", parse)
        return seen == [QUERY]

    assert not parses(data)  # remembered
    assert parses({**data, "tables": {key: "item"}})  # not a list of names
    assert parses({**data, "tables": {key: [1, 2]}})
    assert parses({**data, "tables": {"not-a-digest": ["item"]}})
    assert parses({**data, "sqlglot": "0.0.1"})  # another parser's reading
    assert parses({**data, "format": 2})
    path.write_text("[not json")
    with SchemaReader() as reader:  # a damaged file is no error: parsed, and the file written anew
        assert reader.describe_columns(db, QUERY) == f"{ITEM}\n{POWER}"
    assert json.loads(path.read_text())["tables"] == {key: ["Power", "ITEM"]}
