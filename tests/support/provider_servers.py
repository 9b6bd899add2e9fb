"""A loopback server that speaks each shipped provider's NATIVE wire protocol, for tests.

FakeLLMServer (fakellm.py) speaks only OpenAI's chat-completions protocol. This server lets a
test drive litellm's real provider code (`anthropic/...`, `gemini/...`, `xai/...`,
`deepseek/...`, `openai/...`, `ollama_chat/...`) with `api_base` pointing here. The routes are
the URLs litellm 1.110 builds from an api_base:

    anthropic/<m>     POST {api_base}/v1/messages                  Anthropic Messages
    gemini/<m>        POST {api_base}/models/<m>:generateContent   Gemini generateContent
    openai/, xai/, deepseek/ <m>
                      POST {api_base}/chat/completions             OpenAI chat completions
    ollama_chat/<m>   POST {api_base}/api/chat                     Ollama chat

(`/v1beta/models/...` and `/v1/chat/completions` are served too.) Scripted answers are
protocol-neutral (`Say`, `Fail`) and rendered in the protocol of the route they arrive on:

    with ProviderServer() as server:
        server.script("claude-sonnet-4-5", [Fail("overloaded"), Say(BALLOT, thinking="...")])
        ...  # litellm.acompletion(model="anthropic/claude-sonnet-4-5", api_base=server.base_url)
        [first, second] = server.requests("claude-sonnet-4-5")

Each model's queue is served in order; its last entry answers every later request. A model
with no script gets the protocol's own "model not found" error (404).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Stop = Literal["stop", "length", "refusal", "safety", "prompt_blocked"]
FailKind = Literal["rate_limited", "overloaded", "bad_request", "invalid_input", "unavailable"]

# llama-cpp-python's server (0.3.x) answers `response_format: {"type": "json_schema"}` with this
# HTTP 500: FastAPI's validation error, wrapped by its RouteErrorHandler as an internal error.
LLAMA_CPP_JSON_SCHEMA_500 = {
    "error": {
        "message": (
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
            "'ctx': {'expected': \"'text' or 'json_object'\"}}\n"
        ),
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


@dataclass
class Say:
    """A 200 answer: `text` as the reply, optionally after reasoning (`thinking`), ending as `stop`.

    stop: "stop" a normal end; "length" cut off at max_tokens (text as given: cut it yourself);
    "refusal" the model declines (Anthropic stop_reason refusal, OpenAI message.refusal, Gemini
    SAFETY); "safety" the provider's filter blocked the candidate (Gemini finishReason SAFETY with
    no parts, OpenAI finish_reason content_filter); "prompt_blocked" Gemini's promptFeedback
    block (no candidates at all). usage=False leaves every token count out of the body.
    think_tags: the reasoning is sent inside the content as <think>...</think> (qwen3 and
    DeepSeek-R1 served by Ollama or llama.cpp) instead of the protocol's reasoning field."""

    text: str = ""
    thinking: str | None = None
    stop: Stop = "stop"
    usage: bool = True
    think_tags: bool = False


@dataclass
class Fail:
    """An error answer in the protocol's own shape.

    rate_limited: 429 (Anthropic/OpenAI: a retry-after header; Gemini: RESOURCE_EXHAUSTED with a
    RetryInfo retryDelay in the body); overloaded: Anthropic 529 overloaded_error, Gemini 503
    UNAVAILABLE, OpenAI 503, Ollama 503 "server busy"; unavailable: a plain 503; bad_request:
    400 in the protocol's invalid-request shape; invalid_input: HTTP 500 with
    LLAMA_CPP_JSON_SCHEMA_500 (chat completions only)."""

    kind: FailKind
    retry_after: float | None = None
    message: str | None = None


Answer = Say | Fail
Responder = Callable[["Seen"], Answer]  # chooses the answer from the request


@dataclass
class Seen:
    """One request as the server received it."""

    protocol: str  # "anthropic", "gemini", "openai", "ollama"
    path: str
    model: str
    body: dict
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names; credentials never kept
    key_sha256: str | None = None  # sha256 of the key sent (any "Bearer " removed): never the key itself


