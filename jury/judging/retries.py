"""When and how long to wait before asking a juror again, and how a failed attempt reads.

A failed HTTP attempt becomes an AttemptFailed carrying its one-line log text, whether it is
worth retrying and the wait the provider asked for (Retry-After). JurorPool retries with
tenacity; `BackoffWait` is its wait policy: the provider's Retry-After when it sent one,
otherwise exponential backoff, each with a little jitter from the pool's seeded generator.
"""

from __future__ import annotations

import datetime
import email.utils
import random
import re
from collections.abc import Callable
from typing import Any

from tenacity import RetryCallState, wait_exponential
from tenacity.wait import wait_base

from jury.judging.juror import AttemptStatus

_JSON_DECODE_HINTS = ("Expecting value", "JSONDecodeError", "Extra data", "Unterminated string", "Invalid control")


class AttemptFailed(Exception):
    """One HTTP attempt to a juror failed. `text` is its one-line, key-scrubbed log error;
    `final` (when set) is the call's abstention reason, never retried; `cause` is the original
    exception (kept off __cause__ so tenacity's reraise shows this one)."""

    def __init__(
        self,
        text: str,
        *,
        status: AttemptStatus,
        retryable: bool,
        retry_after: float | None = None,
        cause: BaseException | None = None,
        final: str | None = None,
    ) -> None:
        super().__init__(text)
        self.text = text
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.cause = cause
        self.final = final


class BackoffWait(wait_base):
    """tenacity wait: Retry-After plus up to 10% (at most 0.5 s) jitter when the provider asked
    for a wait; otherwise base_s * 2**n capped at max_s, plus up to 10% jitter, where n counts
    the retries of this call so far (`first_index` of them were spent in earlier turns)."""

    def __init__(self, base_s: float, max_s: float, rng: random.Random, first_index: int = 0) -> None:
        self._exponential = wait_exponential(multiplier=base_s * 2 ** min(first_index, 30), max=max_s)
        self._rng = rng

    def __call__(self, retry_state: RetryCallState) -> float:
        failed = retry_state.outcome.exception() if retry_state.outcome else None
        asked: float | None = getattr(failed, "retry_after", None)  # AttemptFailed's Retry-After
        if asked is not None:
            return asked + min(0.1 * asked, 0.5) * self._rng.random()
        wait = self._exponential(retry_state)
        return wait + wait * 0.1 * self._rng.random()


def should_retry(max_wait_s: float) -> Callable[[BaseException], bool]:
    """tenacity retry predicate: a retryable AttemptFailed whose Retry-After (if any) is at most
    max_wait_s. Anything else (a client error, a stop request, a bug) is not retried."""

    def predicate(exc: BaseException) -> bool:
        return isinstance(exc, AttemptFailed) and exc.retryable and (exc.retry_after is None or exc.retry_after <= max_wait_s)

    return predicate


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
                when = when.replace(tzinfo=datetime.UTC)
            return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())
    # Gemini sends no header: its 429 RESOURCE_EXHAUSTED body carries a google.rpc.RetryInfo
    # {"retryDelay": "7s"}, which litellm keeps in the exception's message.
    delay = re.search(r"""["']retryDelay["']\s*:\s*["'](\d+(?:\.\d+)?)s["']""", str(exc))
    if delay:
        return float(delay.group(1))
    return None


def error_text(exc: BaseException) -> str:
    """ "HTTP 429 RateLimitError: OpenAIException - ..." without litellm's doubled prefixes."""
    name = type(exc).__name__
    message = str(exc) or repr(exc)
    message = re.sub(rf"^litellm\.{re.escape(name)}:\s*", "", message)
    message = re.sub(rf"^{re.escape(name)}:\s*", "", message)
    status = getattr(exc, "status_code", None)
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    return f"{prefix}{name}: {message}"


