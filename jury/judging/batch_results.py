"""A batch's results, read as a stream in bounded memory, each line through one validation.

What a provider sends back for a batch (OpenAI's output and error files, Anthropic's results
stream, Gemini's responses file) is read from the HTTP response in chunks (`stream_lines`), never whole:

- a line longer than MAX_RESPONSE_BYTES (the cap of a synchronous reply) is not kept: its
  first bytes name its ``custom_id`` when it opens with one, and that request gets what a
  synchronous reply over the cap gets (ResponseTooLarge: a final abstention, "unusable
  reply"); the rest of the line is read past and dropped;
- a gzip or deflate body (sent although jury asks for identity) is inflated in bounded steps;
  any other encoding is not read, and a file is not read past twice its batch's requests
  (plus MAX_RESULT_LINES_SLACK lines);
- the batch object itself (its status, its files) is read the same way, at most
  MAX_BATCH_OBJECT_BYTES, by jury's own HTTP GET: litellm's aretrieve_batch downloads the
  whole output file for its cost logging, which is where a deep line used to kill it. The
  provider's key goes only to the juror's api_base (a redirect to another host is not
  followed);
- every line is parsed by jury's own JSON reader (jury.inputs.io.loads_document: depth,
  duplicate keys, NaN, huge integers) before any other code sees it: litellm never gets a raw
  line.

Then one validation (`Collected.add`) sorts each line: a ``custom_id`` is bound to the batch
that held it (``custom_id_of``: a hash of jury's batch id and the request hash; Gemini's lines
carry it as ``key``), so a line
naming any other id (another batch's, another project's, one differing in case or
whitespace) is ignored and counted, never stored; a request named twice gets no answer (its
item fails, and a rerun submits it again); a line of the wrong shape (no response, a status
other than 200, an error object, a body that is not an object, an Anthropic result that is
not ``succeeded``, a Gemini line with an error or no response) fails its item with a one-line
reason. A body that passes is stored as it came (Anthropic's and Gemini's converted by
litellm's synchronous conversion) and turned into a vote by
JurorPool's gate, as a synchronous reply is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from jury.errors import InputError
from jury.inputs.io import loads_document
from jury.judging.redaction import clean

MAX_RESULT_LINES_SLACK = 16  # a results file may hold this many lines more than twice its batch's requests
PREFIX_BYTES = 4096  # of a line over the cap: what is kept to find its custom_id
_INFLATE_STEP = 1 << 20  # a compressed body is inflated at most this many bytes at a time


def custom_id_of(batch_id: str, request_sha256: str) -> str:
    """The custom_id a ballot is sent under in batch `batch_id` (64 hex characters: within
    Anthropic's ^[a-zA-Z0-9_-]{1,64}$). Bound to the batch: another batch's, or another
    store's, results name other ids. Batches made before jury bound ids (jury's id starting
    "jb_") used the request hash itself."""
    if batch_id.startswith("jb_"):
        return request_sha256
    return hashlib.sha256(f"jury-batch\n{batch_id}\n{request_sha256}".encode()).hexdigest()


class ResultsUnreadable(Exception):
    """The provider's answer says the batch or its results are gone (404, 410), or cannot be
    read at all (not a batch object, an unknown or corrupt encoding, a redirect to another
    host): the batch ends as failed and its requests are submitted again."""


@dataclass
class Overlong:
    """A line over the cap, read past: its size and first PREFIX_BYTES bytes."""

    size: int
    prefix: bytes


class _Inflate:
    """A gzip or zlib (HTTP "deflate") body inflated in steps of at most _INFLATE_STEP bytes."""

    def __init__(self) -> None:
        self.z = zlib.decompressobj(zlib.MAX_WBITS | 32)  # either header, detected

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data and not self.z.eof:
            try:
                out = self.z.decompress(data, _INFLATE_STEP)
            except zlib.error as exc:
                raise ResultsUnreadable(f"the compressed results are corrupt ({exc})") from None
            if out:
                yield out
            data = self.z.unconsumed_tail


async def _body_chunks(response: Any) -> AsyncIterator[bytes]:
    encoding = (response.headers.get("content-encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
        raise ResultsUnreadable(f"the results come with content-encoding {clean(encoding, [], 40)}, which jury does not read")
    inflate = None if encoding == "identity" else _Inflate()
    async for chunk in response.aiter_raw():
        if inflate is None:
            yield chunk
        else:
            for out in inflate.feed(chunk):
                yield out
    if inflate is not None and not inflate.z.eof:
        raise ResultsUnreadable("the compressed results are cut short")


async def split_lines(chunks: AsyncIterator[bytes], cap: int) -> AsyncGenerator[bytes | Overlong]:
    """The lines of a body arriving in `chunks` (without their newline; blank ones left out),
    none longer than `cap` held: a longer one comes as an Overlong."""
    buf = bytearray()
    over: Overlong | None = None
    async for chunk in chunks:
        start = 0
        while start <= len(chunk):
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl == -1 else nl
            piece = memoryview(chunk)[start:end]
            if over is not None:
                over.size += len(piece)
            elif len(buf) + len(piece) > cap:
                head = bytes(buf[:PREFIX_BYTES]) + bytes(piece[: max(0, PREFIX_BYTES - len(buf))])
                over = Overlong(len(buf) + len(piece), head)
                buf = bytearray()
            else:
                buf += piece
            if nl == -1:
                break
            if over is not None:
                yield over
                over = None
            elif buf.strip():
                yield bytes(buf)
            buf = bytearray()
            start = nl + 1
    if over is not None:
        yield over
    elif buf.strip():
        yield bytes(buf)


class ProviderUnreachable(Exception):
    """The provider cannot be asked now (a refused key, a rate limit, a 5xx, the network): the
    batch stays open and the next run asks again."""


MAX_BATCH_OBJECT_BYTES = 1024 * 1024  # a batch object (its status and file ids) is a few KB
_MAX_REDIRECTS = 5


def _origin(url: Any) -> tuple[str, str, int | None]:  # an httpx.URL's
    return (url.scheme, url.host, url.port)


def same_origin(a: Any, b: Any) -> bool:
    """Whether two httpx URLs share scheme, host and port (where a provider's key may go)."""
    return _origin(a) == _origin(b)


@contextlib.asynccontextmanager
async def _get(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """A streamed GET (the key in `headers` goes to `url`'s origin only: a redirect elsewhere
    is not followed). 200 yields the response; 404 or 410 (gone: the batch or its file no
    longer exists) and any redirect elsewhere are ResultsUnreadable; every other answer
    (401, 403, 429, 5xx, ...) and a transport failure are ProviderUnreachable."""
    import httpx

    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), follow_redirects=False) as client:
        target = httpx.URL(url)
        for _ in range(_MAX_REDIRECTS + 1):
            try:
                async with client.stream("GET", target, headers={**headers, "accept-encoding": "identity"}) as response:
                    status = response.status_code
                    if status == 200:
                        yield response
                        return
                    location = response.headers.get("location")
            except httpx.HTTPError as exc:
                raise ProviderUnreachable(f"{type(exc).__name__}: {exc}") from None
            if 300 <= status < 400 and location:
                nxt = target.join(location)
                if _origin(nxt) != _origin(target):
                    raise ResultsUnreadable(f"the provider redirected to another host ({nxt.host}); not followed")
                target = nxt
                continue
            if status in (404, 410):
                raise ResultsUnreadable(f"the provider no longer has it (HTTP {status})")
            raise ProviderUnreachable(f"HTTP {status}")
        raise ResultsUnreadable(f"more than {_MAX_REDIRECTS} redirects")