_KEY_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _prompt_text(body: Any) -> str:
    return json.dumps(body)[:100_000]


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: the headers and the body go out as two writes; with Nagle's algorithm the body
    # waited for the client's delayed ACK (~40 ms a reply on loopback: most of a test's wall time)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass
        self.close_connection = True

    def do_POST(self) -> None:
        self.close_connection = True
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        protocol, model = _route(path, body)
        if protocol is None:
            self.send_json(404, {"error": {"message": f"unknown path {path}"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in _KEY_HEADERS}
        sent = next((self.headers.get(k) for k in _KEY_HEADERS if self.headers.get(k)), None)
        key = None if sent is None else hashlib.sha256(sent.removeprefix("Bearer ").encode()).hexdigest()
        self.server.owner._serve(self, Seen(protocol, path, model, body, headers, key))


def _route(path: str, body: dict) -> tuple[str | None, str]:
    if path.endswith("/v1/messages"):
        return "anthropic", str(body.get("model", ""))
    if path.endswith(":generateContent") and "/models/" in path:
        return "gemini", path.rsplit("/models/", 1)[1].split(":", 1)[0]
    if path.endswith("/chat/completions"):
        return "openai", str(body.get("model", ""))
    if path.endswith("/api/chat"):
        return "ollama", str(body.get("model", ""))
    return None, ""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # a panel opens up to jurors x max_concurrency connections at once: socketserver's backlog of 5
    # overflowed, and a dropped SYN costs the client a 1 s retransmit (or a retry) on a busy machine
    request_queue_size = 128
    owner: ProviderServer


class ProviderServer:
    """Threaded server on 127.0.0.1 answering Anthropic, Gemini, OpenAI-compatible and Ollama requests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, list[Answer | Responder]] = {}
        self._seen: list[Seen] = []
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> ProviderServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def script(self, model: str, answers: Answer | Responder | Iterable[Answer | Responder]) -> None:
        """Answer requests for `model` (its name as the provider sees it) with `answers` in order;
        the last one answers every later request. A responder (a callable) is given the request
        (a Seen) and returns the answer."""
        items = [answers] if isinstance(answers, (Say, Fail)) or callable(answers) else list(answers)
        if not items:
            raise ValueError("script needs at least one answer")
        with self._lock:
            self._scripts[model] = items

    def requests(self, model: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self._seen if model is None or s.model == model]

    # ---- serving -----------------------------------------------------------------------------
    def _next(self, seen: Seen) -> Answer | None:
        with self._lock:
            queue = self._scripts.get(seen.model)
            if not queue:
                return None
            item = queue.pop(0) if len(queue) > 1 else queue[0]
        return item(seen) if callable(item) else item

    def _serve(self, handler: _Handler, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)
        answer = self._next(seen)
        render = {"anthropic": _anthropic, "gemini": _gemini, "openai": _openai, "ollama": _ollama}[seen.protocol]
        status, obj, headers = render(seen, answer)
        handler.send_json(status, obj, headers)


# ---- the protocols ---------------------------------------------------------------------------

Rendered = tuple[int, Any, dict[str, str]]


def _retry_header(fail: Fail) -> dict[str, str]:
    return {} if fail.retry_after is None else {"retry-after": f"{fail.retry_after:g}"}


def _anthropic(seen: Seen, answer: Answer | None) -> Rendered:
    def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Rendered:
        return status, {"type": "error", "error": {"type": kind, "message": message}}, headers or {}

    if answer is None:
        return error(404, "not_found_error", f"model: {seen.model}")
    if isinstance(answer, Fail):
        message = answer.message
        if answer.kind == "rate_limited":
            headers = {"anthropic-ratelimit-requests-remaining": "0", **_retry_header(answer)}
            return error(429, "rate_limit_error", message or "Number of request tokens has exceeded your rate limit.", headers)
        if answer.kind == "overloaded":
            return error(529, "overloaded_error", message or "Overloaded", _retry_header(answer))
        if answer.kind == "unavailable":
            return error(503, "api_error", message or "Service unavailable", _retry_header(answer))
        return error(400, "invalid_request_error", message or "invalid request")
    content: list[dict] = []
    if answer.thinking is not None and not answer.think_tags:
        content.append({"type": "thinking", "thinking": answer.thinking, "signature": "c2lnbmF0dXJl"})
    text = f"<think>{answer.thinking}</think>{answer.text}" if answer.think_tags else answer.text
    if text and answer.stop not in ("safety", "prompt_blocked"):
        content.append({"type": "text", "text": text})
    stop_reason = {"stop": "end_turn", "length": "max_tokens"}.get(answer.stop, "refusal")
    body: dict[str, Any] = {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": seen.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
    }
    if answer.usage:
        body["usage"] = {
            "input_tokens": _tokens(_prompt_text(seen.body)),
            "output_tokens": _tokens(text + (answer.thinking or "")),
        }
    return 200, body, {}


def _gemini(seen: Seen, answer: Answer | None) -> Rendered:
    def error(code: int, status: str, message: str, details: list | None = None) -> Rendered:
        err: dict[str, Any] = {"code": code, "message": message, "status": status}
        if details:
            err["details"] = details
        return code, {"error": err}, {}

    if answer is None:
        return error(404, "NOT_FOUND", f"models/{seen.model} is not found for API version v1beta")
    if isinstance(answer, Fail):
        if answer.kind == "rate_limited":
            details = []
            if answer.retry_after is not None:
                details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{answer.retry_after:g}s"})
            return error(429, "RESOURCE_EXHAUSTED", answer.message or "You exceeded your current quota.", details)
        if answer.kind in ("overloaded", "unavailable"):
            return error(503, "UNAVAILABLE", answer.message or "The model is overloaded. Please try again later.")
        return error(400, "INVALID_ARGUMENT", answer.message or "Request contains an invalid argument.")
    prompt_tokens = _tokens(_prompt_text(seen.body))
    usage: dict[str, Any] = {"promptTokenCount": prompt_tokens}
    ratings = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]
    if answer.stop == "prompt_blocked":
        body: dict[str, Any] = {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": ratings}}
        usage["totalTokenCount"] = prompt_tokens
    else:
        parts: list[dict] = []
        if answer.thinking is not None and not answer.think_tags:
            parts.append({"text": answer.thinking, "thought": True})
        text = f"<think>{answer.thinking}</think>{answer.text}" if answer.think_tags else answer.text
        if text and answer.stop not in ("safety", "refusal"):
            parts.append({"text": text})
        candidate: dict[str, Any] = {
            "finishReason": {"stop": "STOP", "length": "MAX_TOKENS"}.get(answer.stop, "SAFETY"),
            "index": 0,
        }
        if parts:
            candidate["content"] = {"parts": parts, "role": "model"}
        if answer.stop in ("safety", "refusal"):
            candidate["safetyRatings"] = ratings
        body = {"candidates": [candidate]}
        usage["candidatesTokenCount"] = _tokens(text)
        if answer.thinking:
            usage["thoughtsTokenCount"] = _tokens(answer.thinking)
        usage["totalTokenCount"] = sum(v for v in usage.values())
    body["modelVersion"] = seen.model
    body["responseId"] = uuid.uuid4().hex[:20]
    if answer.usage:
        body["usageMetadata"] = usage
    return 200, body, {}


def _openai(seen: Seen, answer: Answer | None) -> Rendered:
    def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None, code: str | None = None) -> Rendered:
        return status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers or {}

    if answer is None:
        return error(404, "invalid_request_error", f"The model `{seen.model}` does not exist", code="model_not_found")
    if isinstance(answer, Fail):
        if answer.kind == "rate_limited":
            headers = {"x-ratelimit-remaining-requests": "0", **_retry_header(answer)}
            return error(
                429, "rate_limit_error", answer.message or "Rate limit reached for requests", headers, "rate_limit_exceeded"
            )
        if answer.kind in ("overloaded", "unavailable"):
            return error(503, "server_error", answer.message or "The server is overloaded", _retry_header(answer))
        if answer.kind == "invalid_input":
            return 500, LLAMA_CPP_JSON_SCHEMA_500, {}
        return error(400, "invalid_request_error", answer.message or "invalid request")
    message: dict[str, Any] = {"role": "assistant", "content": answer.text, "refusal": None}
    finish = {"stop": "stop", "length": "length"}.get(answer.stop, "content_filter")
    if answer.thinking is not None:
        if answer.think_tags:
            message["content"] = f"<think>{answer.thinking}</think>{answer.text}"
        else:
            message["reasoning_content"] = answer.thinking  # DeepSeek's (and xAI's) reasoning field
    if answer.stop == "refusal":
        message["content"], message["refusal"], finish = None, answer.text or "I can't help with that.", "stop"
    elif answer.stop in ("safety", "prompt_blocked"):
        message["content"] = None
    body: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": seen.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
    }
    if answer.usage:
        prompt, completion = _tokens(_prompt_text(seen.body)), _tokens(answer.text + (answer.thinking or ""))
        body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return 200, body, {}


def _ollama(seen: Seen, answer: Answer | None) -> Rendered:
    if answer is None:
        return 404, {"error": f"model '{seen.model}' not found, try pulling it first"}, {}
    if isinstance(answer, Fail):
        if answer.kind == "rate_limited":
            return 429, {"error": answer.message or "too many requests"}, _retry_header(answer)
        if answer.kind in ("overloaded", "unavailable"):
            return 503, {"error": answer.message or "server busy, please try again.  maximum pending requests exceeded"}, {}
        if answer.kind == "invalid_input":
            return 500, {"error": answer.message or "invalid input"}, {}
        return 400, {"error": answer.message or "invalid request"}, {}
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    if answer.thinking is not None:
        if answer.think_tags:
            message["content"] = f"<think>{answer.thinking}</think>{answer.text}"
        else:
            message["thinking"] = answer.thinking
    if answer.stop in ("safety", "prompt_blocked", "refusal"):
        message["content"] = answer.text if answer.stop == "refusal" else ""
    body: dict[str, Any] = {
        "model": seen.model,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
        "message": message,
        "done": True,
        "done_reason": "length" if answer.stop == "length" else "stop",
        "total_duration": 1_000_000,
    }
    if answer.usage:
        body["prompt_eval_count"] = _tokens(_prompt_text(seen.body))
        body["eval_count"] = _tokens(str(message["content"]))
    return 200, body, {}
