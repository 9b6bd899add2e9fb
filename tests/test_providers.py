"""Every shipped juror's provider, through litellm's real provider code, against a loopback
server speaking that provider's native wire protocol (tests/support/provider_servers.py):
Anthropic messages, Gemini generateContent, OpenAI-compatible chat completions (OpenAI, xAI,
DeepSeek, llama.cpp, vLLM) and Ollama chat. Each scripted reply ends as the README says: a
vote, an abstention with its reason (final: stored), or a failure a rerun asks again."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # at collection: its seconds-long first import is no test's time

from jury.errors import ConfigError
from jury.inputs.records import ExecResult, GoldItem
from jury.judging.ballots import adjudication_messages, audit_messages, make_parser, reply_schema
from jury.judging.juror import LOCAL_PLACEHOLDER_KEY, CallResult, JurorSpec
from jury.judging.panels import PANELS_DIR, load_panel
from jury.judging.providers.params import unknown_params
from jury.judging.providers.pool import JurorPool
from jury.judging.providers.prices import has_price
from jury.judging.runner import is_final_abstention
from jury.judging.vote_check import expected_reply
from tests.support.provider_servers import LLAMA_CPP_JSON_SCHEMA_500, Fail, ProviderServer, Say, Seen

KEY_ENV = "JURY_TEST_PROVIDER_KEY"
SHIPPED = ("default", "audit", "local")
BLIND = json.dumps({"reasoning": "Both queries count the same rows.", "verdict": "answer_1"})
AUDIT = json.dumps({"reasoning": "The query answers the question.", "verdict": "valid", "defect_type": None})
# reasoning that drafts the opposite verdict as JSON: it must never be read as the answer
DRAFT = 'First thought: {"reasoning": "draft", "verdict": "answer_2"}. On reflection, no.'
PROTOCOL = {"anthropic": "anthropic", "gemini": "gemini", "ollama_chat": "ollama"}  # others: chat completions
ITEM = GoldItem(question_id=7, db_id="shop", question="How many orders?", sql="SELECT COUNT(*) FROM orders")
RESULT = ExecResult(status="ok", columns=["n"], rows=[(3,)], row_count=1)


def _shipped_jurors() -> list:
    seen: set[str] = set()
    out = []
    for name in SHIPPED:
        panel = load_panel(PANELS_DIR / f"{name}.toml")
        for juror in panel.jurors:
            if juror.model not in seen:
                seen.add(juror.model)
                out.append(pytest.param(panel, juror, id=f"{name}:{juror.name}"))
    return out


SHIPPED_JURORS = _shipped_jurors()


class RecordingSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-provider-key")
    with ProviderServer() as srv:
        yield srv


def at(server: ProviderServer, spec: JurorSpec, **changes) -> JurorSpec:
    """The shipped juror, pointed at the loopback server (a keyed one with the test's key)."""
    update = {"api_base": server.base_url, "max_retries": 3, "timeout_s": 10, **changes}
    if spec.api_key_env:
        update["api_key_env"] = KEY_ENV
    return spec.model_copy(update=update)


def served_name(model: str) -> str:
    return model.split("/", 1)[1]


def ballot(panel, juror: JurorSpec) -> tuple[list[dict], str]:
    """The real messages of one ballot of the panel's style, and the style."""
    if panel.ballot_style == "audit":
        return audit_messages(panel.template, ITEM, "CREATE TABLE orders (id INT)", panel.show_evidence), "audit"
    messages = adjudication_messages(
        panel.template,
        "blind",
        ITEM,
        "CREATE TABLE orders (id INT)",
        ITEM.sql,
        RESULT,
        "SELECT COUNT(id) FROM orders",
        RESULT,
        "gold_first",
        panel.show_evidence,
    )
    return messages, "blind"


def ask(spec: JurorSpec, style: str = "blind", messages: list[dict] | None = None, pool: JurorPool | None = None) -> CallResult:
    pool = pool or JurorPool([spec], sleep=RecordingSleep())
    messages = messages or [{"role": "system", "content": "Reply with JSON."}, {"role": "user", "content": "Judge."}]
    return asyncio.run(pool.call(spec.name, messages, schema=reply_schema(style), parse=make_parser(style)))


def max_tokens_sent(seen: Seen) -> int | None:
    body = seen.body
    if seen.protocol == "gemini":
        return body.get("generationConfig", {}).get("max_output_tokens")
    if seen.protocol == "ollama":
        return body.get("options", {}).get("num_predict")
    return body.get("max_tokens")


def structured_sent(seen: Seen) -> bool:
    body = seen.body
    if seen.protocol == "anthropic":
        return "output_format" in body or "tools" in body
    if seen.protocol == "gemini":
        config = body.get("generationConfig", {})
        return "response_json_schema" in config or "response_schema" in config
    if seen.protocol == "ollama":
        return isinstance(body.get("format"), dict)
    return "response_format" in body


# ---- one ballot per shipped juror ------------------------------------------------------------


@pytest.mark.parametrize("panel, juror", SHIPPED_JURORS)
def test_every_shipped_juror_votes_through_its_native_protocol(server, panel, juror):
    spec = at(server, juror)
    messages, style = ballot(panel, juror)
    server.script(served_name(juror.model), Say(AUDIT if style == "audit" else BLIND))
    result = ask(spec, style, messages)
    assert result.ok, result.error
    assert result.parsed["verdict"] == ("valid" if style == "audit" else "answer_1")
    assert result.attempts == 1 and result.prompt_tokens > 0 and result.completion_tokens > 0
    [seen] = server.requests()
    assert seen.protocol == PROTOCOL.get(juror.model.split("/", 1)[0], "openai")
    # the key from the juror's env var; a keyless local juror sends a placeholder, never a real key
    key = os.environ[KEY_ENV] if juror.api_key_env else LOCAL_PLACEHOLDER_KEY
    assert seen.key_sha256 == hashlib.sha256(key.encode()).hexdigest()
    assert max_tokens_sent(seen) == juror.params.get("max_tokens", max_tokens_sent(seen)) and max_tokens_sent(seen)
    assert structured_sent(seen) == (juror.structured_kind() != "off")
    text = json.dumps(seen.body)
    assert "Answer 1" in text and "How many orders?" in text  # the ballot itself went out


# ---- reasoning -------------------------------------------------------------------------------

THINKING_CASES = [
    pytest.param("anthropic/claude-sonnet-4-5", False, id="anthropic-thinking-block"),
    pytest.param("gemini/gemini-2.5-pro", False, id="gemini-thought-part"),
    pytest.param("deepseek/deepseek-reasoner", False, id="deepseek-reasoning_content"),
    pytest.param("xai/grok-4.3", False, id="xai-reasoning_content"),
    pytest.param("ollama_chat/qwen3:8b", False, id="ollama-thinking"),
    pytest.param("anthropic/claude-sonnet-4-5", True, id="anthropic-think-tags"),
    pytest.param("gemini/gemini-2.5-pro", True, id="gemini-think-tags"),
    pytest.param("openai/qwen3-8b", True, id="openai-compatible-think-tags"),
    pytest.param("ollama_chat/qwen3:8b", True, id="ollama-think-tags"),
]


@pytest.mark.parametrize("model, tags", THINKING_CASES)
def test_reasoning_is_never_read_as_the_answer(server, model, tags):
    server.script(served_name(model), Say(BLIND, thinking=DRAFT, think_tags=tags))
    result = ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV))
    assert result.ok and result.attempts == 1
    assert result.parsed["verdict"] == "answer_1"  # the draft in the reasoning said answer_2