async def read_json(url: str, headers: dict[str, str], cap: int = MAX_BATCH_OBJECT_BYTES) -> dict[str, Any]:
    """A small JSON object (a batch's state) read in bounded memory through jury's own JSON
    reader: a body over `cap`, not JSON, or not an object is ResultsUnreadable."""
    data = bytearray()
    async with _get(url, headers) as response:
        async for chunk in _body_chunks(response):
            data += chunk
            if len(data) > cap:
                raise ResultsUnreadable(f"the provider's batch object is over {cap // 1024} KiB")
    try:
        obj = loads_document(data.decode("utf-8"), "the provider's batch object")
    except (InputError, UnicodeDecodeError) as exc:
        raise ResultsUnreadable(clean(str(exc), [], 200)) from None
    if not isinstance(obj, dict):
        raise ResultsUnreadable(f"the provider's batch object is {type(obj).__name__}, not an object")
    return obj


async def stream_lines(url: str, headers: dict[str, str], cap: int) -> AsyncGenerator[bytes | Overlong]:
    """The lines of the results at `url`, streamed (split_lines), each at most `cap` bytes or
    an Overlong; failures as `_get` says, an encoding jury does not read ResultsUnreadable."""
    import httpx

    async with _get(url, headers) as response:
        try:
            async for line in split_lines(_body_chunks(response), cap):
                yield line
        except httpx.HTTPError as exc:  # the connection dropped mid-file: read it all again next run
            raise ProviderUnreachable(f"{type(exc).__name__}: {exc}") from None


