"""Batches (jury.judging.batch): the same request as JurorPool sends, priced at the batch rate,
and a batch's reply as the response a synchronous call would give.

litellm's price map and ModelResponse are reached through jury.judging.client, the one module
that imports litellm (its prices are cached there).
"""

from __future__ import annotations

from typing import Any

from jury.judging.juror import JurorSpec

BATCH_DISCOUNT = 0.5  # OpenAI's Batch API and Anthropic's Message Batches: half the synchronous price


def _price_entry(model: str) -> dict | None:
    from jury.judging import client

    prices = getattr(client._import_litellm(), "model_cost", None) or {}
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name and name in prices:
            return prices[name]
    return None


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, bool]:
    """(cost in USD at the batch rate, estimated): litellm's batch prices
    (input/output_cost_per_token_batches) where its price map has them; otherwise its
    synchronous price times BATCH_DISCOUNT, estimated=True; (None, False) when unpriced."""
    from jury.judging import client

    info = _price_entry(model)
    if info is None:
        return None, False
    pin, pout = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if isinstance(pin, (int, float)) and isinstance(pout, (int, float)):
        return prompt_tokens * pin + completion_tokens * pout, False
    try:
        p, c = client._cost_per_token(model, prompt_tokens, completion_tokens)
    except Exception:
        return None, False
    return (p + c) * BATCH_DISCOUNT, True


def estimate_batch_call(juror: JurorSpec, messages: list[dict], completion_tokens: int) -> tuple[int, float | None, bool]:
    """estimate_call at the batch rate: (prompt tokens, cost or None, estimated at BATCH_DISCOUNT)."""
    from jury.judging import client

    tokens, _cost = client.estimate_call(juror, messages, completion_tokens)
    if not client.has_price(juror.model):
        return tokens, None, False
    cost, estimated = batch_cost(juror.model, tokens, completion_tokens)
    return tokens, cost, estimated


def batch_response(body: Any, model: str) -> Any:
    """A batch's reply (an OpenAI chat.completion object) as the ModelResponse acompletion would
    give, marked so that its cost is counted at the batch rate. Built by litellm's own
    conversion of a synchronous OpenAI response (convert_to_model_response_object), so a body
    that a synchronous call could not read is refused here the same way: UnreadableReply."""
    from jury.judging import client
    from jury.judging.retries import UnreadableReply, conversion_failure

    if not isinstance(body, dict):
        raise UnreadableReply(f"the body is {type(body).__name__}, not an object")
    litellm = client._import_litellm()
    convert = litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response.convert_to_model_response_object
    try:
        response = convert(response_object=body, model_response_object=litellm.ModelResponse())
    except Exception as exc:  # pydantic's ValidationError, litellm's APIError, a KeyError, ...
        raise conversion_failure(exc) from None
    response._hidden_params = {**(response._hidden_params or {}), "jury_via": "batch", "jury_model": model}
    return response


def anthropic_body(message: Any) -> dict:
    """A Message Batches result's message as an OpenAI chat.completion body: litellm's own
    conversion of a synchronous Messages response (AnthropicConfig.transform_parsed_response).
    A message it cannot read raises UnreadableReply (litellm's batch helper would instead
    turn it into an empty reply)."""
    from jury.judging import client
    from jury.judging.retries import UnreadableReply, conversion_failure

    if not isinstance(message, dict):
        raise UnreadableReply(f"the message is {type(message).__name__}, not an object")
    import httpx

    litellm = client._import_litellm()
    model_response = litellm.ModelResponse()
    try:
        converted = litellm.AnthropicConfig().transform_parsed_response(
            completion_response=message,
            raw_response=httpx.Response(200, json=message),
            model_response=model_response,
            json_mode=False,
            prefix_prompt=None,
        )
        return converted.model_dump(exclude_none=True)
    except Exception as exc:
        raise conversion_failure(exc) from None


class _NoLogging:
    """What litellm's Gemini response conversion reads of its logging object (nothing is logged)."""

    optional_params: dict = {}
    litellm_params: dict = {}

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        return None


def gemini_body(response: Any) -> dict:
    """A Gemini batch's GenerateContentResponse as an OpenAI chat.completion body: litellm's own
    conversion of a synchronous generateContent response (GoogleAIStudioGeminiConfig.
    transform_response). A response it cannot read raises UnreadableReply."""
    from jury.judging import client
    from jury.judging.retries import UnreadableReply, conversion_failure

    if not isinstance(response, dict):
        raise UnreadableReply(f"the response is {type(response).__name__}, not an object")
    import httpx

    litellm = client._import_litellm()
    served = response.get("modelVersion")
    try:
        converted = litellm.GoogleAIStudioGeminiConfig().transform_response(
            model=served if isinstance(served, str) else "gemini",
            raw_response=httpx.Response(200, json=response),
            model_response=litellm.ModelResponse(),
            logging_obj=_NoLogging(),
            request_data={},
            messages=[],
            optional_params={},
            litellm_params={},
            encoding=None,
        )
        return converted.model_dump(exclude_none=True)
    except Exception as exc:
        raise conversion_failure(exc) from None