# ---- refusals and safety blocks: a final abstention, no repair turn --------------------------

REFUSAL_CASES = [
    pytest.param(
        "anthropic/claude-sonnet-4-5", Say("I can't help with that.", stop="refusal"), id="anthropic-stop_reason-refusal"
    ),
    pytest.param("gemini/gemini-2.5-pro", Say("", stop="safety"), id="gemini-finishReason-SAFETY"),
    pytest.param("gemini/gemini-2.5-pro", Say("", stop="prompt_blocked"), id="gemini-promptFeedback-blockReason"),
    pytest.param("openai/gpt-4.1", Say("I can't help with that.", stop="refusal"), id="openai-message-refusal"),
    pytest.param("xai/grok-4.3", Say("", stop="safety"), id="xai-content_filter"),
]


@pytest.mark.parametrize("model, answer", REFUSAL_CASES)
def test_refusal_or_safety_block_is_a_final_abstention_at_once(server, model, answer):
    server.script(served_name(model), answer)
    result = ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV))
    assert not result.ok and result.attempts == 1 and len(server.requests()) == 1  # no repair turn
    assert "refused" in result.error
    assert is_final_abstention(result)  # stored: asking again would be refused again


# ---- overloaded and rate limited: retried, waiting as asked ----------------------------------

RETRY_CASES = [
    pytest.param("anthropic/claude-sonnet-4-5", Fail("overloaded"), "server_error", None, id="anthropic-529-overloaded"),
    pytest.param(
        "anthropic/claude-sonnet-4-5", Fail("rate_limited", retry_after=7), "rate_limited", 7, id="anthropic-429-retry-after"
    ),
    pytest.param("gemini/gemini-2.5-pro", Fail("rate_limited", retry_after=7), "rate_limited", 7, id="gemini-429-RetryInfo"),
    pytest.param("gemini/gemini-2.5-pro", Fail("overloaded"), "server_error", None, id="gemini-503-UNAVAILABLE"),
    pytest.param("xai/grok-4.3", Fail("rate_limited", retry_after=7), "rate_limited", 7, id="xai-429-retry-after"),
    pytest.param("deepseek/deepseek-chat", Fail("overloaded"), "server_error", None, id="deepseek-503"),
    pytest.param("ollama_chat/qwen3:8b", Fail("overloaded"), "server_error", None, id="ollama-503-busy"),
]


