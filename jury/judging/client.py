"""Calling LLM jurors: the one module of jury that talks to litellm.

litellm is imported lazily, inside the functions that call it, so importing this module (and
everything that imports it) stays fast and offline. `JurorPool.call` sends one ballot to one
juror and always comes back with a `CallResult`: transient failures (429, 5xx, timeouts,
connection errors, a 200 whose body is not JSON) are retried with backoff (tenacity, waiting
as long as a Retry-After asks), client errors (400/401/403/404) fail at once, a reply that
does not parse gets one repair turn, and a juror that cannot be reached or understood becomes
an abstention with a one-line reason.

The pieces it is built from live beside it: juror.py (JurorSpec, CallResult), limits.py
(concurrency and rpm), retries.py (the backoff policy, Retry-After, error texts), replies.py
(reply parts and JSON extraction), redaction.py (key scrubbing, for_store), response_cap.py
(the response-size cap). Besides the calls, it holds what else reads litellm's tables: the
reply token cap, structured output and unknown params of a request, and batch-rate prices and
batch replies (jury.judging.batch). API keys live only in the
environment (JurorSpec.api_key_env names the variable); the key's value is scrubbed from every
error, log entry and reply text this module returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from jury.judging import params_cache, price_map
from jury.judging.juror import LOCAL_PLACEHOLDER_KEY, AttemptStatus, CallResult, JurorSpec, StructuredKind
from jury.judging.limits import Limiter
from jury.judging.redaction import clean, scrub
from jury.judging.replies import REPAIR_PROMPT, reply_parts, strip_reasoning
from jury.judging.response_cap import capped_http_client, too_large
from jury.judging.retries import (
    AttemptFailed,
    BackoffWait,
    UnreadableReply,
    conversion_failure,
    describe_server_error,
    describe_unreadable,
    error_text,
    invalid_request,
    rejects_response_format,
    retry_after_s,
    should_retry,
    unreadable_reply,
)
from jury.judging.tokens import COUNTING_MODEL, fast_count

_MAX_REASON_CHARS = 200
_HARD_TIMEOUT_MARGIN_S = 10.0  # asyncio guard over litellm's own timeout


def import_litellm() -> Any:
    """Import litellm on first use, offline (local price map) and without its stdout chatter."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm would otherwise fetch Anthropic's beta-header table from GitHub on the first
    # anthropic/ call: jury talks to no host but the juror's own (the bundled table is used).
    os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
    import litellm

    if not getattr(litellm, "_jury_configured", False):
        _quiet(litellm)
    return litellm


def _quiet(litellm: Any) -> None:
    """Once per process: litellm logs and calls back nothing for jury (jury keeps its own call
    log). No debug banners and no streaming logs; calls are sent unlogged while no callback is
    registered (:func:`_unlogged`). A user who registers a callback after this still gets every
    call, messages included (litellm reads the lists per call; jury leaves
    ``turn_off_message_logging`` as the user set it)."""
    litellm.suppress_debug_info = True
    litellm.disable_streaming_logging = True
    litellm._jury_configured = True


_CALLBACK_LISTS = ("callbacks", "success_callback", "failure_callback", "_async_success_callback", "_async_failure_callback")


def _unlogged(litellm: Any) -> Any:
    """The context a request is sent in: litellm's own marker for a call whose logging and
    billing someone else does (internal_sub_call), which skips its success and failure
    logging (building a logging payload and queueing it on its logging worker for every call,
    with no callback to hand it to). Only while no callback is registered: a user's callback
    still sees every call. A plain context where litellm has no such marker."""
    if any(getattr(litellm, name, None) for name in _CALLBACK_LISTS):
        return contextlib.nullcontext()
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:
        return contextlib.nullcontext()
    return internal_sub_call()


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


