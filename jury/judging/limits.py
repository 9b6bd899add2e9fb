"""Per-juror request limits: how many calls at once (max_concurrency) and how often (rpm).

Concurrency is an asyncio.Semaphore; the request rate is aiolimiter's leaky bucket, sized to
one request per 60/rpm seconds so that requests are spaced evenly rather than sent in a burst
of rpm at the start of each minute. Both are bound to the running event loop and rebuilt when
the limiter is used from a new one (asyncio.run per run).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiolimiter import AsyncLimiter


class Limiter:
    """Per-juror limits: at most max_concurrency calls at once, requests spaced 60/rpm seconds apart.

    `async with limiter:` holds a concurrency slot (JurorPool holds it for a whole call, backoff
    included, so a throttled juror is not hammered by its other calls); `await limiter.pace()`
    before each request waits for the next rpm slot. `in_flight` counts the slots held.
    """

    def __init__(self, max_concurrency: int, rpm: int | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if rpm is not None and rpm < 1:
            raise ValueError("rpm must be at least 1")
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self._semaphore: asyncio.Semaphore | None = None
        self._rate: AsyncLimiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.in_flight = 0

    def _bind(self) -> None:
        """Make the semaphore and the rate limiter for the running loop, once per loop."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._rate = AsyncLimiter(1, 60.0 / self.rpm) if self.rpm else None
            self._loop = loop
            self.in_flight = 0

    async def __aenter__(self) -> Limiter:
        self._bind()
        assert self._semaphore is not None
        await self._semaphore.acquire()
        self.in_flight += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.in_flight -= 1
        assert self._semaphore is not None
        self._semaphore.release()

    async def pace(self) -> None:
        """Wait for this request's rpm slot (at once without an rpm limit)."""
        self._bind()
        if self._rate is not None:
            await self._rate.acquire()