@pytest.mark.parametrize("model, failure, status, asked", RETRY_CASES)
def test_overloaded_or_rate_limited_is_retried_waiting_as_asked(server, model, failure, status, asked):
    server.script(served_name(model), [failure, Say(BLIND)])
    sleep = RecordingSleep()
    spec = JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV)
    result = ask(spec, pool=JurorPool([spec], sleep=sleep, backoff_base_s=1))
    assert result.ok and result.attempts == 2
    assert [e["status"] for e in result.log] == [status, "ok"]
    [wait] = sleep.waits
    if asked is None:
        assert 1 <= wait <= 1.1  # the backoff
    else:
        assert asked <= wait <= asked + 0.5  # the provider's hint (Gemini's is in the body, not a header)


def test_rate_limit_past_the_retries_is_not_a_vote_and_not_final(server):
    server.script("gemini-2.5-pro", Fail("rate_limited", retry_after=2))
    spec = JurorSpec(
        name="j", model="gemini/gemini-2.5-pro", family="f", api_base=server.base_url, api_key_env=KEY_ENV, max_retries=2
    )
    result = ask(spec)
    assert not result.ok and result.attempts == 3 and "gave up after 2 retries" in result.error
    assert not is_final_abstention(result)  # a rerun asks again


# ---- cut off at max_tokens -------------------------------------------------------------------

TRUNCATION_CASES = [
    pytest.param("anthropic/claude-sonnet-4-5", id="anthropic-stop_reason-max_tokens"),
    pytest.param("gemini/gemini-2.5-pro", id="gemini-finishReason-MAX_TOKENS"),
    pytest.param("openai/gpt-4.1", id="openai-finish_reason-length"),
    pytest.param("ollama_chat/qwen3:8b", id="ollama-done_reason-length"),
]


@pytest.mark.parametrize("model", TRUNCATION_CASES)
def test_reply_cut_off_at_max_tokens_gets_the_repair_turn_then_abstains(server, model):
    server.script(served_name(model), Say(BLIND[:25], stop="length"))
    result = ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV))
    assert not result.ok and result.attempts == 2  # the first reply and the repair turn
    assert "cut off at the token limit" in result.error
    assert is_final_abstention(result)


@pytest.mark.parametrize("model", TRUNCATION_CASES)
def test_reply_cut_off_then_repaired_is_a_vote(server, model):
    server.script(served_name(model), [Say(BLIND[:25], stop="length"), Say(BLIND)])
    result = ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV))
    assert result.ok and result.attempts == 2 and result.parsed["verdict"] == "answer_1"
    repair = server.requests()[-1].body
    assert "Reply with only the JSON object" in json.dumps(repair)


# ---- missing usage ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["openai/gpt-4.1", "xai/grok-4.3", "deepseek/deepseek-chat", "ollama_chat/qwen3:8b"])
def test_missing_usage_still_votes(server, model):
    server.script(served_name(model), Say(BLIND, usage=False))
    result = ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV))
    assert result.ok and result.attempts == 1 and result.parsed["verdict"] == "answer_1"


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro"])
def test_missing_usage_litellm_cannot_read_is_not_retried(server, model):
    # litellm 1.110 cannot build a reply from an Anthropic or Gemini body without its usage
    # block: the same body fails the same way, so no retries; not a vote, and a rerun asks again.
    server.script(served_name(model), Say(BLIND, usage=False))
    sleep = RecordingSleep()
    spec = JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV)
    result = ask(spec, pool=JurorPool([spec], sleep=sleep))
    assert not result.ok and result.attempts == 1 and sleep.waits == []
    assert result.error.startswith("unreadable reply") and "usage" in result.error and "Traceback" not in result.error
    assert not is_final_abstention(result)