def classify_exception(exc: BaseException) -> tuple[AttemptStatus, bool]:
    """(log status, retryable) for an exception raised by litellm.acompletion.

    Facts about litellm 1.110 this relies on: every provider error is mapped onto a class in
    litellm.exceptions that carries `status_code`; 403 comes back as litellm.APIError with
    status_code 403 (not PermissionDeniedError); a connection failure and a 200 whose body is not
    JSON both come back as InternalServerError (500) for OpenAI-compatible endpoints; a missing
    key also comes back as a 500 ("Missing credentials"), which is not worth retrying;
    litellm.Timeout (status 408) subclasses openai.APITimeoutError < openai.APIConnectionError.
    A 5xx whose body says the input is invalid (llama-cpp-python's validation errors) and a 200
    body litellm cannot read (an Anthropic or Gemini reply without usage) are not retried.
    """
    import httpx

    litellm = import_litellm()
    message = str(exc)
    if isinstance(exc, (litellm.Timeout, asyncio.TimeoutError, TimeoutError, httpx.TimeoutException)):
        return "timeout", True
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return "rate_limited", True
    if "Missing credentials" in message or "api_key client option must be set" in message:
        return "client_error", False
    if unreadable_reply(exc) or invalid_request(exc):  # the same request would fail the same way
        return "client_error", False
    if isinstance(exc, litellm.APIConnectionError) and not isinstance(status, int):
        return "server_error", True
    if status == 408:
        return "timeout", True
    if isinstance(status, int) and status >= 500:
        return "server_error", True
    if isinstance(status, int) and 400 <= status < 500:
        return "client_error", False
    if isinstance(exc, (litellm.APIConnectionError, httpx.TransportError, ConnectionError, json.JSONDecodeError)):
        return "server_error", True
    if isinstance(exc, OSError):
        return "server_error", True
    return "client_error", False


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


def estimate_call(juror: JurorSpec, messages: list[dict], completion_tokens: int) -> tuple[int, float | None]:
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


# ---------------------------------------------------------------------------------------------
# What a request carries besides its messages: the reply token cap, the reply's schema the
# juror's way (structured output), and which of its params litellm does not know
# ---------------------------------------------------------------------------------------------

TOKEN_LIMIT_PARAMS = frozenset({"max_tokens", "max_completion_tokens", "max_output_tokens"})
DEFAULT_MAX_REPLY_TOKENS = 8192  # sent as max_tokens when a juror's params set no token limit


def reply_token_cap(model: str) -> int:
    """max_tokens sent for a juror whose params set none: DEFAULT_MAX_REPLY_TOKENS, or the
    model's own output limit where litellm's price map knows a smaller one."""
    cap = DEFAULT_MAX_REPLY_TOKENS
    limit = (_price_entry(model) or {}).get("max_output_tokens")
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


# ---------------------------------------------------------------------------------------------
# Batches (jury.judging.batch): the same request as JurorPool sends, priced at the batch rate,
# and a batch's reply as the response a synchronous call would give
# ---------------------------------------------------------------------------------------------

BATCH_DISCOUNT = 0.5  # OpenAI's Batch API and Anthropic's Message Batches: half the synchronous price


def _price_entry(model: str) -> dict | None:
    """litellm.model_cost's entry for `model` (the whole name, else after its provider prefix)."""
    info = price_map.entry(model)
    if info is not None:
        return None if info is price_map.UNKNOWN else info
    prices = getattr(import_litellm(), "model_cost", None) or {}
    for name in (model, model.split("/", 1)[1] if "/" in model else None):
        if name and name in prices:
            return prices[name]
    return None


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float | None, bool]:
    """(cost in USD at the batch rate, estimated): litellm's batch prices
    (input/output_cost_per_token_batches) where its price map has them; otherwise its
    synchronous price times BATCH_DISCOUNT, estimated=True; (None, False) when unpriced."""
    info = _price_entry(model)
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


def estimate_batch_call(juror: JurorSpec, messages: list[dict], completion_tokens: int) -> tuple[int, float | None, bool]:
    """estimate_call at the batch rate: (prompt tokens, cost or None, estimated at BATCH_DISCOUNT)."""
    tokens, _cost = estimate_call(juror, messages, completion_tokens)
    if not has_price(juror.model):
        return tokens, None, False
    cost, estimated = batch_cost(juror.model, tokens, completion_tokens)
    return tokens, cost, estimated


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


def anthropic_body(message: Any) -> dict:
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
        return converted.model_dump(exclude_none=True)
    except Exception as exc:
        raise conversion_failure(exc) from None


# ---------------------------------------------------------------------------------------------
# The response-size cap (the request's own limits: above)
# ---------------------------------------------------------------------------------------------

MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # a provider response body larger than this is not read on

_session_loop: Any = None


def _install_capped_session(litellm: Any) -> None:
    """Give litellm (its OpenAI-compatible providers read through litellm.aclient_session) an
    httpx client that stops reading a body past MAX_RESPONSE_BYTES, one per event loop (litellm
    caches its SDK clients per loop too). A session the user installed is left alone; other
    providers are bounded only by the max_tokens sent."""
    global _session_loop
    loop = asyncio.get_running_loop()
    current = getattr(litellm, "aclient_session", None)
    if current is not None and not getattr(current, "_jury_capped", False):
        return
    if current is not None and _session_loop is loop:
        return
    litellm.aclient_session = capped_http_client(MAX_RESPONSE_BYTES)
    _session_loop = loop


