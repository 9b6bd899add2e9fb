"""A loopback server speaking the providers' BATCH protocols (and chat completions), for tests.

OpenAI Files + Batches (what litellm's acreate_file / acreate_batch / aretrieve_batch /
afile_content send with api_base = server.base_url):

    POST {base}/files                    multipart upload (purpose=batch) -> file object
    POST {base}/batches                  {input_file_id, endpoint, completion_window} -> batch
    GET  {base}/batches/{id}             the batch: validating/in_progress -> completed | expired | failed
    GET  {base}/files/{id}/content       the input, output or error file (JSONL)

Anthropic Message Batches (api_base = server.root_url):

    POST {root}/v1/messages/batches          {"requests": [{custom_id, params}]} -> message_batch
    GET  {root}/v1/messages/batches/{id}     processing_status in_progress -> ended
    GET  {root}/v1/messages/batches/{id}/results   JSONL: succeeded | errored | expired per custom_id

Gemini's Batch API, input-file mode (api_base = server.root_url):

    POST {root}/upload/v1beta/files          resumable upload, start -> X-Goog-Upload-URL header
    POST {root}/upload/v1beta/files?upload_id=...   "upload, finalize": the bytes -> {"file": {"name": "files/..."}}
    POST {root}/v1beta/models/{model}:batchGenerateContent   {batch: {display_name, input_config: {file_name}}} -> operation
    GET  {root}/v1beta/batches/{id}          metadata.state BATCH_STATE_RUNNING -> SUCCEEDED | EXPIRED | CANCELLED | FAILED
    GET  {root}/download/v1beta/files/{id}:download?alt=media   JSONL: {"key", "response"} or {"key", "error"}

Each batch line is answered, when its batch ends, by the scripted responder of its model
(FakeLLMServer.script: a Reply, str, dict or callable(request) -> ...; an Anthropic or Gemini
request is seen as an OpenAI one: system and user messages with text content). Chat completions
({base}/chat/completions) are served as FakeLLMServer serves them (repair turns, synchronous
jurors). Knobs: `polls_before_end` (retrievals answered "in_progress" before a batch ends),
`fail_items` (custom_ids answered with an error), `expire_next` (the next batches to end
expire: only `expire_keep` of their lines are answered), `end_next` (how the next batches end:
"expired", "cancelled" (both answer `expire_keep` lines) or "failed" (OpenAI: the batch fails
validation, no file; Anthropic has no failed state)), and `tamper` (a hostile or broken
provider: `tamper(kind, batch, lines)` gets the result lines the server would write, kind
"output" / "error" (OpenAI's files), "results" (Anthropic's stream) or "responses" (Gemini's file), and returns the parts
to serve instead: a dict is one JSON line, bytes go out as they are, a Huge is streamed
without being built in memory), `file_headers` (extra headers on every file and results
response: Content-Encoding) and `get_faults` (the next GET matching a path gets a scripted
status, headers and body instead: a 404, a 500, a redirect, a batch object that is not one).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from tests.support.fakellm import FakeLLMServer, Reply, _as_reply, _Handler, _HTTPServer, _message_text, estimate_tokens


@dataclass
class Huge:
    """A part of `size` bytes served in chunks, never held whole: head, then `fill` repeated, then tail."""

    size: int
    head: bytes = b""
    tail: bytes = b"\n"
    fill: bytes = b"x"

    def chunks(self, chunk: int = 1 << 20):
        yield self.head
        left = self.size - len(self.head) - len(self.tail)
        block = self.fill * (chunk // len(self.fill))
        while left > 0:
            piece = block[: min(left, len(block))]
            yield piece
            left -= len(piece)
        yield self.tail


Part = dict | bytes | Huge


def _part_chunks(parts: list[Part]):
    for part in parts:
        if isinstance(part, Huge):
            yield from part.chunks()
        elif isinstance(part, bytes):
            yield part
        else:
            yield (json.dumps(part) + "\n").encode()


def _parts_size(parts: list[Part]) -> int:
    return sum(p.size if isinstance(p, Huge) else len(p) if isinstance(p, bytes) else len(json.dumps(p)) + 1 for p in parts)


def _completion_body(model: str, request: dict, reply: Reply) -> dict:
    prompt_text = "".join(_message_text(m) for m in request.get("messages") or [])
    pt = reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens(prompt_text)
    ct = reply.completion_tokens if reply.completion_tokens is not None else estimate_tokens(reply.content)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": None},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


def _anthropic_as_openai(params: dict) -> dict:
    """An Anthropic Messages request as the OpenAI request a responder expects to see."""

    def text(content: Any) -> str:
        if isinstance(content, str):
            return content
        return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))

    messages = []
    if params.get("system"):
        messages.append({"role": "system", "content": text(params["system"])})
    messages += [{"role": m["role"], "content": text(m.get("content"))} for m in params.get("messages") or []]
    return {**{k: v for k, v in params.items() if k not in ("messages", "system")}, "messages": messages}


def _gemini_as_openai(request: dict) -> dict:
    """A GenerateContentRequest as the OpenAI request a responder expects to see."""

    def text(content: Any) -> str:
        return "".join(p.get("text", "") for p in (content or {}).get("parts") or [] if isinstance(p, dict))

    messages = []
    system = request.get("system_instruction") or request.get("systemInstruction")
    if system:
        messages.append({"role": "system", "content": text(system)})
    for c in request.get("contents") or []:
        messages.append({"role": "assistant" if c.get("role") == "model" else "user", "content": text(c)})
    return {"messages": messages, "generationConfig": request.get("generationConfig") or {}}


class _BatchHandler(_Handler):
    server: _HTTPServer

    def _send_parts(self, parts: list[Part], content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(_parts_size(parts)))
            self.send_header("Connection", "close")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            for chunk in _part_chunks(parts):
                self.wfile.write(chunk)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            pass  # the client stopped reading
        self.close_connection = True

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def do_GET(self) -> None:
        self.close_connection = True
        path = self.path.split("?", 1)[0].rstrip("/")
        owner: BatchServer = self.server.owner  # type: ignore[assignment]
        parts = path.strip("/").split("/")
        with owner._lock:
            fault = next((f for f in owner.get_faults if f[0](path)), None)
            if fault is not None:
                owner.get_faults.remove(fault)
        if fault is not None:
            _match, status, headers, body = fault
            self._send(status, body, headers)
            return
        if path.startswith("/v1beta/batches/"):
            view = owner._gemini_retrieve(parts[2])
            self._send_json(200, view) if view else self._send_json(404, {"error": {"code": 404, "message": "no batch"}})
            return
        if path.startswith("/download/v1beta/files/") and path.endswith(":download"):
            fid = "files/" + parts[3].removesuffix(":download")
            with owner._lock:
                content = owner.files.get(fid)
                owner.content_reads.append(fid)
            if content is None:
                self._send_json(404, {"error": {"code": 404, "message": "no file"}})
                return
            self._send_parts(content if isinstance(content, list) else [content], "application/octet-stream", owner.file_headers)
            return
        if path.startswith("/v1/messages/batches/"):
            rest = parts[3:]
            if len(rest) == 2 and rest[1] == "results":
                content = owner._anthropic_results(rest[0])
                with owner._lock:
                    owner.content_reads.append(path)
                if content is None:
                    self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no results"}})
                    return
                self._send_parts(content, "application/x-jsonl", owner.file_headers)
                return
            batch = owner._anthropic_retrieve(rest[0])
            if batch is None:
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no batch"}})
                return
            self._send_json(200, batch)
            return
        if len(parts) >= 3 and parts[0] == "v1" and parts[1] == "batches":
            batch = owner._openai_retrieve(parts[2])
            self._send_json(200, batch) if batch else self._send_json(404, {"error": {"message": "no batch"}})
            return
        if len(parts) == 4 and parts[0] == "v1" and parts[1] == "files" and parts[3] == "content":
            with owner._lock:
                content = owner.files.get(parts[2])
                owner.content_reads.append(parts[2])
            if content is None:
                self._send_json(404, {"error": {"message": "no file"}})
                return
            self._send_parts(content if isinstance(content, list) else [content], "application/octet-stream", owner.file_headers)
            return
        super().do_GET()

    def do_POST(self) -> None:
        self.close_connection = True
        path = self.path.split("?", 1)[0].rstrip("/")
        owner: BatchServer = self.server.owner  # type: ignore[assignment]
        if path == "/v1/files":
            raw = self._body()
            head = f"Content-Type: {self.headers.get('Content-Type')}\r\n\r\n".encode()
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
            content = b""
            for part in msg.iter_parts():
                if part.get_param("name", header="content-disposition") == "file":
                    content = part.get_payload(decode=True) or b""
            self._send_json(200, owner._openai_file(content))
            return
        if path == "/v1/batches":
            body = json.loads(self._body() or b"{}")
            self._send_json(200, owner._openai_create(body))
            return
        if path == "/upload/v1beta/files":
            raw = self._body()
            owner.gemini_headers.append({k.lower(): v for k, v in self.headers.items() if k.lower() != "x-goog-api-key"})
            if self.headers.get("X-Goog-Upload-Command") == "start":
                upload = uuid.uuid4().hex[:16]
                url = f"{owner.upload_root or owner.root_url}/upload/v1beta/files?upload_id={upload}&upload_protocol=resumable"
                self._send_json(200, {}, {"X-Goog-Upload-URL": url, "X-Goog-Upload-Status": "active"})
                return
            self._send_json(200, {"file": owner._gemini_file(raw)})
            return
        if path.startswith("/v1beta/models/") and path.endswith(":batchGenerateContent"):
            model = path.removeprefix("/v1beta/models/").removesuffix(":batchGenerateContent")
            body = json.loads(self._body() or b"{}")
            owner.gemini_headers.append({k.lower(): v for k, v in self.headers.items() if k.lower() != "x-goog-api-key"})
            self._send_json(200, owner._gemini_create(model, body))
            return
        if path == "/v1/messages/batches":
            body = json.loads(self._body() or b"{}")
            owner.anthropic_headers.append({k.lower(): v for k, v in self.headers.items() if k.lower() != "x-api-key"})
            self._send_json(200, owner._anthropic_create(body))
            return
        super().do_POST()


class BatchServer(FakeLLMServer):
    """FakeLLMServer plus the OpenAI Files + Batches and Anthropic Message Batches protocols."""

    def __init__(self, port: int = 0, **kwargs: Any) -> None:
        super().__init__(port, **kwargs)
        self._httpd.server_close()
        self._httpd = _HTTPServer(("127.0.0.1", port), _BatchHandler)
        self._httpd.owner = self
        self.files: dict[str, bytes | list[Part]] = {}
        self.batches: dict[str, dict] = {}  # id -> {"protocol", "lines", "polls", "state", ...}
        self.polls_before_end = 0
        self.fail_items: set[str] = set()  # custom_ids answered with an error
        self.expire_next = 0  # how many of the next batches to end expire
        self.expire_keep = 0  # lines an expiring (or cancelled) batch still answers
        self.end_next: list[str] = []  # how the next batches to end end: expired | cancelled | failed
        self.tamper: Any = None  # tamper(kind, batch, lines) -> parts served instead (see the module's doc)
        self.file_headers: dict[str, str] = {}  # extra headers on every file and results response
        self.content_reads: list[str] = []  # the file ids and results urls read, in order
        # (match(path), status, headers, body): the next GET whose path matches gets this answer instead
        self.get_faults: list[tuple[Any, int, dict[str, str], bytes]] = []
        self.anthropic_headers: list[dict] = []
        self.gemini_headers: list[dict] = []  # the headers of every Gemini upload and create request (no key)
        self.upload_root: str | None = None  # where the Files API's upload URL points (default: this server)
        self.poll_delay_s = 0.0  # a retrieval waits this long before answering (a process to kill meanwhile)

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- inspection ------------------------------------------------------------------------
    def submitted(self, protocol: str | None = None) -> list[str]:
        """custom_ids of every batch line received, in order (a resubmission shows twice)."""
        with self._lock:
            return [
                line["custom_id"]
                for b in self.batches.values()
                if protocol is None or b["protocol"] == protocol
                for line in b["lines"]
            ]

    def submitted_requests(self, protocol: str | None = None) -> list[str]:
        """The request of every batch line received (canonical JSON), in order: a ballot sent
        again (under its new batch's custom_id) shows the same request twice."""
        with self._lock:
            return [
                json.dumps(line["request"], sort_keys=True)
                for b in self.batches.values()
                if protocol is None or b["protocol"] == protocol
                for line in b["lines"]
            ]

    def batch_sizes(self, protocol: str | None = None) -> list[int]:
        with self._lock:
            return [len(b["lines"]) for b in self.batches.values() if protocol is None or b["protocol"] == protocol]

    # ---- answering -------------------------------------------------------------------------
    def _answer(self, model: str, request: dict) -> Reply:
        reply, _source = self._choose(model, request)
        if reply is None:
            return Reply(status=404, error_message=f"The model `{model}` does not exist")
        return _as_reply(reply)

    def _end(self, b: dict) -> None:
        """Answer a batch's lines (once): b["results"] = custom_id -> (Reply | None, request)."""
        with self._lock:
            end = self.end_next.pop(0) if self.end_next else None
            if end is None and self.expire_next > 0:
                self.expire_next -= 1
                end = "expired"
            keep = 0 if end == "failed" else self.expire_keep
        results = {}
        for i, line in enumerate(b["lines"]):
            cid = line["custom_id"]
            if end is not None and i >= keep:
                results[cid] = (end, None, None)
            elif cid in self.fail_items:
                results[cid] = ("errored", None, None)
            else:
                request = line["request"]
                results[cid] = ("ok", self._answer(line["model"], request), request)
        b["results"] = results
        b["state"] = end or "ended"
        b["ended_at"] = time.time()

    def _poll(self, batch_id: str) -> dict | None:
        if self.poll_delay_s and self._stop.wait(self.poll_delay_s):
            return None
        with self._lock:
            b = self.batches.get(batch_id)
            if b is None:
                return None
            b["retrievals"] += 1
            due = b["state"] == "in_progress" and b["retrievals"] > self.polls_before_end
        if due:
            self._end(b)
        return b

    # ---- OpenAI ----------------------------------------------------------------------------
    def _openai_file(self, content: bytes | list[Part]) -> dict:
        fid = f"file-{uuid.uuid4().hex[:20]}"
        with self._lock:
            self.files[fid] = content
        return {
            "id": fid,
            "object": "file",
            "bytes": len(content) if isinstance(content, bytes) else _parts_size(content),
            "created_at": int(time.time()),
            "filename": "batch.jsonl",
            "purpose": "batch",
            "status": "processed",
        }

    def _openai_create(self, body: dict) -> dict:
        with self._lock:
            content = self.files[body["input_file_id"]]
        lines = []
        for raw in content.decode().splitlines():
            if raw.strip():
                item = json.loads(raw)
                lines.append({"custom_id": item["custom_id"], "model": item["body"]["model"], "request": item["body"]})
        bid = f"batch_{uuid.uuid4().hex[:20]}"
        b = {"protocol": "openai", "id": bid, "lines": lines, "state": "in_progress", "retrievals": 0, "body": body}
        b["created_at"] = time.time()
        with self._lock:
            self.batches[bid] = b
        return self._openai_view(b)

    def _openai_view(self, b: dict) -> dict:
        status = {"in_progress": "in_progress", "ended": "completed", "expired": "expired", "cancelled": "cancelled"}.get(
            b["state"], b["state"]
        )
        out_id = err_id = None
        done = failed = 0
        if "results" in b:
            out, err = [], []
            for cid, (kind, reply, request) in b["results"].items():
                if kind in ("cancelled", "failed"):
                    continue  # a cancelled batch leaves out what it never ran; a failed one ran nothing
                if kind == "ok" and reply is not None and reply.status < 400:
                    done += 1
                    body = _completion_body(request["model"], request, reply)
                    out.append(
                        {"id": f"req_{cid[:8]}", "custom_id": cid, "response": {"status_code": 200, "body": body}, "error": None}
                    )
                else:
                    failed += 1
                    code = "batch_expired" if kind == "expired" else "server_error"
                    err.append(
                        {
                            "id": f"req_{cid[:8]}",
                            "custom_id": cid,
                            "response": None,
                            "error": {"code": code, "message": f"fake {code}"},
                        }
                    )
            if "out_id" not in b:
                out_parts = self.tamper("output", b, out) if self.tamper else out
                err_parts = self.tamper("error", b, err) if self.tamper else err
                b["out_id"] = self._openai_file(out_parts)["id"] if out_parts else None
                b["err_id"] = self._openai_file(err_parts)["id"] if err_parts else None
            out_id, err_id = b["out_id"], b["err_id"]
        return {
            "id": b["id"],
            "object": "batch",
            "endpoint": b["body"].get("endpoint", "/v1/chat/completions"),
            "errors": {"object": "list", "data": [{"code": "invalid_request", "message": "fake validation failure", "line": 1}]}
            if b["state"] == "failed"
            else None,
            "input_file_id": b["body"]["input_file_id"],
            "completion_window": b["body"].get("completion_window", "24h"),
            "status": status,
            "output_file_id": out_id,
            "error_file_id": err_id,
            "created_at": int(b["created_at"]),
            "request_counts": {"total": len(b["lines"]), "completed": done, "failed": failed},
            "metadata": b["body"].get("metadata"),
        }

    def _openai_retrieve(self, batch_id: str) -> dict | None:
        b = self._poll(batch_id)
        return None if b is None or b["protocol"] != "openai" else self._openai_view(b)

    # ---- Gemini ----------------------------------------------------------------------------
    def _gemini_file(self, content: bytes | list[Part]) -> dict:
        fid = f"files/{uuid.uuid4().hex[:16]}"
        with self._lock:
            self.files[fid] = content
        size = len(content) if isinstance(content, bytes) else _parts_size(content)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        return {"name": fid, "mimeType": "application/jsonl", "sizeBytes": str(size), "createTime": stamp, "state": "ACTIVE"}

    def _gemini_create(self, model: str, body: dict) -> dict:
        name = body["batch"]["input_config"]["file_name"]
        with self._lock:
            content = self.files[name]
        lines = []
        for raw in content.decode().splitlines():
            if raw.strip():
                item = json.loads(raw)
                request = item["request"]
                lines.append({"custom_id": item["key"], "model": model, "request": _gemini_as_openai(request), "native": request})
        bid = uuid.uuid4().hex[:20]
        b = {"protocol": "gemini", "id": bid, "lines": lines, "state": "in_progress", "retrievals": 0, "body": body}
        b["model"], b["created_at"] = model, time.time()
        with self._lock:
            self.batches[bid] = b
        return self._gemini_view(b)

    def _gemini_view(self, b: dict) -> dict:
        state = {"in_progress": "RUNNING", "ended": "SUCCEEDED", "expired": "EXPIRED", "cancelled": "CANCELLED"}.get(
            b["state"], "FAILED"
        )
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b["created_at"]))
        meta = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{b['model']}",
            "displayName": b["body"]["batch"].get("display_name"),
            "inputConfig": {"fileName": b["body"]["batch"]["input_config"]["file_name"]},
            "createTime": stamp,
            "state": f"BATCH_STATE_{state}",
            "batchStats": {"requestCount": str(len(b["lines"]))},
        }
        view: dict = {"name": f"batches/{b['id']}", "metadata": meta, "done": b["state"] != "in_progress"}
        if b["state"] == "failed":
            view["error"] = {"code": 3, "message": "fake validation failure"}
        elif "results" in b:
            if "responses_file" not in b:
                parts = self._gemini_lines(b)
                b["responses_file"] = self._gemini_file(parts)["name"] if parts else None
            if b["responses_file"]:
                meta["output"] = {"responsesFile": b["responses_file"]}
                view["response"] = {
                    "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
                    "responsesFile": b["responses_file"],
                }
        return view

    def _gemini_lines(self, b: dict) -> list[Part]:
        out: list[Part] = []
        for cid, (kind, reply, request) in b["results"].items():
            if kind == "cancelled":
                continue  # never ran
            if kind != "ok" or reply is None or reply.status >= 400:
                message = "fake expired" if kind == "expired" else "fake error"
                out.append({"key": cid, "error": {"code": 13, "message": message, "status": "INTERNAL"}})
                continue
            usage = _completion_body(b["model"], request, reply)["usage"]
            response = {
                "candidates": [
                    {
                        "content": {"parts": [{"text": reply.content}], "role": "model"},
                        "finishReason": "STOP" if reply.finish_reason == "stop" else "MAX_TOKENS",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": usage["prompt_tokens"],
                    "candidatesTokenCount": usage["completion_tokens"],
                    "totalTokenCount": usage["total_tokens"],
                },
                "modelVersion": reply.model or b["model"],
                "responseId": uuid.uuid4().hex[:20],
            }
            out.append({"key": cid, "response": response})
        return self.tamper("responses", b, out) if self.tamper else out

    def _gemini_retrieve(self, batch_id: str) -> dict | None:
        b = self._poll(batch_id)
        return None if b is None or b["protocol"] != "gemini" else self._gemini_view(b)

    # ---- Anthropic -------------------------------------------------------------------------
    def _anthropic_create(self, body: dict) -> dict:
        lines = [
            {"custom_id": r["custom_id"], "model": r["params"]["model"], "request": _anthropic_as_openai(r["params"])}
            for r in body.get("requests", [])
        ]
        bid = f"msgbatch_{uuid.uuid4().hex[:20]}"
        b = {"protocol": "anthropic", "id": bid, "lines": lines, "state": "in_progress", "retrievals": 0, "body": body}
        b["created_at"] = time.time()
        with self._lock:
            self.batches[bid] = b
        return self._anthropic_view(b)

    def _anthropic_view(self, b: dict) -> dict:
        iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t else None  # noqa: E731
        counts = {"processing": len(b["lines"]), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if "results" in b:
            counts["processing"] = 0
            for kind, reply, _ in b["results"].values():
                key = (
                    "expired"
                    if kind == "expired"
                    else "canceled"
                    if kind == "cancelled"
                    else "succeeded"
                    if kind == "ok" and reply.status < 400
                    else "errored"
                )
                counts[key] += 1
        ended = b["state"] != "in_progress"
        return {
            "id": b["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "ended_at": iso(b.get("ended_at")),
            "created_at": iso(b["created_at"]),
            "expires_at": iso(b["created_at"] + 86400),
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.root_url}/v1/messages/batches/{b['id']}/results" if ended else None,
        }

    def _anthropic_retrieve(self, batch_id: str) -> dict | None:
        b = self._poll(batch_id)
        return None if b is None or b["protocol"] != "anthropic" else self._anthropic_view(b)

    def _anthropic_results(self, batch_id: str) -> list[Part] | None:
        with self._lock:
            b = self.batches.get(batch_id)
        if b is None or "results" not in b:
            return None
        if "served" in b:
            return b["served"]
        out: list[Part] = []
        for cid, (kind, reply, request) in b["results"].items():
            if kind == "expired":
                result: dict = {"type": "expired"}
            elif kind == "cancelled":
                result = {"type": "canceled"}
            elif kind != "ok" or reply is None or reply.status >= 400:
                result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": "fake error"}}}
            else:
                body = _completion_body(request["model"], request, reply)
                result = {
                    "type": "succeeded",
                    "message": {
                        "id": f"msg_{uuid.uuid4().hex[:20]}",
                        "type": "message",
                        "role": "assistant",
                        "model": request["model"],
                        "content": [{"type": "text", "text": reply.content}],
                        "stop_reason": "end_turn" if reply.finish_reason == "stop" else "max_tokens",
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": body["usage"]["prompt_tokens"],
                            "output_tokens": body["usage"]["completion_tokens"],
                        },
                    },
                }
            out.append({"custom_id": cid, "result": result})
        b["served"] = self.tamper("results", b, out) if self.tamper else out  # the same stream at every read
        return b["served"]


def serve_forever(port: int = 0) -> None:  # pragma: no cover - a manual aid
    server = BatchServer(port)
    server.set_default(Reply(content=json.dumps({"reasoning": "r", "verdict": "answer_1"})))
    server.start()
    print(server.base_url, flush=True)
    threading.Event().wait()
