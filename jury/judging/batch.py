"""Ballots through the providers' batch APIs (--batch, or `batch = true` on a juror).

Ballots are built as always (same request hash, order, template); only the transport
differs. For each batch-capable juror the ballots without a vote, a collected reply or an
open batch are claimed (the store's claims: one process submits a ballot), recorded in the
store with a batch id of jury's own (``batches``, ``batch_items``) and only then sent, each
under a ``custom_id`` bound to that batch (jury.judging.batch_results.custom_id_of):

- OpenAI (``openai/...``): the Files and Batches API through litellm (``acreate_file`` with
  purpose ``batch``, a JSONL line per ballot, ``acreate_batch`` on ``/v1/chat/completions``).
- Anthropic (``anthropic/...``): Message Batches. litellm 1.110 cannot create one, so the
  batch is created through Anthropic's documented HTTP API (``POST /v1/messages/batches``,
  httpx), each request's ``params`` being what litellm's AnthropicConfig makes of the
  synchronous request.
- Gemini (``gemini/...``, Google AI Studio): the Batch API's input file, through Google's
  documented HTTP API (httpx): the JSONL (a ``{"key", "request"}`` line per ballot, the
  request being the GenerateContentRequest litellm's transform_request_body makes of the
  synchronous request) uploaded with the Files API's resumable upload
  (``POST /upload/v1beta/files``), then ``POST /v1beta/models/{model}:batchGenerateContent``
  with ``input_config.file_name``. Not through litellm: its Gemini batches send OpenAI-shaped
  lines, a format Google's batch documentation does not describe; and a file, not inline
  requests, so that the results come as a file read in bounded memory, not inside the batch
  object.

Both are polled and read by jury, not litellm (whose ``aretrieve_batch`` downloads the whole
output file for its cost logging): the batch object with read_json, the output and error
files (``/files/{id}/content``), the results stream (``/v1/messages/batches/{id}/results``)
or Gemini's responses file (``/download/v1beta/files/{id}:download``) with stream_lines, every line through jury's JSON reader and one validation
(jury.judging.batch_results.Collected). Every run (and `jury batch collect`) first polls the
open batches and stores the replies of those that ended; the runner then turns each reply
into a vote through JurorPool.call with the reply given (litellm's conversion of a
synchronous response, the same parsing, repair turn sent synchronously, abstentions,
for_store). A ballot still in an open batch is pending (the run exits 3, naming the
batches); a failed item, a reply that cannot be read, or a batch that expired, failed or was
cancelled leaves its ballots without a vote, and the next run submits only those again.
Large submissions are split at the providers' limits (requests and bytes).
"""

from __future__ import annotations

import asyncio
import calendar
import json
import os
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from jury.judging.ballots import make_parser, reply_schema
from jury.judging.batch_poll import ANTHROPIC_BASE, ANTHROPIC_VERSION, gemini_where, poll
from jury.judging.batch_results import ResultsUnreadable, custom_id_of, same_origin
from jury.judging.juror import LOCAL_PLACEHOLDER_KEY, CallResult, JurorSpec, batch_provider
from jury.judging.redaction import clean, secrets_of

if TYPE_CHECKING:
    from jury.execution.store import Store
    from jury.judging.plan import Ballot
    from jury.judging.providers.pool import JurorPool

# Provider limits on one batch: requests and input bytes (OpenAI: 50,000 requests, a 200 MB
# file; Anthropic: 100,000 requests, 256 MB; Gemini: a Files API file is at most 2 GB and no
# request count is documented, so jury keeps to 50,000 requests and 1 GB). A larger
# submission becomes several batches.
LIMITS: dict[str, tuple[int, int]] = {
    "openai": (50_000, 200 * 1024 * 1024),
    "anthropic": (100_000, 256 * 1024 * 1024),
    "gemini": (50_000, 1024 * 1024 * 1024),
}
REPLIES_AT_ONCE = 4  # collected replies (each up to the reply cap) turned into votes at once
SUBMIT_LEASE_S = 600.0  # the claim a submitting process holds on its ballots
STALE_SUBMIT_S = 3600.0  # a batch left "submitting" this long by a live-looking holder elsewhere is lost


