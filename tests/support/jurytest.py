"""A small adjudication project for tests: a database, gold, runs and a loopback panel.

Scripted jurors here are test doubles served by tests/support/fakellm.py; nothing they say is
ever reported as a real number.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.support.fakellm import Reply, ballot_reply
from tests.support.helpers import make_db, write_gold, write_runs

GOLD_SQL = {
    1: "SELECT name FROM item WHERE colour = 'red'",
    2: "SELECT name FROM item ORDER BY price",
    3: "SELECT count(*) FROM item",
}

# Three failures per model, each a mismatch (overlap < 0.5) that reaches the jury.
FAILURES = {
    1: "SELECT name FROM item WHERE colour = 'green'",
    2: "SELECT price FROM item ORDER BY price",
    3: "SELECT 99",
}


def make_project(tmp: Path, models=("gpt-x", "claude-y"), families=None) -> Path:
    make_db(tmp / "dbs")
    write_gold(tmp)
    recs = []
    for m in models:
        for q, sql in FAILURES.items():
            rec = {"model": m, "question_id": q, "sql": sql}
            if families and m in families:
                rec["family"] = families[m]
            recs.append(rec)
    write_runs(tmp, recs)
    (tmp / "jury.toml").write_text('gold = "gold.json"\ndb_root = "dbs"\nworkers = 1\n')
    return tmp


def copy_project(template: Path, dest: Path) -> Path:
    """A copy of a project a module built once (its verdicts, store and keys), for one test to
    change at will. Verdict files bind their inputs by paths relative to themselves, so the copy
    verifies as the original does; the store's file-hash cache, keyed by absolute path, misses.
    The template's panel files name a loopback server that is gone: a test that calls jurors
    scripts its own (fake_llm) and writes its own panel."""
    shutil.copytree(template, dest, symlinks=True, dirs_exist_ok=True)
    return dest


def executed(project: Path) -> int:
    """Executions the project's store holds (0 when no store was made): what a check before
    work must leave at 0."""
    import sqlite3

    path = project / ".jury" / "store.db"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as con:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return con.execute("SELECT count(*) FROM executions").fetchone()[0] if "executions" in tables else 0


def blind_answer(category: str, gold_at: int) -> str:
    """What a blind ballot's juror answers for a category, the gold shown at position gold_at (1 or 2)."""
    return {
        "gold_defect": f"answer_{3 - gold_at}",
        "genuine_error": f"answer_{gold_at}",
        "format_equivalence": "both",
        "ambiguous": "ambiguous",
    }[category]


def category_juror(verdict_of):
    """A blind juror of make_project's failures whose category for question q is verdict_of(q)
    (a category of jury.vocab.CATEGORIES); its reasoning is "scripted <category>"."""

    def respond(req):
        text = user_text(req)
        sqls = re.findall(r"<sql_(\d)>\n(.*?)\n</sql_\d>", text, re.S)
        gold_at = next(int(i) for i, sql in sqls if sql in GOLD_SQL.values())
        cand_sql = next(sql for i, sql in sqls if int(i) != gold_at)
        q = next(q for q, sql in FAILURES.items() if sql == cand_sql)
        category = verdict_of(q)
        return ballot_reply(blind_answer(category, gold_at), reasoning=f"scripted {category}")

    return respond


TEST_JUROR_TIMEOUT_S = 120.0


def write_panel(tmp: Path, base_url: str, jurors, *, style="blind", k=3, name="panel.toml") -> Path:
    """jurors: list of (name, family) or (name, family, litellm model). Each juror's timeout is
    TEST_JUROR_TIMEOUT_S: a loopback reply under a loaded machine (load 10-35 was seen) can take
    seconds, and a timed-out call is retried, which breaks every test that counts calls; tests of
    timeouts give their own juror a short one."""
    lines = [f'name = "test"\nballot_style = "{style}"\nk = {k}\n']
    for j in jurors:
        jname, fam = j[0], j[1]
        model = j[2] if len(j) > 2 else f"openai/{jname}"
        lines.append(
            f'[[jurors]]\nname = "{jname}"\nmodel = "{model}"\nfamily = "{fam}"\n'
            f'api_base = "{base_url}"\nmax_concurrency = 4\nmax_retries = 2\ntimeout_s = {TEST_JUROR_TIMEOUT_S:g}\n'
        )
    path = tmp / name
    path.write_text("\n".join(lines))
    return path


def user_text(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def gold_position(request: dict) -> int:
    """1 or 2: where the gold SQL sits in a blind ballot (the test knows the gold)."""
    text = user_text(request)
    sql_1 = re.search(r"<sql_1>\n(.*?)\n</sql_1>", text, re.S).group(1)
    return 1 if sql_1 in GOLD_SQL.values() else 2


def says(category: str):
    """A juror that always reaches `category`, whichever order the answers come in."""

    def respond(request: dict) -> Reply:
        g = gold_position(request)
        cand = 3 - g
        verdict = {
            "gold_defect": f"answer_{cand}",
            "genuine_error": f"answer_{g}",
            "format_equivalence": "both",
            "neither": "neither",
            "ambiguous": "ambiguous",
        }[category]
        return ballot_reply(verdict, reasoning=f"scripted: {category}")

    return respond


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def hashed_verdicts(request: dict) -> Reply:
    """A deterministic test-double juror for whole examples: the verdict comes from a hash of the
    juror's model and the ballot text (an audit ballot: defective one time in four)."""
    import hashlib

    from tests.support.fakellm import json_reply

    text = request["messages"][-1]["content"]
    h = hashlib.sha256((request["model"] + text).encode()).digest()[0]
    if "gold_sql" in text:  # an audit ballot
        bad = h % 4 == 0
        verdict = {"verdict": "defective" if bad else "valid", "defect_type": "sql_vs_question" if bad else None}
        return json_reply({"reasoning": "fixture", **verdict})
    return json_reply({"reasoning": "fixture", "verdict": ["answer_1", "answer_2", "both", "neither", "ambiguous"][h % 5]})


FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]


def adjudicate_project(tmp: Path, fake_llm, category: str) -> Path:
    """make_project in ``tmp`` (the working directory), adjudicated by `jury adjudicate` with four
    loopback jurors who all answer ``category``: verdicts/adj.json is locked."""
    from typer.testing import CliRunner

    from jury.cli import app

    make_project(tmp)
    for name, _ in FOUR:
        fake_llm.script(name, says(category))
    panel = write_panel(tmp, fake_llm.base_url, FOUR)
    res = CliRunner().invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    return tmp
