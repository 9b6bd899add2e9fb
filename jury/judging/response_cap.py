"""Bounding how much of a provider's response body jury reads.

A juror that answers with an endless body (a runaway model, a broken proxy) must not fill
memory: `capped_http_client` is an httpx client whose transport refuses a response whose
Content-Length is over the limit and stops reading a streamed body once it passes the limit,
raising ResponseTooLarge. JurorPool installs it as litellm's async session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


class ResponseTooLarge(Exception):
    """A provider's response body passed MAX_RESPONSE_BYTES: reading stopped there."""


def _capped_stream(stream: Any, limit: int) -> httpx.AsyncByteStream:
    import httpx

    class _Capped(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in stream:
                seen += len(chunk)
                if seen > limit:
                    raise ResponseTooLarge(f"response body over {limit // (1024 * 1024)} MB; not read further")
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return _Capped()


def capped_http_client(limit: int, inner: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An httpx client that stops reading a response body at `limit` bytes. Its requests go
    through `inner` (jury passes litellm's own transport: aiohttp unless the user turned
    it off), else an httpx transport without a connection cap."""
    import httpx

    if inner is None:
        # An AsyncClient given a transport ignores its own `limits`: they go to the transport.
        # Its default (100 connections, 20 kept alive) closed a connection on release whenever
        # the pool held more than 20 (httpcore counts every connection against
        # max_keepalive_connections, not the idle ones), so past 20 calls in flight nearly
        # every call opened a new TCP connection. Each juror's max_concurrency bounds the calls.
        inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=None, max_keepalive_connections=None))
    transport = inner

    class _CappedTransport(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await transport.handle_async_request(request)
            length = response.headers.get("content-length")
            if length and length.isdigit() and int(length) > limit:
                await response.aclose()
                raise ResponseTooLarge(f"response body of {int(length):,} bytes is over the {limit // (1024 * 1024)} MB limit")
            response.stream = _capped_stream(response.stream, limit)
            return response

        async def aclose(self) -> None:
            await transport.aclose()

    client = httpx.AsyncClient(transport=_CappedTransport(), follow_redirects=True)
    client._jury_capped = True  # type: ignore[attr-defined]
    return client


def too_large(exc: BaseException | None) -> ResponseTooLarge | None:
    """The ResponseTooLarge behind `exc` (itself, or in its chain of causes), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ResponseTooLarge):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None
