"""--plan's token counts without litellm's token_counter (jury.judging.tokens): litellm's exact
numbers, and the same plan as before on the bundled example."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jury.cli import app
from jury.judging import tokens
from jury.judging.juror import JurorSpec
from jury.judging.providers import prices, setup

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "bird-superhero"


def panel_models() -> list[str]:
    """Every juror model string of the bundled panels (openai, anthropic, gemini, xai, deepseek, ollama)."""
    models = {
        j["model"] for p in sorted((ROOT / "panels").glob("*.toml")) for j in tomllib.loads(p.read_text()).get("jurors", [])
    }
    assert {"openai", "anthropic", "gemini", "xai", "deepseek"} <= {m.split("/", 1)[0] for m in models}
    return sorted(models)


LONG_SQL = (
    "SELECT T1.name, COUNT(*) FROM superhero AS T1 JOIN hero_power AS T2 ON T1.id = T2.hero_id WHERE T1.x = 'é' GROUP BY 1;\n"
)
MESSAGES = [
    [{"role": "user", "content": "hello"}],
    [{"role": "system", "content": "You judge SQL."}, {"role": "user", "content": LONG_SQL * 40}],
    # chunk boundaries (1024 characters) falling inside words, multi-byte characters and emoji
    [{"role": "user", "content": ("naïve café 😀 数据库 " * 200)[:5000]}],
    [{"role": "user", "content": "a" * 1023 + "bcdef" + " " * 2048 + "\n\n\t end"}],
    [{"role": "user", "content": "special text <|endoftext|> and <|endofprompt|> stays text"}],
    [{"role": "user", "content": "with a name", "name": "alice"}, {"role": "assistant", "content": None}],
    [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": '{"verdict": "x"}'},
        {"role": "user", "content": "fix it"},
    ],
    [],
]


@pytest.fixture
def litellm():
    setup.import_litellm()
    import litellm

    return litellm


@pytest.mark.parametrize("model", panel_models())
@pytest.mark.parametrize("messages", MESSAGES, ids=range(len(MESSAGES)))
def test_counts_and_costs_equal_litellms(litellm, model, messages):
    juror = JurorSpec(name="j", model=model, family="f")
    fast = tokens.fast_count(messages)
    assert fast is not None  # the fast path was taken: the comparison below is not litellm against itself
    expected = litellm.token_counter(model="gpt-4o", messages=messages)  # what estimate_call always counted
    tokens_, cost = prices.estimate_call(juror, messages, 400)
    assert fast == tokens_ == expected
    if prices.has_price(model):
        assert cost == sum(float(c) for c in litellm.cost_per_token(model=model, prompt_tokens=expected, completion_tokens=400))
    else:
        assert cost is None


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": [{"type": "text", "text": "a list of parts"}]}],
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            }
        ],
    ],
)
def test_other_message_shapes_are_left_to_litellm(litellm, messages):
    assert tokens.fast_count(messages) is None
    juror = JurorSpec(name="j", model="openai/gpt-4.1", family="f")
    assert prices.estimate_call(juror, messages, 400)[0] == litellm.token_counter(model="gpt-4o", messages=messages)


def test_litellms_counting_knobs_leave_the_count_to_litellm(litellm, monkeypatch):
    messages = [{"role": "user", "content": "x " * 3000}]
    monkeypatch.setenv("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS", "7")
    assert tokens.fast_count(messages) is None
    monkeypatch.delenv("TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS")
    monkeypatch.setattr(litellm, "disable_token_counter", True)
    assert tokens.fast_count(messages) is None


def test_counting_does_not_import_litellm():
    code = (
        "import sys; from jury.judging.tokens import fast_count;"
        "n = fast_count([{'role': 'user', 'content': 'SELECT 1'}]);"
        "assert n is not None and n > 0, n;"
        "assert 'litellm' not in sys.modules, 'litellm imported to count tokens'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.slow  # plans the whole bundled example twice, once through litellm
def test_plan_on_the_bundled_example_is_unchanged(tmp_path, monkeypatch, litellm):
    """The plan with the fast counts and cached prices, and with litellm counting and pricing
    every ballot as before: the same table, byte for byte."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".jury", "verdicts"))
    monkeypatch.chdir(project)
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    fast = runner.invoke(app, ["adjudicate", "run.jsonl", "--plan"], catch_exceptions=False)
    assert fast.exit_code == 0, fast.output
    assert "adjudication plan" in fast.output and "$" in fast.output
    monkeypatch.setattr(tokens, "enabled", False)
    monkeypatch.setattr(prices, "_cost_per_token", prices._cost_per_token.__wrapped__)
    calls = []
    real = litellm.token_counter
    monkeypatch.setattr(litellm, "token_counter", lambda **kw: calls.append(1) or real(**kw))
    slow = runner.invoke(app, ["adjudicate", "run.jsonl", "--plan"], catch_exceptions=False)
    assert slow.exit_code == 0, slow.output
    assert calls  # litellm counted this time
    assert fast.output == slow.output