# What a server that validates its input says when it refuses a request, whatever status it
# sends: llama-cpp-python answers a pydantic validation failure (e.g. response_format json_schema)
# with HTTP 500 "1 validation error: ... Input should be 'text' or 'json_object'"; llama.cpp's
# forks with 500 'response_format type must be one of "text" or "json_object"'.
_INVALID_INPUT_HINTS = (
    "validation error",
    "input should be",
    "literal_error",
    "must be one of",
    "invalid_request_error",
    "unprocessable entity",
)

# The words naming each way of constraining the reply (JurorSpec.structured_output), in an error
# that rejects it.
_STRUCTURED_HINTS = {
    "json_schema": ("response_format", "json_schema"),
    "json_object": ("response_format", "json_object"),
    "ollama": ("format",),
    "vllm": ("guided_json", "guided_decoding"),
}


def invalid_request(exc: BaseException) -> bool:
    """True when the error says the request itself is invalid, so sending it again cannot help:
    HTTP 400 or 422, or a 5xx whose body is an input-validation failure (a server that reports
    its validation errors as internal errors, as llama-cpp-python's does)."""
    status = getattr(exc, "status_code", None)
    if status in (400, 422):
        return True
    if not (isinstance(status, int) and status >= 500):
        return False
    message = str(exc).lower()
    return any(hint in message for hint in _INVALID_INPUT_HINTS)


def rejects_response_format(exc: BaseException, kind: str = "json_schema") -> bool:
    """True when an invalid-request error is about the structured output sent (`kind`)."""
    message = str(exc).lower()
    return invalid_request(exc) and any(word in message for word in _STRUCTURED_HINTS.get(kind, ()))


class UnreadableReply(Exception):
    """A reply jury holds but litellm's conversion of a synchronous response refuses (a batch
    item whose body is not a chat completion: content an object, no choices, a usage that is
    not numbers); its text says what, without a traceback."""


def conversion_failure(exc: BaseException) -> UnreadableReply:
    """`exc`, raised by litellm while turning a response body into a reply, as an
    UnreadableReply naming the field pydantic or litellm complained of."""
    message = str(exc)
    found = re.search(r"validation errors? for (\w+)\n(\S+)\n\s+([^\[\n]+)", message)
    if found:
        what = f"{found.group(1)}.{found.group(2)}: {found.group(3).strip()}"
    else:
        what = message.split("Traceback", 1)[0].replace("litellm.APIError: ", "").replace("LiteLLM: ", "").strip()
        what = what.split(". Raw", 1)[0] or type(exc).__name__
    return UnreadableReply(" ".join(what.split())[:160])


def unreadable_reply(exc: BaseException) -> bool:
    """True when the provider answered but litellm could not turn its body into a reply (e.g. an
    Anthropic or Gemini reply without its usage block): the same body would fail the same way."""
    if isinstance(exc, UnreadableReply):
        return True
    message = str(exc)
    if "Error converting to valid response block" in message:
        return True
    # litellm wraps a KeyError raised while reading the body: "'usage'\nTraceback (most recent call last):"
    return _missing_key(message) is not None


def _missing_key(message: str) -> str | None:
    first = re.sub(r"^(litellm\.)?APIConnectionError:\s*", "", message).lstrip()
    match = re.match(r"'([A-Za-z_]+)'\s*\nTraceback \(most recent call last\)", first)
    return match.group(1) if match else None


def describe_unreadable(exc: BaseException) -> str:
    """One line for a reply litellm could not read (see unreadable_reply), without its traceback."""
    message = str(exc)
    if isinstance(exc, UnreadableReply):
        return f"unreadable reply: the provider answered, but litellm could not read the body ({message})"
    field = _missing_key(message)
    if field is None:
        found = re.search(r"block=(.*?)(?:\. Got=|$)", message)
        field = found.group(1).strip() if found else None
    what = f" ({field}{' missing' if _missing_key(message) else ''})" if field else ""
    return f"unreadable reply: the provider answered, but litellm could not read the body{what}"


def describe_server_error(exc: BaseException, text: str) -> str:
    if any(hint in str(exc) for hint in _JSON_DECODE_HINTS):
        return f"malformed response body (not JSON): {text}"
    return text
