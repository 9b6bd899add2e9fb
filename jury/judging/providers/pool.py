"""Calling LLM jurors: ``JurorPool.call`` sends one ballot to one juror and always comes back with
a ``CallResult``: transient failures (429, 5xx, timeouts, connection errors, a 200 whose body is not
JSON) are retried with backoff (tenacity, waiting as long as a Retry-After asks), client errors
(400/401/403/404) fail at once, a reply that does not parse gets one repair turn, and a juror that
cannot be reached or understood becomes an abstention with a one-line reason.

The pieces it is built from live beside it: jury.judging.juror (JurorSpec, CallResult), limits
(concurrency and rpm), retries (the backoff policy, Retry-After, error texts), replies (reply parts
and JSON extraction), redaction (key scrubbing), response_cap (the response-size cap), and the
other modules of this package (setup, prices, params). API keys live only in the environment
(JurorSpec.api_key_env names the variable); the key's value is scrubbed from every error, log entry
and reply text this module returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from jury.judging.juror import LOCAL_PLACEHOLDER_KEY, AttemptStatus, CallResult, JurorSpec, StructuredKind
from jury.judging.limits import Limiter, SendGate
from jury.judging.providers.batch_bodies import batch_response
from jury.judging.providers.params import TOKEN_LIMIT_PARAMS, constrain, reply_token_cap
from jury.judging.providers.prices import batch_cost, call_cost, has_price
from jury.judging.providers.setup import import_litellm, install_capped_session, unlogged
from jury.judging.redaction import clean, scrub
from jury.judging.replies import REPAIR_PROMPT, reply_parts, strip_reasoning
from jury.judging.response_cap import too_large
from jury.judging.retries import (
    AttemptFailed,
    BackoffWait,
    describe_server_error,
    describe_unreadable,
    error_text,
    invalid_request,
    rejects_response_format,
    retry_after_s,
    should_retry,
    unreadable_reply,
)

_MAX_REASON_CHARS = 200


_HARD_TIMEOUT_MARGIN_S = 10.0  # asyncio guard over litellm's own timeout


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


def _parse_reply(content: str | None, parse: Callable[[str], dict[str, Any]]) -> tuple[dict[str, Any] | None, str | None]:
    """(the reply parsed, None) without its reasoning, or (None, why it is unusable)."""
    reason: str | None = None
    parsed: dict[str, Any] | None = None
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
    convo: list[dict[str, Any]]
    schema: dict[str, Any] | None
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
        self._gate = SendGate()  # the pool's requests spaced by what a call costs this process
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
        messages: list[dict[str, Any]],
        *,
        schema: dict[str, Any] | None,
        parse: Callable[[str], dict[str, Any]],
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
        install_capped_session(import_litellm())  # import once per process (~3 s): not any juror's latency
        state = _Call(spec, limiter, [dict(m) for m in messages], schema, api_key, secrets, given=given)
        async with limiter:
            started = time.monotonic()  # from the slot on: time queued for a slot is not the juror's latency
            result = await self._call_locked(state, parse)
            result.latency_s = time.monotonic() - started
        return result

    async def _call_locked(self, state: _Call, parse: Callable[[str], dict[str, Any]]) -> CallResult:
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
            await self._gate.wait()
            with unlogged(litellm):
                return await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=spec.timeout_s + _HARD_TIMEOUT_MARGIN_S)
        except Exception as exc:
            raise self._attempt_failed(entry, exc, secrets) from None
        finally:
            self._gate.finished()

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