# ---- invalid requests: never retried; a rejected structured output falls back once ------------


def _llama_cpp(seen: Seen):
    """llama-cpp-python's server: json_schema is a validation error it reports as HTTP 500."""
    if (seen.body.get("response_format") or {}).get("type") == "json_schema":
        return Fail("invalid_input")
    return Say(BLIND)


def test_llama_cpp_500_on_json_schema_falls_back_once_to_json_object(server):
    server.script("gemma-3-270m", _llama_cpp)
    sleep = RecordingSleep()
    spec = JurorSpec(name="gemma", model="openai/gemma-3-270m", family="google", api_base=server.base_url + "/v1")
    pool = JurorPool([spec], sleep=sleep)
    first = ask(spec, pool=pool)
    assert first.ok and first.attempts == 2 and sleep.waits == []  # one fallback, no retries
    sent = [s.body.get("response_format") for s in server.requests()]
    assert [f["type"] for f in sent] == ["json_schema", "json_object"]
    assert sent[1]["schema"] == reply_schema("blind")  # llama.cpp constrains json_object to the schema
    assert "structured output json_schema rejected, retrying with json_object" in first.log[0]["error"]
    assert pool.structured_kind("gemma") == "json_object"
    second = ask(spec, pool=pool)  # the pool remembers: no second rejection
    assert second.ok and second.attempts == 1
    assert server.requests()[-1].body["response_format"]["type"] == "json_object"


def test_invalid_input_500_is_not_retried_and_falls_back_at_most_once(server):
    server.script("gemma-3-270m", Fail("invalid_input"))  # rejects every request
    sleep = RecordingSleep()
    spec = JurorSpec(name="gemma", model="openai/gemma-3-270m", family="google", api_base=server.base_url, max_retries=5)
    result = ask(spec, pool=JurorPool([spec], sleep=sleep))
    assert not result.ok and result.attempts == 2 and sleep.waits == []  # was 6 attempts, 5 backoffs
    assert [e["status"] for e in result.log] == ["client_error", "client_error"]
    assert "Input should be 'text' or 'json_object'" in result.error
    assert LLAMA_CPP_JSON_SCHEMA_500["error"]["type"] == "internal_server_error"


def test_invalid_input_500_without_structured_output_is_not_retried(server):
    server.script("gemma-3-270m", Fail("invalid_input"))
    sleep = RecordingSleep()
    spec = JurorSpec(
        name="gemma", model="openai/gemma-3-270m", family="google", api_base=server.base_url, structured_output=False
    )
    result = ask(spec, pool=JurorPool([spec], sleep=sleep))
    assert not result.ok and result.attempts == 1 and sleep.waits == []


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-pro", "xai/grok-4.3"])
def test_bad_request_is_not_retried(server, model):
    server.script(served_name(model), Fail("bad_request"))
    sleep = RecordingSleep()
    spec = JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV, structured_output=False)
    result = ask(spec, pool=JurorPool([spec], sleep=sleep))
    assert not result.ok and result.attempts == 1 and sleep.waits == [] and "400" in result.error


# ---- structured output per server kind -------------------------------------------------------

KIND_CASES = [
    pytest.param("openai/m", True, "response_format", {"type": "json_schema"}, id="true-json_schema"),
    pytest.param("openai/m", "json_schema", "response_format", {"type": "json_schema"}, id="json_schema"),
    pytest.param("openai/m", "json_object", "response_format", {"type": "json_object"}, id="json_object-llama.cpp"),
    pytest.param("ollama_chat/m", "ollama", "format", {"type": "object"}, id="ollama-native"),
    pytest.param("openai/m", "ollama", "format", {"type": "object"}, id="ollama-openai-compatible"),
    pytest.param("openai/m", "vllm", "guided_json", {"type": "object"}, id="vllm-guided_json"),
    pytest.param("hosted_vllm/m", "vllm", "guided_json", {"type": "object"}, id="hosted_vllm-guided_json"),
]


@pytest.mark.parametrize("model, kind, key, head", KIND_CASES)
def test_structured_output_kind_sends_the_servers_own_constraint(server, model, kind, key, head):
    server.script("m", Say(BLIND))
    spec = JurorSpec(name="j", model=model, family="f", api_base=server.base_url, structured_output=kind)
    assert ask(spec).ok
    body = server.requests()[-1].body
    sent = body[key]
    assert {k: sent[k] for k in head} == head
    schema = reply_schema("blind")
    if key == "response_format":
        assert (sent.get("json_schema") or {}).get("schema", sent.get("schema")) == schema
    else:
        assert sent == schema
    others = {"response_format", "format", "guided_json"} - {key}
    assert not others & set(body)