_ID_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def leading_custom_id(prefix: bytes, key: str = "custom_id") -> str | None:
    """The custom_id a result line opens with: the value of a ``"custom_id"`` key (Gemini's
    lines: ``key``) of the top-level object within `prefix` (OpenAI and Anthropic write it
    first), or None."""
    tokens = [m.group() for m in _ID_TOKENS.finditer(prefix)]
    if not tokens or tokens[0] != b"{":
        return None
    depth = 0
    for i, tok in enumerate(tokens[:-2]):
        if tok in (b"{", b"["):
            depth += 1
        elif tok in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and tok.startswith(b'"') and tokens[i + 1] == b":" and tokens[i + 2].startswith(b'"'):
            try:
                if json.loads(tok) != key:
                    continue
                value = json.loads(tokens[i + 2])
            except ValueError:
                return None
            return value if isinstance(value, str) else None
    return None


def _reason(error: Any, fallback: str) -> str:
    """One line for an item's error object (OpenAI's {code, message}, Anthropic's nested error)."""
    if isinstance(error, dict):
        inner = error.get("error")
        if isinstance(inner, dict) and ("message" in inner or "type" in inner):
            error = inner
        code = error.get("code") or error.get("type")
        message = error.get("message")
        parts = [str(x) for x in (code, message) if isinstance(x, (str, int)) and not isinstance(x, bool)]
        if parts:
            return clean(": ".join(parts), [], 200)
    return fallback


