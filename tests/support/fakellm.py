"""A loopback, OpenAI-compatible chat-completions server for tests and benchmarks.

Tests drive the real litellm against it (model "openai/<name>", api_base=server.base_url),
so everything between jury and the HTTP wire is the code that runs in production.

    with FakeLLMServer() as server:
        server.script("juror-a", json_reply({"reasoning": "r", "verdict": "answer_1"}))
        server.fail_next("juror-a", [Reply(status=429, retry_after=1), Reply(status=500)])
        ...  # call litellm with api_base=server.base_url
        assert server.calls("juror-a") == 3

Replies are chosen per request in this order: the model's fault queue (fail_next), then its
responder (script), then the server default (set_default / default=), else HTTP 404 with an
OpenAI-style "model not found" error. A responder is a fixed Reply, str (content) or dict
(JSON content), or a callable (request_json) -> Reply | str | dict.

Run as a script for benchmarks: every model answers a fixed JSON verdict after --latency s:

    python tests/support/fakellm.py --port 8765 --latency 0.5
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MAX_HANG_S = 30.0  # a hanging reply never holds a server thread longer than this

_STATUS_ERROR_TYPES = {
    400: ("invalid_request_error", "bad_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "model_not_found"),
    408: ("timeout_error", "timeout"),
    422: ("invalid_request_error", "unprocessable"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "internal_error"),
    502: ("server_error", "bad_gateway"),
    503: ("server_error", "overloaded"),
    504: ("server_error", "gateway_timeout"),
}


@dataclass
class Reply:
    """One scripted answer. The defaults give a normal 200 with `content`."""

    content: str = ""
    latency_s: float | None = None  # sleep before replying; None = the server's default
    status: int = 200
    retry_after: float | None = None  # sent as a Retry-After header (seconds)
    error_message: str | None = None  # message of the OpenAI-style error body (status >= 400)
    hang: bool = False  # sleep hang_s (<= MAX_HANG_S), aborted when the server stops
    hang_s: float = MAX_HANG_S
    malformed_body: bool = False  # HTTP 200 whose body is not JSON
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int | None = None  # override the len//4 estimates
    completion_tokens: int | None = None
    model: str | None = None  # "model" field of the response; None = the requested model


ReplyLike = Reply | str | dict
Responder = ReplyLike | Callable[[dict], ReplyLike]


def json_reply(obj: Any, **kwargs: Any) -> Reply:
    """A 200 reply whose content is `obj` as JSON, e.g. json_reply({"verdict": "answer_1"})."""
    return Reply(content=json.dumps(obj), **kwargs)


def ballot_reply(verdict: str = "answer_1", reasoning: str = "Both answers were compared.", **kwargs: Any) -> Reply:
    """A 200 reply holding a minimal ballot JSON object."""
    return json_reply({"reasoning": reasoning, "verdict": verdict}, **kwargs)


def truncated_reply(text: str, keep: int) -> Reply:
    """What a model cut off by max_tokens sends: the first `keep` characters, finish_reason "length"."""
    return Reply(content=text[:keep], finish_reason="length")


def error_reply(status: int, message: str | None = None, **kwargs: Any) -> Reply:
    return Reply(status=status, error_message=message, **kwargs)


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _message_text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _as_reply(value: ReplyLike) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(content=value)
    if isinstance(value, dict):
        return json_reply(value)
    raise TypeError(f"a responder must give a Reply, str or dict, not {type(value).__name__}")


def error_body(status: int, message: str | None = None) -> dict:
    err_type, code = _STATUS_ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return {
        "error": {
            "message": message or f"fake server error {status}",
            "type": err_type,
            "param": None,
            "code": code,
        }
    }


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # every response says Connection: close
    # TCP_NODELAY: the headers and the body go out as two writes; with Nagle's algorithm the body
    # waited for the client's delayed ACK (~40 ms a reply on loopback: most of a test's wall time)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            pass  # the client gave up (e.g. its timeout fired during a hang)
        self.close_connection = True

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers)

    def do_GET(self) -> None:
        self.close_connection = True  # one request per connection, even if no reply is sent
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = sorted(self.server.owner.scripted_models())
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
        else:
            self._send_json(404, error_body(404, f"unknown path {self.path}"))

    def do_POST(self) -> None:
        self.close_connection = True  # one request per connection, even if no reply is sent
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, error_body(404, f"unknown path {self.path}"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            request_json = json.loads(raw or b"null")
            if not isinstance(request_json, dict):
                raise ValueError("request body is not a JSON object")
        except ValueError as exc:
            self._send_json(400, error_body(400, f"request body is not valid JSON: {exc}"))
            return
        self.server.owner._handle_completion(self, path, request_json)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # a panel opens up to jurors x max_concurrency connections at once: socketserver's backlog of 5
    # overflowed, and a dropped SYN costs the client a 1 s retransmit (or a retry) on a busy machine
    request_queue_size = 128
    owner: FakeLLMServer


class FakeLLMServer:
    """Threaded OpenAI-compatible server on 127.0.0.1 (port 0 = any free port)."""

    def __init__(self, port: int = 0, *, latency_s: float = 0.0, default: Responder | None = None) -> None:
        self.latency_s = latency_s  # server-wide default delay before each reply
        self._default: Responder | None = default
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._responders: dict[str, Responder] = {}
        self._faults: dict[str, collections.deque[Reply]] = collections.defaultdict(collections.deque)
        self._requests: list[dict] = []
        self._in_flight: collections.Counter[str] = collections.Counter()
        self._max_in_flight: collections.Counter[str] = collections.Counter()
        self._in_flight_total = 0
        self._max_in_flight_total = 0
        self._httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            # stop() waits for the serve loop's next poll: 5 ms, not socketserver's 0.5 s (or 50 ms a
            # test, hundreds of times a run); an idle poll costs microseconds
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.005}, name="fakellm", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging or sleeping replies are cut short. Idempotent and quick."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---- scripting -------------------------------------------------------------------------
    def script(self, model: str, responder: Responder) -> None:
        """Answer every request for `model` (as the server sees it, without "openai/") with `responder`."""
        with self._lock:
            self._responders[model] = responder

    def set_default(self, responder: Responder | None) -> None:
        """Answer models that have no script with `responder` (None: 404 model-not-found again)."""
        with self._lock:
            self._default = responder

    def fail_next(self, model: str, replies: ReplyLike | Iterable[ReplyLike]) -> None:
        """Queue replies (Reply, str or dict) served, in order, before the model's responder is consulted."""
        items = [replies] if isinstance(replies, (Reply, str, dict)) else list(replies)
        with self._lock:
            self._faults[model].extend(_as_reply(r) for r in items)

    def scripted_models(self) -> list[str]:
        with self._lock:
            return list(self._responders)

    # ---- inspection ------------------------------------------------------------------------
    @property
    def requests(self) -> list[dict]:
        """A snapshot of every request so far (dicts: model, messages, response_format, params,
        timestamp, path, had_auth, status, source)."""
        with self._lock:
            return [dict(r) for r in self._requests]

    def calls(self, model: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self._requests if model is None or r["model"] == model)

    def max_in_flight(self, model: str | None = None) -> int:
        """The most requests (for `model`, or in all) that were being served at one moment."""
        with self._lock:
            return self._max_in_flight_total if model is None else self._max_in_flight[model]

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._faults.clear()
            self._max_in_flight.clear()
            self._max_in_flight_total = 0

    # ---- serving ---------------------------------------------------------------------------
    def _choose(self, model: str, request_json: dict) -> tuple[Reply | None, str]:
        with self._lock:
            queue = self._faults.get(model)
            if queue:
                return queue.popleft(), "fault"
            responder = self._responders.get(model)
            source = "script"
            if responder is None:
                responder, source = self._default, "default"
        if responder is None:
            return None, "unscripted"
        value = responder(request_json) if callable(responder) else responder
        return _as_reply(value), source

    def _handle_completion(self, handler: _Handler, path: str, request_json: dict) -> None:
        model = str(request_json.get("model", ""))
        entry = {
            "model": model,
            "messages": request_json.get("messages", []),
            "response_format": request_json.get("response_format"),
            "params": {k: v for k, v in request_json.items() if k not in ("model", "messages", "response_format")},
            "timestamp": time.time(),
            "monotonic": time.monotonic(),
            "path": path,
            "had_auth": bool(handler.headers.get("Authorization")),
            # a hash, never the header itself: tests can check which key was sent without storing it
            "auth_sha256": hashlib.sha256((handler.headers.get("Authorization") or "").encode()).hexdigest(),
            "status": None,
            "source": None,
        }
        with self._lock:
            self._requests.append(entry)
            self._in_flight[model] += 1
            self._in_flight_total += 1
            self._max_in_flight[model] = max(self._max_in_flight[model], self._in_flight[model])
            self._max_in_flight_total = max(self._max_in_flight_total, self._in_flight_total)
        try:
            try:
                reply, source = self._choose(model, request_json)
            except Exception as exc:  # a broken responder is a test bug: say so in a 500
                reply, source = Reply(status=500, error_message=f"responder raised {exc!r}"), "responder_error"
            with self._lock:
                entry["source"] = source
                entry["status"] = 404 if reply is None else reply.status
            if reply is None:
                handler._send_json(404, error_body(404, f"The model `{model}` does not exist (fake server: not scripted)"))
                return
            self._serve(handler, model, request_json, reply)
        finally:
            with self._lock:
                self._in_flight[model] -= 1
                self._in_flight_total -= 1

    def _serve(self, handler: _Handler, model: str, request_json: dict, reply: Reply) -> None:
        delay = self.latency_s if reply.latency_s is None else reply.latency_s
        if reply.hang:
            delay = max(delay, min(reply.hang_s, MAX_HANG_S))
        if delay > 0 and self._stop.wait(min(delay, MAX_HANG_S)):
            return  # server stopping: drop the reply
        headers = dict(reply.headers)
        if reply.retry_after is not None:
            ra = reply.retry_after
            headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        if reply.status >= 400:
            handler._send_json(reply.status, error_body(reply.status, reply.error_message), headers)
            return
        if reply.malformed_body:
            handler._send(reply.status, b"<html><body>502 upstream garbage {not json", headers)
            return
        prompt_text = "".join(_message_text(m) for m in request_json.get("messages") or [])
        body = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or model,
            "system_fingerprint": "fp_fakellm",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens(prompt_text),
                "completion_tokens": (
                    reply.completion_tokens if reply.completion_tokens is not None else estimate_tokens(reply.content)
                ),
            },
        }
        body["usage"]["total_tokens"] = body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        handler._send_json(reply.status, body, headers)


@pytest.fixture
def fake_llm():
    """A started FakeLLMServer, stopped after the test."""
    with FakeLLMServer() as server:
        yield server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server: every model answers one JSON ballot.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    parser.add_argument("--verdict", default="answer_1", help="verdict every ballot carries")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.port, latency_s=args.latency, default=ballot_reply(args.verdict))
    server.start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