@pytest.mark.parametrize("model", ["openai/m", "ollama_chat/m"])
@pytest.mark.parametrize("kind", [False, "off"])
def test_structured_output_off_sends_no_constraint(server, model, kind):
    server.script("m", Say(BLIND))
    assert ask(JurorSpec(name="j", model=model, family="f", api_base=server.base_url, structured_output=kind)).ok
    assert not {"response_format", "format", "guided_json"} & set(server.requests()[-1].body)


def test_structured_output_true_and_false_are_recorded_as_before():
    # request hashes and panel bindings hold structured_output as given: true/false stay booleans
    for value in (True, False):
        spec = JurorSpec.model_validate(
            {"name": "j", "model": "openai/m", "family": "f", "structured_output": value}, strict=True
        )
        assert spec.structured_output is value and spec.public_dict()["structured_output"] is value
    assert JurorSpec(name="j", model="openai/m", family="f").structured_kind() == "json_schema"
    assert JurorSpec(name="j", model="openai/m", family="f", structured_output=False).structured_kind() == "off"


def test_unknown_structured_output_kind_is_one_line_naming_the_choices(tmp_path: Path):
    path = tmp_path / "p.toml"
    path.write_text('[[jurors]]\nname = "j"\nmodel = "openai/m"\nfamily = "f"\nstructured_output = "guided"\n')
    with pytest.raises(ConfigError) as info:
        load_panel(path)
    message = str(info.value)
    assert "\n" not in message and "structured_output = 'guided'" in message
    assert "'json_object'" in message and "'vllm'" in message


# ---- the shipped panels: models litellm knows, prices and takes these options for -------------


# The day the shipped panels were last checked against litellm's price map: a pinned litellm
# that dates a shipped model's retirement on or before it fails the test (the calendar does not).
PANELS_REVIEWED = "2026-12-01"


def _all_shipped_jurors() -> list:
    out = []
    for path in sorted(PANELS_DIR.glob("*.toml")):
        if "[[jurors]]" not in path.read_text():
            continue
        for juror in load_panel(path).jurors:
            out.append(pytest.param(juror, id=f"{path.stem}:{juror.name}"))
    return out


@pytest.mark.parametrize("juror", _all_shipped_jurors())
def test_shipped_juror_is_a_model_litellm_knows_prices_and_takes_these_params_for(juror):
    if juror.recorded is not None:
        pytest.skip("a recorded judge makes no call")
    model, provider, _key, _base = litellm.get_llm_provider(model=juror.model, api_base=juror.api_base)
    local = juror.api_base is not None and any(h in juror.api_base for h in ("://localhost", "://127.0.0.1", "://[::1]"))
    if not local:  # a model on the user's own server costs nothing and no price map knows it
        assert has_price(juror.model), f"{juror.model}: litellm's price map does not know it"
        info = litellm.model_cost.get(juror.model) or litellm.model_cost[model]
        assert info.get("mode") == "chat", f"{juror.model} is not a chat model"
        limit = info.get("max_output_tokens")
        if "max_tokens" in juror.params:
            assert isinstance(limit, int) and juror.params["max_tokens"] <= limit
        if juror.structured_kind() == "json_schema":
            assert litellm.supports_response_schema(model=model, custom_llm_provider=provider), (
                f"{juror.model}: litellm does not support a response schema for it; set structured_output = false"
            )
    supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or []
    assert unknown_params(juror) == []
    assert set(juror.generation_params()) <= set(supported), f"{juror.model} rejects some of {juror.generation_params()}"
    assert "max_tokens" in supported  # jury sends max_tokens when the panel sets none
    if not local:  # litellm's price map dates retirements: a shipped juror is never one it has retired
        retired = (litellm.model_cost.get(juror.model) or litellm.model_cost[model]).get("deprecation_date")
        assert retired is None or retired > PANELS_REVIEWED, f"{juror.model}: retired on {retired} (litellm's map)"