# ---------------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------------


class _Stopped(Exception):
    """The pool was told to stop before this request was sent."""


def _refused(state: _Call, refusal: str | None, finish_reason: str | None) -> CallResult:
    """The model declined (OpenAI refusal, Anthropic stop_reason "refusal") or the provider's
    filter withheld the reply (Gemini SAFETY, content_filter): the same ballot would be refused
    again, so no repair turn. A final abstention."""
    why = f"model refused: {refusal}" if refusal else "model refused, or the provider's safety filter withheld the reply"
    refused = clean(f"{why} (finish_reason={finish_reason})", state.secrets, _MAX_REASON_CHARS)
    state.result.log[-1]["status"], state.result.log[-1]["error"] = "bad_output", refused
    return state.fail(refused)


def _parse_reply(content: str | None, parse: Callable[[str], dict]) -> tuple[dict | None, str | None]:
    """(the reply parsed, None) without its reasoning, or (None, why it is unusable)."""
    reason: str | None = None
    parsed: dict | None = None
    answer = strip_reasoning(content or "")
    if not answer.strip():
        reason = "empty reply"
    else:
        try:
            parsed = parse(answer)
        except ValueError as exc:
            reason = str(exc) or type(exc).__name__
    return parsed, reason


@dataclass
class _Call:
    """One JurorPool.call in progress: the conversation so far, the result being filled in, and
    the transient retries spent (one budget of max_retries for the whole call, repair turn included)."""

    spec: JurorSpec
    limiter: Limiter
    convo: list[dict]
    schema: dict | None
    api_key: str | None
    secrets: list[str]
    result: CallResult = field(default_factory=lambda: CallResult(ok=False))
    retries_used: int = 0
    given: Any = None  # a reply that came through a batch (jury.judging.batch): the first turn's body, sent by no request here

    def fail(self, error: str) -> CallResult:
        self.result.ok = False
        self.result.error = clean(error, self.secrets)
        return self.result


