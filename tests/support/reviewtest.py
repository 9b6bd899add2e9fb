"""A reviewable project for `jury review` tests: verdicts and an audit from the loopback panel,
with split, unsettled and flagged items and a candidate SQL that carries a <script> (and whose
result preview is wider than the page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from jury.cli import app
from tests.support.fakellm import ballot_reply, json_reply
from tests.support.jurytest import FAILURES, blind_answer, gold_position, make_project, user_text, write_panel

FOUR = [("ja", "openai"), ("jb", "anthropic"), ("jc", "google"), ("jd", "xai")]
FIVE = [*FOUR, ("je", "deepseek")]
WIDE = "replace(hex(zeroblob(38)), '00', 'wide ') || 'END'"  # a 193-character cell: a preview wider than any screen
SCRIPT_SQL = f"SELECT 99 AS n, {WIDE} AS wide_a, {WIDE} AS wide_b -- <script>window.__pwned = 1</script> {{{{ 7 * 7 }}}}"
QUESTIONS = {"Names of red items?": 1, "Items by price, cheapest first?": 2, "How many items?": 3, "Broken gold": 4}
# question -> what each juror says: q1 unanimous (not queued), q2 a 2-1 split, q3 no majority
PLAN = {
    1: {"ja": "genuine_error", "jb": "genuine_error", "jc": "genuine_error", "jd": "genuine_error"},
    2: {"ja": "gold_defect", "jb": "gold_defect", "jc": "genuine_error", "jd": "genuine_error"},
    3: {"ja": "gold_defect", "jb": "genuine_error", "jc": "format_equivalence", "jd": "ambiguous"},
}


def question_of(request: dict) -> int:
    return QUESTIONS[re.search(r"<question>\n(.*?)\n</question>", user_text(request), re.S).group(1)]


def juror(name: str):
    def respond(request: dict):
        text = user_text(request)
        q = question_of(request)
        if "<sql_1>" not in text:  # a gold audit ballot: question 2 defective by a majority, 3 split 3-2
            bad = (q == 2 and name in ("ja", "jb", "jc")) or (q == 3 and name in ("ja", "jb"))
            return json_reply(
                {
                    "reasoning": f"audit says {'defective' if bad else 'valid'} (juror {name})",
                    "verdict": "defective" if bad else "valid",
                    "defect_type": "sql_vs_question" if bad else None,
                }
            )
        category = PLAN[q][name]
        g = gold_position(request)
        return ballot_reply(blind_answer(category, g), reasoning=f"juror {name} reasoned: {category}")

    return respond


def make_reviewable(tmp: Path, fake_llm) -> dict:
    """tmp holds a project with verdicts/adj.json and verdicts/audit.json; the working directory must be tmp."""
    make_project(tmp, models=("gpt-x",))
    runs = [{"model": "gpt-x", "question_id": q, "sql": SCRIPT_SQL if q == 3 else sql} for q, sql in FAILURES.items()]
    (tmp / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    for name, _ in FIVE:
        fake_llm.script(name, juror(name))
    runner = CliRunner()
    panel = write_panel(tmp, fake_llm.base_url, FOUR)
    res = runner.invoke(app, ["adjudicate", "run.jsonl", "--panel", str(panel), "-o", "verdicts/adj.json"])
    assert res.exit_code == 0, res.output
    audit_panel = write_panel(tmp, fake_llm.base_url, FIVE, style="audit", k=5, name="audit.toml")
    res = runner.invoke(app, ["audit-gold", "gold.json", "--panel", str(audit_panel), "-o", "verdicts/audit.json"])
    assert res.exit_code == 0, res.output
    return {"adj": tmp / "verdicts" / "adj.json", "audit": tmp / "verdicts" / "audit.json"}