def _bare(model: str) -> str:
    return model.split("/", 1)[1] if "/" in model else model


def _api_key(juror_name: str, api_key_env: str | None, api_base: str | None) -> str | None:
    if api_key_env:
        return os.environ.get(api_key_env) or None
    return LOCAL_PLACEHOLDER_KEY if api_base else None


def _litellm() -> Any:  # the litellm module (import_litellm's lazy import): untyped to mypy
    from jury.judging.providers.setup import import_litellm

    return import_litellm()


# ------------------------------------------------------------------------------------------
# Request lines
# ------------------------------------------------------------------------------------------


def openai_line(ballot: Ballot) -> dict[str, Any]:
    from jury.judging.providers.params import completion_kwargs

    body = completion_kwargs(ballot.juror, ballot.messages, reply_schema(ballot.style, ballot.taxonomy))
    body["model"] = _bare(ballot.juror.model)
    body.update(body.pop("extra_body", None) or {})
    return {"custom_id": ballot.request_sha256, "method": "POST", "url": "/v1/chat/completions", "body": body}


def anthropic_request(ballot: Ballot) -> dict[str, Any]:
    """The Message Batches request of a ballot: `params` as litellm makes them for the
    synchronous request (system prompt, max_tokens, temperature, output_format)."""
    from jury.judging.providers.params import completion_kwargs

    litellm = _litellm()
    kwargs = completion_kwargs(ballot.juror, ballot.messages, reply_schema(ballot.style, ballot.taxonomy))
    model, messages = _bare(kwargs.pop("model")), kwargs.pop("messages")
    config = litellm.AnthropicConfig()
    optional = config.map_openai_params(non_default_params=kwargs, optional_params={}, model=model, drop_params=False)
    params = config.transform_request(
        model=model, messages=[dict(m) for m in messages], optional_params=optional, litellm_params={}, headers={}
    )
    params.pop("json_mode", None)  # litellm's own marker, not a Messages API field
    params["model"] = model
    return {"custom_id": ballot.request_sha256, "params": params}


def gemini_request(ballot: Ballot) -> dict[str, Any]:
    """A ballot's line of a Gemini batch before its key is bound (``custom_id``: the request
    hash; sent as ``key``): ``request`` is the GenerateContentRequest litellm makes of the
    synchronous request (GoogleAIStudioGeminiConfig.map_openai_params, then
    transform_request_body: system_instruction, contents, generationConfig with the
    temperature, maxOutputTokens and the reply's JSON schema)."""
    from jury.judging.providers.params import completion_kwargs

    litellm = _litellm()
    kwargs = completion_kwargs(ballot.juror, ballot.messages, reply_schema(ballot.style, ballot.taxonomy))
    model, messages = _bare(kwargs.pop("model")), kwargs.pop("messages")
    extra = kwargs.pop("extra_body", None) or {}
    config = litellm.GoogleAIStudioGeminiConfig()  # loads the Gemini transformation modules
    optional = config.map_openai_params(non_default_params=kwargs, optional_params={}, model=model, drop_params=False)
    plain: Any = [dict(m) for m in messages]
    request = litellm.llms.vertex_ai.gemini.transformation.transform_request_body(
        messages=plain,
        model=model,
        optional_params={**optional, **extra},
        custom_llm_provider="gemini",
        litellm_params={},
        cached_content=None,
    )
    return {"custom_id": ballot.request_sha256, "request": dict(request)}


def split(lines: list[dict[str, Any]], provider: str) -> list[list[dict[str, Any]]]:
    """Lines cut into batches within the provider's request and byte limits."""
    max_n, max_bytes = LIMITS[provider]
    out: list[list[dict[str, Any]]] = []
    cur: list[dict[str, Any]] = []
    size = 0
    for line in lines:
        n = len(json.dumps(line).encode()) + 1
        if cur and (len(cur) >= max_n or size + n > max_bytes):
            out.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += n
    if cur:
        out.append(cur)
    return out


