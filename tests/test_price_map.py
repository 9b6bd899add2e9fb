"""jury.judging.price_map (litellm's bundled price map read without importing litellm) against
litellm itself, for every chat model of the map: the same cost as litellm.cost_per_token
wherever the fast path answers, the same has_price and the same entry (so the same reply token
cap and batch prices); and it declines where litellm's map could be another."""

from __future__ import annotations

import math

import pytest

from jury.judging import price_map
from jury.judging.providers import params, prices, setup

# a plan's ballot (a long schema prompt and the completion estimate), one token, and counts
# past every above-N tier of the map (128k, 200k, 272k, ...)
COUNTS = [(14_000, 800), (1, 1), (13_000, 400), (199_000, 500), (250_000, 800), (1_000_003, 1_000_003)]


@pytest.fixture
def litellm(monkeypatch):
    lib = setup.import_litellm()
    # litellm is imported in this process: let price_map answer as it would in one without it
    monkeypatch.setattr(price_map, "litellm_imported", lambda: False)
    monkeypatch.setenv(price_map.LOCAL_MAP_ENV, "True")
    return lib


def chat_model_names(lib) -> list[str]:
    """Every chat model of litellm's map, as its key and as provider/key (how a juror names it)."""
    names = set()
    for key, info in lib.model_cost.items():
        if isinstance(info, dict) and info.get("mode") == "chat":
            names.add(key)
            provider = info.get("litellm_provider")
            if isinstance(provider, str) and not key.startswith(provider + "/"):
                names.add(f"{provider}/{key}")
    return sorted(names)


def litellm_has_price(lib, model: str) -> bool:
    """has_price as jury asked litellm before price_map."""
    prices = lib.model_cost
    return model in prices or ("/" in model and model.split("/", 1)[1] in prices)


def litellm_entry(lib, model: str) -> dict | None:
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name and name in lib.model_cost:
            return lib.model_cost[name]
    return None


def test_costs_equal_litellms_for_every_chat_model(litellm):
    answered, wrong = set(), []
    for model in chat_model_names(litellm):
        for prompt, completion in COUNTS:
            fast = price_map.linear_price(model, prompt, completion)
            if fast is None:
                continue
            answered.add(model)
            try:
                expected = tuple(
                    float(c) for c in litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
                )
            except Exception as exc:  # litellm cannot price it: the fast path must not either
                wrong.append((model, prompt, completion, fast, repr(exc)[:80]))
                continue
            if not all(math.isclose(f, e, rel_tol=1e-12, abs_tol=0.0) for f, e in zip(fast, expected)):
                wrong.append((model, prompt, completion, fast, expected))
    assert not wrong, f"{len(wrong)} differ from litellm, e.g. {wrong[:10]}"
    # the fast path answers for the bundled panels' priced models and for a hundred more
    assert {"openai/gpt-4.1", "anthropic/claude-sonnet-4-6", "gemini/gemini-3.5-flash", "xai/grok-4.3"} <= answered
    assert len(answered) > 150, len(answered)


def test_has_price_and_entries_equal_litellms(litellm):
    from litellm.litellm_core_utils.get_model_cost_map import GetModelCostMap  # noqa: F401  (litellm loaded it locally)

    bundled, rewritten = price_map._bundled()
    names = set(chat_model_names(litellm)) | set(bundled) | set(rewritten) | set(litellm.model_cost)
    names |= {f"openai/{n}" for n in list(names)[:500]} | {"openai/no-such-model", "no-such-model", "huggingface/x/y", ""}
    answered = declined = 0
    wrong = []
    for model in sorted(names):
        info = price_map.entry(model)
        if info is None:
            declined += 1
            continue
        answered += 1
        expected = litellm_entry(litellm, model)
        if (info is not price_map.UNKNOWN) != litellm_has_price(litellm, model):
            wrong.append((model, "has_price"))
        elif expected is not None and {k: v for k, v in info.items() if k != "aliases"} != dict(expected):
            wrong.append((model, "entry"))
    assert not wrong, f"{len(wrong)} differ from litellm, e.g. {wrong[:10]}"
    assert answered > 4000 and declined < answered / 10, (answered, declined)


def test_client_answers_from_the_map_as_from_litellm(litellm, monkeypatch):
    """has_price, reply_token_cap and the batch price entry through jury's client, with the map
    read directly and with litellm asked (price_map disabled): the same for every chat model."""
    models = chat_model_names(litellm)
    fast = [(prices.has_price(m), params.reply_token_cap(m), prices.price_entry(m) is None) for m in models]
    monkeypatch.setattr(price_map, "enabled", False)
    slow = [(prices.has_price(m), params.reply_token_cap(m), prices.price_entry(m) is None) for m in models]
    assert fast == slow


def test_the_map_is_litellms_only_when_litellm_would_load_it(litellm, monkeypatch):
    assert price_map.local_map() is not None
    monkeypatch.setenv(price_map.LOCAL_MAP_ENV, "False")  # litellm would fetch its remote map
    assert price_map.local_map() is None and price_map.entry("openai/gpt-4.1") is None
    monkeypatch.delenv(price_map.LOCAL_MAP_ENV)  # jury sets it to True before importing litellm
    assert price_map.local_map() is not None
    monkeypatch.setattr(price_map, "litellm_imported", lambda: True)  # then litellm.model_cost answers
    assert price_map.local_map() is None and price_map.linear_price("openai/gpt-4.1", 1, 1) is None


def test_tiered_and_unread_providers_are_left_to_litellm(litellm):
    # xAI's grok-4.3 costs more from 200k prompt tokens on: below, the per-token rate; not above
    assert price_map.linear_price("xai/grok-4.3", 14_000, 800) is not None
    assert price_map.linear_price("xai/grok-4.3", 250_000, 800) is None
    assert price_map.linear_price("gpt-4.1", 14_000, 800) is None  # no provider prefix: litellm infers it
    assert price_map.linear_price("azure/gpt-4.1", 14_000, 800) is None  # a provider whose pricing was not read
