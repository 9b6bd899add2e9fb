"""Calling LLM jurors: the one module of jury that talks to litellm.

litellm is imported lazily, inside the functions that call it, so importing this module (and
everything that imports it) stays fast and offline. `JurorPool.call` sends one ballot to one
juror and always comes back with a `CallResult`: transient failures (429, 5xx, timeouts,
connection errors, a 200 whose body is not JSON) are retried with backoff, client errors
(400/401/403/404) fail at once, a reply that does not parse gets one repair turn, and a juror
that cannot be reached or understood becomes an abstention with a one-line reason.

API keys live only in the environment (JurorSpec.api_key_env names the variable); the key's
value is scrubbed from every error, log entry and reply text this module returns.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import json
import math
import os
import random
import re
import time
from typing import Any, Awaitable, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

AttemptStatus = Literal["ok", "rate_limited", "server_error", "timeout", "bad_output", "client_error"]

# acompletion arguments JurorPool sets itself; a juror's params may not override them.
RESERVED_PARAMS = frozenset(
    {
        "model",
        "messages",
        "api_base",
        "base_url",
        "api_key",
        "timeout",
        "num_retries",
        "max_retries",
        "response_format",
        "stream",
    }
)

REPAIR_PROMPT = "Your reply was not valid JSON for the required schema: {reason}. Reply with only the JSON object."

_MAX_ERROR_CHARS = 300
_MAX_REASON_CHARS = 200
_MIN_SECRET_CHARS = 4  # shorter "keys" (placeholders such as "x") are not scrubbed
_HARD_TIMEOUT_MARGIN_S = 10.0  # asyncio guard over litellm's own timeout
_JSON_DECODE_HINTS = ("Expecting value", "JSONDecodeError", "Extra data", "Unterminated string", "Invalid control")


def _import_litellm():
    """Import litellm on first use, offline (local price map) and without its stdout chatter."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


# ---------------------------------------------------------------------------------------------
# Juror specification and call results
# ---------------------------------------------------------------------------------------------


LOCAL_PLACEHOLDER_KEY = "no-key-needed"


def _check_param_value(where: str, value: Any) -> None:
    """A generation param is sent as JSON: finite numbers, strings, booleans, null, lists, tables."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} = {value!r}: not a finite number")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_param_value(f"{where}[{i}]", item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} is not a string")
            _check_param_value(f"{where}.{key}", item)
        return
    raise ValueError(f"{where} = {value}: a {type(value).__name__} is not a JSON value "
                     "(use a number, string, boolean, list or table)")


class JurorSpec(BaseModel):
    """One juror of a panel: which model, where, with which generation params and limits."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)  # panel-unique, e.g. "gpt-4.1"
    model: str = Field(min_length=1)  # litellm model string, e.g. "openai/gpt-4.1", "ollama_chat/qwen3"
    family: str = Field(min_length=1)
    api_base: str | None = Field(None, min_length=1)
    api_key_env: str | None = Field(None, min_length=1)  # NAME of the env var holding the key; the key is never stored
    params: dict[str, Any] = Field(default_factory=dict)  # generation params; temperature defaults to 0
    max_concurrency: int = Field(4, ge=1)
    rpm: int | None = Field(None, ge=1)  # requests per minute
    timeout_s: float = Field(120, gt=0)
    max_retries: int = Field(5, ge=0)
    structured_output: bool = True  # send response_format json_schema when a schema is given

    @field_validator("params")
    @classmethod
    def _no_reserved_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(value) & RESERVED_PARAMS)
        if clash:
            raise ValueError(f"params may not set {', '.join(clash)} (the juror's own fields set them)")
        for key, item in value.items():
            _check_param_value(f"params.{key}", item)
        return value

    def generation_params(self) -> dict[str, Any]:
        """The params sent with every request: `params` with temperature 0 unless it says otherwise."""
        return {"temperature": 0, **self.params}

    def public_dict(self) -> dict[str, Any]:
        """What identifies the juror's answers, for hashing and recording: name, model, family,
        api_base (without any user:password@), the generation params as sent, structured_output.
        Operational knobs (concurrency, rpm, timeout, retries) and the key's env var are left out:
        they do not change what the juror says."""
        return {
            "name": self.name,
            "model": self.model,
            "family": self.family,
            "api_base": _strip_userinfo(self.api_base),
            "params": self.generation_params(),
            "structured_output": self.structured_output,
        }

    def missing_key(self) -> str | None:
        """The env var's name if api_key_env is set but the variable is not (or is empty), else None."""
        if self.api_key_env and not os.environ.get(self.api_key_env):
            return self.api_key_env
        return None


