"""Batches (jury.judging.batch): a batch's reply as the response a synchronous call would give,
each provider's result body converted by litellm's own conversion of its synchronous response (a
body it cannot read: UnreadableReply)."""

from __future__ import annotations

from typing import Any

from jury.judging.providers.setup import import_litellm
from jury.judging.retries import (
    UnreadableReply,
    conversion_failure,
)


def batch_response(body: Any, model: str) -> Any:
    """A batch's reply (an OpenAI chat.completion object) as the ModelResponse acompletion would
    give, marked so that its cost is counted at the batch rate. Built by litellm's own
    conversion of a synchronous OpenAI response (convert_to_model_response_object), so a body
    that a synchronous call could not read is refused here the same way: UnreadableReply."""
    if not isinstance(body, dict):
        raise UnreadableReply(f"the body is {type(body).__name__}, not an object")
    litellm = import_litellm()
    convert = litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response.convert_to_model_response_object
    try:
        response = convert(response_object=body, model_response_object=litellm.ModelResponse())
    except Exception as exc:  # pydantic's ValidationError, litellm's APIError, a KeyError, ...
        raise conversion_failure(exc) from None
    response._hidden_params = {**(response._hidden_params or {}), "jury_via": "batch", "jury_model": model}
    return response


def anthropic_body(message: Any) -> dict[str, Any]:
    """A Message Batches result's message as an OpenAI chat.completion body: litellm's own
    conversion of a synchronous Messages response (AnthropicConfig.transform_parsed_response).
    A message it cannot read raises UnreadableReply (litellm's batch helper would instead
    turn it into an empty reply)."""
    if not isinstance(message, dict):
        raise UnreadableReply(f"the message is {type(message).__name__}, not an object")
    import httpx

    litellm = import_litellm()
    model_response = litellm.ModelResponse()
    try:
        converted = litellm.AnthropicConfig().transform_parsed_response(
            completion_response=message,
            raw_response=httpx.Response(200, json=message),
            model_response=model_response,
            json_mode=False,
            prefix_prompt=None,
        )
        body: dict[str, Any] = converted.model_dump(exclude_none=True)  # litellm's ModelResponse as a dict
        return body
    except Exception as exc:
        raise conversion_failure(exc) from None


class _NoLogging:
    """What litellm's Gemini response conversion reads of its logging object (nothing is logged)."""

    optional_params: dict[str, Any] = {}
    litellm_params: dict[str, Any] = {}

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        return None


def gemini_body(response: Any) -> dict[str, Any]:
    """A Gemini batch's GenerateContentResponse as an OpenAI chat.completion body: litellm's own
    conversion of a synchronous generateContent response (GoogleAIStudioGeminiConfig.
    transform_response). A response it cannot read raises UnreadableReply."""
    if not isinstance(response, dict):
        raise UnreadableReply(f"the response is {type(response).__name__}, not an object")
    import httpx

    litellm = import_litellm()
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
        body: dict[str, Any] = converted.model_dump(exclude_none=True)  # litellm's ModelResponse as a dict
        return body
    except Exception as exc:
        raise conversion_failure(exc) from None
