"""What a juror's call costs, from litellm's price map: a call's price before it is made
(estimate_call, estimate_batch_call), after it (call_cost), whether a model is priced (has_price),
and batch-rate prices (batch_cost). The map is read without importing litellm where that is
litellm's answer (jury.judging.price_map); costs are cached per model and token counts."""

from __future__ import annotations

import functools
from typing import Any

from jury.judging import price_map
from jury.judging.juror import JurorSpec
from jury.judging.providers.setup import import_litellm
from jury.judging.tokens import COUNTING_MODEL, fast_count


@functools.lru_cache(maxsize=4096)
def _cost_per_token(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, float]:
    """litellm.cost_per_token, read from its bundled price map without importing litellm where
    that is litellm's answer (jury.judging.price_map.linear_price)."""
    fast = price_map.linear_price(model, prompt_tokens, completion_tokens)
    if fast is not None:
        return fast
    prompt_cost, completion_cost = import_litellm().cost_per_token(
        model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
    )
    return float(prompt_cost), float(completion_cost)


_PROBE_TOKENS = 1_000_003  # past every tier boundary in litellm's price map (128k, 200k, 272k)


@functools.lru_cache(maxsize=1024)
def juror_price(model: str) -> tuple[float, float] | None:
    """(USD per prompt token, USD per completion token) of `model`, looked up once per model:
    litellm's own cost_per_token for one token of each, kept only where litellm's price is linear
    in the token counts (its cost at _PROBE_TOKENS is exactly that many times the one-token
    price: a tiered price, such as Gemini's above 200k tokens, is not). None when litellm has no
    price or the price is not linear: such calls are priced by litellm.completion_cost."""
    if not has_price(model):
        return None
    try:
        one = _cost_per_token(model, 1, 1)
        many = _cost_per_token(model, _PROBE_TOKENS, _PROBE_TOKENS)
    except Exception:
        return None
    if many != (one[0] * _PROBE_TOKENS, one[1] * _PROBE_TOKENS):
        return None
    return one


_PLAIN_DETAILS = frozenset({"text_tokens", "reasoning_tokens"})


def _plain_usage(response: Any) -> bool:
    """True if the response's usage is plain prompt and completion tokens at the standard tier:
    no cached, cache-written, audio or image tokens and no non-default service tier, each of
    which litellm prices at a rate of its own."""
    usage = getattr(response, "usage", None)
    for name in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if getattr(usage, name, None):
            return False
    for name in ("prompt_tokens_details", "completion_tokens_details"):
        details = getattr(usage, name, None)
        if details is None:
            continue
        fields = details.model_dump() if hasattr(details, "model_dump") else dict(details) if isinstance(details, dict) else {}
        if any(v for k, v in fields.items() if k not in _PLAIN_DETAILS):
            return False
    return getattr(response, "service_tier", None) in (None, "default", "auto")


def call_cost(model: str, response: Any, prompt_tokens: int, completion_tokens: int) -> float:
    """The USD cost of one priced juror's reply: its token counts at the juror's price
    (juror_price, looked up once per model) where that is litellm's price for this usage;
    otherwise (a tiered price, cached or audio tokens, a service tier) litellm.completion_cost
    of the response. 0.0 when litellm cannot price it."""
    price = juror_price(model)
    if price is not None and (response is None or _plain_usage(response)):
        return prompt_tokens * price[0] + completion_tokens * price[1]
    try:
        cost = import_litellm().completion_cost(completion_response=response)
    except Exception:
        return 0.0
    return float(cost) if isinstance(cost, (int, float)) and cost > 0 else 0.0


def has_price(model: str) -> bool:
    """True if litellm's (local) price map knows `model`, with or without its provider prefix.

    Checked before asking litellm for a cost: for unmapped names litellm may go looking on the
    network (a "huggingface/..." model makes cost_per_token contact huggingface.co)."""
    info = price_map.entry(model)  # litellm's map read without litellm, where that is litellm's
    if info is not None:
        return info is not price_map.UNKNOWN
    prices = getattr(import_litellm(), "model_cost", None) or {}
    if model in prices:
        return True
    return "/" in model and model.split("/", 1)[1] in prices


def estimate_call(juror: JurorSpec, messages: list[dict[str, Any]], completion_tokens: int) -> tuple[int, float | None]:
    """(prompt tokens, cost in USD or None when litellm has no price) of one call, before making it.

    Tokens are counted with litellm's bundled tiktoken encoding (the gpt-4o one for every juror:
    close enough for plans and cost caps, and it never fetches a tokenizer from a hub, which
    litellm.token_counter does for some model names); chars/4 if that fails. Makes no request.
    jury.judging.tokens gives litellm's exact count without litellm for plain messages; costs are cached.
    """
    try:
        fast = fast_count(messages)
        prompt_tokens = int(import_litellm().token_counter(model=COUNTING_MODEL, messages=messages)) if fast is None else fast
    except Exception:
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        prompt_tokens = max(1, chars // 4) + 4 * len(messages)
    if juror.costs_nothing:  # declared free (the user's own server) or recorded: nobody bills it
        return prompt_tokens, 0.0
    if not has_price(juror.model):
        return prompt_tokens, None
    try:
        prompt_cost, completion_cost = _cost_per_token(juror.model, prompt_tokens, completion_tokens)
        cost: float | None = prompt_cost + completion_cost
    except Exception:
        cost = None
    return prompt_tokens, cost


BATCH_DISCOUNT = 0.5  # OpenAI's Batch API and Anthropic's Message Batches: half the synchronous price


def price_entry(model: str) -> dict[str, Any] | None:
    """litellm.model_cost's entry for `model` (the whole name, else after its provider prefix)."""
    info = price_map.entry(model)
    if info is not None:
        return None if info is price_map.UNKNOWN else info
    prices = getattr(import_litellm(), "model_cost", None) or {}
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name and name in prices:
            found: dict[str, Any] = prices[name]  # an entry of litellm.model_cost
            return found
    return None


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, bool]:
    """(cost in USD at the batch rate, estimated): litellm's batch prices
    (input/output_cost_per_token_batches) where its price map has them; otherwise its
    synchronous price times BATCH_DISCOUNT, estimated=True; (None, False) when unpriced."""
    info = price_entry(model)
    if info is None:
        return None, False
    pin, pout = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if isinstance(pin, (int, float)) and isinstance(pout, (int, float)):
        return prompt_tokens * pin + completion_tokens * pout, False
    try:
        p, c = _cost_per_token(model, prompt_tokens, completion_tokens)
    except Exception:
        return None, False
    return (p + c) * BATCH_DISCOUNT, True


def estimate_batch_call(
    juror: JurorSpec, messages: list[dict[str, Any]], completion_tokens: int
) -> tuple[int, float | None, bool]:
    """estimate_call at the batch rate: (prompt tokens, cost or None, estimated at BATCH_DISCOUNT)."""
    tokens, _cost = estimate_call(juror, messages, completion_tokens)
    if not has_price(juror.model):
        return tokens, None, False
    cost, estimated = batch_cost(juror.model, tokens, completion_tokens)
    return tokens, cost, estimated