# ------------------------------------------------------------------------------------------
# Provider calls
# ------------------------------------------------------------------------------------------


async def _submit_openai(
    lines: list[dict[str, Any]], batch_id: str, api_base: str | None, api_key: str | None
) -> tuple[str, str]:
    litellm = _litellm()
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    uploaded = await litellm.acreate_file(
        file=(f"jury-{batch_id}.jsonl", data), purpose="batch", custom_llm_provider="openai", api_base=api_base, api_key=api_key
    )
    created = await litellm.acreate_batch(
        completion_window="24h",
        endpoint="/v1/chat/completions",
        input_file_id=uploaded.id,
        custom_llm_provider="openai",
        metadata={"jury_batch": batch_id},
        api_base=api_base,
        api_key=api_key,
    )
    return created.id, uploaded.id


_GEMINI_FILE = r"files/[A-Za-z0-9_-]{1,200}"
_GEMINI_BATCH = r"batches/[A-Za-z0-9_-]{1,200}"


async def _submit_gemini(
    lines: list[dict[str, Any]], model: str, batch_id: str, api_base: str | None, api_key: str | None
) -> tuple[str, str]:
    """(the batch's id, the input file's name): the JSONL uploaded (the Files API's resumable
    upload: a start request, then the bytes to the upload URL it answers, which must be on
    the API root's own host: the key goes nowhere else), then the batch created on it."""

    import httpx

    root, headers = gemini_where(api_base, api_key)
    data = "".join(
        json.dumps({"key": line["custom_id"], "request": line["request"]}, ensure_ascii=False) + "\n" for line in lines
    ).encode()
    start_headers = {
        **headers,
        "X-Goog-Upload-Protocol": "resumable",
        "X-Goog-Upload-Command": "start",
        "X-Goog-Upload-Header-Content-Length": str(len(data)),
        "X-Goog-Upload-Header-Content-Type": "application/jsonl",
    }
    async with httpx.AsyncClient(timeout=120, follow_redirects=False) as client:
        started = await client.post(
            f"{root}/upload/v1beta/files", headers=start_headers, json={"file": {"display_name": f"jury-{batch_id}"}}
        )
        started.raise_for_status()
        upload_url = started.headers.get("x-goog-upload-url")
        if not upload_url:
            raise RuntimeError("the Files API answered no upload URL")
        target = httpx.URL(root).join(upload_url)
        if not same_origin(target, httpx.URL(root)):
            raise RuntimeError(f"the Files API's upload URL is on another host ({target.host}); not sent there")
        upload_headers = {**headers, "X-Goog-Upload-Offset": "0", "X-Goog-Upload-Command": "upload, finalize"}
        uploaded = await client.post(target, headers=upload_headers, content=data)
        uploaded.raise_for_status()
        file_name = (uploaded.json().get("file") or {}).get("name")
        if not isinstance(file_name, str) or not re.fullmatch(_GEMINI_FILE, file_name):
            raise RuntimeError("the Files API answered no file name of the form files/<id>")
        body = {"batch": {"display_name": f"jury-{batch_id}", "input_config": {"file_name": file_name}}}
        created = await client.post(
            f"{root}/v1beta/models/{quote(model, safe='')}:batchGenerateContent", headers=headers, json=body
        )
        created.raise_for_status()
        name = created.json().get("name")
        if not isinstance(name, str) or not re.fullmatch(_GEMINI_BATCH, name):
            raise RuntimeError("the Batch API answered no batch name of the form batches/<id>")
        return name.removeprefix("batches/"), file_name