class CallResult(BaseModel):
    """The outcome of one JurorPool.call. ok=False is an abstention; `error` says why in one line."""

    ok: bool
    parsed: dict | None = None  # the object the caller's parse function returned
    text: str | None = None  # last raw reply text (key scrubbed)
    error: str | None = None
    attempts: int = 0  # HTTP attempts, including retries, the repair turn and a response_format fallback
    prompt_tokens: int = 0  # summed over the attempts that returned usage
    completion_tokens: int = 0
    cost_usd: float = 0.0  # litellm.completion_cost summed; 0.0 where litellm has no price
    latency_s: float = 0.0  # from taking a concurrency slot to the answer: retries and backoff included, queueing not
    log: list[dict] = Field(default_factory=list)  # per attempt: attempt, status, error, wait_s
    interrupted: bool = False  # the pool was told to stop before this call got an answer: not a vote


# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------


class Limiter:
    """Per-juror limits: at most max_concurrency calls at once, requests spaced 60/rpm seconds apart.

    `async with limiter:` holds a concurrency slot (JurorPool holds it for a whole call, backoff
    included, so a throttled juror is not hammered by its other calls); `await limiter.pace()`
    before each request reserves the next rpm slot and sleeps until it. The semaphore is bound
    to the running event loop and rebuilt if the pool is used from a new loop.
    """

    def __init__(
        self,
        max_concurrency: int,
        rpm: int | None = None,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self._sleep = sleep
        self._clock = clock
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next_slot: float | None = None
        self.in_flight = 0

    def _get_semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
            self.in_flight = 0
        return self._semaphore

    async def __aenter__(self) -> "Limiter":
        await self._get_semaphore().acquire()
        self.in_flight += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.in_flight -= 1
        assert self._semaphore is not None
        self._semaphore.release()

    async def pace(self) -> float:
        """Wait for this request's rpm slot; returns the seconds waited (0 without an rpm limit)."""
        if not self.rpm:
            return 0.0
        now = self._clock()
        start = now if self._next_slot is None else max(now, self._next_slot)
        self._next_slot = start + 60.0 / self.rpm  # reserved before sleeping: no lock needed
        wait = start - now
        if wait > 0:
            await self._sleep(wait)
        return wait


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _strip_userinfo(url: str | None) -> str | None:
    if not url:
        return url
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@", r"\1", url)


def _one_line(text: str, limit: int = _MAX_ERROR_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _scrub(text: str | None, secrets: list[str]) -> str | None:
    if text is None:
        return None
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_CHARS:
            text = text.replace(secret, "[redacted]")
    return text


def _clean(text: str, secrets: list[str], limit: int = _MAX_ERROR_CHARS) -> str:
    """Scrub first, then shorten: truncation must never leave part of a key behind."""
    return _one_line(_scrub(str(text), secrets) or "", limit)


def _find_balanced_objects(text: str, limit: int = 20):
    """Yield (start, end) of top-level {...} spans, honouring JSON strings and escapes."""
    found = 0
    i = text.find("{")
    while i != -1 and found < limit:
        depth = 0
        in_string = False
        escaped = False
        end = -1
        for j in range(i, len(text)):
            ch = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
        if end == -1:
            yield i, -1
            return
        found += 1
        yield i, end
        i = text.find("{", end)


_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> dict:
    """The first JSON object in a model's reply: ```json fences and surrounding prose are ignored.

    Looks inside a fenced block first, then in the whole text; takes the first balanced top-level
    {...} that json.loads accepts. Raises ValueError with a short reason otherwise.
    """
    if not isinstance(text, str):
        raise ValueError(f"reply is not text but {type(text).__name__}")
    if not text.strip():
        raise ValueError("empty reply")
    regions = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    first_error: str | None = None
    for region in regions:
        for start, end in _find_balanced_objects(region):
            if end == -1:
                first_error = first_error or "JSON object is not closed (unbalanced braces; reply cut off?)"
                break
            try:
                value = json.loads(region[start:end])
            except json.JSONDecodeError as exc:
                first_error = first_error or f"invalid JSON: {exc.msg} at char {exc.pos}"
                continue
            except RecursionError:  # absurdly deep nesting: a bad reply, not a crash
                first_error = first_error or "JSON nested too deeply"
                continue
            if isinstance(value, dict):
                return value
    raise ValueError(first_error or "no JSON object found in reply")


def _header_lookup(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    try:
        value = headers.get(name)
        if value is None and isinstance(headers, dict):
            lowered = {str(k).lower(): v for k, v in headers.items()}
            value = lowered.get(name)
    except Exception:
        return None
    return None if value is None else str(value)


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the provider asked to wait, from the exception's response headers, or None.

    litellm 1.110 keeps the upstream headers on `exc.response.headers` (an httpx.Response it
    rebuilds without credentials) and on `exc.litellm_response_headers` (httpx.Headers set by
    its exception mapping); `exc.headers` is only filled by its proxy. Reads retry-after-ms,
    then retry-after (seconds or an HTTP date); the llm_provider- prefixed forms are read too.
    """
    response = getattr(exc, "response", None)
    candidates = (
        getattr(exc, "litellm_response_headers", None),
        getattr(response, "headers", None) if response is not None else None,
        getattr(exc, "headers", None),
    )
    for headers in candidates:
        for prefix in ("", "llm_provider-"):
            ms = _header_lookup(headers, prefix + "retry-after-ms")
            if ms is not None:
                try:
                    return max(0.0, float(ms) / 1000.0)
                except ValueError:
                    pass
            value = _header_lookup(headers, prefix + "retry-after")
            if value is None:
                continue
            try:
                return max(0.0, float(value))
            except ValueError:
                pass
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                continue
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.timezone.utc)
            return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
    return None


def _error_text(exc: BaseException) -> str:
    """ "HTTP 429 RateLimitError: OpenAIException - ..." without litellm's doubled prefixes."""
    name = type(exc).__name__
    message = str(exc) or repr(exc)
    message = re.sub(rf"^litellm\.{re.escape(name)}:\s*", "", message)
    message = re.sub(rf"^{re.escape(name)}:\s*", "", message)
    status = getattr(exc, "status_code", None)
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    return f"{prefix}{name}: {message}"


def classify_exception(exc: BaseException) -> tuple[AttemptStatus, bool]:
    """(log status, retryable) for an exception raised by litellm.acompletion.

    Facts about litellm 1.110 this relies on: every provider error is mapped onto a class in
    litellm.exceptions that carries `status_code`; 403 comes back as litellm.APIError with
    status_code 403 (not PermissionDeniedError); a connection failure and a 200 whose body is not
    JSON both come back as InternalServerError (500) for OpenAI-compatible endpoints; a missing
    key also comes back as a 500 ("Missing credentials"), which is not worth retrying;
    litellm.Timeout (status 408) subclasses openai.APITimeoutError < openai.APIConnectionError.
    """
    import httpx

    litellm = _import_litellm()
    message = str(exc)
    if isinstance(exc, (litellm.Timeout, asyncio.TimeoutError, TimeoutError, httpx.TimeoutException)):
        return "timeout", True
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return "rate_limited", True
    if "Missing credentials" in message or "api_key client option must be set" in message:
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


def _rejects_response_format(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    message = str(exc).lower()
    return status in (400, 422) and ("response_format" in message or "json_schema" in message)


def _describe_server_error(exc: BaseException, text: str) -> str:
    if any(hint in str(exc) for hint in _JSON_DECODE_HINTS):
        return f"malformed response body (not JSON): {text}"
    return text


def has_price(model: str) -> bool:
    """True if litellm's (local) price map knows `model`, with or without its provider prefix.

    Checked before asking litellm for a cost: for unmapped names litellm may go looking on the
    network (a "huggingface/..." model makes cost_per_token contact huggingface.co)."""
    prices = getattr(_import_litellm(), "model_cost", None) or {}
    if model in prices:
        return True
    return "/" in model and model.split("/", 1)[1] in prices


def estimate_call(juror: JurorSpec, messages: list[dict], completion_tokens: int) -> tuple[int, float | None]:
    """(prompt tokens, cost in USD or None when litellm has no price) of one call, before making it.

    Tokens are counted with litellm's bundled tiktoken encoding (the gpt-4o one for every juror:
    close enough for plans and cost caps, and it never fetches a tokenizer from a hub, which
    litellm.token_counter does for some model names); chars/4 if that fails. Makes no request.
    """
    litellm = _import_litellm()
    try:
        prompt_tokens = int(litellm.token_counter(model="gpt-4o", messages=messages))
    except Exception:  # noqa: BLE001
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        prompt_tokens = max(1, chars // 4) + 4 * len(messages)
    if not has_price(juror.model):
        return prompt_tokens, None
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=juror.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        cost: float | None = float(prompt_cost) + float(completion_cost)
    except Exception:  # noqa: BLE001 - litellm has no price for this model
        cost = None
    return prompt_tokens, cost


# ---------------------------------------------------------------------------------------------
# Limits on what comes back, secrets, unknown params
# ---------------------------------------------------------------------------------------------

_TOKEN_LIMIT_PARAMS = frozenset({"max_tokens", "max_completion_tokens", "max_output_tokens"})
DEFAULT_MAX_REPLY_TOKENS = 8192  # sent as max_tokens when a juror's params set no token limit
MAX_STORED_REASONING_CHARS = 20_000  # a vote's reasoning longer than this is cut, with a marker
MAX_STORED_TEXT_CHARS = 100_000  # a call's raw reply text likewise
MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # a provider response body larger than this is not read on
CUT_MARKER = " …[cut by jury: {n:,} characters in all]"
_BEARER = re.compile(r"(?i)\b(bearer|authorization:?)(\s+)([A-Za-z0-9._~+/=-]{8,})")
_KEY_LIKE = re.compile(r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|xai-[A-Za-z0-9]{20,})")


class ResponseTooLarge(Exception):
    """A provider's response body passed MAX_RESPONSE_BYTES: reading stopped there."""


def _capped_stream(stream: Any, limit: int):
    import httpx

    class _Capped(httpx.AsyncByteStream):
        async def __aiter__(self):
            seen = 0
            async for chunk in stream:
                seen += len(chunk)
                if seen > limit:
                    raise ResponseTooLarge(f"response body over {limit // (1024 * 1024)} MB; not read further")
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return _Capped()


def _capped_http_client(limit: int):
    """An httpx client that stops reading a response body at `limit` bytes."""
    import httpx

    class _CappedTransport(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await super().handle_async_request(request)
            length = response.headers.get("content-length")
            if length and length.isdigit() and int(length) > limit:
                await response.aclose()
                raise ResponseTooLarge(f"response body of {int(length):,} bytes is over the {limit // (1024 * 1024)} MB limit")
            response.stream = _capped_stream(response.stream, limit)
            return response

    client = httpx.AsyncClient(
        transport=_CappedTransport(), follow_redirects=True,
        limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
    )
    client._jury_capped = True  # type: ignore[attr-defined]
    return client


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
    litellm.aclient_session = _capped_http_client(MAX_RESPONSE_BYTES)
    _session_loop = loop


def _too_large(exc: BaseException) -> ResponseTooLarge | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ResponseTooLarge):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


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
    except Exception:  # noqa: BLE001 - litellm cannot place the model: nothing to compare with
        return []
    if not known:
        return []
    return sorted(set(spec.params) - set(known))


def _secrets_of(spec: JurorSpec) -> list[str]:
    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    return [key] if key and len(key) >= _MIN_SECRET_CHARS else []


def redact(text: str, secrets: list[str]) -> str:
    """The juror's key, and anything that looks like a bearer token or a provider key, replaced."""
    text = _scrub(text, secrets) or ""
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)
    return _KEY_LIKE.sub("[redacted]", text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + CUT_MARKER.format(n=len(text))


def _clean_value(value: Any, secrets: list[str], key: str | None = None) -> Any:
    if isinstance(value, str):
        value = redact(value, secrets)
        return _cut(value, MAX_STORED_REASONING_CHARS) if key != "verdict" else value
    if isinstance(value, dict):
        return {k: _clean_value(v, secrets, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v, secrets) for v in value]
    return value


def for_store(result: CallResult, spec: JurorSpec) -> CallResult:
    """The one gate a reply passes before it is stored (and so before any verdict file, which
    is built from stored votes): secrets redacted in every string (text, parsed reply, error,
    log); the parsed reply's strings (reasoning) cut at MAX_STORED_REASONING_CHARS and the raw
    text at MAX_STORED_TEXT_CHARS, each with a marker saying how long it was."""
    secrets = _secrets_of(spec)
    return result.model_copy(update={
        "text": None if result.text is None else _cut(redact(result.text, secrets), MAX_STORED_TEXT_CHARS),
        "parsed": _clean_value(result.parsed, secrets),
        "error": None if result.error is None else redact(result.error, secrets),
        "log": _clean_value(result.log, secrets),
    })


# ---------------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------------


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
        self._sleep = sleep
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._rng = random.Random(seed)  # jitter: deterministic for a given order of events
        self._limiters = {j.name: Limiter(j.max_concurrency, j.rpm, sleep=sleep) for j in jurors}
        self._no_response_format: set[str] = set()
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

    def response_format_disabled(self, juror_name: str) -> bool:
        """True once the juror's provider has rejected response_format in this pool."""
        return juror_name in self._no_response_format

    def backoff_s(self, retry_index: int) -> float:
        """Wait before retry number retry_index+1: base * 2**i capped at backoff_max_s, plus up to 10% jitter."""
        wait = min(self.backoff_max_s, self.backoff_base_s * (2 ** min(retry_index, 30)))
        return wait + wait * 0.1 * self._rng.random()

    async def call(
        self,
        juror_name: str,
        messages: list[dict],
        *,
        schema: dict | None,
        parse: Callable[[str], dict],
    ) -> CallResult:
        """Send `messages` to the juror and parse the reply with `parse` (which raises ValueError
        on a bad reply). Never raises for provider trouble: failures come back as ok=False.
        Exceptions other than ValueError from `parse` are bugs and propagate."""
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
        _install_capped_session(_import_litellm())  # import once per process (~3 s): not any juror's latency
        async with limiter:
            started = time.monotonic()  # from the slot on: time queued for a slot is not the juror's latency
            result = await self._call_locked(spec, limiter, messages, schema, parse, api_key, secrets)
            result.latency_s = time.monotonic() - started
        return result

    async def _call_locked(
        self,
        spec: JurorSpec,
        limiter: Limiter,
        messages: list[dict],
        schema: dict | None,
        parse: Callable[[str], dict],
        api_key: str | None,
        secrets: list[str],
    ) -> CallResult:
        litellm = _import_litellm()
        convo = [dict(m) for m in messages]
        retries_left = spec.max_retries
        retry_index = 0
        repaired = False
        format_fallback_done = False
        result = CallResult(ok=False)

        def fail(error: str) -> CallResult:
            result.ok = False
            result.error = _clean(error, secrets)
            return result

        # Bounded: max_retries+1 transient attempts, one repair turn, one response_format fallback.
        for _ in range(spec.max_retries + 3):
            if self.stop_requested:
                result.interrupted = True
                return fail("interrupted before the request was sent")
            await limiter.pace()
            if self.stop_requested:
                result.interrupted = True
                return fail("interrupted before the request was sent")
            use_format = spec.structured_output and schema is not None and spec.name not in self._no_response_format
            kwargs: dict[str, Any] = dict(
                model=spec.model,
                messages=convo,
                api_base=spec.api_base,
                api_key=api_key,
                timeout=spec.timeout_s,
                num_retries=0,
                **spec.generation_params(),
            )
            if not (set(kwargs) & _TOKEN_LIMIT_PARAMS):
                kwargs["max_tokens"] = reply_token_cap(spec.model)
            if use_format:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "ballot", "schema": schema, "strict": True},
                }
            result.attempts += 1
            entry: dict[str, Any] = {"attempt": result.attempts, "status": "ok", "error": None, "wait_s": 0.0}
            result.log.append(entry)
            try:
                response = await asyncio.wait_for(
                    litellm.acompletion(**kwargs), timeout=spec.timeout_s + _HARD_TIMEOUT_MARGIN_S
                )
            except Exception as exc:  # noqa: BLE001 - every provider failure becomes a log entry
                too_large = _too_large(exc)
                if too_large is not None:  # the juror answered, unusably: a final abstention, never retried
                    entry["status"], entry["error"] = "bad_output", _clean(str(too_large), secrets)
                    return fail(f"unusable reply: {too_large}")
                status, retryable = classify_exception(exc)
                text = _clean(_error_text(exc), secrets, 220)  # room for a suffix in `error`
                if status == "server_error":
                    text = _describe_server_error(exc, text)
                entry["status"], entry["error"] = status, text
                if use_format and not format_fallback_done and _rejects_response_format(exc):
                    format_fallback_done = True
                    self._no_response_format.add(spec.name)
                    entry["error"] = _clean(f"response_format rejected, retrying without it: {text}", secrets)
                    continue
                if not retryable:
                    return fail(text)
                if retries_left <= 0:
                    return fail(f"{text} (gave up after {spec.max_retries} retries)")
                asked = retry_after_s(exc)
                if asked is not None and asked > self.backoff_max_s:
                    return fail(f"{text} (provider asks to wait {asked:g} s, more than backoff_max_s={self.backoff_max_s:g})")
                if asked is not None:
                    wait = asked + min(0.1 * asked, 0.5) * self._rng.random()
                else:
                    wait = self.backoff_s(retry_index)
                retries_left -= 1
                retry_index += 1
                entry["wait_s"] = wait
                await self._sleep(wait)
                continue

            self._add_usage(litellm, result, response, priced=has_price(spec.model))
            content, finish_reason, refusal = _reply_parts(response)
            result.text = _scrub(content, secrets)
            reason: str | None = None
            parsed: dict | None = None
            if refusal:
                reason = f"model refused: {refusal}"
            elif not (content or "").strip():
                reason = "empty reply"
            else:
                try:
                    parsed = parse(content)
                except ValueError as exc:
                    reason = str(exc) or type(exc).__name__
            if reason is None:
                result.ok, result.parsed, result.error = True, parsed, None
                return result
            if finish_reason == "length":
                reason = f"reply cut off at the token limit (finish_reason=length): {reason}"
            reason = _clean(reason, secrets, _MAX_REASON_CHARS)
            entry["status"], entry["error"] = "bad_output", reason
            if repaired:
                return fail(f"unparseable reply: {reason}")
            repaired = True
            if (content or "").strip():
                convo = convo + [{"role": "assistant", "content": content}]
            convo = convo + [{"role": "user", "content": REPAIR_PROMPT.format(reason=reason)}]
        return fail("gave up: attempt budget exhausted")

    @staticmethod
    def _add_usage(litellm: Any, result: CallResult, response: Any, *, priced: bool) -> None:
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        if isinstance(prompt, int):
            result.prompt_tokens += prompt
        if isinstance(completion, int):
            result.completion_tokens += completion
        if not priced:
            return
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # noqa: BLE001 - litellm has no price for this model
            cost = 0.0
        if isinstance(cost, (int, float)) and cost > 0:
            result.cost_usd += float(cost)


def _reply_parts(response: Any) -> tuple[str | None, str | None, str | None]:
    """(content, finish_reason, refusal) of the first choice; Nones where absent."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return None, None, None
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    refusal = getattr(message, "refusal", None)
    return content, getattr(choice, "finish_reason", None), refusal if isinstance(refusal, str) and refusal else None