@dataclass
class Collected:
    """A batch's results, sorted by one validation: each of its requests answered (the body
    spooled to a temporary file, not held), failed (submitted again by a rerun), unusable (a
    reply over the cap: a final abstention) or named twice (failed); lines for requests the
    batch never held, and lines that name no request, counted."""

    protocol: str  # openai | anthropic | gemini
    ids: dict[str, str]  # custom_id -> request hash, of this batch's requests only
    cap: int
    max_lines: int
    answered: dict[str, tuple[int, int]] = field(default_factory=dict)  # hash -> (offset, length) in the spool
    failed: dict[str, str] = field(default_factory=dict)
    unusable: dict[str, str] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)  # hash -> results naming it
    foreign: int = 0
    unreadable: int = 0
    lines: int = 0
    cut: str | None = None  # why reading stopped early
    _spool: Any = None

    def __post_init__(self) -> None:
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed by __exit__ (collect uses `with`)

    def __enter__(self) -> Collected:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._spool.close()

    @property
    def id_key(self) -> str:
        """The key naming a line's request: Gemini's ``key``, else ``custom_id``."""
        return "key" if self.protocol == "gemini" else "custom_id"

    def full(self) -> bool:
        if self.lines >= self.max_lines:
            self.cut = (
                f"the results ran past {self.max_lines:,} lines (the batch held {len(self.ids):,} requests); not read further"
            )
            return True
        return False

    # -- the one validation ----------------------------------------------------------------
    def add(self, line: bytes | Overlong) -> None:
        self.lines += 1
        if isinstance(line, Overlong):
            h = self._request(leading_custom_id(line.prefix, self.id_key))
            if h is not None:
                self._settle(h, "unusable", f"response body over {self.cap // (1024 * 1024)} MB; not read further")
            return
        try:
            obj = loads_document(line.decode("utf-8"), "result line")
        except (InputError, UnicodeDecodeError) as exc:
            why = str(exc).removeprefix("result line:1: ") if isinstance(exc, InputError) else "not UTF-8"
            h = self._request(leading_custom_id(line[:PREFIX_BYTES], self.id_key))
            if h is not None:
                self._settle(h, "failed", clean(f"unreadable result line: {why}", [], 200))
            return
        if not isinstance(obj, dict):
            self.unreadable += 1
            return
        h = self._request(obj.get(self.id_key))
        if h is None:
            return
        read = {"openai": self._openai, "anthropic": self._anthropic, "gemini": self._gemini}[self.protocol]
        kind, value = read(obj)
        self._settle(h, kind, value)

    def _request(self, custom_id: Any) -> str | None:
        """The request hash a custom_id names in this batch; None (counted) for any other."""
        if not isinstance(custom_id, str):
            self.unreadable += 1
            return None
        h = self.ids.get(custom_id)
        if h is None:
            self.foreign += 1
        return h

    @staticmethod
    def _openai(obj: dict[str, Any]) -> tuple[str, Any]:
        response, error = obj.get("response"), obj.get("error")
        if error is not None:
            return "failed", _reason(error, "an error without a message")
        if not isinstance(response, dict):
            return "failed", "a result without a response"
        status, body = response.get("status_code"), response.get("body")
        if type(status) is not int or status != 200:
            shown = status if type(status) is int else type(status).__name__
            return "failed", _reason(body.get("error") if isinstance(body, dict) else None, f"HTTP {shown}")
        if not isinstance(body, dict):
            return "failed", f"a 200 result whose body is {type(body).__name__}, not an object"
        if body.get("error") is not None:
            return "failed", _reason(body["error"], "a 200 result holding an error")
        return "answered", body

    @staticmethod
    def _anthropic(obj: dict[str, Any]) -> tuple[str, Any]:
        from jury.judging.providers.batch_bodies import anthropic_body
        from jury.judging.retries import UnreadableReply, describe_unreadable

        result = obj.get("result")
        if not isinstance(result, dict):
            return "failed", "a result without its result object"
        kind = result.get("type")
        if kind != "succeeded":
            if kind in ("errored", "canceled", "expired"):
                return "failed", _reason(result.get("error"), kind) if kind == "errored" else f"request {kind}"
            return "failed", f"a result of type {clean(str(kind), [], 40)}"
        try:
            return "answered", anthropic_body(result.get("message"))
        except UnreadableReply as exc:
            return "failed", describe_unreadable(exc)

    @staticmethod
    def _gemini(obj: dict[str, Any]) -> tuple[str, Any]:
        """A line of Gemini's responses file: ``{"key", "response": GenerateContentResponse}``
        or ``{"key", "error" | "status": Status}``."""
        from jury.judging.providers.batch_bodies import gemini_body
        from jury.judging.retries import UnreadableReply, describe_unreadable

        error = obj.get("error") if obj.get("error") is not None else obj.get("status")
        if error is not None:
            return "failed", _reason(error, "an error without a message")
        response = obj.get("response")
        if not isinstance(response, dict):
            return "failed", "a result without a response"
        try:
            return "answered", gemini_body(response)
        except UnreadableReply as exc:
            return "failed", describe_unreadable(exc)

    def _settle(self, h: str, kind: str, value: Any) -> None:
        n = self.seen[h] = self.seen.get(h, 0) + 1
        if n > 1:  # named twice: neither is taken
            self.answered.pop(h, None)
            self.unusable.pop(h, None)
            self.failed[h] = f"the provider returned {n} results for this request; none is taken"
            return
        if kind == "answered":
            data = json.dumps(value, ensure_ascii=False).encode()
            offset = self._spool.seek(0, os.SEEK_END)
            self._spool.write(data)
            self.answered[h] = (offset, len(data))
        elif kind == "unusable":
            self.unusable[h] = value
        else:
            self.failed[h] = value

    # -- reading back ----------------------------------------------------------------------
    def answers(self) -> Iterator[tuple[str, str]]:
        """(request hash, reply JSON) of each answered request, read back one at a time."""
        for h, (offset, length) in self.answered.items():
            self._spool.seek(offset)
            yield h, self._spool.read(length).decode()

    def note(self) -> str | None:
        """One line on what was left out, or None."""
        parts = []
        if self.foreign:
            parts.append(
                f"{self.foreign} result line{'s' if self.foreign != 1 else ''} for requests this batch never held (ignored)"
            )
        if self.unreadable:
            parts.append(f"{self.unreadable} result line{'s' if self.unreadable != 1 else ''} naming no request (ignored)")
        twice = sum(1 for n in self.seen.values() if n > 1)
        if twice:
            parts.append(f"{twice} request{'s' if twice != 1 else ''} answered more than once (failed, submitted again)")
        if self.cut:
            parts.append(self.cut)
        return "; ".join(parts) or None