async def _submit_anthropic(lines: list[dict[str, Any]], api_base: str | None, api_key: str | None) -> str:
    import httpx

    headers = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
    if api_key:
        headers["x-api-key"] = api_key
    if any("output_format" in line["params"] for line in lines):
        headers["anthropic-beta"] = "structured-outputs-2025-11-13"
    url = (api_base or ANTHROPIC_BASE).rstrip("/") + "/v1/messages/batches"
    async with httpx.AsyncClient(timeout=120) as client:
        response = await client.post(url, headers=headers, json={"requests": lines})
        response.raise_for_status()
        return str(response.json()["id"])


# ------------------------------------------------------------------------------------------
# Collecting (any run, `jury batch collect`)
# ------------------------------------------------------------------------------------------


def _epoch(iso: str) -> float:

    return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")))


def _holder_gone(holder: str | None) -> bool:
    from jury.execution.store import holder_is_dead

    return bool(holder) and holder_is_dead(str(holder))


def _settle_submitting(store: Store, batch: dict[str, Any], holder: str | None, finished: set[str] | None) -> None:
    """A batch another process was submitting: lost (its ballots go again) when that process is
    gone or the submission is stale, else left to it."""

    if batch["holder"] == holder:
        return
    created = _epoch(batch["created_at"])
    if _holder_gone(batch["holder"]) or time.time() - created > STALE_SUBMIT_S:
        store.finish_batch(batch["id"], "lost", error="the submitting process stopped before the provider's id was stored")
        if finished is not None:
            finished.add(batch["id"])


async def collect(
    store: Store, *, jurors: Iterable[str] | None = None, holder: str | None = None, finished: set[str] | None = None
) -> list[str]:
    """Poll every open batch (of `jurors`, or all) and store the replies of those that ended
    (their ids added to `finished`). Returns one line per batch that could not be polled (no
    key, provider unreachable)."""
    from jury.execution.batch_store import OPEN_STATES

    wanted = None if jurors is None else set(jurors)
    problems: list[str] = []
    for batch in store.batches(OPEN_STATES):
        if wanted is not None and batch["juror"] not in wanted:
            continue
        if batch["state"] == "submitting":
            _settle_submitting(store, batch, holder, finished)
            continue
        key = _api_key(batch["juror"], batch["api_key_env"], batch["api_base"])
        if batch["api_key_env"] and key is None:
            problems.append(f"batch {batch['provider_batch_id']} ({batch['juror']}): {batch['api_key_env']} is not set")
            continue
        where = f"batch {batch['provider_batch_id']} ({batch['juror']})"
        try:
            state, collected, fields = await poll(batch, key, store)
        except ResultsUnreadable as exc:  # it ended, but what it sent cannot be read: its ballots go again
            why = clean(str(exc), [key] if key else [], 200)
            store.finish_batch(batch["id"], "failed", missing=why, error=why)
            problems.append(f"{where}: {why}; its ballots are submitted again")
            if finished is not None:
                finished.add(batch["id"])
            continue
        except Exception as exc:  # the provider cannot be asked now: the batch stays open
            problems.append(f"{where}: cannot poll: {clean(str(exc), [key] if key else [], 200)}")
            continue
        if collected is None:
            continue
        with collected:
            note = collected.note()
            missing = f"no result in the {state} batch" + (f" ({fields['error']})" if fields.get("error") else "")
            if note:
                fields["error"] = "; ".join(x for x in (fields.get("error"), note) if x)
                problems.append(f"{where}: {note}")
            store.finish_batch(
                batch["id"],
                state,
                answers=collected.answers(),
                failures=collected.failed,
                unusable=collected.unusable,
                missing=missing,
                **fields,
            )
        if finished is not None:
            finished.add(batch["id"])
    return problems


# ------------------------------------------------------------------------------------------
# A run's batches
# ------------------------------------------------------------------------------------------


class CostCap(Protocol):
    """What submitting reads of a run's cost cap (jury.judging.runner.CostGuard)."""

    @property
    def cap(self) -> float | None: ...
    def reserve(self, estimate: float) -> bool: ...
    def settle(self, estimate: float, actual: float) -> None: ...