def test_think_block_is_skipped_by_the_parser_so_stored_votes_check_out():
    # `jury store merge` re-parses a stored reply text with the same parser: it must reach the
    # vote the live run stored, not the draft inside the <think> block
    text = f"<think>{DRAFT}</think>\n{BLIND}"
    assert make_parser("blind")(text)["verdict"] == "answer_1"
    reply = {"reasoning": "Both queries count the same rows.", "verdict": "answer_1"}
    assert expected_reply("adjudication", reply, text) == reply
    assert make_parser("blind")('{"reasoning": "<think> is a tag", "verdict": "answer_2"}')["verdict"] == "answer_2"


def test_anthropic_with_structured_output_contacts_no_other_host(server, monkeypatch, no_network):
    # litellm loads its table of Anthropic beta headers (structured outputs need one) from
    # GitHub unless told to use its bundled copy: jury tells it to, so a juror's call reaches the
    # juror's server and nothing else
    from litellm import anthropic_beta_headers_manager

    monkeypatch.setattr(anthropic_beta_headers_manager, "_BETA_HEADERS_CONFIG", None)  # as in a fresh process
    server.script("claude-sonnet-4-5", Say(BLIND))
    spec = JurorSpec(name="j", model="anthropic/claude-sonnet-4-5", family="f", api_base=server.base_url, api_key_env=KEY_ENV)
    assert ask(spec).ok
    assert "output_format" in server.requests()[-1].body and "anthropic-beta" in server.requests()[-1].headers
    assert no_network.violations == []


# ---- litellm's own pricing -------------------------------------------------------------------


def test_litellms_own_pricing_is_skipped_only_while_nothing_of_litellms_reads_it(server, monkeypatch):
    """jury prices a call from its usage; litellm's own response_cost (for its callbacks and
    budget) is skipped while no callback is registered, and a user's callback still gets it."""
    import litellm.cost_calculator as costs
    from litellm.integrations.custom_logger import CustomLogger

    model = "openai/gpt-4.1"
    spec = JurorSpec(name="j", model=model, family="f", api_base=server.base_url, api_key_env=KEY_ENV)
    priced: list[object] = []
    real = costs.completion_cost

    def counting(*args, **kwargs):
        priced.append(kwargs.get("model"))
        return real(*args, **kwargs)

    monkeypatch.setattr(costs, "completion_cost", counting)  # what litellm's response_cost_calculator calls
    for name in ("callbacks", "success_callback", "failure_callback", "_async_success_callback", "_async_failure_callback"):
        monkeypatch.setattr(litellm, name, [])  # none registered (an earlier test may have turned litellm's cache on)
    server.script(served_name(model), Say(BLIND))
    quiet = ask(spec)
    assert quiet.ok and quiet.cost_usd > 0 and priced == []  # litellm did not price it; jury did

    class Watcher(CustomLogger):
        pass

    monkeypatch.setattr(litellm, "callbacks", [Watcher()])
    server.script(served_name(model), Say(BLIND))
    watched = ask(spec)
    assert watched.ok and watched.cost_usd == quiet.cost_usd  # jury's price is the same either way
    assert priced  # with a callback registered, litellm prices the reply itself, as before


# ---- connections -----------------------------------------------------------------------------


@pytest.mark.parametrize("aiohttp", [True, False], ids=["litellm-aiohttp", "httpx"])
def test_calls_in_flight_keep_their_connections(monkeypatch, aiohttp):
    """128 calls, 32 at a time, to a keep-alive server open 32 connections, not one a call: the
    httpx transport's default limits (20 kept alive, counted over every connection) closed a
    connection on nearly every release past 20 in flight."""
    import socket

    from bench.loopback_juror import LoopbackJuror
    from jury.judging.providers.setup import import_litellm

    import_litellm()
    monkeypatch.setattr(litellm, "disable_aiohttp_transport", not aiohttp)
    monkeypatch.setattr(litellm, "aclient_session", None)  # a fresh session, on this setting
    opened: list[object] = []
    real_connect = socket.socket.connect

    def connect(sock, address):
        opened.append(address)
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    with LoopbackJuror(latency_s=0.05) as srv:
        spec = JurorSpec(name="j", model="openai/local", family="f", api_base=srv.base_url, max_concurrency=32)
        pool = JurorPool([spec])

        async def run() -> list[CallResult]:
            messages = [{"role": "user", "content": "Judge."}]
            return await asyncio.gather(
                *(
                    pool.call("j", messages + [{"role": "user", "content": str(i)}], schema=None, parse=json.loads)
                    for i in range(128)
                )
            )

        results = asyncio.run(run())
        assert all(r.ok for r in results) and srv.calls() == 128 and srv.max_in_flight() == 32
    assert len(opened) == 32
