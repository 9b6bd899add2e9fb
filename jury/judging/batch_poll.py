"""Asking a provider where a batch stands, and reading what it sent back (jury.judging.batch).

jury polls and reads batches itself rather than through litellm, whose ``aretrieve_batch``
downloads the whole output file for its cost logging: the batch object with
jury.judging.batch_results.read_json (``GET {api}/batches/{id}``; Anthropic
``GET {root}/v1/messages/batches/{id}``; Gemini ``GET {root}/v1beta/batches/{id}``), then the
output and error files (``/files/{id}/content``), the results stream
(``/v1/messages/batches/{id}/results``) or Gemini's responses file
(``/download/v1beta/files/{id}:download?alt=media``) with stream_lines, each line sorted by
Collected. The key goes only to the juror's API root, as
litellm resolves it.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from jury.judging.batch_results import (
    MAX_RESULT_LINES_SLACK,
    Collected,
    ResultsUnreadable,
    custom_id_of,
    read_json,
    stream_lines,
)
from jury.judging.redaction import clean

if TYPE_CHECKING:
    from jury.execution.store import Store

ANTHROPIC_BASE = "https://api.anthropic.com"
OPENAI_BASE = "https://api.openai.com/v1"
ANTHROPIC_VERSION = "2023-06-01"
GEMINI_BASE = "https://generativelanguage.googleapis.com"


_DONE = {"completed": "ended", "expired": "expired", "failed": "failed", "cancelled": "cancelled"}


# Gemini's batch states (the API reference's BATCH_STATE_*, its guide's JOB_STATE_*) that end a batch
_GEMINI_DONE = {"SUCCEEDED": "ended", "FAILED": "failed", "CANCELLED": "cancelled", "EXPIRED": "expired"}
_GEMINI_FILE = re.compile(r"files/[A-Za-z0-9_-]{1,200}")


def gemini_where(api_base: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    """(Gemini's API root, the headers carrying the key) as litellm resolves them for a
    ``gemini/`` juror: api_base, else GEMINI_API_BASE, else generativelanguage.googleapis.com;
    the key, else GOOGLE_API_KEY, else GEMINI_API_KEY (``x-goog-api-key``)."""
    root = api_base or os.environ.get("GEMINI_API_BASE") or GEMINI_BASE
    key = api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    return root.rstrip("/"), ({"x-goog-api-key": key} if key else {})


def _gemini_file(obj: dict[str, Any]) -> str | None:
    """The responses file of an ended Gemini batch (``response.responsesFile``, or
    ``metadata.output.responsesFile``), a name of the form files/<id>; None when it has none."""
    response, meta = obj.get("response"), obj.get("metadata")
    found = None
    for holder in (response, (meta or {}).get("output") if isinstance(meta, dict) else None):
        if isinstance(holder, dict) and holder.get("responsesFile") is not None:
            found = holder["responsesFile"]
            break
    if found is None:
        if isinstance(response, dict) and response.get("inlinedResponses") is not None:
            raise ResultsUnreadable("the batch answered inline, not in a responses file (jury submits a file)")
        return None
    if not isinstance(found, str) or not _GEMINI_FILE.fullmatch(found):
        raise ResultsUnreadable("the provider's batch object has an unreadable responsesFile")
    return found


def _gemini_error(obj: dict[str, Any]) -> str | None:
    error = obj.get("error")
    if not isinstance(error, dict):
        return None
    parts = [str(x) for x in (error.get("code"), error.get("message")) if isinstance(x, (str, int)) and not isinstance(x, bool)]
    return clean(": ".join(parts), [], 200) if parts else None


def _anthropic_headers(api_key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers


def _batch_errors(obj: dict[str, Any]) -> str | None:
    """One line for the errors a failed OpenAI batch carries (its input did not validate)."""
    errors = obj.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    shown = [
        f"{e.get('code') or 'error'}: {e.get('message') or ''}".strip()
        for e in (data if isinstance(data, list) else [])[:3]
        if isinstance(e, dict)
    ]
    return clean("; ".join(shown), [], 200) if shown else None


def _file_id(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        raise ResultsUnreadable(f"the provider's batch object has an unreadable {key}")
    return value


def _where(batch: dict[str, Any], api_key: str | None) -> tuple[str, dict[str, str]]:
    """(the provider's API root, the headers carrying the key) for a batch, as litellm would
    resolve them for the juror (OpenAI: api_base, else OPENAI_BASE_URL / OPENAI_API_BASE, else
    api.openai.com; the key, else OPENAI_API_KEY)."""
    if batch["provider"] == "gemini":
        return gemini_where(batch["api_base"], api_key)
    if batch["provider"] == "openai":
        root = batch["api_base"] or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
        key = api_key or os.environ.get("OPENAI_API_KEY")
        return root.rstrip("/"), ({"authorization": f"Bearer {key}"} if key else {})
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    return (batch["api_base"] or ANTHROPIC_BASE).rstrip("/"), _anthropic_headers(key)


async def poll(batch: dict[str, Any], api_key: str | None, store: Store) -> tuple[str, Collected | None, dict[str, str | None]]:
    """(state, its results sorted by Collected, fields to store) of a submitted batch; results
    None while it is still in progress. The batch object and its results are read by jury
    (read_json, stream_lines: bounded, through jury's JSON reader), never whole and never by
    litellm."""
    from jury.judging.providers.setup import MAX_RESPONSE_BYTES

    provider = batch["provider"]
    root, headers = _where(batch, api_key)
    bid = quote(str(batch["provider_batch_id"]), safe="")
    if provider == "openai":
        state, urls, fields = await _openai_state(root, bid, headers)
    elif provider == "gemini":
        state, urls, fields = await _gemini_state(root, bid, headers)
    else:
        state, urls, fields = await _anthropic_state(root, bid, headers)
    if state is None:
        return "in_progress", None, {}
    hashes = store.batch_requests(batch["id"])
    ids = {custom_id_of(batch["id"], h): h for h in hashes}
    collected = Collected(provider, ids, MAX_RESPONSE_BYTES, 2 * len(hashes) + MAX_RESULT_LINES_SLACK)
    try:
        for url in urls:
            async with contextlib.aclosing(stream_lines(url, headers, collected.cap)) as lines:
                async for line in lines:
                    if collected.full():
                        break
                    collected.add(line)
            if collected.cut:
                break
    except BaseException:
        collected.__exit__(None, None, None)
        raise
    return state, collected, fields


# A provider's batch read: (its final state, None while in progress; the URLs of its results; fields to store)
_BatchState = tuple[str | None, list[str], dict[str, str | None]]


async def _openai_state(root: str, bid: str, headers: dict[str, str]) -> _BatchState:
    """An OpenAI batch: its state, output and error files and, failed, its errors."""
    obj = await read_json(f"{root}/batches/{bid}", headers)
    status = obj.get("status")
    if not isinstance(status, str):
        raise ResultsUnreadable("the provider's batch object has no status")
    state = _DONE.get(status)
    if state is None:  # validating, in_progress, finalizing, cancelling (or a state to come)
        return None, [], {}
    files = [_file_id(obj, "output_file_id"), _file_id(obj, "error_file_id")]
    fields: dict[str, str | None] = {"output_file_id": files[0], "error_file_id": files[1]}
    if state == "failed":
        fields["error"] = _batch_errors(obj)
    return state, [f"{root}/files/{quote(f, safe='')}/content" for f in files if f], fields


async def _gemini_state(root: str, bid: str, headers: dict[str, str]) -> _BatchState:
    """A Gemini batch: its state, its output file and, failed, its error."""
    obj = await read_json(f"{root}/v1beta/batches/{bid}", headers)
    meta = obj.get("metadata")
    status = meta.get("state") if isinstance(meta, dict) else None
    if not isinstance(status, str):
        raise ResultsUnreadable("the provider's batch object has no metadata.state")
    state = _GEMINI_DONE.get(status.removeprefix("BATCH_STATE_").removeprefix("JOB_STATE_"))
    if state is None:  # pending, running (or a state to come)
        return None, [], {}
    file = _gemini_file(obj)
    fields: dict[str, str | None] = {"output_file_id": file}
    if state == "failed":
        fields["error"] = _gemini_error(obj)
    return state, [f"{root}/download/v1beta/{file}:download?alt=media"] if file else [], fields


async def _anthropic_state(root: str, bid: str, headers: dict[str, str]) -> _BatchState:
    """An Anthropic message batch: ended or not, and its results' URL."""
    obj = await read_json(f"{root}/v1/messages/batches/{bid}", headers)
    status = obj.get("processing_status")
    if not isinstance(status, str):
        raise ResultsUnreadable("the provider's batch object has no processing_status")
    if status != "ended":  # in_progress, canceling
        return None, [], {}
    # an Anthropic batch ends; canceled and expired requests say so one by one
    return "ended", [f"{root}/v1/messages/batches/{bid}/results"], {}