class JurorPool:
    """The jurors of one run, each with its own Limiter. No global state: make one pool per run."""

    def __init__(
        self,
        jurors: list[JurorSpec],
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        seed: int = 0,
    ) -> None:
        names = [j.name for j in jurors]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"juror names must be unique in a panel; repeated: {', '.join(duplicates)}")
        self._specs: dict[str, JurorSpec] = {j.name: j for j in jurors}
        self._sleep = sleep  # backoff sleeps between retries (tests pass a recording one)
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._rng = random.Random(seed)  # jitter: deterministic for a given order of events
        self._limiters = {j.name: Limiter(j.max_concurrency, j.rpm) for j in jurors}
        # A juror whose server rejected its structured output: what it gets instead in this pool.
        self._structured_fallback: dict[str, StructuredKind] = {}
        # Set (e.g. on Ctrl-C) to send no further request: a call not yet sent, or between
        # retries, comes back at once with interrupted=True; a request on the wire is awaited.
        self.stop_requested = False

    @property
    def jurors(self) -> list[JurorSpec]:
        return list(self._specs.values())

    def spec(self, juror_name: str) -> JurorSpec:
        try:
            return self._specs[juror_name]
        except KeyError:
            raise KeyError(f"no juror named {juror_name!r} in this pool") from None

    def limiter(self, juror_name: str) -> Limiter:
        self.spec(juror_name)
        return self._limiters[juror_name]

    def structured_kind(self, juror_name: str) -> StructuredKind:
        """How the juror's replies are constrained now: its structured_output, or the fallback
        taken after its server rejected that."""
        return self._structured_fallback.get(juror_name) or self.spec(juror_name).structured_kind()

    async def call(
        self,
        juror_name: str,
        messages: list[dict],
        *,
        schema: dict | None,
        parse: Callable[[str], dict],
        given: Any = None,
    ) -> CallResult:
        """Send `messages` to the juror and parse the reply with `parse` (which raises ValueError
        on a bad reply). Never raises for provider trouble: failures come back as ok=False.
        Exceptions other than ValueError from `parse` are bugs and propagate. `given`: the first
        turn's reply, received through a batch (its chat.completion body, or the ResponseTooLarge
        standing for one over the cap), read as a request's reply or failure would be (batch_response,
        _attempt_failed); a repair turn is a request of its own."""
        spec = self.spec(juror_name)
        started = time.monotonic()
        missing = spec.missing_key()
        if missing:
            return CallResult(
                ok=False,
                error=f"no API key: environment variable {missing} is not set",
                latency_s=time.monotonic() - started,
            )
        api_key = os.environ[spec.api_key_env] if spec.api_key_env else None
        secrets = [api_key] if api_key else []
        if api_key is None and spec.api_base:
            # A keyless local server (Ollama, vLLM): say so explicitly, or litellm would
            # fall back to OPENAI_API_KEY and send a real key to that server.
            api_key = LOCAL_PLACEHOLDER_KEY
        limiter = self._limiters[juror_name]
        _install_capped_session(import_litellm())  # import once per process (~3 s): not any juror's latency
        state = _Call(spec, limiter, [dict(m) for m in messages], schema, api_key, secrets, given=given)
        async with limiter:
            started = time.monotonic()  # from the slot on: time queued for a slot is not the juror's latency
            result = await self._call_locked(state, parse)
            result.latency_s = time.monotonic() - started
        return result

    async def _call_locked(self, state: _Call, parse: Callable[[str], dict]) -> CallResult:
        """At most three turns, each a request retried on transient failures: the first, one
        fallback if the server rejects the structured output as invalid (to its own JSON mode
        when its error names json_object, else without any), and one repair turn."""
        spec, result = state.spec, state.result
        repaired = False
        format_fallback_done = False
        for _ in range(3):
            kind: StructuredKind = self.structured_kind(spec.name) if state.schema is not None else "off"
            try:
                response = await self._send_with_retries(state, kind)
            except _Stopped:
                result.interrupted = True
                return state.fail("interrupted before the request was sent")
            except AttemptFailed as failed:
                if failed.final is not None:
                    return state.fail(failed.final)
                cause = failed.cause
                if kind != "off" and not format_fallback_done and cause is not None and rejects_response_format(cause, kind):
                    format_fallback_done = True
                    self._fall_back_format(state, kind, cause, failed)
                    continue
                return self._give_up(state, failed)

            self._add_usage(result, response, spec.model if has_price(spec.model) else None)
            content, finish_reason, refusal = reply_parts(response)
            result.text = scrub(content, state.secrets)
            if refusal or finish_reason == "content_filter":
                return _refused(state, refusal, finish_reason)
            parsed, reason = _parse_reply(content, parse)
            if reason is None:
                result.ok, result.parsed, result.error = True, parsed, None
                return result
            if finish_reason == "length":
                reason = f"reply cut off at the token limit (finish_reason=length): {reason}"
            reason = clean(reason, state.secrets, _MAX_REASON_CHARS)
            result.log[-1]["status"], result.log[-1]["error"] = "bad_output", reason
            if repaired:
                return state.fail(f"unparseable reply: {reason}")
            repaired = True
            if (content or "").strip():
                state.convo = state.convo + [{"role": "assistant", "content": content}]
            state.convo = state.convo + [{"role": "user", "content": REPAIR_PROMPT.format(reason=reason)}]
        return state.fail("gave up: attempt budget exhausted")

    def _fall_back_format(self, state: _Call, kind: StructuredKind, cause: BaseException, failed: AttemptFailed) -> None:
        """The server rejected the structured output ``kind``: this juror's requests go on in
        its own JSON mode when the error names json_object, else without any (logged)."""
        fallback: StructuredKind = "off"
        if kind == "json_schema" and "json_object" in str(cause):
            fallback = "json_object"  # llama.cpp: "Input should be 'text' or 'json_object'"
        self._structured_fallback[state.spec.name] = fallback
        instead = "without it" if fallback == "off" else f"with {fallback}"
        state.result.log[-1]["error"] = clean(
            f"structured output {kind} rejected, retrying {instead}: {failed.text}", state.secrets
        )

    def _give_up(self, state: _Call, failed: AttemptFailed) -> CallResult:
        """The call failed for good: not retryable, out of retries, or asked to wait too long."""
        spec = state.spec
        if not failed.retryable:
            return state.fail(failed.text)
        if state.retries_used >= spec.max_retries:
            return state.fail(f"{failed.text} (gave up after {spec.max_retries} retries)")
        return state.fail(
            f"{failed.text} (provider asks to wait {failed.retry_after:g} s, more than backoff_max_s={self.backoff_max_s:g})"
        )

    async def _send_with_retries(self, state: _Call, kind: StructuredKind) -> Any:
        """One request, retried by tenacity on transient failures from what is left of the
        call's retry budget, waiting as BackoffWait says (the wait goes in the attempt's log
        entry). Raises the last AttemptFailed when it gives up, _Stopped on a stop request."""

        def before_sleep(retry_state: RetryCallState) -> None:
            assert retry_state.next_action is not None  # tenacity sets it before before_sleep
            state.retries_used += 1
            state.result.log[-1]["wait_s"] = retry_state.next_action.sleep

        if state.given is not None:  # the batch's reply: one attempt, made by the provider's batch
            given, state.given = state.given, None
            state.result.attempts += 1
            entry = {"attempt": state.result.attempts, "status": "ok", "error": None, "wait_s": 0.0, "via": "batch"}
            state.result.log.append(entry)
            try:
                if isinstance(given, BaseException):  # what stood for the reply (over the size cap)
                    raise given
                return batch_response(given, state.spec.model)  # litellm's conversion, as a synchronous reply's
            except Exception as exc:
                raise self._attempt_failed(entry, exc, state.secrets) from None
        retrying = AsyncRetrying(
            retry=retry_if_exception(should_retry(self.backoff_max_s)),
            stop=stop_after_attempt(state.spec.max_retries - state.retries_used + 1),
            wait=BackoffWait(self.backoff_base_s, self.backoff_max_s, self._rng, first_index=state.retries_used),
            sleep=self._sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        return await retrying(self._attempt, state, kind)

    async def _attempt(self, state: _Call, kind: StructuredKind) -> Any:
        """One HTTP request, logged as one entry of result.log; a failure raises AttemptFailed."""
        spec, result, secrets = state.spec, state.result, state.secrets
        if self.stop_requested:
            raise _Stopped
        await state.limiter.pace()
        if self.stop_requested:
            raise _Stopped
        litellm = import_litellm()
        kwargs: dict[str, Any] = dict(
            model=spec.model,
            messages=state.convo,
            api_base=spec.api_base,
            api_key=state.api_key,
            timeout=spec.timeout_s,
            num_retries=0,
            **spec.generation_params(),
        )
        if not (set(kwargs) & TOKEN_LIMIT_PARAMS):
            kwargs["max_tokens"] = reply_token_cap(spec.model)
        if kind != "off" and state.schema is not None:
            constrain(kwargs, kind, state.schema)
        result.attempts += 1
        entry: dict[str, Any] = {"attempt": result.attempts, "status": "ok", "error": None, "wait_s": 0.0}
        result.log.append(entry)
        try:
            with _unlogged(litellm):
                return await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=spec.timeout_s + _HARD_TIMEOUT_MARGIN_S)
        except Exception as exc:
            raise self._attempt_failed(entry, exc, secrets) from None

    @staticmethod
    def _attempt_failed(entry: dict[str, Any], exc: BaseException, secrets: list[str]) -> AttemptFailed:
        """The one reading of a failed attempt (a request's, or an unreadable batch reply's), into
        its log entry: a reply over the size cap is a final abstention, the rest classified."""
        cap = too_large(exc)
        if cap is not None:  # the juror answered, unusably: a final abstention, never retried
            entry["status"], entry["error"] = "bad_output", clean(str(cap), secrets)
            return AttemptFailed(entry["error"], status="bad_output", retryable=False, cause=exc, final=f"unusable reply: {cap}")
        status, retryable = classify_exception(exc)
        text = clean(describe_unreadable(exc) if unreadable_reply(exc) else error_text(exc), secrets, 220)
        if status == "server_error":
            text = describe_server_error(exc, text)
        entry["status"], entry["error"] = status, text
        return AttemptFailed(
            text, status=status, retryable=retryable, cause=exc, retry_after=retry_after_s(exc) if retryable else None
        )

    @staticmethod
    def _add_usage(result: CallResult, response: Any, model: str | None) -> None:
        """Add the response's tokens to the result, and its cost where `model` (the juror's, None when unpriced) has a price."""
        usage = getattr(response, "usage", None)
        counts = [getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens")]
        prompt, completion = (n if type(n) is int and n >= 0 else 0 for n in counts)  # negative or bool: none
        result.prompt_tokens += prompt
        result.completion_tokens += completion
        if model is None:
            return
        if (getattr(response, "_hidden_params", None) or {}).get("jury_via") == "batch":
            result.cost_usd += batch_cost(str(response._hidden_params["jury_model"]), prompt or 0, completion or 0)[0] or 0.0
            return
        result.cost_usd += call_cost(model, response, prompt, completion)
