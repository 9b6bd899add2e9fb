"""What a request carries besides its messages: the reply token cap, the reply's schema the
juror's way (structured output), and which of the juror's params litellm does not know for its
provider (kept in jury's cache folder, jury.judging.params_cache)."""

from __future__ import annotations

from typing import Any

from jury.judging import params_cache
from jury.judging.juror import JurorSpec, StructuredKind
from jury.judging.providers.prices import price_entry
from jury.judging.providers.setup import import_litellm

TOKEN_LIMIT_PARAMS = frozenset({"max_tokens", "max_completion_tokens", "max_output_tokens"})


DEFAULT_MAX_REPLY_TOKENS = 8192  # sent as max_tokens when a juror's params set no token limit


def reply_token_cap(model: str) -> int:
    """max_tokens sent for a juror whose params set none: DEFAULT_MAX_REPLY_TOKENS, or the
    model's own output limit where litellm's price map knows a smaller one."""
    cap = DEFAULT_MAX_REPLY_TOKENS
    limit = (price_entry(model) or {}).get("max_output_tokens")
    if isinstance(limit, int) and 0 < limit < cap:
        cap = limit
    return cap


def unknown_params(spec: JurorSpec) -> list[str]:
    """The juror's `params` that litellm does not know for its provider (e.g. a typo such as
    `temprature`): they would be passed through unchecked. [] when litellm cannot tell. litellm's
    answer is kept in jury's cache folder (jury.judging.params_cache), where a plan reads it
    without importing litellm."""
    if not spec.params:
        return []
    found, known = params_cache.lookup(spec.model, spec.api_base)  # litellm's earlier answer, without litellm
    if not found:
        known = supported_params(spec.model, spec.api_base)
        params_cache.remember(spec.model, spec.api_base, known)
    if not known:
        return []
    return sorted(set(spec.params) - set(known))


def supported_params(model: str, api_base: str | None) -> list[str] | None:
    """litellm's supported OpenAI params for the model at api_base; None when litellm cannot tell."""
    litellm = import_litellm()
    try:
        name, provider, _key, _base = litellm.get_llm_provider(model=model, api_base=api_base)
        known = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:
        return None
    return sorted(str(p) for p in known) if known else None


def constrain(kwargs: dict[str, Any], kind: StructuredKind, schema: dict[str, Any]) -> None:
    """Add to acompletion's kwargs what constrains the reply to `schema`, the way `kind` says."""
    if kind == "json_schema":
        kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": "ballot", "schema": schema, "strict": True}}
    elif kind == "json_object":  # llama.cpp's server: JSON mode with a schema
        kwargs["response_format"] = {"type": "json_object", "schema": schema}
    elif kind == "ollama" and str(kwargs["model"]).split("/", 1)[0] in ("ollama", "ollama_chat"):
        kwargs["format"] = schema  # litellm's Ollama providers send it as Ollama's own `format`
    else:  # Ollama reached as an OpenAI-compatible server, or vLLM: in the request body
        key = "format" if kind == "ollama" else "guided_json"
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), key: schema}


def completion_kwargs(spec: JurorSpec, messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> dict[str, Any]:
    """The body of the juror's first request for `messages`, as JurorPool sends it (generation
    params, the reply token cap, the reply's schema the juror's way), without credentials."""
    kwargs: dict[str, Any] = dict(model=spec.model, messages=messages, **spec.generation_params())
    if not (set(kwargs) & TOKEN_LIMIT_PARAMS):
        kwargs["max_tokens"] = reply_token_cap(spec.model)
    kind = spec.structured_kind()
    if kind != "off" and schema is not None:
        constrain(kwargs, kind, schema)
    return kwargs
