"""A small judged project for `jury report -f html` tests: three models, an audit and an
adjudication written by the CLI through loopback scripted jurors, with a <script> in a
question, in its evidence and in a candidate SQL.

Scripted jurors here are test doubles; nothing they say is ever reported as a real number.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tests.support.fakellm import ballot_reply, json_reply
from tests.support.helpers import GOLD
from tests.support.jurytest import FAILURES, GOLD_SQL, blind_answer, make_project, user_text, write_panel

MODELS = ("gpt-x", "claude-y", "mistral-z")
FAMILIES = {"gpt-x": "openai", "claude-y": "anthropic", "mistral-z": "mistral"}
INJECTED_QUESTION = "Items by price, cheapest first? <script>window.__pwned = 1</script>"
INJECTED_EVIDENCE = '<img src="x" onerror="window.__pwned = 2"> price is in dollars'
INJECTED_SQL = "SELECT 99 -- </pre><script>window.__pwned = 3</script>"
# (model, question) -> what every juror says about that failure
PLAN = {
    ("gpt-x", 2): "format_equivalence",
    ("gpt-x", 3): "genuine_error",
    ("claude-y", 1): "gold_defect",
    ("claude-y", 2): "format_equivalence",
    ("claude-y", 3): "genuine_error",
    ("mistral-z", 1): "genuine_error",
    ("mistral-z", 2): "ambiguous",
    ("mistral-z", 3): "genuine_error",
}
FOUR = [("ja", "openai-j"), ("jb", "anthropic-j"), ("jc", "google"), ("jd", "xai")]
FIVE = [*FOUR, ("je", "deepseek")]


def _question(text: str) -> int:
    return next((q for q, sql in GOLD_SQL.items() if sql in text), 4)  # 4: the broken gold, audited only


def blind_juror(name: str):
    def respond(request: dict):
        text = user_text(request)
        sqls = re.findall(r"<sql_(\d)>\n(.*?)\n</sql_\d>", text, re.S)
        gold_at = next(int(i) for i, sql in sqls if sql in GOLD_SQL.values())
        cand_sql = next(sql for i, sql in sqls if int(i) != gold_at)
        q = _question(text)
        model = next(m for (m, qq) in PLAN if qq == q and cand_sql in (_sql(m, q), _fenced(_sql(m, q))))
        category = PLAN[(model, q)]
        return ballot_reply(blind_answer(category, gold_at), reasoning=f"juror {name}: {category} <b>bold?</b>")

    return respond


def audit_juror(name: str):
    def respond(request: dict):
        q = _question(user_text(request))
        bad = q == 3
        return json_reply(
            {
                "reasoning": f"audit by {name}: {'defective' if bad else 'valid'}",
                "verdict": "defective" if bad else "valid",
                "defect_type": "sql_vs_question" if bad else None,
            }
        )

    return respond


def _fenced(sql: str) -> str:
    from jury.judging.ballots import fence

    return fence(sql)


def _sql(model: str, q: int) -> str:
    if (model, q) == ("gpt-x", 1):
        return GOLD_SQL[1]
    if (model, q) == ("claude-y", 3):
        return INJECTED_SQL
    if model == "mistral-z":
        return {1: "SELECT name FROM item WHERE colour IS NULL", 2: "SELECT id FROM item ORDER BY price", 3: "SELECT 98"}[q]
    return FAILURES[q]


def make_site_project(tmp: Path, fake_llm) -> dict:
    """tmp (the working directory) holds the project with verdicts/audit.json and verdicts/adj.json."""
    make_project(tmp, models=MODELS, families=FAMILIES)
    gold = [dict(g) for g in GOLD]
    gold[1]["question"], gold[1]["evidence"] = INJECTED_QUESTION, INJECTED_EVIDENCE
    (tmp / "gold.json").write_text(json.dumps(gold))
    runs = [{"model": m, "question_id": q, "sql": _sql(m, q), "family": FAMILIES[m]} for m in MODELS for q in (1, 2, 3)]
    (tmp / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    from jury.cli import app

    runner = CliRunner()
    for name, _ in FIVE:
        fake_llm.script(name, audit_juror(name))
    panel = write_panel(tmp, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(panel), "-o", "verdicts/audit.json"])
    assert res.exit_code == 0, res.output
    for name, _ in FOUR:
        fake_llm.script(name, blind_juror(name))
    panel = write_panel(tmp, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    return {"adj": tmp / "verdicts" / "adj.json", "audit": tmp / "verdicts" / "audit.json"}


REPORT_ARGS = ["report", "run.jsonl", "--audit", "verdicts/audit.json", "--verdicts", "verdicts/adj.json"]
