"""A minimal OpenAI-compatible chat-completions juror on loopback, for benchmarks only.

An asyncio server (asyncio.start_server, listen backlog 1024 by default) in its own thread
with its own event loop: HTTP/1.1 keep-alive, POST /v1/chat/completions (or
/chat/completions), every reply the same ballot JSON after `latency_s`, waited with
asyncio.sleep so thousands of requests wait at once at no CPU cost. No routing, no scripting,
no faults: tests use tests/support/fakellm.py; this one exists so that a throughput bench
measures the client, not a thread-per-connection server with a short listen queue.

>>> with LoopbackJuror(latency_s=0.0) as srv:
...     srv.base_url.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

VERDICT = {"reasoning": "Both answers were compared.", "verdict": "both"}


class LoopbackJuror:
    """Serve on 127.0.0.1 (a free port) from a background thread; counts calls and peak in flight."""

    def __init__(self, latency_s: float = 0.2, backlog: int = 1024, reply: dict[str, Any] | None = None) -> None:
        self.latency_s = latency_s
        self.backlog = backlog
        self.content = json.dumps(reply or VERDICT)
        self._calls = 0
        self._in_flight = 0
        self._peak = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def calls(self) -> int:
        return self._calls

    def max_in_flight(self) -> int:
        return self._peak

    def reset(self) -> None:
        with self._lock:
            self._calls = self._peak = 0

    def start(self) -> LoopbackJuror:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=self.backlog, reuse_address=True)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=run, name="loopback-juror", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            if self._loop.is_running():  # end the connections still open before the loop stops
                asyncio.run_coroutine_threadsafe(self._close_connections(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    async def _close_connections(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> LoopbackJuror:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _body(self, request: bytes) -> bytes:
        try:
            model = json.loads(request).get("model", "juror")
        except ValueError:
            model = "juror"
        return json.dumps(
            {
                "id": "chatcmpl-loopback",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": max(1, len(request) // 4),
                    "completion_tokens": 12,
                    "total_tokens": len(request) // 4 + 12,
                },
            }
        ).encode()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length") or 0))
                if method == "GET" and path == "/stats":  # for a client in another process
                    status, payload = "200 OK", json.dumps({"calls": self._calls, "peak": self._peak}).encode()
                elif method == "POST" and path == "/reset":
                    self.reset()
                    status, payload = "200 OK", b"{}"
                elif method != "POST" or path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    status, payload = "404 Not Found", b'{"error": {"message": "not found"}}'
                else:
                    with self._lock:
                        self._calls += 1
                        self._in_flight += 1
                        self._peak = max(self._peak, self._in_flight)
                    try:
                        await asyncio.sleep(self.latency_s)
                    finally:
                        with self._lock:
                            self._in_flight -= 1
                    status, payload = "200 OK", self._body(body)
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                    "Connection: keep-alive\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()


def serve_forever(latency_s: float, backlog: int, port_queue: Any) -> None:
    """Entry point of a separate server process: report the port, then serve until killed."""
    srv = LoopbackJuror(latency_s=latency_s, backlog=backlog).start()
    port_queue.put(srv.port)
    threading.Event().wait()
