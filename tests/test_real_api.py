"""Opt-in: one real blind ballot per shipped juror whose key is set.

Run with `python -m pytest --real-api tests/test_real_api.py` and the providers' keys in the
environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, XAI_API_KEY,
DEEPSEEK_API_KEY). Each juror costs one call of a few thousand tokens. Without --real-api
these tests are skipped and nothing leaves the machine.
"""

import asyncio
import os

import pytest

from jury.execution.schema import describe_columns
from jury.execution.sqlite import execute
from jury.inputs.records import GoldItem
from jury.judging.ballots import REPLY_SCHEMAS, Template, adjudication_messages, blind_category, make_parser
from jury.judging.panels import PANELS_DIR, load_panel
from jury.judging.providers.pool import JurorPool
from tests.support.helpers import EXAMPLE

DB = EXAMPLE / "databases" / "superhero" / "superhero.sqlite"
PANEL = load_panel(PANELS_DIR / "default.toml")
GOLD = GoldItem(
    question_id=717,
    db_id="superhero",
    question="Please list all the superpowers of 3-D Man.",
    evidence="3-D Man refers to superhero_name = '3-D Man'; superpowers refers to power_name",
    SQL="SELECT T3.power_name FROM superhero AS T1 INNER JOIN hero_power AS T2 ON T1.id = T2.hero_id "
    "INNER JOIN superpower AS T3 ON T2.power_id = T3.id WHERE T1.superhero_name = '3-D Man'",
)
WRONG = "SELECT power_name FROM superpower ORDER BY id LIMIT 3"  # ignores the hero entirely


@pytest.mark.real_api
@pytest.mark.parametrize("juror", PANEL.jurors, ids=lambda j: j.name)
def test_one_real_blind_ballot(juror):
    if juror.missing_key():
        pytest.skip(f"{juror.api_key_env} is not set")
    template = Template.load(PANEL.prompt_path)
    messages = adjudication_messages(
        template,
        "blind",
        GOLD,
        describe_columns(DB, GOLD.sql, WRONG),
        GOLD.sql,
        execute(DB, GOLD.sql),
        WRONG,
        execute(DB, WRONG),
        "gold_first",
        True,
    )
    result = asyncio.run(JurorPool([juror]).call(juror.name, messages, schema=REPLY_SCHEMAS["blind"], parse=make_parser("blind")))
    assert result.ok, result.error
    assert result.prompt_tokens > 0 and result.cost_usd >= 0
    assert os.environ[juror.api_key_env] not in (result.text or "")
    category, _ = blind_category(result.parsed["verdict"], "gold_first")
    # the candidate ignores the hero: a shipped juror that reads the ballot must call it wrong
    assert category == "genuine_error", result.parsed