@dataclass
class Pending:
    """A ballot with no vote yet: waiting in a batch (pending), failed there (failed), or not sent (cap)."""

    kind: str  # pending | failed | capped
    why: str
    where: str = ""  # the provider's batch id (pending)


@dataclass
class BatchSession:
    store: Store
    holder: str
    every_juror: bool  # --batch: every batch-capable juror; else only jurors with batch = true
    submitted: int = 0  # ballots submitted by this run
    batches_made: int = 0
    capped: set[str] = field(default_factory=set)
    elsewhere: set[str] = field(default_factory=set)  # being submitted by another process
    problems: list[str] = field(default_factory=list)
    # collected replies read and turned into votes at once: each may be up to the reply cap
    replies: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(REPLIES_AT_ONCE))

    def handles(self, juror: JurorSpec) -> bool:
        return batch_provider(juror) is not None and (self.every_juror or juror.batch)

    async def prepare(self, ballots: list[Ballot], guard: CostCap) -> None:
        """Collect what ended, then submit every ballot of a batch juror that has no vote, no
        collected reply and no open batch. Ballots are claimed while they are recorded and
        sent: another process sees them in a batch, or waits for the claim."""
        from jury.execution.store import CLAIM_LEASE_S

        jurors = {b.juror.name for b in ballots if self.handles(b.juror)}
        if not jurors:
            return
        ended: set[str] = set()
        self.problems += await collect(self.store, jurors=jurors, holder=self.holder, finished=ended)
        todo: dict[str, Ballot] = {}
        for b in ballots:
            if self.handles(b.juror):
                todo.setdefault(b.request_sha256, b)
        by_juror: dict[str, list[Ballot]] = {}
        claimed: list[str] = []
        try:
            for h, b in todo.items():
                if self._settled(h) or self.store.latest_batch(h) in ended:  # failed just now: this run reports it
                    continue
                if self.store.claim(h, self.holder, max(CLAIM_LEASE_S, SUBMIT_LEASE_S)) is not None:
                    self.elsewhere.add(h)
                    continue
                claimed.append(h)
                if self._settled(h):  # settled by another process just before the claim
                    continue
                by_juror.setdefault(b.juror.name, []).append(b)
            for group in by_juror.values():
                await self._submit(group, guard)
        finally:
            for h in claimed:
                self.store.release_claim(h, self.holder)
        if self.batches_made:
            self.problems += await collect(self.store, jurors=jurors, holder=self.holder)

    def _settled(self, h: str) -> bool:
        return (
            self.store.get_vote(h) is not None
            or self.store.batch_answer(h) is not None
            or self.store.pending_batch(h) is not None
        )

    async def _submit(self, ballots: list[Ballot], guard: CostCap) -> None:
        from jury.judging.plan import COMPLETION_TOKENS_ESTIMATE
        from jury.judging.providers.prices import estimate_batch_call

        juror = ballots[0].juror
        provider = batch_provider(juror)
        assert provider is not None
        kept: list[Ballot] = []
        for b in ballots:
            est = 0.0
            if guard.cap is not None:
                est = estimate_batch_call(juror, b.messages, COMPLETION_TOKENS_ESTIMATE)[1] or 0.0
            if not guard.reserve(est):
                self.capped.add(b.request_sha256)
                continue
            guard.settle(est, est)  # a batch's price is known only when it ends: its estimate counts now
            kept.append(b)
        if not kept:
            return
        make = {"openai": openai_line, "anthropic": anthropic_request, "gemini": gemini_request}[provider]
        lines = [make(b) for b in kept]
        key = _api_key(juror.name, juror.api_key_env, juror.api_base)
        for chunk in split(lines, provider):
            batch_id = f"jb2_{secrets.token_hex(8)}"
            hashes = [line["custom_id"] for line in chunk]
            chunk = [{**line, "custom_id": custom_id_of(batch_id, line["custom_id"])} for line in chunk]  # bound to it
            self.store.record_batch(batch_id, provider, juror, hashes, self.holder)  # before anything is sent
            try:
                if provider == "openai":
                    provider_id, file_id = await _submit_openai(chunk, batch_id, juror.api_base, key)
                elif provider == "gemini":
                    provider_id, file_id = await _submit_gemini(chunk, _bare(juror.model), batch_id, juror.api_base, key)
                else:
                    provider_id, file_id = await _submit_anthropic(chunk, juror.api_base, key), None
            except Exception as exc:
                why = clean(f"submitting failed: {exc}", ([key] if key else []) + secrets_of(juror), 240)
                self.store.finish_batch(batch_id, "failed", failures={h: why for h in hashes}, error=why)
                continue
            self.store.update_batch(batch_id, provider_batch_id=provider_id, input_file_id=file_id, state="in_progress")
            self.submitted += len(chunk)
            self.batches_made += 1

    async def ask(self, ballot: Ballot, pool: JurorPool) -> tuple[CallResult, str] | Pending:
        """(CallResult, batch id) for a collected reply, turned into a vote's result as a
        synchronous reply is (_vote); else a Pending saying why the ballot has no vote yet."""
        h = ballot.request_sha256
        if self.store.batch_answer(h) is not None:
            async with self.replies:  # each reply is read from the store only here: a few at a time
                got = self.store.batch_answer(h)
                if got is not None:
                    return await self._vote(ballot, pool, *got)
        if h in self.capped:
            return Pending("capped", "cost cap reached")
        waiting = self.store.pending_batch(h)
        if waiting is not None:
            where = waiting["provider_batch_id"] or f"{waiting['id']} (being submitted)"
            return Pending("pending", f"pending in {waiting['provider']} batch {where}", where)
        if h in self.elsewhere:
            return Pending("pending", "being submitted by another process", "another process")
        failure = self.store.batch_failure(h)
        return Pending("failed", failure or "not submitted")

    async def _vote(
        self, ballot: Ballot, pool: JurorPool, batch_id: str, text: str | None, error: str | None
    ) -> tuple[CallResult, str]:
        """A collected reply through JurorPool's gate (litellm's conversion of a synchronous
        response, the parser, the repair turn, the abstentions; a reply over the cap is
        ResponseTooLarge's final abstention). A reply the gate cannot read fails its item: a
        rerun submits the ballot again instead of reading the same reply."""

        from jury.judging.response_cap import ResponseTooLarge
        from jury.judging.retries import UnreadableReply

        given: Any
        if text is None:
            given = ResponseTooLarge(error or "response body over the size cap; not read further")
        else:
            try:
                given = json.loads(text)
            except (ValueError, RecursionError):
                given = UnreadableReply("the stored reply is not JSON")
        result = await pool.call(
            ballot.juror.name,
            ballot.messages,
            schema=reply_schema(ballot.style, ballot.taxonomy),
            parse=make_parser(ballot.style, ballot.taxonomy),
            given=given,
        )
        last = result.log[-1] if result.log else {}
        if not result.ok and last.get("via") == "batch" and last.get("status") != "bad_output":
            self.store.fail_batch_item(batch_id, ballot.request_sha256, result.error or "unreadable reply")
        return result, batch_id


def status_rows(store: Store) -> list[dict[str, Any]]:
    """`jury batch status`: one row per batch, newest last."""

    now = time.time()
    rows: list[dict[str, Any]] = []
    for b in store.batches():
        age = max(0.0, now - _epoch(b["created_at"]))
        rows.append(
            {
                "provider": b["provider"],
                "batch": b["provider_batch_id"] or b["id"],
                "juror": b["juror"],
                "requests": b["requests"],
                **b["items"],
                "age": f"{age / 3600:.1f} h" if age >= 3600 else f"{age / 60:.0f} min",
                "state": b["state"],
                "note": b["error"] or "",  # why it failed, or what its results left out
            }
        )
    return rows
