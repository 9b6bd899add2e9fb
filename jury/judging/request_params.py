"""What a request to a juror carries besides its messages: the reply token cap, the reply's
schema the juror's way (structured output), and which of its params litellm does not know.

jury.judging.client sends these requests (JurorPool) and is the one module that imports litellm:
litellm's tables are read here through it.
"""

from __future__ import annotations

from typing import Any

from jury.judging.juror import JurorSpec, StructuredKind

TOKEN_LIMIT_PARAMS = frozenset({"max_tokens", "max_completion_tokens", "max_output_tokens"})
DEFAULT_MAX_REPLY_TOKENS = 8192  # sent as max_tokens when a juror's params set no token limit


def _import_litellm() -> Any:
    """litellm, as jury.judging.client imports it (offline, quiet)."""
    from jury.judging import client

    return client._import_litellm()


def reply_token_cap(model: str) -> int:
    """max_tokens sent for a juror whose params set none: DEFAULT_MAX_REPLY_TOKENS, or the
    model's own output limit where litellm's price map knows a smaller one."""
    litellm = _import_litellm()
    cap = DEFAULT_MAX_REPLY_TOKENS
    info = None
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name and name in (getattr(litellm, "model_cost", None) or {}):
            info = litellm.model_cost[name]
            break
    limit = (info or {}).get("max_output_tokens")
    if isinstance(limit, int) and 0 < limit < cap:
        cap = limit
    return cap


def unknown_params(spec: JurorSpec) -> list[str]:
    """The juror's `params` that litellm does not know for its provider (e.g. a typo such as
    `temprature`): they would be passed through unchecked. [] when litellm cannot tell."""
    if not spec.params:
        return []
    litellm = _import_litellm()
    try:
        model, provider, _key, _base = litellm.get_llm_provider(model=spec.model, api_base=spec.api_base)
        known = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:
        return []
    if not known:
        return []
    return sorted(set(spec.params) - set(known))


def constrain(kwargs: dict[str, Any], kind: StructuredKind, schema: dict) -> None:
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


def completion_kwargs(spec: JurorSpec, messages: list[dict], schema: dict | None) -> dict[str, Any]:
    """The body of the juror's first request for `messages`, as JurorPool sends it (generation
    params, the reply token cap, the reply's schema the juror's way), without credentials."""
    kwargs: dict[str, Any] = dict(model=spec.model, messages=messages, **spec.generation_params())
    if not (set(kwargs) & TOKEN_LIMIT_PARAMS):
        kwargs["max_tokens"] = reply_token_cap(spec.model)
    kind = spec.structured_kind()
    if kind != "off" and schema is not None:
        constrain(kwargs, kind, schema)
    return kwargs
